#include "core/acct_dump.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>
#include <set>

#include "core/duration.hpp"
#include "core/error.hpp"
#include "core/memsize.hpp"
#include "core/text.hpp"

namespace drover::core {
namespace {

constexpr const char* kFixedTres[] = {"cpu",     "mem",     "energy", "node",
                                      "billing", "fs/disk", "vmem",   "pages"};
constexpr const char* kQosFlags[] = {
    "DenyOnLimit",         "EnforceUsageThreshold", "NoDecay",           "NoReserve",
    "OverPartQOS",         "PartitionMaxNodes",     "PartitionMinNodes", "PartitionTimeLimit",
    "RequiresReservation", "UsageFactorSafe"};
constexpr const char* kPreemptModes[] = {"off",  "cancel", "requeue", "suspend",
                                         "gang", "within", "cluster"};
constexpr const char* kAdminLevels[] = {"None", "Operator", "Administrator"};

int fixed_tres_rank(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kFixedTres)); ++i)
    if (name == kFixedTres[i]) return i;
  return static_cast<int>(std::size(kFixedTres));
}

bool valid_tres_name(std::string_view name) {
  if (fixed_tres_rank(name) < static_cast<int>(std::size(kFixedTres))) return true;
  for (std::string_view prefix : {"gres/", "license/", "bb/"})
    if (name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix) {
      for (char c : name.substr(prefix.size()))
        if (c == '/' || c == '=' || c == ',' || std::isspace(static_cast<unsigned char>(c)))
          return false;
      return true;
    }
  return false;
}

// A whole number >= 0, or -1; nullopt for anything else.
std::optional<int64_t> parse_count(std::string_view s) {
  if (s == "-1") return kNoLimit;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0 || s.empty()) return std::nullopt;
  return v;
}

std::string format_mem(int64_t mb) {
  if (mb == 0) return "0";
  const char* units = "MGT";
  int unit = 0;
  while (unit < 2 && mb % 1024 == 0) {
    mb /= 1024;
    ++unit;
  }
  return std::to_string(mb) + units[unit];
}

}  // namespace

TresCounts parse_tres_counts(std::string_view text) {
  TresCounts out;
  for (const std::string& item : split_list(text, ',')) {
    const auto eq = item.find('=');
    const std::string name = to_lower(item.substr(0, eq));
    if (eq == std::string::npos || !valid_tres_name(name))
      throw ParseError("invalid TRES '" + item + "'");
    const std::string value = item.substr(eq + 1);
    std::optional<int64_t> n = parse_count(value);
    if (!n && name == "mem") {
      try {
        n = parse_mem_mb(value, "mem");
        if (value.empty() || !std::isdigit(static_cast<unsigned char>(value.front()))) n.reset();
      } catch (const ParseError&) {
      }
    }
    if (!n) throw ParseError("invalid count in TRES '" + item + "'");
    if (*n == kNoLimit)
      out.erase(name);
    else
      out[name] = *n;
  }
  return out;
}

std::string format_tres_counts(const TresCounts& tres) {
  std::vector<std::pair<std::string, int64_t>> items(tres.begin(), tres.end());
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    return fixed_tres_rank(a.first) < fixed_tres_rank(b.first);
  });
  std::string out;
  for (const auto& [name, n] : items) {
    if (!out.empty()) out += ',';
    out += name + '=' + (name == "mem" ? format_mem(n) : std::to_string(n));
  }
  return out;
}

bool QosLine::has_flag(std::string_view flag) const {
  for (const auto& f : flags)
    if (iequals(f, flag)) return true;
  return false;
}

const QosLine* AcctDump::find_qos(std::string_view name) const {
  for (const auto& q : qos)
    if (q.name == name) return &q;
  return nullptr;
}

namespace {

// One logical line of the file: comments gone, continuations joined, escapes resolved.
struct Line {
  int number = 0;
  std::string text;
};

// Slurm's rules: '#' preceded by an even number of '\' starts a comment; an odd number of '\'
// at the end (before trailing blanks) joins the next line; then every '\' escapes what follows.
std::vector<Line> logical_lines(std::string_view text) {
  std::vector<Line> out;
  Line cur;
  bool continuing = false;
  int number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string raw(text.substr(pos, end - pos));
    pos = end + 1;
    ++number;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    int bs = 0;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '#' && bs % 2 == 0) {
        raw.resize(i);
        break;
      }
      bs = raw[i] == '\\' ? bs + 1 : 0;
    }
    size_t last = raw.size();
    while (last > 0 && std::isspace(static_cast<unsigned char>(raw[last - 1]))) --last;
    size_t run = 0;
    while (run < last && raw[last - 1 - run] == '\\') ++run;
    const bool continues = run % 2 == 1;
    if (continues) raw.resize(last - 1);
    if (!continuing) cur = Line{number, ""};
    cur.text += raw;
    continuing = continues;
    if (!continuing) out.push_back(std::move(cur));
  }
  if (continuing) out.push_back(std::move(cur));
  for (Line& l : out) {
    std::string plain;
    for (size_t i = 0; i < l.text.size(); ++i) {
      if (l.text[i] == '\\' && i + 1 < l.text.size())
        ++i;
      else if (l.text[i] == '\\')
        continue;
      plain += l.text[i];
    }
    l.text = std::move(plain);
  }
  return out;
}

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

