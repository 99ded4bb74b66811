#include "sched/priority.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "core/error.hpp"
#include "core/text.hpp"

namespace drover::sched {
namespace {

constexpr uint32_t kUint32Max = 0xffffffffu;
// What Slurm stores for a time key set to UNLIMITED: INFINITE (-1) minutes times 60, kept in a
// uint32.
constexpr int64_t kUnlimitedSeconds = int64_t{kUint32Max} + 1 - 60;

[[noreturn]] void bad_value(std::string_view key, std::string_view value, std::string_view why) {
  throw core::ParseError("slurm.conf: " + std::string(key) + "=" + std::string(value) + ": " +
                         std::string(why));
}

// A uint32 the way slurm.conf reads one (strtoul base 0, 'k' suffix, UNLIMITED).
uint32_t parse_conf_uint32(std::string_view key, const std::string& v) {
  if (core::iequals(v, "UNLIMITED") || core::iequals(v, "INFINITE")) return kUint32Max;
  if (v.empty()) bad_value(key, v, "not a valid number");
  if (v.find('-') != std::string::npos) bad_value(key, v, "less than zero");
  errno = 0;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v.c_str(), &end, 0);
  if (end == v.c_str()) bad_value(key, v, "not a valid number");
  if (*end == 'k' || *end == 'K') {
    if (n > kUint32Max) bad_value(key, v, "greater than 4294967295");
    n *= 1024;
    ++end;
  }
  if (*end != '\0') bad_value(key, v, "not a valid number");
  if (errno == ERANGE || n > kUint32Max) bad_value(key, v, "greater than 4294967295");
  return static_cast<uint32_t>(n);
}

// `key` is the canonical spelling, as SlurmConf::options stores keys.
bool has_key(const core::SlurmConf& conf, std::string_view key) {
  return conf.options.count(std::string(key)) != 0;
}

uint32_t conf_uint32(const core::SlurmConf& conf, std::string_view key, uint32_t dflt) {
  return has_key(conf, key) ? parse_conf_uint32(key, conf.get(key, "")) : dflt;
}

// A slurm.conf time string in minutes (Slurm's time_str2mins), kInfinite for UNLIMITED.
int64_t conf_minutes(std::string_view key, const std::string& v) {
  try {
    return core::parse_time_limit_minutes(v, key);
  } catch (const core::ParseError&) {
    bad_value(key, v, "not a valid time (minutes, H:M:S, D-H, D-H:M or D-H:M:S)");
  }
}

bool conf_bool(std::string_view key, const std::string& v) {
  for (const char* yes : {"yes", "up", "true", "1"})
    if (core::iequals(v, yes)) return true;
  for (const char* no : {"no", "down", "false", "0"})
    if (core::iequals(v, no)) return false;
  bad_value(key, v, "expected YES or NO");
}

PriorityFlags parse_flags(const std::string& v) {
  PriorityFlags f;
  for (const std::string& raw : core::split_list(v, ',')) {
    std::string t = core::to_upper(raw);
    if (t == "ACCRUE_ALWAYS") {
      f.accrue_always = true;
    } else if (t == "SMALL_RELATIVE_TO_TIME") {
      f.small_relative_to_time = true;
    } else if (t == "CALCULATE_RUNNING") {
      f.calculate_running = true;
    } else if (t == "DEPTH_OBLIVIOUS") {
      f.depth_oblivious = true;
      f.no_fair_tree = true;
    } else if (t == "NO_FAIR_TREE") {
      f.no_fair_tree = true;
    } else if (t == "FAIR_TREE") {
      // The default since 19.05; older configurations still name it.
    } else if (t == "INCR_ONLY") {
      f.incr_only = true;
    } else if (t == "MAX_TRES") {
      f.max_tres = true;
    } else if (t == "NO_NORMAL_ALL") {
      f.no_normal_assoc = f.no_normal_part = f.no_normal_qos = f.no_normal_tres = true;
    } else if (t == "NO_NORMAL_ASSOC") {
      f.no_normal_assoc = true;
    } else if (t == "NO_NORMAL_PART") {
      f.no_normal_part = true;
    } else if (t == "NO_NORMAL_QOS") {
      f.no_normal_qos = true;
    } else if (t == "NO_NORMAL_TRES") {
      f.no_normal_tres = true;
    } else {
      bad_value("PriorityFlags", v,
                "unknown flag '" + raw +
                    "' (valid: ACCRUE_ALWAYS, CALCULATE_RUNNING, DEPTH_OBLIVIOUS, NO_FAIR_TREE, "
                    "INCR_ONLY, MAX_TRES, NO_NORMAL_ALL, NO_NORMAL_ASSOC, NO_NORMAL_PART, "
                    "NO_NORMAL_QOS, NO_NORMAL_TRES, SMALL_RELATIVE_TO_TIME)");
    }
  }
  return f;
}

// Slurm's fixed TRES come first in its TRES array, in this order; sprio lists TRES that way.
int tres_rank(const std::string& name) {
  static const char* const kFixed[] = {"cpu",     "mem",     "energy", "node",
                                       "billing", "fs/disk", "vmem",   "pages"};
  for (int i = 0; i < 8; ++i)
    if (name == kFixed[i]) return i;
  return 8;
}

std::vector<std::string> tres_display_order(const std::map<std::string, double>& m) {
  std::vector<std::string> names;
  for (const auto& [name, v] : m) names.push_back(name);
  std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return tres_rank(a) < tres_rank(b);
  });
  return names;
}

