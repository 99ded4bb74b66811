#include "sim/swf.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/error.hpp"

namespace drover::sim {
namespace {

constexpr int64_t SwfJob::*kMembers[kSwfFields] = {
    &SwfJob::job_number,    &SwfJob::submit,     &SwfJob::wait,     &SwfJob::run,
    &SwfJob::alloc_procs,   &SwfJob::avg_cpu,    &SwfJob::used_mem, &SwfJob::req_procs,
    &SwfJob::req_time,      &SwfJob::req_mem,    &SwfJob::status,   &SwfJob::user,
    &SwfJob::group,         &SwfJob::app,        &SwfJob::queue,    &SwfJob::partition,
    &SwfJob::preceding_job, &SwfJob::think_time,
};

constexpr std::string_view kNames[kSwfFields] = {
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user id",
    "group id",
    "executable number",
    "queue",
    "partition",
    "preceding job",
    "think time",
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// The token as it may be shown in a message: printable, at most 40 characters.
std::string shown(std::string_view tok) {
  std::string out;
  for (char c : tok.substr(0, 40)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (tok.size() > 40) out += "...";
  return out;
}

[[noreturn]] void fail(int line, const std::string& what) {
  throw core::ParseError("line " + std::to_string(line) + ": " + what);
}

// What a message calls a job field ("field 4 (run time)") or a header key ("MaxNodes").
std::string label(int field, std::string_view key) {
  if (field < 0) return std::string(key);
  return "field " + std::to_string(field + 1) + " (" + std::string(kNames[field]) + ")";
}

// A whole number, or a decimal one rounded to the nearest integer (halves away from zero).
// `field` (0-based; -1 for a header value named `key`) is only used in messages.
int64_t parse_number(std::string_view tok, int line, int field, std::string_view key,
                     bool& fractional) {
  fractional = false;
  auto bad = [&](const char* why) {
    fail(line, label(field, key) + ": '" + shown(tok) + "' " + why);
  };
  const char* first = tok.data();
  const char* last = tok.data() + tok.size();
  bool integral = !tok.empty();
  for (size_t i = 0; i < tok.size(); ++i)
    if (!(tok[i] >= '0' && tok[i] <= '9') && !(i == 0 && tok[i] == '-' && tok.size() > 1))
      integral = false;
  if (integral) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(first, last, v);
    if (ec == std::errc::result_out_of_range ||
        (ec == std::errc() && p == last && (v > kSwfMaxMagnitude || v < -kSwfMaxMagnitude)))
      bad("is out of range");
    if (ec == std::errc() && p == last) return v;
    bad("is not a number");
  }
  double d = 0;
  auto [p, ec] = std::from_chars(first, last, d, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) bad("is out of range");
  if (ec != std::errc() || p != last || std::isnan(d)) bad("is not a number");
  if (!(std::fabs(d) <= static_cast<double>(kSwfMaxMagnitude))) bad("is out of range");
  fractional = d != std::trunc(d);
  return static_cast<int64_t>(std::llround(d));
}

// "; Key: value ..." header lines; only the keys the replay needs are read.
void parse_header(std::string_view body, int line, SwfHeader& h) {
  body = trim(body);
  size_t colon = body.find(':');
  if (colon == std::string_view::npos) return;
  std::string_view key = trim(body.substr(0, colon));
  int64_t* slot = nullptr;
  if (key == "MaxNodes")
    slot = &h.max_nodes;
  else if (key == "MaxProcs")
    slot = &h.max_procs;
  else if (key == "UnixStartTime")
    slot = &h.unix_start_time;
  else
    return;
  std::string_view value = trim(body.substr(colon + 1));
  size_t end = 0;
  while (end < value.size() && !is_space(value[end])) ++end;
  value = value.substr(0, end);
  if (value.empty()) fail(line, std::string(key) + ": no value");
  bool fractional = false;
  *slot = parse_number(value, line, -1, key, fractional);
}

}  // namespace

int64_t& swf_field(SwfJob& job, int index) { return job.*kMembers[index]; }
int64_t swf_field(const SwfJob& job, int index) { return job.*kMembers[index]; }
std::string_view swf_field_name(int index) { return kNames[index]; }

SwfTrace parse_swf(std::string_view text) {
  SwfTrace trace;
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    line = trim(line);
    if (line.empty()) continue;
    if (line.front() == ';') {
      parse_header(line.substr(1), line_no, trace.header);
      continue;
    }
    std::string_view tokens[kSwfFields];
    int count = 0;
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && is_space(line[i])) ++i;
      if (i == line.size()) break;
      size_t start = i;
      while (i < line.size() && !is_space(line[i])) ++i;
      if (count < kSwfFields) tokens[count] = line.substr(start, i - start);
      ++count;
    }
    if (count != kSwfFields)
      fail(line_no,
           "expected " + std::to_string(kSwfFields) + " fields, found " + std::to_string(count));
    SwfJob job;
    job.line = line_no;
    for (int f = 0; f < kSwfFields; ++f) {
      bool fractional = false;
      job.*kMembers[f] = parse_number(tokens[f], line_no, f, {}, fractional);
      if (fractional) ++trace.rounded_values;
    }
    trace.jobs.push_back(job);
  }
  return trace;
}

SwfTrace read_swf_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw std::runtime_error(path + ": read error");
  try {
    return parse_swf(buf.str());
  } catch (const core::ParseError& e) {
    throw core::ParseError(path + ": " + e.what());
  }
}

}  // namespace drover::sim