// Key=Value (or a bare name for the first field), the value unquoted.
struct Field {
  std::string key;  // empty for the record's name
  std::string value;
};

class LineParser {
 public:
  LineParser(const std::string& source, int line) : source_(source), line_(line) {}

  [[noreturn]] void fail(const std::string& msg) const {
    // Line 0: options that come from no file (the accounting store).
    throw ParseError(source_ + (line_ > 0 ? ":" + std::to_string(line_) : std::string()) + ": " +
                     msg);
  }

  // Splits "'name':Key=Value:Key='v:w'" at ':' outside quotes.
  std::vector<Field> fields(std::string_view rest) const {
    std::vector<std::string> parts;
    std::string cur;
    char quote = 0;
    for (char c : rest) {
      if (quote) {
        if (c == quote) quote = 0;
        cur += c;
      } else if (c == '\'' || c == '"') {
        quote = c;
        cur += c;
      } else if (c == ':') {
        parts.push_back(std::move(cur));
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (quote) fail("unterminated quote");
    parts.push_back(std::move(cur));
    std::vector<Field> out;
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string part = trim(parts[i]);
      if (part.empty()) continue;  // "::" or a trailing ':'
      if (i == 0) {
        out.push_back({"", unquote(part)});
        continue;
      }
      const auto eq = part.find('=');
      if (eq == std::string::npos || eq == 0)
        fail("'" + part + "' is not Key=Value (quote values holding ':', e.g. MaxWall='1:00:00')");
      Field f{trim(part.substr(0, eq)), unquote(trim(part.substr(eq + 1)))};
      // As sacctmgr: a blank value ("Description=''") is dropped.
      if (!f.value.empty()) out.push_back(std::move(f));
    }
    if (trim(parts[0]).empty()) fail("no name given");
    return out;
  }

  std::string unquote(const std::string& v) const {
    if (!v.empty() && (v.front() == '\'' || v.front() == '"')) {
      if (v.size() < 2 || v.back() != v.front() || v.find(v.front(), 1) != v.size() - 1)
        fail("badly quoted value " + v);
      return v.substr(1, v.size() - 2);
    }
    if (v.find_first_of("'\"") != std::string::npos) fail("badly quoted value " + v);
    return v;
  }

  int64_t count(const Field& f) const {
    auto n = parse_count(f.value);
    if (!n) fail(f.key + "=" + f.value + ": not a whole number (or -1)");
    return *n;
  }
  TresCounts tres(const Field& f) const {
    try {
      return parse_tres_counts(f.value);
    } catch (const ParseError& e) {
      fail(f.key + ": " + e.what());
    }
  }
  // A TRES list for `into`: replacing it, or with merge_tres (sacctmgr's modify) editing it per
  // TRES, a count of -1 taking that TRES out and leaving the others.
  void assign_tres(TresCounts& into, const Field& f) const {
    if (!merge_tres) {
      into = tres(f);
      return;
    }
    for (const std::string& item : split_list(f.value, ',')) {
      const TresCounts one = tres(Field{f.key, item});
      if (one.empty())
        into.erase(to_lower(item.substr(0, item.find('='))));
      else
        into[one.begin()->first] = one.begin()->second;
    }
  }
  bool merge_tres = false;
  // Slurm time (minutes): "60", "1:00:00", "1-0"; -1 / UNLIMITED: no limit.
  int64_t minutes(const Field& f) const {
    try {
      const int64_t m = parse_time_limit_minutes(f.value);
      return m < 0 ? kNoLimit : m;
    } catch (const ParseError&) {
      fail(f.key + "=" + f.value + ": not a time (minutes, or [D-]H:M:S)");
    }
  }
  // Slurm's time_str2secs: "M", "M:S", "H:M:S", "D-H[:M[:S]]"; -1 / UNLIMITED: none.
  int64_t seconds(const Field& f) const {
    const std::string& v = f.value;
    if (v == "-1" || iequals(v, "INFINITE") || iequals(v, "UNLIMITED")) return kNoLimit;
    auto bad = [&]() -> int64_t { fail(f.key + "=" + v + ": not a time ([D-]H:M:S)"); };
    std::vector<int64_t> parts;
    int64_t days = 0;
    std::string_view rest = v;
    if (auto dash = rest.find('-'); dash != std::string_view::npos) {
      auto d = parse_count(rest.substr(0, dash));
      if (!d || *d < 0) return bad();
      days = *d;
      rest = rest.substr(dash + 1);
    }
    for (const auto& piece : split_list(rest, ':')) {
      auto n = parse_count(piece);
      if (!n || *n < 0 || *n > 1000000) return bad();
      parts.push_back(*n);
    }
    if (parts.size() > 3 || std::count(v.begin(), v.end(), ':') + 1 !=
                                static_cast<std::ptrdiff_t>(std::max<size_t>(parts.size(), 1)))
      return bad();
    if (days > 0 || v.find('-') != std::string::npos) {
      parts.resize(3, 0);
      return days * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2];
    }
    if (parts.empty()) return bad();
    if (parts.size() == 3) return parts[0] * 3600 + parts[1] * 60 + parts[2];
    if (parts.size() == 2) return parts[0] * 60 + parts[1];
    return parts[0] * 60;
  }
  double number(const Field& f) const {
    try {
      size_t used = 0;
      const double d = std::stod(f.value, &used);
      if (used == f.value.size() && d >= 0) return d;
    } catch (const std::exception&) {
    }
    fail(f.key + "=" + f.value + ": not a number");
  }
  std::vector<std::string> names(const Field& f, bool lower) const {
    std::vector<std::string> out;
    for (const auto& n : split_list(f.value, ','))
      out.push_back(lower ? to_lower(trim(n)) : trim(n));
    return out;
  }