// ---- sprio rendering ----

// The field types sprio 22.05 knows (%n and %o came later).
bool sprio_type_known(char c) {
  static const std::string_view kTypes = "aAbBcfFijJNpPqQrStTuyY";
  return kTypes.find(c) != std::string_view::npos;
}

// sprio's _print_str: right-justified or left-justified in `width`, cut to `width`.
std::string fit(const std::string& s, int width, bool right) {
  if (width <= 0) return s;
  std::string body = s.size() > static_cast<std::size_t>(width) ? s.substr(0, width) : s;
  std::string pad(width - body.size(), ' ');
  return right ? pad + body : body + pad;
}

std::string fmt_double(const char* spec, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

std::string fmt_int(double v) { return fmt_double("%.0f", v); }

// sprio's own sum of the weighted factors (priority_factors_object -> PRIORITY column).
double sprio_priority(const SprioRow& row, const WeightedFactors& w) {
  if (row.admin_priority > 0) return row.admin_priority;
  double p = w.age + w.assoc + w.fairshare + w.job_size + w.partition + w.qos +
             static_cast<double>(row.factors.site) - static_cast<double>(row.factors.nice);
  for (const auto& name : tres_display_order(w.tres))
    if (w.tres.at(name) != 0) p += w.tres.at(name);
  if (p < 1) p = 1;
  return p;
}

// One weighted factor column of sprio: its header, weight and value.
struct FactorColumn {
  const char* header;
  uint32_t weight;
  double weighted;
};

std::optional<FactorColumn> factor_column(char type, const PriorityConfig& c,
                                          const WeightedFactors& w) {
  switch (type) {
    case 'a':
    case 'A':
      return FactorColumn{"AGE", c.weight_age, w.age};
    case 'b':
    case 'B':
      return FactorColumn{"ASSOC", c.weight_assoc, w.assoc};
    case 'f':
    case 'F':
      return FactorColumn{"FAIRSHARE", c.weight_fairshare, w.fairshare};
    case 'j':
    case 'J':
      return FactorColumn{"JOBSIZE", c.weight_job_size, w.job_size};
    case 'p':
    case 'P':
      return FactorColumn{"PARTITION", c.weight_partition, w.partition};
    case 'q':
    case 'Q':
      return FactorColumn{"QOS", c.weight_qos, w.qos};
    default:
      return std::nullopt;
  }
}

// The text of one cell: the header (row null, not the weights line), the -w line, or a job's.
std::string sprio_cell(char type, const SprioRow* row, bool weights_line, const PriorityConfig& c) {
  if (!row) {
    auto factor = factor_column(type, c, WeightedFactors{});
    if (weights_line) {
      switch (type) {
        case 'i':
          return "Weights";
        case 'S':
          return fmt_int(1);
        case 'T':
          return c.weight_tres_text.empty() ? "(null)" : c.weight_tres_text;
        default:
          return factor ? fmt_int(factor->weight) : "";
      }
    }
    switch (type) {
      case 'i':
        return "JOBID";
      case 'r':
        return "PARTITION";
      case 'u':
        return "USER";
      case 'Y':
      case 'y':
        return "PRIORITY";
      case 'S':
        return "SITE";
      case 'N':
        return "NICE";
      case 'T':
      case 't':
        return "TRES";
      case 'c':
        return "CLUSTER";
      default:
        return factor ? factor->header : "";
    }
  }
  // A job row. An administrator's priority shows every factor, the site and nice as 0.
  const PriorityFactors zero;
  const PriorityFactors& f = row->admin_priority > 0 ? zero : row->factors;
  const WeightedFactors w = weigh_factors(f, c);
  switch (type) {
    case 'i':
      return std::to_string(row->job_id);
    case 'r':
      return row->partition;
    case 'u':
      return row->user;
    case 'c':
      return "(null)";  // the federation's cluster name; none outside a federation
    case 'Y': {
      // Printed as a 64-bit integer, truncated (huge TRES weights could overflow it).
      double p = std::min(sprio_priority(*row, w), 9.2e18);
      return std::to_string(static_cast<long long>(p));
    }
    case 'y': {
      double p = sprio_priority(*row, w);
      if (row->admin_priority == 0) p /= static_cast<double>(kUint32Max);
      return fmt_double("%16.14f", p);
    }
    case 'S':
      return fmt_int(static_cast<double>(f.site));
    case 'N':
      return fmt_int(static_cast<double>(f.nice));
    case 'T':
    case 't': {
      std::string out;
      for (const auto& name : tres_display_order(w.tres)) {
        double v = w.tres.at(name);
        if (v == 0) continue;
        if (!out.empty()) out += ",";
        out += name + "=";
        out += type == 'T' ? fmt_double("%.0f", v) : fmt_double("%.2f", v / c.weight_tres.at(name));
      }
      return out;
    }
    default:
      break;
  }
  auto factor = factor_column(type, c, w);
  if (!factor) return "";
  if (type >= 'a' && type <= 'z')
    return fmt_double("%.7f", factor->weight ? factor->weighted / factor->weight : 0.0);
  return fmt_int(factor->weighted);
}

}  // namespace

