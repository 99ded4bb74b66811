#include "core/sbatch_options.hpp"

#include <algorithm>
#include <cctype>
#include <csignal>

#include "core/duration.hpp"
#include "core/getopt.hpp"
#include "core/memsize.hpp"
#include "core/text.hpp"

namespace drover::core {
namespace {

enum class Arg { kNone, kRequired, kOptional };

struct OptDef {
  std::string_view name;
  Arg arg;
  char short_name;  // 0: long only
};

// sbatch 22.05's option table, in the order its getopt ambiguity messages list them (so "--par"
// and even "--=x", which matches every option, report the same possibilities in that order).
constexpr OptDef kOptions[] = {
    {"account", Arg::kRequired, 'A'},
    {"acctg-freq", Arg::kRequired, 0},
    {"array", Arg::kRequired, 'a'},
    {"batch", Arg::kRequired, 0},
    {"begin", Arg::kRequired, 'b'},
    {"bb", Arg::kRequired, 0},
    {"bbf", Arg::kRequired, 0},
    {"cluster-constraint", Arg::kRequired, 0},
    {"chdir", Arg::kRequired, 'D'},
    {"cluster", Arg::kRequired, 0},
    {"clusters", Arg::kRequired, 'M'},
    {"comment", Arg::kRequired, 0},
    {"container", Arg::kRequired, 0},
    {"context", Arg::kRequired, 0},
    {"contiguous", Arg::kNone, 0},
    {"constraint", Arg::kRequired, 'C'},
    {"core-spec", Arg::kRequired, 'S'},
    {"cores-per-socket", Arg::kRequired, 0},
    {"cpu-freq", Arg::kRequired, 0},
    {"cpus-per-gpu", Arg::kRequired, 0},
    {"cpus-per-task", Arg::kRequired, 'c'},
    {"deadline", Arg::kRequired, 0},
    {"delay-boot", Arg::kRequired, 0},
    {"dependency", Arg::kRequired, 'd'},
    {"distribution", Arg::kRequired, 'm'},
    {"error", Arg::kRequired, 'e'},
    {"exclude", Arg::kRequired, 'x'},
    {"exclusive", Arg::kOptional, 0},
    {"export", Arg::kRequired, 0},
    {"export-file", Arg::kRequired, 0},
    {"extra-node-info", Arg::kRequired, 'B'},
    {"get-user-env", Arg::kOptional, 0},
    {"gid", Arg::kRequired, 0},
    {"gpu-bind", Arg::kRequired, 0},
    {"gpu-freq", Arg::kRequired, 0},
    {"gpus", Arg::kRequired, 'G'},
    {"gpus-per-node", Arg::kRequired, 0},
    {"gpus-per-socket", Arg::kRequired, 0},
    {"gpus-per-task", Arg::kRequired, 0},
    {"gres", Arg::kRequired, 0},
    {"gres-flags", Arg::kRequired, 0},
    {"help", Arg::kNone, 'h'},
    {"hint", Arg::kRequired, 0},
    {"hold", Arg::kNone, 'H'},
    {"ignore-pbs", Arg::kNone, 0},
    {"input", Arg::kRequired, 'i'},
    {"job-name", Arg::kRequired, 'J'},
    {"kill-on-invalid-dep", Arg::kRequired, 0},
    {"licenses", Arg::kRequired, 'L'},
    {"mail-type", Arg::kRequired, 0},
    {"mail-user", Arg::kRequired, 0},
    {"mcs-label", Arg::kRequired, 0},
    {"mem", Arg::kRequired, 0},
    {"mem-bind", Arg::kRequired, 0},
    {"mem-per-cpu", Arg::kRequired, 0},
    {"mem-per-gpu", Arg::kRequired, 0},
    {"mincpus", Arg::kRequired, 0},
    {"network", Arg::kRequired, 0},
    {"nice", Arg::kOptional, 0},
    {"no-kill", Arg::kOptional, 'k'},
    {"no-requeue", Arg::kNone, 0},
    {"nodefile", Arg::kRequired, 'F'},
    {"nodelist", Arg::kRequired, 'w'},
    {"nodes", Arg::kRequired, 'N'},
    {"ntasks", Arg::kRequired, 'n'},
    {"ntasks-per-core", Arg::kRequired, 0},
    {"ntasks-per-gpu", Arg::kRequired, 0},
    {"ntasks-per-node", Arg::kRequired, 0},
    {"ntasks-per-socket", Arg::kRequired, 0},
    {"ntasks-per-tres", Arg::kRequired, 0},
    {"open-mode", Arg::kRequired, 0},
    {"output", Arg::kRequired, 'o'},
    {"overcommit", Arg::kNone, 'O'},
    {"oversubscribe", Arg::kNone, 's'},
    {"parsable", Arg::kNone, 0},
    {"partition", Arg::kRequired, 'p'},
    {"power", Arg::kRequired, 0},
    {"prefer", Arg::kRequired, 0},
    {"priority", Arg::kRequired, 0},
    {"profile", Arg::kRequired, 0},
    {"propagate", Arg::kOptional, 0},
    {"qos", Arg::kRequired, 'q'},
    {"quiet", Arg::kNone, 'Q'},
    {"reboot", Arg::kNone, 0},
    {"requeue", Arg::kNone, 0},
    {"reservation", Arg::kRequired, 0},
    {"signal", Arg::kRequired, 0},
    {"sockets-per-node", Arg::kRequired, 0},
    {"spread-job", Arg::kNone, 0},
    {"switches", Arg::kRequired, 0},
    {"tasks-per-node", Arg::kRequired, 0},
    {"test-only", Arg::kNone, 0},
    {"thread-spec", Arg::kRequired, 0},
    {"threads-per-core", Arg::kRequired, 0},
    {"time", Arg::kRequired, 't'},
    {"time-min", Arg::kRequired, 0},
    {"tmp", Arg::kRequired, 0},
    {"uid", Arg::kRequired, 0},
    {"use-min-nodes", Arg::kNone, 0},
    {"verbose", Arg::kNone, 'v'},
    {"version", Arg::kNone, 'V'},
    {"usage", Arg::kNone, 0},
    {"wait", Arg::kNone, 'W'},
    {"wait-all-nodes", Arg::kRequired, 0},
    {"wckey", Arg::kRequired, 0},
    {"wrap", Arg::kRequired, 0},
};

constexpr std::string_view kHint = "Try \"sbatch --help\" for more information";

[[noreturn]] void usage_error(const std::string& line) {
  throw SbatchUsageError(line + "\n" + std::string(kHint));
}

[[noreturn]] void invalid_spec(std::string_view opt) {
  throw ParseError("Invalid --" + std::string(opt) + " specification");
}

[[noreturn]] void invalid_numeric(std::string_view value, std::string_view opt) {
  throw ParseError("Invalid numeric value \"" + std::string(value) + "\" for --" +
                   std::string(opt) + ".");
}

// Decimal integer with optional sign, nothing else; false on overflow of int64.
bool parse_int64(std::string_view s, int64_t& out) {
  std::size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  if (i == s.size() || s.size() - i > 18) return false;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = neg ? -v : v;
  return true;
}

// Positive int for the many "--ntasks"-style options (Slurm's parse_int with positive values).
int positive_int(std::string_view value, std::string_view opt, int64_t min = 1) {
  int64_t v = 0;
  if (!parse_int64(value, v) || v < min || v > std::numeric_limits<int>::max())
    invalid_numeric(value, opt);
  return static_cast<int>(v);
}

// One -N bound: a count with an optional k/m multiplier ("2k" is 2048).
bool node_count(std::string_view s, int64_t& out) {
  int64_t mult = 1;
  if (!s.empty() && (s.back() == 'k' || s.back() == 'K')) mult = 1024;
  if (!s.empty() && (s.back() == 'm' || s.back() == 'M')) mult = 1024 * 1024;
  if (mult != 1) s.remove_suffix(1);
  int64_t v = 0;
  if (!parse_int64(s, v) || v < 0 || v > std::numeric_limits<int>::max() / mult) return false;
  out = v * mult;
  return true;
}

void parse_nodes(std::string_view value, SbatchOptions& o) {
  auto bad = [&] { throw ParseError("\"" + std::string(value) + "\" is not a valid node count"); };
  std::size_t dash = value.find('-');
  int64_t lo = 1, hi = -1;
  std::string_view lo_s = value.substr(0, dash);
  if (!(dash == 0 && value.size() > 1) && !node_count(lo_s, lo)) bad();
  if (dash != std::string_view::npos) {
    std::string_view hi_s = value.substr(dash + 1);
    if (!hi_s.empty() && !node_count(hi_s, hi)) bad();
    // sbatch reports an empty maximum as -1.
    if (hi < lo) {
      throw ParseError("Maximum node count " + std::to_string(hi) +
                       " is less than minimum node count " + std::to_string(lo));
    }
    o.nodes_max = static_cast<int>(hi);
  } else {
    o.nodes_max.reset();
  }
  o.nodes_min = static_cast<int>(lo);
}

void check_signal(std::string_view value) { (void)parse_signal_spec(value); }

std::string check_mail_type(std::string_view value) {
  static constexpr std::string_view kTypes[] = {
      "NONE",          "BEGIN",          "END",        "FAIL",       "REQUEUE",
      "ALL",           "INVALID_DEPEND", "STAGE_OUT",  "TIME_LIMIT", "TIME_LIMIT_90",
      "TIME_LIMIT_80", "TIME_LIMIT_50",  "ARRAY_TASKS"};
  std::string up = to_upper(value);
  std::size_t pos = 0;
  bool any = false;
  while (pos <= up.size()) {
    std::size_t comma = up.find(',', pos);
    if (comma == std::string::npos) comma = up.size();
    std::string_view item = std::string_view(up).substr(pos, comma - pos);
    if (!item.empty()) {
      if (std::find(std::begin(kTypes), std::end(kTypes), item) == std::end(kTypes))
        invalid_spec("mail-type");
      any = true;
    }
    pos = comma + 1;
  }
  if (!any) invalid_spec("mail-type");
  return up;
}

void check_distribution(std::string_view value) {
  std::string v = to_lower(value);
  std::size_t comma = v.find(',');
  if (comma != std::string::npos) {
    std::string pack = v.substr(comma + 1);
    if (pack != "pack" && pack != "nopack") invalid_spec("distribution");
    v.erase(comma);
  }
  std::size_t pos = 0;
  for (int level = 0; pos <= v.size(); ++level) {
    std::size_t colon = v.find(':', pos);
    if (colon == std::string::npos) colon = v.size();
    std::string part = v.substr(pos, colon - pos);
    bool ok = part == "*" || part == "block" || part == "cyclic";
    if (level == 0) {
      int64_t n = 0;
      ok = ok || part == "arbitrary" ||
           (part.rfind("plane=", 0) == 0 && parse_int64(part.substr(6), n) && n > 0);
    } else {
      ok = ok || part == "fcyclic";
    }
    if (!ok || level > 2) invalid_spec("distribution");
    pos = colon + 1;
  }
}

void note_set(SbatchOptions& o, std::string_view name) {
  if (std::find(o.set_options.begin(), o.set_options.end(), name) == o.set_options.end())
    o.set_options.emplace_back(name);
}

// Applies one option; `value` is nullopt for a flag or an optional argument left out.
void apply(SbatchOptions& o, std::string_view name, const std::optional<std::string>& value) {
  note_set(o, name);
  const std::string v = value.value_or("");
  auto time_opt = [&](std::string_view opt) {
    int64_t m = parse_time_limit_minutes(v, "--" + std::string(opt));
    return m == 0 ? kInfinite : m;  // sbatch treats a zero limit as no limit
  };

  // Options stored as written.
  using Field = std::optional<std::string> SbatchOptions::*;
  static const std::map<std::string_view, Field> kStrings = {
      {"job-name", &SbatchOptions::job_name},
      {"output", &SbatchOptions::output},
      {"error", &SbatchOptions::error},
      {"input", &SbatchOptions::input},
      {"partition", &SbatchOptions::partition},
      {"chdir", &SbatchOptions::workdir},
      {"account", &SbatchOptions::account},
      {"qos", &SbatchOptions::qos},
      {"comment", &SbatchOptions::comment},
      {"wrap", &SbatchOptions::wrap},
      {"reservation", &SbatchOptions::reservation},
      {"constraint", &SbatchOptions::constraint},
      {"nodelist", &SbatchOptions::nodelist},
      {"exclude", &SbatchOptions::exclude},
      {"gres", &SbatchOptions::gres},
      {"gpus", &SbatchOptions::gpus},
      {"dependency", &SbatchOptions::dependency},
      {"array", &SbatchOptions::array},
      {"begin", &SbatchOptions::begin},
      {"export", &SbatchOptions::export_env},
      {"mail-user", &SbatchOptions::mail_user},
      {"deadline", &SbatchOptions::deadline},
      {"licenses", &SbatchOptions::licenses},
      {"mem-bind", &SbatchOptions::mem_bind},
      {"gpus-per-node", &SbatchOptions::gpus_per_node},
      {"gpus-per-task", &SbatchOptions::gpus_per_task},
  };
  if (auto it = kStrings.find(name); it != kStrings.end()) {
    o.*(it->second) = v;
    return;
  }

  if (name == "signal") {
    check_signal(v);
    o.signal = v;
  } else if (name == "mail-type") {
    o.mail_type = check_mail_type(v);
  } else if (name == "open-mode") {
    std::string l = to_lower(v);
    if (!l.empty() && std::string_view("append").substr(0, l.size()) == l)
      o.open_mode = "append";
    else if (!l.empty() && std::string_view("truncate").substr(0, l.size()) == l)
      o.open_mode = "truncate";
    else
      invalid_spec("open-mode");
  } else if (name == "distribution") {
    check_distribution(v);
    o.distribution = v;
  } else if (name == "time") {
    o.time_limit_min = time_opt("time");
  } else if (name == "time-min") {
    o.time_min_min = time_opt("time-min");
  } else if (name == "ntasks") {
    o.ntasks = positive_int(v, "ntasks");
  } else if (name == "nodes") {
    parse_nodes(v, o);
  } else if (name == "cpus-per-task") {
    o.cpus_per_task = positive_int(v, "cpus-per-task");
  } else if (name == "ntasks-per-node" || name == "tasks-per-node") {
    o.ntasks_per_node = positive_int(v, "ntasks-per-node");
  } else if (name == "nice") {
    if (!value) {
      o.nice = kDefaultNice;
    } else {
      int64_t n = 0;
      constexpr int64_t kLimit = 2147483645;  // NICE_OFFSET - 3, as sbatch reports
      if (!parse_int64(v, n) || n > kLimit || n < -kLimit)
        throw ParseError("Invalid --nice value, out of range (+/- 2147483645)");
      o.nice = static_cast<int>(n);
    }
  } else if (name == "priority") {
    int64_t n = 0;
    if (to_upper(v) == "TOP")
      o.priority = kPriorityTop;
    else if (!v.empty() && v.find_first_not_of("0123456789") == std::string_view::npos &&
             (!parse_int64(v, n) || n >= 4294967294LL))
      throw ParseError("Priority must be < 4294967294");  // Slurm's words, 64-bit overflow too
    else if (!parse_int64(v, n))
      invalid_spec("priority");
    else if (n < 0)
      throw ParseError("Priority must be >= 0");
    else if (n >= kPriorityTop)
      invalid_spec("priority");
    else
      o.priority = static_cast<int>(n);
  } else if (name == "mem") {
    o.mem_mb = parse_mem_mb(v, "--mem");
  } else if (name == "mem-per-cpu") {
    o.mem_per_cpu_mb = parse_mem_mb(v, "--mem-per-cpu");
  } else if (name == "mem-per-gpu") {
    o.mem_per_gpu_mb = parse_mem_mb(v, "--mem-per-gpu");
  } else if (name == "parsable") {
    o.parsable = true;
  } else if (name == "hold") {
    o.hold = true;
  } else if (name == "exclusive") {
    std::string l = value ? to_lower(v) : "exclusive";
    if (l != "exclusive" && l != "user" && l != "mcs") invalid_spec("exclusive");
    o.exclusive = true;
    o.other["exclusive"] = l;
  } else if (name == "test-only") {
    o.test_only = true;
  } else if (name == "quiet") {
    o.quiet = true;
  } else if (name == "wait") {
    o.wait = true;
  } else if (name == "kill-on-invalid-dep") {
    std::string l = to_lower(v);
    if (l != "yes" && l != "no") invalid_spec("kill-on-invalid-dep");
    o.kill_on_invalid_dep_set = true;
    o.kill_on_invalid_dep = l == "yes";
  } else if (name == "requeue" || name == "no-requeue") {
    o.requeue_set = true;
    o.requeue = name == "requeue";
  } else if (name == "overcommit") {
    o.overcommit = true;
  } else if (name == "contiguous") {
    o.contiguous = true;
  } else if (name == "help") {
    o.help = true;
  } else if (name == "usage") {
    o.usage = true;
  } else if (name == "version") {
    o.version = true;
  } else if (name == "verbose") {
    ++o.verbose;
  } else {
    // Options kept raw, with the checks sbatch makes while parsing.
    if (name == "no-kill" && value && to_lower(v) != "off" && to_lower(v) != "set")
      invalid_spec("no-kill");
    if (name == "tmp") parse_mem_mb(v, "--tmp");
    if (name == "delay-boot") parse_time_limit_minutes(v, "--delay-boot");
    if (name == "mincpus" || name == "cpus-per-gpu" || name == "ntasks-per-core" ||
        name == "ntasks-per-gpu" || name == "ntasks-per-socket" || name == "ntasks-per-tres" ||
        name == "sockets-per-node" || name == "cores-per-socket" || name == "threads-per-core" ||
        name == "thread-spec") {
      positive_int(v, name);
    }
    if (name == "core-spec") positive_int(v, name, 0);
    if (name == "switches") positive_int(v.substr(0, v.find('@')), name);
    if (name == "wait-all-nodes") {
      int n = positive_int(v, name, 0);
      if (n > 1) invalid_spec("wait-all-nodes");
    }
    if (name == "extra-node-info") {
      std::string_view first = std::string_view(v).substr(0, v.find(':'));
      int64_t n = 0;
      if (first != "*" && !parse_int64(first.substr(0, first.find('-')), n)) {
        throw ParseError("Invalid numeric value \"" + std::string(first) +
                         "\" for first arg of -B.");
      }
    }
    o.other[std::string(name)] = v;
  }
}

// getopt's tables for sbatch: the short option string, and the long options with each one's
// index in kOptions as its id (offset past the short options' characters).
constexpr int kLongIdBase = 256;

struct GetoptTables {
  std::string shorts = "+";  // the first operand (the script) ends the options
  std::vector<LongOption> longs;
  GetoptTables() {
    for (std::size_t i = 0; i < std::size(kOptions); ++i) {
      const OptDef& d = kOptions[i];
      const ArgKind kind = d.arg == Arg::kNone       ? ArgKind::None
                           : d.arg == Arg::kRequired ? ArgKind::Required
                                                     : ArgKind::Optional;
      longs.push_back({d.name.data(), kind, kLongIdBase + static_cast<int>(i)});
      if (d.short_name != 0) {
        shorts += d.short_name;
        if (kind != ArgKind::None) shorts += kind == ArgKind::Required ? ":" : "::";
      }
    }
  }
};

const OptDef& option_of(int id) {
  if (id >= kLongIdBase) return kOptions[id - kLongIdBase];
  for (const auto& d : kOptions)
    if (d.short_name == static_cast<char>(id)) return d;
  throw std::logic_error("sbatch: getopt reported an unknown option");
}

}  // namespace

SbatchOptions parse_sbatch_args(const std::vector<std::string>& args, SbatchOptions base) {
  SbatchOptions& o = base;
  // sbatch prints help, usage or its version as soon as it meets the option, ignoring the rest.
  auto stops = [](std::string_view name) {
    return name == "help" || name == "usage" || name == "version";
  };
  static const GetoptTables tables;
  ParsedArgs parsed = parse_options("", args, tables.shorts, tables.longs);
  // As getopt's loop: each option acts in turn, so a --help before a bad option still helps.
  for (const ParsedOption& p : parsed.options) {
    const OptDef& d = option_of(p.id);
    apply(o, d.name, p.value);
    if (stops(d.name)) return base;
  }
  if (!parsed.error.empty()) usage_error(parsed.error);
  o.script_argv = std::move(parsed.operands);
  return base;
}

SbatchOptions parse_sbatch_directives(const std::vector<std::string>& tokens, SbatchOptions base) {
  std::vector<std::string> saved = std::move(base.script_argv);
  base.script_argv.clear();
  SbatchOptions o = parse_sbatch_args(tokens, std::move(base));
  if (!o.script_argv.empty())
    throw ParseError("Invalid directive found in batch script: " + o.script_argv.front());
  // A "--" directive ends option parsing without leaving a non-option behind.
  o.script_argv = std::move(saved);
  return o;
}

std::vector<std::string> scan_sbatch_directives(std::string_view script,
                                                std::string_view script_name) {
  constexpr std::string_view kPrefix = "#SBATCH";
  std::vector<std::string> tokens;
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < script.size()) {
    std::size_t nl = script.find('\n', pos);
    if (nl == std::string_view::npos) nl = script.size();
    std::string_view line = script.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    std::size_t first = line.find_first_not_of(" \t\r\f\v");
    if (first == std::string_view::npos) continue;            // blank
    if (line[first] != '#') break;                            // first command: stop
    if (line.substr(0, kPrefix.size()) != kPrefix) continue;  // plain comment

    std::string_view rest = line.substr(kPrefix.size());
    std::vector<std::string> line_tokens;
    std::size_t p = 0;
    auto blank = [](char c) {
      return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
    };
    bool comment = false;
    while (!comment) {
      while (p < rest.size() && blank(rest[p])) ++p;
      if (p >= rest.size()) break;
      std::string tok;
      char quote = 0;
      bool escape = false;
      // A backslash takes the next character, but a blank after it still ends the token.
      while (p < rest.size() && (quote != 0 || !blank(rest[p]))) {
        char c = rest[p];
        if (escape) {
          escape = false;
        } else if (c == '\\') {
          escape = true;
          ++p;
          continue;
        } else if (quote != 0) {
          if (c == quote) {
            quote = 0;
            ++p;
            continue;
          }
        } else if (c == '"' || c == '\'') {
          quote = c;
          ++p;
          continue;
        } else if (c == '#') {
          comment = true;
          break;
        }
        tok += c;
        ++p;
      }
      if (quote != 0) {
        throw ParseError(std::string(script_name) + ": line " + std::to_string(line_no) +
                         ": Unmatched `" + quote + "` in [" +
                         std::string(rest.substr(rest.find_first_not_of(" \t"))) + "]");
      }
      if (!tok.empty() || !comment) line_tokens.push_back(std::move(tok));
    }
    if (!line_tokens.empty()) {
      std::string first_tok = to_lower(line_tokens.front());
      if (first_tok == "hetjob" || first_tok == "packjob") {
        throw ParseError(std::string(script_name) + ": line " + std::to_string(line_no) +
                         ": heterogeneous jobs (#SBATCH " + line_tokens.front() +
                         ") are not supported");
      }
    }
    for (auto& t : line_tokens) tokens.push_back(std::move(t));
  }
  return tokens;
}