 private:
  const std::string& source_;
  int line_;
};

// sacctmgr's key matching: the key is a prefix of the keyword, at least `min` long.
bool key_is(std::string_view key, std::string_view keyword, size_t min) {
  return key.size() >= min && key.size() <= keyword.size() &&
         iequals(key, keyword.substr(0, key.size()));
}

// Applies one association option; false when the key is not an association option.
// An old single-TRES key (GrpCPUs=, MaxNodesPerJob=, ...): sets that TRES of a TRES list, or
// takes it out for -1.
void set_single_tres(const LineParser& p, const Field& f, const char* tres, TresCounts& into) {
  const int64_t n = p.count(f);
  if (n == kNoLimit)
    into.erase(tres);
  else
    into[tres] = n;
}

bool assoc_option(const LineParser& p, const Field& f, AcctAssocLine& a) {
  const std::string& k = f.key;
  AssocLimits& l = a.limits;
  auto single = [&](const char* tres, TresCounts& into) { set_single_tres(p, f, tres, into); };
  if (key_is(k, "DefaultQOS", 8)) {
    a.default_qos = to_lower(f.value);
  } else if (key_is(k, "FairShare", 1) || key_is(k, "Shares", 1)) {
    if (iequals(f.value, "parent")) {
      a.fairshare_parent = true;
      a.fairshare = kNoLimit;
    } else {
      a.fairshare = p.count(f);
      a.fairshare_parent = false;
      if (a.fairshare > 4294967294LL) p.fail("Fairshare=" + f.value + ": too large");
    }
  } else if (key_is(k, "GrpCPUMins", 7)) {
    single("cpu", l.grp_tres_mins);
  } else if (key_is(k, "GrpCPURunMins", 7)) {
    single("cpu", l.grp_tres_run_mins);
  } else if (key_is(k, "GrpCpus", 7)) {
    single("cpu", l.grp_tres);
  } else if (key_is(k, "GrpJobs", 4)) {
    l.grp_jobs = p.count(f);
  } else if (key_is(k, "GrpJobsAccrue", 8)) {
    l.grp_jobs_accrue = p.count(f);
  } else if (key_is(k, "GrpMemory", 4)) {
    single("mem", l.grp_tres);
  } else if (key_is(k, "GrpNodes", 4)) {
    single("node", l.grp_tres);
  } else if (key_is(k, "GrpSubmitJobs", 4)) {
    l.grp_submit_jobs = p.count(f);
  } else if (key_is(k, "GrpTRES", 7)) {
    p.assign_tres(l.grp_tres, f);
  } else if (key_is(k, "GrpTRESMins", 8)) {
    p.assign_tres(l.grp_tres_mins, f);
  } else if (key_is(k, "GrpTRESRunMins", 8)) {
    p.assign_tres(l.grp_tres_run_mins, f);
  } else if (key_is(k, "GrpWall", 4)) {
    l.grp_wall_min = p.minutes(f);
  } else if (key_is(k, "MaxCPUMinsPerJob", 7)) {
    single("cpu", l.max_tres_mins_per_job);
  } else if (key_is(k, "MaxCPURunMins", 7)) {
    single("cpu", l.max_tres_run_mins);
  } else if (key_is(k, "MaxCpusPerJob", 7)) {
    single("cpu", l.max_tres_per_job);
  } else if (key_is(k, "MaxJobs", 4)) {
    l.max_jobs = p.count(f);
  } else if (key_is(k, "MaxJobsAccrue", 8)) {
    l.max_jobs_accrue = p.count(f);
  } else if (key_is(k, "MaxNodesPerJob", 4)) {
    single("node", l.max_tres_per_job);
  } else if (key_is(k, "MinPrioThresh", 4)) {
    l.min_prio_thresh = p.count(f);
  } else if (key_is(k, "MaxSubmitJobs", 4)) {
    l.max_submit_jobs = p.count(f);
  } else if (key_is(k, "MaxTRESPerJob", 7)) {
    p.assign_tres(l.max_tres_per_job, f);
  } else if (key_is(k, "MaxTRESPerNode", 11)) {
    p.assign_tres(l.max_tres_per_node, f);
  } else if (key_is(k, "MaxTRESMinsPerJob", 8)) {
    p.assign_tres(l.max_tres_mins_per_job, f);
  } else if (key_is(k, "MaxTRESRunMins", 8)) {
    p.assign_tres(l.max_tres_run_mins, f);
  } else if (key_is(k, "MaxWallDurationPerJob", 4)) {
    l.max_wall_min = p.minutes(f);
  } else if (key_is(k, "Priority", 2)) {
    l.priority = p.count(f);
  } else if (key_is(k, "QosLevel", 1)) {
    a.qos = p.names(f, true);
    a.qos_set = true;
  } else {
    return false;
  }
  return true;
}