std::map<std::string, double> parse_tres_weights(std::string_view text, std::string_view key) {
  std::map<std::string, double> out;
  const std::string all(text);
  for (const std::string& item : core::split_list(text, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      bad_value(key, all, "'" + item + "' is not TRES=weight");
    std::string name = core::to_lower(item.substr(0, eq));
    std::string type = name, sub;
    if (auto slash = name.find('/'); slash != std::string::npos) {
      type = name.substr(0, slash);
      sub = name.substr(slash + 1);
    }
    static const char* const kPlain[] = {"cpu",     "mem",  "energy", "node",
                                         "billing", "vmem", "pages"};
    bool plain = false;
    for (const char* p : kPlain) plain = plain || type == p;
    bool named = type == "gres" || type == "license" || type == "bb";
    bool ok = (plain && sub.empty() && name.find('/') == std::string::npos) ||
              (named && !sub.empty()) || (type == "fs" && sub == "disk");
    if (!ok) bad_value(key, all, "'" + item.substr(0, eq) + "' is not a TRES type");
    std::string value = item.substr(eq + 1);
    errno = 0;
    char* end = nullptr;
    double w = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || errno == ERANGE || !std::isfinite(w))
      bad_value(key, all, "'" + value + "' is not a number");
    if (*end != '\0') {
      static const std::string kUnits = "KMGTP";
      auto u =
          end[1] == '\0' ? kUnits.find(static_cast<char>(std::toupper(*end))) : std::string::npos;
      if (u == std::string::npos) bad_value(key, all, "'" + value + "' has an unknown unit");
      int unit = static_cast<int>(u) + 1;                  // K=1 ... P=5
      int base = (type == "mem" || type == "bb") ? 2 : 0;  // MB, or a plain count
      if (unit > base) w /= std::pow(1024.0, unit - base);
    }
    out[name] = w;
  }
  return out;
}