void check_batch_script(std::string_view script) {
  if (script.find_first_not_of(" \t\r\n\v\f") == std::string_view::npos)
    throw ParseError("Batch script contains only whitespace!");
  if (script.substr(0, 2) != "#!") {
    throw ParseError(
        "This does not look like a batch script.  The first\n"
        "line must start with #! followed by the path to an interpreter.\n"
        "For instance: #!/bin/sh");
  }
  if (script.find('\0') != std::string_view::npos) {
    throw ParseError(
        "The Slurm controller does not allow scripts that\n"
        "contain a NULL character '\\0'.");
  }
  if (script.find("\r\n") != std::string_view::npos) {
    throw ParseError(
        "Batch script contains DOS line breaks (\\r\\n)\n"
        "instead of expected UNIX line breaks (\\n).");
  }
}

SbatchOptions apply_sbatch_env(const std::map<std::string, std::string>& env, SbatchOptions base) {
  struct EnvDef {
    std::string_view var, option;
  };
  // Table order; SLURM_* spellings come before SBATCH_* ones so the latter win.
  static constexpr EnvDef kEnv[] = {
      {"SBATCH_ACCOUNT", "account"},
      {"SBATCH_ACCTG_FREQ", "acctg-freq"},
      {"SBATCH_ARRAY_INX", "array"},
      {"SBATCH_BATCH", "batch"},
      {"SLURM_CLUSTERS", "clusters"},
      {"SBATCH_CLUSTERS", "clusters"},
      {"SBATCH_CONSTRAINT", "constraint"},
      {"SBATCH_CONTAINER", "container"},
      {"SBATCH_CORE_SPEC", "core-spec"},
      {"SBATCH_CPUS_PER_GPU", "cpus-per-gpu"},
      {"SBATCH_DEBUG", "verbose"},
      {"SBATCH_DELAY_BOOT", "delay-boot"},
      {"SBATCH_DISTRIBUTION", "distribution"},
      {"SBATCH_ERROR", "error"},
      {"SBATCH_EXCLUSIVE", "exclusive"},
      {"SBATCH_EXPORT", "export"},
      {"SBATCH_GET_USER_ENV", "get-user-env"},
      {"SBATCH_GPU_BIND", "gpu-bind"},
      {"SBATCH_GPU_FREQ", "gpu-freq"},
      {"SBATCH_GPUS", "gpus"},
      {"SBATCH_GPUS_PER_NODE", "gpus-per-node"},
      {"SBATCH_GPUS_PER_TASK", "gpus-per-task"},
      {"SBATCH_GRES", "gres"},
      {"SBATCH_GRES_FLAGS", "gres-flags"},
      {"SLURM_HINT", "hint"},
      {"SBATCH_HINT", "hint"},
      {"SBATCH_IGNORE_PBS", "ignore-pbs"},
      {"SBATCH_INPUT", "input"},
      {"SBATCH_JOB_NAME", "job-name"},
      {"SBATCH_MEM_BIND", "mem-bind"},
      {"SBATCH_MEM_PER_CPU", "mem-per-cpu"},
      {"SBATCH_MEM_PER_GPU", "mem-per-gpu"},
      {"SBATCH_MEM_PER_NODE", "mem"},
      {"SBATCH_NETWORK", "network"},
      {"SBATCH_NO_KILL", "no-kill"},
      {"SBATCH_NO_REQUEUE", "no-requeue"},
      {"SBATCH_OPEN_MODE", "open-mode"},
      {"SBATCH_OUTPUT", "output"},
      {"SBATCH_OVERCOMMIT", "overcommit"},
      {"SBATCH_PARTITION", "partition"},
      {"SBATCH_POWER", "power"},
      {"SBATCH_PROFILE", "profile"},
      {"SBATCH_QOS", "qos"},
      {"SBATCH_REQUEUE", "requeue"},
      {"SBATCH_RESERVATION", "reservation"},
      {"SBATCH_SIGNAL", "signal"},
      {"SBATCH_SPREAD_JOB", "spread-job"},
      {"SBATCH_THREAD_SPEC", "thread-spec"},
      {"SBATCH_THREADS_PER_CORE", "threads-per-core"},
      {"SBATCH_TIMELIMIT", "time"},
      {"SBATCH_USE_MIN_NODES", "use-min-nodes"},
      {"SBATCH_WAIT", "wait"},
      {"SBATCH_WAIT_ALL_NODES", "wait-all-nodes"},
      {"SBATCH_WCKEY", "wckey"},
  };
  SbatchOptions& o = base;
  for (const auto& e : kEnv) {
    auto it = env.find(std::string(e.var));
    if (it == env.end()) continue;
    const std::string& v = it->second;
    if (e.var == "SBATCH_DEBUG") {
      if (v == "1") apply(o, "verbose", std::nullopt);
      continue;
    }
    const OptDef* d = nullptr;
    for (const auto& def : kOptions)
      if (def.name == e.option) d = &def;
    if (d->arg == Arg::kNone) {
      // Flags: empty, "yes" or a non-zero number sets them; anything else is ignored.
      int64_t n = 0;
      bool on = v.empty() || to_lower(v) == "yes" || (parse_int64(v, n) && n != 0);
      if (on) apply(o, d->name, std::nullopt);
    } else if (d->arg == Arg::kOptional && v.empty()) {
      apply(o, d->name, std::nullopt);
    } else {
      apply(o, d->name, v);
    }
  }
  // --switches=count[@max-time] comes from two variables.
  auto sw = env.find("SBATCH_REQ_SWITCH");
  if (sw != env.end()) {
    std::string spec = sw->second;
    auto wait = env.find("SBATCH_WAIT4SWITCH");
    if (wait != env.end()) spec += "@" + wait->second;
    apply(o, "switches", spec);
  }
  return base;
}