void qos_option(const LineParser& p, const Field& f, QosLine& q) {
  const std::string& k = f.key;
  auto single = [&](const char* tres, TresCounts& into) { set_single_tres(p, f, tres, into); };
  if (key_is(k, "Description", 1)) {
    q.description = f.value;
  } else if (key_is(k, "Flags", 2)) {
    q.flags.clear();
    for (const auto& name : p.names(f, false)) {
      if (iequals(name, "None") || name == "-1") continue;
      const char* const* it = std::find_if(std::begin(kQosFlags), std::end(kQosFlags),
                                           [&](const char* known) { return iequals(name, known); });
      if (it == std::end(kQosFlags)) p.fail("unknown QOS flag '" + name + "'");
      if (!q.has_flag(*it)) q.flags.push_back(*it);
    }
  } else if (key_is(k, "GraceTime", 3)) {
    q.grace_time_s = p.count(f);
    if (q.grace_time_s == kNoLimit) q.grace_time_s = 0;
  } else if (key_is(k, "GrpCPUMins", 7)) {
    single("cpu", q.grp_tres_mins);
  } else if (key_is(k, "GrpCPURunMins", 7)) {
    single("cpu", q.grp_tres_run_mins);
  } else if (key_is(k, "GrpCPUs", 7)) {
    single("cpu", q.grp_tres);
  } else if (key_is(k, "GrpJobs", 4)) {
    q.grp_jobs = p.count(f);
  } else if (key_is(k, "GrpJobsAccrue", 8)) {
    q.grp_jobs_accrue = p.count(f);
  } else if (key_is(k, "GrpMemory", 4)) {
    single("mem", q.grp_tres);
  } else if (key_is(k, "GrpNodes", 4)) {
    single("node", q.grp_tres);
  } else if (key_is(k, "GrpSubmitJobs", 4)) {
    q.grp_submit_jobs = p.count(f);
  } else if (key_is(k, "GrpTRES", 7)) {
    p.assign_tres(q.grp_tres, f);
  } else if (key_is(k, "GrpTRESMins", 8)) {
    p.assign_tres(q.grp_tres_mins, f);
  } else if (key_is(k, "GrpTRESRunMins", 8)) {
    p.assign_tres(q.grp_tres_run_mins, f);
  } else if (key_is(k, "GrpWall", 4)) {
    q.grp_wall_min = p.minutes(f);
  } else if (key_is(k, "LimitFactor", 6)) {
    q.limit_factor = p.number(f);
  } else if (key_is(k, "MaxCPUMinsPerJob", 7)) {
    single("cpu", q.max_tres_mins_per_job);
  } else if (key_is(k, "MaxCPUsPerJob", 7)) {
    single("cpu", q.max_tres_per_job);
  } else if (key_is(k, "MaxCPUsPerUser", 11) || key_is(k, "MaxCPUsPU", 9)) {
    single("cpu", q.max_tres_per_user);
  } else if (key_is(k, "MaxJobsAccruePerAccount", 17) || key_is(k, "MaxJobsAccruePA", 15)) {
    q.max_jobs_accrue_per_account = p.count(f);
  } else if (key_is(k, "MaxJobsAccruePerUser", 17) || key_is(k, "MaxJobsAccruePU", 15)) {
    q.max_jobs_accrue_per_user = p.count(f);
  } else if (key_is(k, "MaxJobsPerAccount", 11) || key_is(k, "MaxJobsPA", 9)) {
    q.max_jobs_per_account = p.count(f);
  } else if (key_is(k, "MaxJobsPerUser", 4) || key_is(k, "MaxJobsPU", 4)) {
    q.max_jobs_per_user = p.count(f);
  } else if (key_is(k, "MaxNodesPerJob", 4)) {
    single("node", q.max_tres_per_job);
  } else if (key_is(k, "MaxNodesPerUser", 8) || key_is(k, "MaxNodesPU", 8)) {
    single("node", q.max_tres_per_user);
  } else if (key_is(k, "MaxSubmitJobsPerAccount", 17) || key_is(k, "MaxSubmitJobsPA", 15)) {
    q.max_submit_jobs_per_account = p.count(f);
  } else if (key_is(k, "MaxSubmitJobsPerUser", 4) || key_is(k, "MaxSubmitJobsPU", 4)) {
    q.max_submit_jobs_per_user = p.count(f);
  } else if (key_is(k, "MaxTRESPerAccount", 11) || key_is(k, "MaxTRESPA", 9)) {
    p.assign_tres(q.max_tres_per_account, f);
  } else if (key_is(k, "MaxTRESPerJob", 7)) {
    p.assign_tres(q.max_tres_per_job, f);
  } else if (key_is(k, "MaxTRESPerNode", 11)) {
    p.assign_tres(q.max_tres_per_node, f);
  } else if (key_is(k, "MaxTRESPerUser", 11) || key_is(k, "MaxTRESPU", 9)) {
    p.assign_tres(q.max_tres_per_user, f);
  } else if (key_is(k, "MaxTRESMinsPerJob", 8)) {
    p.assign_tres(q.max_tres_mins_per_job, f);
  } else if (key_is(k, "MaxTRESRunMinsPA", 16)) {
    p.assign_tres(q.max_tres_run_mins_per_account, f);
  } else if (key_is(k, "MaxTRESRunMinsPU", 8)) {
    p.assign_tres(q.max_tres_run_mins_per_user, f);
  } else if (key_is(k, "MaxWallDurationPerJob", 4)) {
    q.max_wall_min = p.minutes(f);
  } else if (key_is(k, "MinCPUsPerJob", 7)) {
    single("cpu", q.min_tres_per_job);
  } else if (key_is(k, "MinPrioThresh", 4)) {
    q.min_prio_thresh = p.count(f);
  } else if (key_is(k, "MinTRESPerJob", 7)) {
    p.assign_tres(q.min_tres_per_job, f);
  } else if (key_is(k, "PreemptMode", 8)) {
    q.preempt_mode.clear();
    for (const auto& mode : p.names(f, true)) {
      if (std::find(std::begin(kPreemptModes), std::end(kPreemptModes), mode) ==
          std::end(kPreemptModes))
        p.fail("unknown PreemptMode '" + mode + "'");
      q.preempt_mode.push_back(mode);
    }
  } else if (key_is(k, "Preempt", 7)) {
    q.preempt.clear();
    for (const auto& name : p.names(f, true))
      if (name != "''" && name != "-1") q.preempt.push_back(name);
  } else if (key_is(k, "PreemptExemptTime", 8)) {
    q.preempt_exempt_time_s = p.seconds(f);
  } else if (key_is(k, "Priority", 3)) {
    q.priority = p.count(f);
    if (q.priority == kNoLimit) q.priority = 0;
  } else if (key_is(k, "UsageFactor", 6)) {
    q.usage_factor = p.number(f);
  } else if (key_is(k, "UsageThreshold", 6)) {
    q.usage_threshold = p.number(f);
  } else {
    p.fail("unknown QOS option '" + k + "'");
  }
}