PriorityConfig parse_priority_config(const core::SlurmConf& conf) {
  PriorityConfig c;
  if (has_key(conf, "PriorityType")) {
    std::string v = conf.get("PriorityType", "");
    if (core::iequals(v, "priority/basic")) {
      c.type = PriorityType::Basic;
    } else if (core::iequals(v, "priority/multifactor")) {
      c.type = PriorityType::Multifactor;
    } else {
      bad_value("PriorityType", v, "expected priority/basic or priority/multifactor");
    }
  }
  c.weight_age = conf_uint32(conf, "PriorityWeightAge", 0);
  c.weight_assoc = conf_uint32(conf, "PriorityWeightAssoc", 0);
  c.weight_fairshare = conf_uint32(conf, "PriorityWeightFairshare", 0);
  c.weight_job_size = conf_uint32(conf, "PriorityWeightJobSize", 0);
  c.weight_partition = conf_uint32(conf, "PriorityWeightPartition", 0);
  c.weight_qos = conf_uint32(conf, "PriorityWeightQOS", 0);
  if (has_key(conf, "PriorityWeightTRES")) {
    c.weight_tres_text = conf.get("PriorityWeightTRES", "");
    c.weight_tres = parse_tres_weights(c.weight_tres_text, "PriorityWeightTRES");
  }
  if (has_key(conf, "PriorityMaxAge")) {
    int64_t m = conf_minutes("PriorityMaxAge", conf.get("PriorityMaxAge", ""));
    c.max_age_s = m == core::kInfinite ? kUnlimitedSeconds : m * 60;
  }
  if (has_key(conf, "PriorityDecayHalfLife")) {
    int64_t m = conf_minutes("PriorityDecayHalfLife", conf.get("PriorityDecayHalfLife", ""));
    c.decay_half_life_s = m == core::kInfinite ? kUnlimitedSeconds : m * 60;
  }
  if (has_key(conf, "PriorityCalcPeriod")) {
    std::string v = conf.get("PriorityCalcPeriod", "");
    int64_t m = conf_minutes("PriorityCalcPeriod", v);
    if (m < 1) bad_value("PriorityCalcPeriod", v, "must be at least 1 minute");
    c.calc_period_s = m * 60;
  }
  if (has_key(conf, "PriorityFavorSmall"))
    c.favor_small = conf_bool("PriorityFavorSmall", conf.get("PriorityFavorSmall", ""));
  if (has_key(conf, "PriorityFlags")) c.flags = parse_flags(conf.get("PriorityFlags", ""));
  if (has_key(conf, "PriorityUsageResetPeriod")) {
    std::string v = conf.get("PriorityUsageResetPeriod", "");
    static const std::pair<const char*, UsageResetPeriod> kPeriods[] = {
        {"NONE", UsageResetPeriod::None},       {"NOW", UsageResetPeriod::Now},
        {"DAILY", UsageResetPeriod::Daily},     {"WEEKLY", UsageResetPeriod::Weekly},
        {"MONTHLY", UsageResetPeriod::Monthly}, {"QUARTERLY", UsageResetPeriod::Quarterly},
        {"YEARLY", UsageResetPeriod::Yearly},
    };
    bool found = false;
    for (const auto& [name, period] : kPeriods) {
      if (core::iequals(v, name)) {
        c.usage_reset_period = period;
        found = true;
      }
    }
    if (!found)
      bad_value("PriorityUsageResetPeriod", v,
                "expected NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY");
  } else if (c.decay_half_life_s == 0) {
    throw core::ParseError(
        "slurm.conf: PriorityDecayHalfLife=0 (no decay) needs PriorityUsageResetPeriod set, or "
        "usage would only ever grow");
  }
  if (has_key(conf, "FairShareDampeningFactor")) {
    std::string v = conf.get("FairShareDampeningFactor", "");
    uint32_t d = parse_conf_uint32("FairShareDampeningFactor", v);
    if (d == kUint32Max) d = 0xffff;  // UNLIMITED as a uint16
    if (d > 0xffff) bad_value("FairShareDampeningFactor", v, "greater than 65535");
    if (d == 0) bad_value("FairShareDampeningFactor", v, "must be at least 1");
    c.fairshare_dampening_factor = d;
  }
  return c;
}

