// libFuzzer entry for the SWF trace parser. Checks that parsing succeeds or throws ParseError,
// that a parsed trace written back as SWF parses to the same header and jobs (with nothing left
// to round), and that a small parsed trace replays on a fixed 4 x 2-CPU cluster with every job
// that fits started, never more CPUs in use than exist, and no job starting before it arrives.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "sim/replay.hpp"
#include "sim/swf.hpp"

using namespace drover::sim;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

std::string write_swf(const SwfTrace& t) {
  std::string out;
  if (t.header.max_nodes != -1) out += "; MaxNodes: " + std::to_string(t.header.max_nodes) + "\n";
  if (t.header.max_procs != -1) out += "; MaxProcs: " + std::to_string(t.header.max_procs) + "\n";
  if (t.header.unix_start_time != -1)
    out += "; UnixStartTime: " + std::to_string(t.header.unix_start_time) + "\n";
  for (const SwfJob& j : t.jobs) {
    for (int f = 0; f < kSwfFields; ++f) {
      if (f > 0) out += ' ';
      out += std::to_string(swf_field(j, f));
    }
    out += '\n';
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  SwfTrace t;
  try {
    t = parse_swf(text);
  } catch (const drover::core::ParseError&) {
    return 0;
  }
  int last_line = 0;
  for (const SwfJob& j : t.jobs) {
    check(j.line > last_line);
    last_line = j.line;
    for (int f = 0; f < kSwfFields; ++f)
      check(swf_field(j, f) <= kSwfMaxMagnitude && swf_field(j, f) >= -kSwfMaxMagnitude);
  }

  SwfTrace u = parse_swf(write_swf(t));
  check(u.rounded_values == 0);
  check(u.header.max_nodes == t.header.max_nodes && u.header.max_procs == t.header.max_procs &&
        u.header.unix_start_time == t.header.unix_start_time);
  check(u.jobs.size() == t.jobs.size());
  for (size_t i = 0; i < t.jobs.size(); ++i)
    for (int f = 0; f < kSwfFields; ++f) check(swf_field(u.jobs[i], f) == swf_field(t.jobs[i], f));

  if (t.jobs.size() > 32) return 0;
  ReplayOptions opts;
  opts.nodes = 4;
  opts.cpus_per_node = 2;
  opts.policy = static_cast<SimPolicy>(size % 4);
  ReplayResult r = replay(t, opts);  // an engine fault throws: a finding
  check(r.never_started == 0);
  check(r.outcomes.size() + r.skipped_total() == t.jobs.size());
  std::vector<std::pair<int64_t, int64_t>> ev;
  for (const JobOutcome& j : r.outcomes) {
    check(j.start >= j.submit && j.end >= j.start);
    ev.push_back({j.start, j.procs});
    ev.push_back({j.end, -j.procs});
  }
  std::sort(ev.begin(), ev.end());
  int64_t in_use = 0;
  for (const auto& e : ev) check((in_use += e.second) <= r.cpus());
  return 0;
}