void check_name(const LineParser& p, const std::string& what, const std::string& name) {
  if (name.empty()) p.fail(what + " name is empty");
  if (name.front() == '+' || name.front() == '-')
    p.fail(what + " name '" + name + "' may not start with '+' or '-'");
  for (char c : name)
    if (std::iscntrl(static_cast<unsigned char>(c)) || c == ',' || c == '\'' || c == '"')
      p.fail(what + " name '" + name + "' has characters names may not hold");
}

}  // namespace

AcctDump parse_acct_dump(std::string_view text, std::string_view source_name) {
  AcctDump dump;
  dump.source = std::string(source_name);
  const std::string& source = dump.source;
  bool have_cluster = false;
  std::string parent = "root";
  std::map<std::string, int> accounts = {{"root", 0}};  // name -> defining line
  std::set<std::tuple<std::string, std::string, std::string>> user_assocs;

  for (const Line& l : logical_lines(text)) {
    const std::string body = trim(l.text);
    if (body.empty()) continue;
    LineParser p(source, l.number);
    const auto dash = body.find('-');
    if (dash == std::string::npos)
      p.fail("expected 'Cluster|Parent|Account|User|QOS - name[:Key=Value...]'");
    const std::string object = trim(body.substr(0, dash));
    const std::vector<Field> fields = p.fields(body.substr(dash + 1));
    const std::string& name = fields.front().value;

    if (iequals(object, "QOS")) {
      QosLine q;
      q.name = to_lower(name);
      q.line = l.number;
      check_name(p, "QOS", q.name);
      if (const QosLine* prev = dump.find_qos(q.name))
        p.fail("QOS '" + q.name + "' is defined twice (first on line " +
               std::to_string(prev->line) + ")");
      for (size_t i = 1; i < fields.size(); ++i) qos_option(p, fields[i], q);
      dump.qos.push_back(std::move(q));
      continue;
    }
    const bool is_cluster = iequals(object, "Cluster") || iequals(object, "Machine");
    if (!is_cluster && !iequals(object, "Parent") && !iequals(object, "Account") &&
        !iequals(object, "User"))
      p.fail("unknown record type '" + object + "' (Cluster, Parent, Account, User or QOS)");
    if (is_cluster && have_cluster) p.fail("only one Cluster line may be given");
    if (!is_cluster && !have_cluster)
      p.fail("the file must start with its Cluster line ('Cluster - name')");

    if (iequals(object, "Parent")) {
      if (fields.size() > 1) p.fail("a Parent line takes only an account name");
      parent = to_lower(name);
      if (!accounts.count(parent))
        p.fail("Parent '" + parent + "' is not an account defined above");
      continue;
    }

    AcctAssocLine a;
    a.line = l.number;
    if (is_cluster) {
      a.kind = AcctAssocLine::Kind::Cluster;
      a.name = to_lower(name);
      check_name(p, "cluster", a.name);
    } else if (iequals(object, "Account")) {
      a.kind = AcctAssocLine::Kind::Account;
      a.name = to_lower(name);
      a.parent = parent;
      check_name(p, "account", a.name);
      if (auto it = accounts.find(a.name); it != accounts.end())
        p.fail(a.name == "root" ? std::string("account 'root' always exists")
                                : "account '" + a.name + "' is defined twice (first on line " +
                                      std::to_string(it->second) + ")");
    } else {
      a.kind = AcctAssocLine::Kind::User;
      a.name = name;
      a.parent = parent;
      check_name(p, "user", a.name);
    }
    for (size_t i = 1; i < fields.size(); ++i) {
      const Field& f = fields[i];
      const std::string& k = f.key;
      auto only = [&](AcctAssocLine::Kind kind, const char* line_kind) {
        if (a.kind != kind) p.fail(k + " is an option of " + line_kind + " lines only");
      };
      if (key_is(k, "AdminLevel", 2)) {
        only(AcctAssocLine::Kind::User, "User");
        const char* const* it =
            std::find_if(std::begin(kAdminLevels), std::end(kAdminLevels),
                         [&](const char* lvl) { return iequals(f.value, lvl); });
        if (iequals(f.value, "Admin")) it = &kAdminLevels[2];
        if (it == std::end(kAdminLevels)) p.fail("unknown AdminLevel '" + f.value + "'");
        a.admin_level = *it;
      } else if (key_is(k, "Coordinator", 2)) {
        only(AcctAssocLine::Kind::User, "User");
        a.coordinators = p.names(f, true);
      } else if (key_is(k, "Classification", 2)) {
        only(AcctAssocLine::Kind::Cluster, "Cluster");
        a.classification = to_lower(f.value);
      } else if (key_is(k, "DefaultAccount", 8)) {
        only(AcctAssocLine::Kind::User, "User");
        a.default_account = to_lower(f.value);
      } else if (key_is(k, "DefaultWCKey", 8)) {
        only(AcctAssocLine::Kind::User, "User");
        a.default_wckey = f.value;
      } else if (key_is(k, "Description", 3)) {
        only(AcctAssocLine::Kind::Account, "Account");
        a.description = f.value;
      } else if (key_is(k, "Organization", 1)) {
        only(AcctAssocLine::Kind::Account, "Account");
        a.organization = f.value;
      } else if (key_is(k, "Partition", 1)) {
        only(AcctAssocLine::Kind::User, "User");
        a.partition = f.value;
      } else if (key_is(k, "WCKeys", 2)) {
        only(AcctAssocLine::Kind::User, "User");
        a.wckeys = p.names(f, false);
      } else if (!assoc_option(p, f, a)) {
        p.fail("unknown option '" + k + "'");
      }
    }
    switch (a.kind) {
      case AcctAssocLine::Kind::Cluster:
        have_cluster = true;
        dump.cluster = std::move(a);
        break;
      case AcctAssocLine::Kind::Account:
        accounts.emplace(a.name, a.line);
        dump.assocs.push_back(std::move(a));
        break;
      case AcctAssocLine::Kind::User:
        if (!user_assocs.insert({a.name, a.parent, a.partition}).second)
          p.fail("user '" + a.name + "' is already in account '" + a.parent + "'" +
                 (a.partition.empty() ? "" : " for partition '" + a.partition + "'"));
        dump.assocs.push_back(std::move(a));
        break;
    }
  }
  if (!have_cluster)
    throw ParseError(source + ": no Cluster line ('Cluster - name' must come first)");

  // "normal" always exists, as in Slurm's database.
  if (!dump.find_qos("normal")) {
    QosLine normal;
    normal.name = "normal";
    normal.description = "Normal QOS default";
    dump.qos.insert(dump.qos.begin(), std::move(normal));
  }
  auto check_qos = [&](int line, const std::string& name, const std::string& what) {
    std::string bare = name;
    if (!bare.empty() && (bare.front() == '+' || bare.front() == '-')) bare.erase(0, 1);
    if (!dump.find_qos(bare))
      throw ParseError(source + ":" + std::to_string(line) + ": " + what + " names QOS '" + bare +
                       "', which is not defined (add a 'QOS - " + bare + "' line)");
  };
  auto check_assoc_qos = [&](const AcctAssocLine& a) {
    for (const auto& q : a.qos) check_qos(a.line, q, "QOS=");
    if (!a.default_qos.empty()) check_qos(a.line, a.default_qos, "DefaultQOS=");
  };
  check_assoc_qos(dump.cluster);
  for (const auto& a : dump.assocs) check_assoc_qos(a);
  for (const auto& q : dump.qos)
    for (const auto& target : q.preempt) check_qos(q.line, target, "Preempt=");

  // A user's record: its DefaultAccount must be one of its accounts; unset, the first one.
  std::map<std::string, std::pair<std::string, int>> default_account;  // user -> (acct, line)
  for (const auto& a : dump.assocs) {
    if (a.kind != AcctAssocLine::Kind::User || a.default_account.empty()) continue;
    auto [it, fresh] = default_account.emplace(a.name, std::pair{a.default_account, a.line});
    if (!fresh && it->second.first != a.default_account)
      throw ParseError(source + ":" + std::to_string(a.line) + ": user '" + a.name +
                       "' has DefaultAccount '" + a.default_account + "' here but '" +
                       it->second.first + "' on line " + std::to_string(it->second.second));
  }
  for (const auto& entry : default_account) {
    const std::string& user = entry.first;
    const auto& acct = entry.second;
    const bool member = std::any_of(dump.assocs.begin(), dump.assocs.end(), [&](const auto& a) {
      return a.kind == AcctAssocLine::Kind::User && a.name == user && a.parent == acct.first;
    });
    if (!member)
      throw ParseError(source + ":" + std::to_string(acct.second) + ": user '" + user +
                       "' has DefaultAccount '" + acct.first + "' but no line in that account");
  }
  for (auto& a : dump.assocs) {
    if (a.kind != AcctAssocLine::Kind::User) continue;
    if (auto it = default_account.find(a.name); it != default_account.end()) {
      a.default_account = it->second.first;
    } else {
      default_account.emplace(a.name, std::pair{a.parent, a.line});
      a.default_account = a.parent;
    }
  }
  return dump;
}