PriorityFactors compute_priority_factors(const JobPriorityInput& in, const PriorityConfig& conf) {
  PriorityFactors f;
  const PriorityFlags& fl = conf.flags;

  // Age: from submission under ACCRUE_ALWAYS, else from the last time the job became eligible,
  // and not at all while it is held or waits for a dependency.
  int64_t accrue_from = 0;
  if (fl.accrue_always)
    accrue_from = in.submit_time;
  else if (!in.held && !in.dependency_pending)
    accrue_from = in.eligible_time;
  if (accrue_from > 0) {
    int64_t wait = in.now > accrue_from ? in.now - accrue_from : 0;
    f.age = wait < conf.max_age_s ? static_cast<double>(wait) / static_cast<double>(conf.max_age_s)
                                  : 1.0;
  }

  // Job size (Slurm averages the node and CPU shares; a full-cluster job gets 1.0).
  if (in.cluster_cpus > 0 && in.cluster_nodes > 0) {
    const double cpus = in.cpus, nodes = in.min_nodes;
    const double total_cpus = in.cluster_cpus, total_nodes = in.cluster_nodes;
    double js;
    if (fl.small_relative_to_time) {
      // CPUs (at least the nodes' average share of CPUs) per minute of time limit.
      js = std::max(nodes * total_cpus / total_nodes, cpus);
      double limit = in.time_limit_min == core::kInfinite ? static_cast<double>(kUint32Max)
                                                          : static_cast<double>(in.time_limit_min);
      js /= std::max(limit, 1.0);
      js /= total_cpus;
      if (conf.favor_small) js = 1.0 - js;
    } else if (conf.favor_small) {
      js = (total_nodes - nodes) / total_nodes;
      if (in.cpus) js = (js + (total_cpus - cpus) / total_cpus) / 2;
    } else {
      js = nodes / total_nodes;
      if (in.cpus) js = (js + cpus / total_cpus) / 2;
    }
    f.job_size = std::clamp(js, 0.0, 1.0);
  }

  if (in.partition_job_factor) {
    if (fl.no_normal_part)
      f.partition = in.partition_job_factor;
    else if (in.max_partition_job_factor)
      f.partition = static_cast<double>(in.partition_job_factor) / in.max_partition_job_factor;
  }
  if (in.qos_priority) {
    if (fl.no_normal_qos)
      f.qos = in.qos_priority;
    else if (in.max_qos_priority)
      f.qos = static_cast<double>(in.qos_priority) / in.max_qos_priority;
  }
  if (fl.no_normal_assoc)
    f.assoc = in.assoc_priority;
  else if (in.max_assoc_priority)
    f.assoc = static_cast<double>(in.assoc_priority) / in.max_assoc_priority;

  f.fairshare = in.fairshare;

  for (const auto& [name, weight] : conf.weight_tres) {
    (void)weight;
    auto j = in.job_tres.find(name);
    double value = j == in.job_tres.end() ? 0.0 : j->second;
    if (fl.no_normal_tres) {
      f.tres[name] = value;
    } else {
      auto p = in.partition_tres.find(name);
      f.tres[name] =
          (value != 0 && p != in.partition_tres.end() && p->second != 0) ? value / p->second : 0.0;
    }
  }

  f.site = in.site;
  f.nice = in.nice;
  return f;
}

WeightedFactors weigh_factors(const PriorityFactors& f, const PriorityConfig& conf) {
  WeightedFactors w;
  w.age = f.age * conf.weight_age;
  w.assoc = f.assoc * conf.weight_assoc;
  w.fairshare = f.fairshare * conf.weight_fairshare;
  w.job_size = f.job_size * conf.weight_job_size;
  w.partition = f.partition * conf.weight_partition;
  w.qos = f.qos * conf.weight_qos;
  for (const auto& [name, factor] : f.tres) {
    auto it = conf.weight_tres.find(name);
    if (it == conf.weight_tres.end()) continue;
    double v = factor * it->second;
    w.tres[name] = v;
    w.tres_sum += v;
  }
  return w;
}

