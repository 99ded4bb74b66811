#include "core/dependency.hpp"

#include <limits>
#include <set>
#include <tuple>

#include "core/text.hpp"

namespace drover::core {

namespace {

constexpr const char* kDepProblem = "Job dependency problem";
constexpr const char* kNotSupported = "Requested operation not supported on this system";
constexpr uint32_t kDefaultMaxArraySize = 1001;

[[noreturn]] void fail() { throw ParseError(kDepProblem); }

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_c_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// C's strtol on a 64-bit long: white space, one sign, digits; saturates; no digits: 0 and the
// position unchanged. Slurm reads task ids, delays and bracket indices this way.
int64_t c_strtol(std::string_view s, size_t& pos) {
  size_t i = pos;
  while (i < s.size() && is_c_space(s[i])) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i >= s.size() || !is_digit(s[i])) return 0;
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  uint64_t v = 0;
  for (; i < s.size() && is_digit(s[i]); ++i) {
    uint64_t d = static_cast<uint64_t>(s[i] - '0');
    v = (v > (limit - d) / 10) ? limit : v * 10 + d;
  }
  pos = i;
  if (!negative) return static_cast<int64_t>(v);
  return v == (uint64_t{1} << 63) ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(v);
}

// A job id: white space, an optional '+', digits, read like strtoul (saturating) and kept as
// 32 bits as slurmctld does ("4294967296" is 0 and refused, "99999999999999999999" is
// 4294967295). No digits or 0: error.
uint64_t read_job_id(std::string_view s, size_t& pos) {
  size_t i = pos;
  while (i < s.size() && is_c_space(s[i])) ++i;
  if (i < s.size() && s[i] == '+') ++i;
  if (i >= s.size() || !is_digit(s[i])) fail();
  uint64_t v = 0;
  for (; i < s.size() && is_digit(s[i]); ++i) {
    uint64_t d = static_cast<uint64_t>(s[i] - '0');
    v = (v > (UINT64_MAX - d) / 10) ? UINT64_MAX : v * 10 + d;
  }
  pos = i;
  uint64_t id = v & 0xffffffffu;
  if (id == 0) fail();
  return id;
}

// A single task after '_' (not a bracket list): "*" or a strtol number kept as 32 bits; -1 and
// 4294967294 mean the whole array, as in Slurm.
uint32_t read_task(std::string_view s, size_t& pos) {
  if (pos < s.size() && s[pos] == '*') {
    ++pos;
    return kNoArrayTask;
  }
  int64_t v = c_strtol(s, pos);
  auto task = static_cast<uint32_t>(static_cast<uint64_t>(v));
  return task == 0xffffffffu ? kNoArrayTask : task;
}

// "[1-3,7]" after '_': indices below max_array_size, "N" or "N-M" items.
IndexSet read_task_list(std::string_view s, size_t& pos, uint32_t max_array_size) {
  ++pos;  // '['
  IndexSet tasks;
  for (;;) {
    size_t start = pos;
    int64_t first = c_strtol(s, pos);
    if (pos == start) fail();
    int64_t last = first;
    if (pos < s.size() && s[pos] == '-') {
      ++pos;
      start = pos;
      last = c_strtol(s, pos);
      if (pos == start) fail();
    }
    while (pos < s.size() && is_c_space(s[pos])) ++pos;
    if (first < 0 || last < first || static_cast<uint64_t>(last) >= max_array_size) fail();
    tasks.insert(static_cast<uint32_t>(first), static_cast<uint32_t>(last));
    if (pos < s.size() && s[pos] == ',') {
      ++pos;
      continue;
    }
    break;
  }
  if (pos >= s.size() || s[pos] != ']') fail();
  ++pos;
  return tasks;
}

std::optional<DepType> type_from_name(std::string_view name) {
  static constexpr std::pair<std::string_view, DepType> kTypes[] = {
      {"after", DepType::After},         {"afterany", DepType::AfterAny},
      {"afterok", DepType::AfterOk},     {"afternotok", DepType::AfterNotOk},
      {"aftercorr", DepType::AfterCorr}, {"afterburstbuffer", DepType::AfterBurstBuffer},
  };
  for (const auto& [n, t] : kTypes)
    if (iequals(name, n)) return t;
  return std::nullopt;
}

class Builder {
 public:
  explicit Builder(Dependency& dep) : dep_(dep) {}
  // Appends unless an entry with the same type, job and task exists; returns whether it did.
  bool add(DepType type, uint64_t job, uint32_t task, int64_t delay) {
    if (!seen_.insert({static_cast<int>(type), job, task}).second) return false;
    DepEntry e;
    e.type = type;
    e.job_id = job;
    e.array_task = task;
    e.delay_min = delay;
    dep_.entries.push_back(e);
    return true;
  }
  DepEntry& last() { return dep_.entries.back(); }