std::string format_sbatch_error(const ParseError& e) {
  std::string_view msg = e.what();
  std::string out;
  bool usage = dynamic_cast<const SbatchUsageError*>(&e) != nullptr;
  std::size_t pos = 0;
  bool first = true;
  while (pos <= msg.size()) {
    std::size_t nl = msg.find('\n', pos);
    if (nl == std::string_view::npos) nl = msg.size();
    std::string_view line = msg.substr(pos, nl - pos);
    if (usage)
      out += first ? "sbatch: " : "";
    else
      out += "sbatch: error: ";
    out += line;
    out += '\n';
    first = false;
    pos = nl + 1;
  }
  return out;
}

const std::vector<std::string>& sbatch_long_options() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& d : kOptions) v.emplace_back(d.name);
    return v;
  }();
  return names;
}

SignalSpec parse_signal_spec(std::string_view value) {
  SignalSpec out;
  std::string_view s = value;
  std::size_t colon = s.find(':');
  if (colon != std::string_view::npos) {
    std::string_view flags = s.substr(0, colon);
    if (flags != "R" && flags != "B" && flags != "RB" && flags != "BR") invalid_spec("signal");
    out.batch_only = flags.find('B') != std::string_view::npos;
    out.reservation = flags.find('R') != std::string_view::npos;
    s.remove_prefix(colon + 1);
  }
  std::size_t at = s.find('@');
  std::string_view sig = s.substr(0, at);
  if (at != std::string_view::npos) {
    std::string_view t = s.substr(at + 1);
    int64_t secs = 0;
    if (!t.empty() && (!parse_int64(t, secs) || secs < 0 || secs > 0xffff)) invalid_spec("signal");
    if (!t.empty()) out.seconds = secs;
  }
  int64_t num = 0;
  if (parse_int64(sig, num)) {
    if (num < 1 || num > 0xffff) invalid_spec("signal");
    out.signal = static_cast<int>(num);
    return out;
  }
  std::string name = to_upper(sig);
  if (name.rfind("SIG", 0) == 0) name.erase(0, 3);
  static constexpr std::pair<std::string_view, int> kNames[] = {
      {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ABRT", SIGABRT},
      {"KILL", SIGKILL}, {"ALRM", SIGALRM}, {"TERM", SIGTERM}, {"USR1", SIGUSR1},
      {"USR2", SIGUSR2}, {"URG", SIGURG},   {"CONT", SIGCONT}, {"STOP", SIGSTOP},
      {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU}};
  for (const auto& [n, v] : kNames)
    if (n == name) {
      out.signal = v;
      return out;
    }
  invalid_spec("signal");
}

}  // namespace drover::core