uint32_t multifactor_priority(const PriorityFactors& f, const PriorityConfig& conf) {
  WeightedFactors w = weigh_factors(f, conf);
  // Summed in Slurm's order so the double rounds the same way.
  double p = w.age + w.assoc + w.fairshare + w.job_size + w.partition + w.qos + w.tres_sum +
             static_cast<double>(f.site) - static_cast<double>(f.nice);
  if (!(p >= 1)) return 1;  // 0 is reserved for held jobs (NaN lands here too)
  if (p >= static_cast<double>(kUint32Max)) return kUint32Max;
  return static_cast<uint32_t>(p);
}

SprioFormat parse_sprio_format(std::string_view format) {
  SprioFormat out;
  std::size_t i = format.find('%');
  out.prefix = std::string(format.substr(0, i));
  while (i != std::string_view::npos) {
    // One token: from after this '%' to the next one ("%%" makes an empty token, skipped).
    const std::size_t start = i + 1;
    const std::size_t next = format.find('%', start);
    const std::string_view token = format.substr(
        start, next == std::string_view::npos ? std::string_view::npos : next - start);
    i = next;
    if (token.empty()) continue;
    SprioField f;
    std::size_t k = 0;
    if (token[k] == '.') {
      f.right = true;
      ++k;
    }
    while (k < token.size() && token[k] >= '0' && token[k] <= '9')
      f.width = f.width * 10 + (token[k++] - '0');
    f.type = k < token.size() ? token[k++] : '\0';
    f.suffix = std::string(token.substr(std::min(k, token.size())));
    if (sprio_type_known(f.type))
      out.fields.push_back(std::move(f));
    else
      out.invalid.push_back(f.type);
  }
  return out;
}

std::string sprio_default_format(const PriorityConfig& conf, const SprioOptions& opt) {
  // sprio 22.05's built-in formats.
  std::string fmt;
  if (opt.normalized) {
    if (opt.long_format) {
      fmt = "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t";
    } else {
      fmt = "%.15i %9r";
      if (opt.users) fmt += " %.8u";
      fmt += " %10y";
      if (conf.weight_age) fmt += " %10a";
      if (conf.weight_assoc) fmt += " %10b";
      if (conf.weight_fairshare) fmt += " %10f";
      if (conf.weight_job_size) fmt += " %10j";
      if (conf.weight_partition) fmt += " %10p";
      if (conf.weight_qos) fmt += " %10q";
      if (!conf.weight_tres_text.empty()) fmt += " %20t";
    }
  } else {
    if (opt.long_format) {
      fmt = "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T";
    } else {
      fmt = "%.15i %9r";
      if (opt.users) fmt += " %.8u";
      fmt += " %.10Y %.10S";
      if (conf.weight_age) fmt += " %.10A";
      if (conf.weight_assoc) fmt += " %.10B";
      if (conf.weight_fairshare) fmt += " %.10F";
      if (conf.weight_job_size) fmt += " %.10J";
      if (conf.weight_partition) fmt += " %.10P";
      if (conf.weight_qos) fmt += " %.10Q";
      if (!conf.weight_tres_text.empty()) fmt += " %.20T";
    }
  }
  return fmt;
}

std::string format_sprio(const std::vector<SprioRow>& rows, const PriorityConfig& conf,
                         const SprioFormat& format, const SprioOptions& opt) {
  auto line = [&](const SprioRow* row, bool weights_line) {
    std::string out = format.prefix;
    for (const SprioField& fd : format.fields) {
      out += fit(sprio_cell(fd.type, row, weights_line, conf), fd.width, fd.right);
      out += fd.suffix;
    }
    return out + "\n";
  };
  std::string out;
  if (!opt.no_header) out += line(nullptr, false);
  if (opt.weights) return out + line(nullptr, true);
  for (const SprioRow& r : rows) out += line(&r, false);
  return out;
}

std::string format_sprio(const std::vector<SprioRow>& rows, const PriorityConfig& conf,
                         const SprioOptions& opt) {
  return format_sprio(rows, conf, parse_sprio_format(sprio_default_format(conf, opt)), opt);
}

}  // namespace drover::sched