namespace {

std::string quoted(const std::string& v) {
  const char q = v.find('\'') == std::string::npos ? '\'' : '"';
  std::string out(1, q);
  for (char c : v) {
    if (c == '\\' || c == '#') out += '\\';
    out += c;
  }
  return out + q;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

void add_limits(std::string& line, const AcctAssocLine& a) {
  const AssocLimits& l = a.limits;
  auto num = [&](const char* key, int64_t v) {
    if (v != kNoLimit) line += std::string(":") + key + "=" + std::to_string(v);
  };
  auto tres = [&](const char* key, const TresCounts& t) {
    if (!t.empty()) line += std::string(":") + key + "=" + format_tres_counts(t);
  };
  if (!a.default_qos.empty()) line += ":DefaultQOS=" + quoted(a.default_qos);
  if (a.fairshare_parent)
    line += ":Fairshare=parent";
  else
    num("Fairshare", a.fairshare);
  tres("GrpTRESMins", l.grp_tres_mins);
  tres("GrpTRESRunMins", l.grp_tres_run_mins);
  tres("GrpTRES", l.grp_tres);
  num("GrpJobs", l.grp_jobs);
  num("GrpJobsAccrue", l.grp_jobs_accrue);
  num("GrpSubmitJobs", l.grp_submit_jobs);
  num("GrpWall", l.grp_wall_min);
  tres("MaxTRESMinsPerJob", l.max_tres_mins_per_job);
  tres("MaxTRESRunMins", l.max_tres_run_mins);
  tres("MaxTRESPerJob", l.max_tres_per_job);
  tres("MaxTRESPerNode", l.max_tres_per_node);
  num("MaxJobs", l.max_jobs);
  num("MaxJobsAccrue", l.max_jobs_accrue);
  num("MaxSubmitJobs", l.max_submit_jobs);
  num("MaxWallDurationPerJob", l.max_wall_min);
  num("MinPrioThresh", l.min_prio_thresh);
  num("Priority", l.priority);
  if (a.qos_set) line += ":QOS=" + quoted(joined(a.qos));
}

std::string assoc_line(const AcctAssocLine& a) {
  std::string line;
  switch (a.kind) {
    case AcctAssocLine::Kind::Cluster:
      line = "Cluster - " + quoted(a.name);
      if (!a.classification.empty()) line += ":Classification=" + quoted(a.classification);
      break;
    case AcctAssocLine::Kind::Account:
      line = "Account - " + quoted(a.name);
      if (!a.description.empty()) line += ":Description=" + quoted(a.description);
      if (!a.organization.empty()) line += ":Organization=" + quoted(a.organization);
      break;
    case AcctAssocLine::Kind::User:
      line = "User - " + quoted(a.name);
      if (!a.partition.empty()) line += ":Partition=" + quoted(a.partition);
      line += ":DefaultAccount=" + quoted(a.default_account);
      if (!a.default_wckey.empty()) line += ":DefaultWCKey=" + quoted(a.default_wckey);
      if (!a.admin_level.empty() && a.admin_level != "None")
        line += ":AdminLevel=" + quoted(a.admin_level);
      if (!a.coordinators.empty()) line += ":Coordinator=" + quoted(joined(a.coordinators));
      if (!a.wckeys.empty()) line += ":WCKeys=" + quoted(joined(a.wckeys));
      break;
  }
  add_limits(line, a);
  return line;
}

std::string qos_line(const QosLine& q) {
  std::string line = "QOS - " + quoted(q.name);
  auto num = [&](const char* key, int64_t v) {
    if (v != kNoLimit) line += std::string(":") + key + "=" + std::to_string(v);
  };
  auto real = [&](const char* key, double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    line += std::string(":") + key + "=" + s;
  };
  auto tres = [&](const char* key, const TresCounts& t) {
    if (!t.empty()) line += std::string(":") + key + "=" + format_tres_counts(t);
  };
  if (!q.description.empty()) line += ":Description=" + quoted(q.description);
  if (!q.flags.empty()) line += ":Flags=" + joined(q.flags);
  if (q.grace_time_s != 0) num("GraceTime", q.grace_time_s);
  tres("GrpTRES", q.grp_tres);
  tres("GrpTRESMins", q.grp_tres_mins);
  tres("GrpTRESRunMins", q.grp_tres_run_mins);
  num("GrpJobs", q.grp_jobs);
  num("GrpJobsAccrue", q.grp_jobs_accrue);
  num("GrpSubmitJobs", q.grp_submit_jobs);
  num("GrpWall", q.grp_wall_min);
  if (q.limit_factor >= 0) real("LimitFactor", q.limit_factor);
  num("MaxJobsPerAccount", q.max_jobs_per_account);
  num("MaxJobsPerUser", q.max_jobs_per_user);
  num("MaxJobsAccruePerAccount", q.max_jobs_accrue_per_account);
  num("MaxJobsAccruePerUser", q.max_jobs_accrue_per_user);
  num("MaxSubmitJobsPerAccount", q.max_submit_jobs_per_account);
  num("MaxSubmitJobsPerUser", q.max_submit_jobs_per_user);
  tres("MaxTRESPerAccount", q.max_tres_per_account);
  tres("MaxTRESPerJob", q.max_tres_per_job);
  tres("MaxTRESPerNode", q.max_tres_per_node);
  tres("MaxTRESPerUser", q.max_tres_per_user);
  tres("MaxTRESMinsPerJob", q.max_tres_mins_per_job);
  tres("MaxTRESRunMinsPA", q.max_tres_run_mins_per_account);
  tres("MaxTRESRunMinsPU", q.max_tres_run_mins_per_user);
  num("MaxWallDurationPerJob", q.max_wall_min);
  tres("MinTRESPerJob", q.min_tres_per_job);
  num("MinPrioThresh", q.min_prio_thresh);
  if (!q.preempt.empty()) line += ":Preempt=" + quoted(joined(q.preempt));
  if (!q.preempt_mode.empty()) line += ":PreemptMode=" + joined(q.preempt_mode);
  if (q.preempt_exempt_time_s != kNoLimit) {
    const int64_t t = q.preempt_exempt_time_s;
    line += ":PreemptExemptTime='" + std::to_string(t / 86400) + "-" +
            std::to_string(t % 86400 / 3600) + ":" + std::to_string(t % 3600 / 60) + ":" +
            std::to_string(t % 60) + "'";
  }
  if (q.priority != 0) num("Priority", q.priority);
  if (q.usage_factor != 1.0) real("UsageFactor", q.usage_factor);
  if (q.usage_threshold >= 0) real("UsageThreshold", q.usage_threshold);
  return line;
}

// Options without the line's leading ':' (the record line puts its own first).
std::string without_colon(std::string s) { return s.empty() ? s : s.substr(1); }

// The options as one line of the file: escapes resolved, as the file's reader does.
std::string options_line(std::string_view options) {
  std::string text;
  for (const Line& l : logical_lines(options)) text += l.text;
  return "'x':" + text;
}

}  // namespace

std::string format_assoc_options(const AcctAssocLine& a) {
  std::string out;
  add_limits(out, a);
  return without_colon(out);
}

std::string format_qos_options(const QosLine& q) {
  const std::string line = qos_line(q);
  const std::string head = "QOS - " + quoted(q.name);
  return without_colon(line.substr(head.size()));
}

void parse_assoc_options(std::string_view options, AcctAssocLine& into, std::string_view what) {
  const std::string source(what);
  LineParser p(source, 0);
  const std::vector<Field> fields = p.fields(options_line(options));
  for (size_t i = 1; i < fields.size(); ++i)
    if (!assoc_option(p, fields[i], into)) p.fail("unknown option '" + fields[i].key + "'");
}

void modify_assoc_options(std::string_view options, AcctAssocLine& into, std::string_view what) {
  const std::string source(what);
  LineParser p(source, 0);
  p.merge_tres = true;
  const std::vector<Field> fields = p.fields(options_line(options));
  for (size_t i = 1; i < fields.size(); ++i)
    if (!assoc_option(p, fields[i], into)) p.fail("unknown option '" + fields[i].key + "'");
}

void modify_qos_options(std::string_view options, QosLine& into, std::string_view what) {
  const std::string source(what);
  LineParser p(source, 0);
  p.merge_tres = true;
  const std::vector<Field> fields = p.fields(options_line(options));
  for (size_t i = 1; i < fields.size(); ++i) qos_option(p, fields[i], into);
}

void parse_qos_options(std::string_view options, QosLine& into, std::string_view what) {
  const std::string source(what);
  LineParser p(source, 0);
  const std::vector<Field> fields = p.fields(options_line(options));
  for (size_t i = 1; i < fields.size(); ++i) qos_option(p, fields[i], into);
}

std::string format_acct_dump(const AcctDump& dump) {
  std::string out = assoc_line(dump.cluster) + "\n";
  // Children of each account: users (by name, then partition) before sub-accounts (by name).
  std::map<std::string, std::vector<const AcctAssocLine*>> children;
  for (const auto& a : dump.assocs) children[a.parent].push_back(&a);
  for (auto& [parent, list] : children)
    std::stable_sort(list.begin(), list.end(), [](const auto* x, const auto* y) {
      const bool ux = x->kind == AcctAssocLine::Kind::User;
      const bool uy = y->kind == AcctAssocLine::Kind::User;
      if (ux != uy) return ux;
      if (x->name != y->name) return x->name < y->name;
      return x->partition < y->partition;
    });
  // Breadth first from root, as sacctmgr dump: a Parent line, its children, then each child
  // account that has children of its own.
  std::vector<std::string> queue = {"root"};
  for (size_t i = 0; i < queue.size(); ++i) {
    auto it = children.find(queue[i]);
    if (it == children.end()) continue;
    out += "Parent - " + quoted(queue[i]) + "\n";
    for (const AcctAssocLine* a : it->second) {
      out += assoc_line(*a) + "\n";
      if (a->kind == AcctAssocLine::Kind::Account) queue.push_back(a->name);
    }
  }
  for (const auto& q : dump.qos) out += qos_line(q) + "\n";
  return out;
}

}  // namespace drover::core