 private:
  Dependency& dep_;
  std::set<std::tuple<int, uint64_t, uint32_t>> seen_;
};

// "12" or "12_3" / "12_*": afterany, nothing else allowed.
void parse_plain(std::string_view item, Builder& out) {
  size_t p = 0;
  uint64_t job = read_job_id(item, p);
  uint32_t task = kNoArrayTask;
  if (p < item.size() && item[p] == '_') {
    ++p;
    task = read_task(item, p);
  }
  if (p != item.size()) fail();
  out.add(DepType::AfterAny, job, task, 0);
}

// The ids after "type:", split at ':'.
void parse_typed(DepType type, std::string_view ids, uint32_t max_array_size, Builder& out) {
  int64_t delay = 0;  // a "+N" applies to its own id and carries over to the following ones
  size_t start = 0;
  while (start <= ids.size()) {
    size_t end = ids.find(':', start);
    if (end == std::string_view::npos) end = ids.size();
    std::string_view el = ids.substr(start, end - start);
    if (el.empty()) fail();
    size_t p = 0;
    uint64_t job = read_job_id(el, p);
    bool added = false;
    if (p < el.size() && el[p] == '_') {
      ++p;
      if (p < el.size() && el[p] == '[') {
        for (uint32_t t : read_task_list(el, p, max_array_size).to_vector())
          added = out.add(type, job, t, delay);
      } else {
        added = out.add(type, job, read_task(el, p), delay);
      }
    } else {
      added = out.add(type, job, kNoArrayTask, delay);
    }
    if (p < el.size() && el[p] == '+') {
      ++p;
      // Read like strtol, kept as a C int (must be > 0), stored by Slurm as 32-bit seconds;
      // whatever follows the number is ignored ("+5min" is 5).
      const int64_t v = c_strtol(el, p);
      const auto minutes = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
      if (minutes <= 0) fail();
      delay = static_cast<uint32_t>(static_cast<uint64_t>(minutes) * 60) / 60;
      if (added) out.last().delay_min = delay;
    } else if (p != el.size()) {
      fail();
    }
    start = end + 1;
  }
}

void append_entry(std::string& out, const DepEntry& e, bool is_array, bool with_state) {
  out += dep_type_name(e.type);
  if (e.type != DepType::Singleton) {
    out += ':';
    out += std::to_string(e.job_id);
    if (e.array_task != kNoArrayTask)
      out += "_" + std::to_string(e.array_task);
    else if (is_array)
      out += "_*";
    if (e.delay_min > 0) out += "+" + std::to_string(e.delay_min);
  }
  if (with_state) out += e.state == DepState::Failed ? "(failed)" : "(unfulfilled)";
}

}  // namespace

Dependency parse_dependency(std::string_view text) {
  return parse_dependency(text, kDefaultMaxArraySize);
}

Dependency parse_dependency(std::string_view text, uint32_t max_array_size) {
  Dependency dep;
  Builder out(dep);
  if (text.empty()) return dep;
  if (is_digit(text[0])) {
    // Plain ids only: "12,13" (Slurm refuses "12?13" and "12,afterok:13").
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find(',', start);
      if (end == std::string_view::npos) end = text.size();
      if (end == start) fail();
      parse_plain(text.substr(start, end - start), out);
      start = end + 1;
    }
    return dep;
  }
  dep.any = text.find('?') != std::string_view::npos;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = start;  // the next ',' or '?' outside "[...]"
    for (bool in_brackets = false; end < text.size(); ++end) {
      if (text[end] == '[') in_brackets = true;
      if (text[end] == ']') in_brackets = false;
      if (!in_brackets && (text[end] == ',' || text[end] == '?')) break;
    }
    std::string_view item = text.substr(start, end - start);
    if (item.empty()) fail();
    if (iequals(item, "singleton")) {
      out.add(DepType::Singleton, 0, kNoArrayTask, 0);
    } else if (size_t colon = item.find(':'); colon != std::string_view::npos) {
      std::string_view name = item.substr(0, colon);
      auto type = type_from_name(name);
      if (!type) {
        if (iequals(name, "expand")) throw ParseError(kNotSupported);
        fail();
      }
      parse_typed(*type, item.substr(colon + 1), max_array_size, out);
    } else {
      parse_plain(item, out);
    }
    start = end + 1;
  }
  return dep;
}

std::string format_dependency(const Dependency& dep) {
  return format_dependency(dep, [](uint64_t) { return false; });
}

std::string format_dependency(const Dependency& dep,
                              const std::function<bool(uint64_t job_id)>& is_array) {
  std::string out;
  for (const auto& e : dep.entries) {
    if (e.state == DepState::Satisfied) continue;
    if (!out.empty()) out += dep.any ? '?' : ',';
    bool whole_array =
        e.type != DepType::Singleton && e.array_task == kNoArrayTask && is_array(e.job_id);
    append_entry(out, e, whole_array, true);
  }
  return out;
}

std::string format_dependency_spec(const Dependency& dep) {
  std::string out;
  for (const auto& e : dep.entries) {
    if (!out.empty()) out += dep.any ? '?' : ',';
    append_entry(out, e, false, false);
  }
  return out;
}

std::string_view dep_type_name(DepType t) {
  switch (t) {
    case DepType::After:
      return "after";
    case DepType::AfterAny:
      return "afterany";
    case DepType::AfterOk:
      return "afterok";
    case DepType::AfterNotOk:
      return "afternotok";
    case DepType::AfterCorr:
      return "aftercorr";
    case DepType::AfterBurstBuffer:
      return "afterburstbuffer";
    case DepType::Singleton:
      return "singleton";
  }
  return "unknown";
}

}  // namespace drover::core
