// sreport: cluster Utilization, cluster AccountUtilizationByUser and user TopUsage over the
// controller's job records, printed as Slurm 22.05's sreport prints them.
#include "cli/sreport.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "cli/client.hpp"
#include "cli/getopt.hpp"
#include "cli/help.hpp"
#include "cli/print_fields.hpp"
#include "cli/sacct.hpp"
#include "core/duration.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "proto/acct_json.hpp"
#include "proto/request.hpp"

namespace drover::cli {
namespace {

bool is(std::string_view given, std::string_view word, size_t min) {
  return given.size() >= min && given.size() <= word.size() &&
         core::iequals(given, word.substr(0, given.size()));
}

enum class TimeFormat { Seconds, Minutes, Hours, Percent, SecPer, MinPer, HourPer };

bool with_percent(TimeFormat f) {
  return f == TimeFormat::SecPer || f == TimeFormat::MinPer || f == TimeFormat::HourPer;
}

std::optional<TimeFormat> time_format(const std::string& s) {
  if (is(s, "SecPer", 6)) return TimeFormat::SecPer;
  if (is(s, "MinPer", 6)) return TimeFormat::MinPer;
  if (is(s, "HourPer", 6)) return TimeFormat::HourPer;
  if (is(s, "Seconds", 1)) return TimeFormat::Seconds;
  if (is(s, "Minutes", 1)) return TimeFormat::Minutes;
  if (is(s, "Hours", 1)) return TimeFormat::Hours;
  if (is(s, "Percent", 1)) return TimeFormat::Percent;
  return std::nullopt;
}

std::string unit_text(TimeFormat f, bool tres_given) {
  const std::string what = tres_given ? "TRES " : "CPU ";
  switch (f) {
    case TimeFormat::Seconds:
      return what + "Seconds";
    case TimeFormat::Minutes:
      return what + "Minutes";
    case TimeFormat::Hours:
      return what + "Hours";
    case TimeFormat::Percent:
      return "Percentage of Total";
    case TimeFormat::SecPer:
      return what + "Seconds/Percentage of Total";
    case TimeFormat::MinPer:
      return what + "Minutes/Percentage of Total";
    case TimeFormat::HourPer:
      return what + "Hours/Percentage of Total";
  }
  return "";
}

std::string printf_str(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// A TRES-seconds value in the time format, against the total it is a part of ("%.0f" rounds
// halves to even, as Slurm's does).
std::string time_text(int64_t secs, int64_t total, TimeFormat f) {
  const double pct = total > 0 ? 100.0 * static_cast<double>(secs) / static_cast<double>(total) : 0;
  const std::string per = printf_str("(%.2f%%)", pct);
  switch (f) {
    case TimeFormat::Seconds:
      return std::to_string(secs);
    case TimeFormat::Minutes:
      return printf_str("%.0f", static_cast<double>(secs) / 60);
    case TimeFormat::Hours:
      return printf_str("%.0f", static_cast<double>(secs) / 3600);
    case TimeFormat::Percent:
      return printf_str("%.2f%%", pct);
    case TimeFormat::SecPer:
      return std::to_string(secs) + per;
    case TimeFormat::MinPer:
      return printf_str("%.0f", static_cast<double>(secs) / 60) + per;
    case TimeFormat::HourPer:
      return printf_str("%.0f", static_cast<double>(secs) / 3600) + per;
  }
  return "";
}

int64_t get(const std::map<std::string, int64_t>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

struct Options {
  std::string cluster;
  TimeFormat time = TimeFormat::Minutes;
  std::vector<std::string> tres = {"cpu"};
  bool tres_given = false;
  PrintOptions print;
};

// One line of a report: what its cells show.
struct Line {
  std::string account, login, proper, tres;
  int depth = 0;
  int64_t used = 0, energy = 0, total = 0;
  // cluster utilization
  const core::UsageTotals* totals = nullptr;
};

struct Field {
  std::vector<const char*> names;
  size_t min;
  const char* header;
  int width;      // with a time format without a percentage
  int per_width;  // with one (SecPer, MinPer, HourPer)
  std::function<PrintCell(const Line&, const Options&)> get;
};

PrintCell text(std::string s) { return {std::move(s), false}; }

PrintCell timed(int64_t v, int64_t total, const Options& o) {
  return {time_text(v, total, o.time), true};
}

std::vector<Field> utilization_fields() {
  auto total = [](const Line& l, const std::map<std::string, int64_t> core::UsageTotals::*m,
                  const Options& o) {
    return timed(get(l.totals->*m, l.tres), get(l.totals->reported, l.tres), o);
  };
  return {
      {{"Allocated"},
       1,
       "Allocated",
       8,
       17,
       [=](const Line& l, const Options& o) { return total(l, &core::UsageTotals::allocated, o); }},
      {{"Cluster"},
       1,
       "Cluster",
       9,
       9,
       [](const Line&, const Options& o) { return text(o.cluster); }},
      {{"Down"},
       1,
       "Down",
       8,
       17,
       [=](const Line& l, const Options& o) { return total(l, &core::UsageTotals::down, o); }},
      {{"Idle"},
       1,
       "Idle",
       8,
       17,
       [=](const Line& l, const Options& o) { return total(l, &core::UsageTotals::idle, o); }},
      {{"OverCommitted"},
       1,
       "Over Comm",
       8,
       17,
       [=](const Line& l, const Options& o) {
         return total(l, &core::UsageTotals::over_committed, o);
       }},
      {{"PlannedDown"},
       8,
       "PLND Down",
       8,
       17,
       [=](const Line& l, const Options& o) {
         return total(l, &core::UsageTotals::planned_down, o);
       }},
      {{"Planned"},
       7,
       "Planned",
       8,
       17,
       [=](const Line& l, const Options& o) { return total(l, &core::UsageTotals::planned, o); }},
      {{"Reported"},
       1,
       "Reported",
       8,
       17,
       [=](const Line& l, const Options& o) { return total(l, &core::UsageTotals::reported, o); }},
      {{"TresCount"},
       5,
       "TRES Count",
       10,
       10,
       [](const Line& l, const Options&) {
         auto it = l.totals->count.find(l.tres);
         return PrintCell{std::to_string(it == l.totals->count.end() ? 0 : it->second), true};
       }},
      {{"TresName"},
       5,
       "TRES Name",
       14,
       14,
       [](const Line& l, const Options&) { return text(l.tres); }},
  };
}

std::vector<Field> usage_fields() {
  return {
      {{"Accounts"},
       1,
       "Account",
       15,
       15,
       [](const Line& l, const Options&) { return text(l.account); }},
      {{"Cluster"},
       1,
       "Cluster",
       9,
       9,
       [](const Line&, const Options& o) { return text(o.cluster); }},
      {{"Energy"},
       1,
       "Energy",
       8,
       17,
       [](const Line& l, const Options& o) { return timed(l.energy, 0, o); }},
      {{"Login"}, 1, "Login", 9, 9, [](const Line& l, const Options&) { return text(l.login); }},
      {{"Proper"},
       1,
       "Proper Name",
       15,
       15,
       [](const Line& l, const Options&) { return text(l.proper); }},
      {{"TresCount"},
       5,
       "TRES Count",
       10,
       10,
       [](const Line&, const Options&) { return PrintCell{}; }},
      {{"TresName"},
       5,
       "TRES Name",
       14,
       14,
       [](const Line& l, const Options&) { return text(l.tres); }},
      {{"Used"},
       1,
       "Used",
       8,
       17,
       [](const Line& l, const Options& o) { return timed(l.used, l.total, o); }},
  };
}

struct Chosen {
  const Field* field;
  int width;
};

std::optional<std::vector<Chosen>> choose(const std::vector<Field>& fields, const std::string& list,
                                          const Options& o, std::string& unknown) {
  std::vector<Chosen> out;
  for (const FormatItem& item : parse_format_list(list)) {
    const Field* found = nullptr;
    for (const Field& f : fields)
      for (const char* n : f.names)
        if (!found && core::iequals(item.name, n)) found = &f;
    for (const Field& f : fields)
      for (const char* n : f.names)
        if (!found && is(item.name, n, f.min)) found = &f;
    if (!found) {
      unknown = item.name;
      return std::nullopt;
    }
    const int width = item.has_width         ? item.width
                      : with_percent(o.time) ? found->per_width
                                             : found->width;
    out.push_back({found, width});
  }
  return out;
}

std::string render(const std::vector<Chosen>& cols, const std::vector<Line>& lines,
                   const Options& o) {
  std::vector<PrintColumn> pc;
  for (const auto& c : cols) pc.push_back({c.field->header, c.width});
  FieldPrinter printer(std::move(pc), o.print);
  std::string out = printer.header();
  for (const Line& l : lines) {
    std::vector<PrintCell> cells;
    for (const auto& c : cols) cells.push_back(c.field->get(l, o));
    out += printer.row(cells);
  }
  return out;
}

std::string banner(const std::string& title, const Options& o) {
  if (o.print.no_header) return "";
  const std::string dashes(80, '-');
  return dashes + "\n" + title + "\nUsage reported in " + unit_text(o.time, o.tres_given) + "\n" +
         dashes + "\n";
}

std::vector<std::string> list_of(const std::string& v) {
  std::vector<std::string> out;
  for (const auto& s : core::split_list(v, ',')) out.push_back(s);
  return out;
}

bool listed(const std::vector<std::string>& list, const std::string& v) {
  return list.empty() ||
         std::any_of(list.begin(), list.end(), [&](const auto& x) { return core::iequals(x, v); });
}

// The report's own words: start=, end=, format=, accounts=, users=, tree, group, topcount=.
struct ReportArgs {
  std::optional<std::string> start, end;
  std::string format;
  std::vector<std::string> accounts, users;
  bool tree = false, group = false;
  int top = 10;
};

std::string proper_name(const CommandEnv& env, const std::string& login) {
  if (!env.full_name_of) return "";
  std::string gecos = env.full_name_of(login).value_or("");
  return gecos.substr(0, gecos.find(','));
}

const char* kClusterReports =
    "Valid cluster reports are, \"AccountUtilizationByUser\", \"UserUtilizationByAccount\", "
    "\"UserUtilizationByWckey\", \"Utilization\", and \"WCKeyUtilizationByUser\"\n";

const std::vector<LongOption> kLongOptions = {
    {"all_clusters", ArgKind::None, 'a'}, {"cluster", ArgKind::Required, 'M'},
    {"federation", ArgKind::None, 1},     {"help", ArgKind::None, 'h'},
    {"local", ArgKind::None, 2},          {"noheader", ArgKind::None, 'n'},
    {"parsable", ArgKind::None, 'p'},     {"parsable2", ArgKind::None, 'P'},
    {"quiet", ArgKind::None, 'Q'},        {"tres", ArgKind::Required, 'T'},
    {"usage", ArgKind::None, 'h'},        {"verbose", ArgKind::None, 'v'},
    {"version", ArgKind::None, 'V'},
};

// --help, --usage and the help command: Slurm 22.05's layout and option set, drover's words,
// and only the reports drover has.
const char* kUsage =
    "sreport [<OPTION>] [<COMMAND>]\n"
    "    Valid <OPTION> values are:\n"
    "     -a or --all_clusters: every cluster, not only this one\n"
    "     --federation: the whole federation, if in one\n"
    "     -h or --help: print this help (the \"help\" command)\n"
    "     --local: this cluster only, even in a federation\n"
    "     -n or --noheader: leave out the header lines\n"
    "     -p or --parsable: fields split by '|', one more '|' at the end\n"
    "     -P or --parsable2: fields split by '|', none at the end\n"
    "     -Q or --quiet: errors only\n"
    "     -t <time_format>: Seconds, Minutes, Hours, Percent, SecPer, MinPer,\n"
    "                       HourPer\n"
    "     -T or --tres: the TRES to report, comma separated, or 'ALL'\n"
    "     -v or --verbose: more detail about what sreport does\n"
    "     -V or --version: print the version (the \"version\" command)\n"
    "\n"
    "  drover's sreport runs the one report given on its command line; it has\n"
    "  no interactive mode.\n"
    "\n"
    "    Valid <COMMAND> values are:\n"
    "     help                print this help\n"
    "     version             print the version\n"
    "     cluster <REPORT> <OPTIONS>\n"
    "     user <REPORT> <OPTIONS>\n"
    "\n"
    "  <REPORT> in drover:\n"
    "     cluster - AccountUtilizationByUser, Utilization\n"
    "     user    - TopUsage\n"
    "\n"
    "  <OPTIONS>:\n"
    "     every report\n"
    "             - Start=<TIME>     - start of the period (default: midnight\n"
    "                                  at the start of yesterday)\n"
    "             - End=<TIME>       - end of the period (default: midnight\n"
    "                                  at the end of yesterday)\n"
    "             - Format=<FIELDS>  - fields to print, comma separated; a\n"
    "                                  field may end with %NUMBER for its width\n"
    "     cluster - Accounts=<LIST>  - only these accounts\n"
    "             - Users=<LIST>     - only these users\n"
    "             - Tree             - AccountUtilizationByUser: indent accounts\n"
    "                                  as they nest\n"
    "     user    - Accounts=<LIST>  - only these accounts\n"
    "             - Group            - one line per user, accounts summed\n"
    "             - TopCount=<N>     - how many users TopUsage lists (10)\n"
    "             - Users=<LIST>     - only these users\n"
    "\n"
    "  <TIME> may be HH:MM[:SS][AM|PM], MMDD[YY], MM/DD[/YY], MM.DD[.YY],\n"
    "  MM/DD[/YY]-HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]] or now[+|-count[units]].\n"
    "  Commands and options are case-insensitive.\n";

}  // namespace

extern const CommandHelp kSreportHelp{
    "sreport", "reports on the cluster's usage over a period, from the accounting records",
    "sreport [<OPTION>] [<COMMAND>]\n", kUsage,
    "drover computes the reports from the controller's own job records; there is no "
    "slurmdbd. Only the reports listed exist (cluster Utilization and "
    "AccountUtilizationByUser, user TopUsage); the job and reservation reports and the WCKey "
    "reports of Slurm's sreport are refused. There is no interactive mode.\n\n"
    "-M/--cluster is accepted as by Slurm (its help does not list it) and needs slurmdbd. "
    "Options follow getopt_long's rules: any unique prefix of a long option is taken."};

CommandResult run_sreport(const std::vector<std::string>& args, const CommandEnv& env,
                          int64_t now) {
  CommandResult res;
  const ParsedArgs parsed = parse_options("sreport", args, "aM:nhpPQt:T:vV", kLongOptions);
  if (!parsed.error.empty()) {
    res.err = parsed.error + "\nTry \"sreport --help\" for more information\n";
    res.rc = 1;
    return res;
  }
  Options o;
  if (auto it = env.env.find("SREPORT_TRES"); it != env.env.end() && !it->second.empty()) {
    o.tres = list_of(core::to_lower(it->second));
    o.tres_given = true;
  }
  for (const ParsedOption& opt : parsed.options) {
    const std::string v = opt.value.value_or("");
    switch (opt.id) {
      case 'h':
        res.out = kUsage;
        return res;
      case 'n':
        o.print.no_header = true;
        break;
      case 'p':
        o.print.parsable = true;
        o.print.parsable2 = false;
        break;
      case 'P':
        o.print.parsable2 = true;
        o.print.parsable = false;
        break;
      case 't':
        if (auto f = time_format(v))
          o.time = *f;
        else
          res.err += "unknown time format " + v;  // sic: no newline, and the report goes on
        break;
      case 'T':
        o.tres = list_of(core::to_lower(v));
        o.tres_given = true;
        break;
      case 'V':
        res.out = version_text();
        return res;
      default:
        break;
    }
  }
  const std::vector<std::string>& words = parsed.operands;
  if (words.empty()) {
    res.err += "sreport: give a report: drover's sreport has no interactive mode\n";
    res.rc = 1;
    return res;
  }
  enum class Report { Utilization, AccountByUser, TopUsage } report;
  const std::string kind = words[0];
  const std::string name = words.size() > 1 ? words[1] : "";
  if (is(kind, "cluster", 2)) {
    if (is(name, "AccountUtilizationByUser", 1) || core::iequals(name, "aubu")) {
      report = Report::AccountByUser;
    } else if (is(name, "Utilization", 2)) {
      report = Report::Utilization;
    } else if (is(name, "UserUtilizationByAccount", 18) || is(name, "UserUtilizationByWckey", 18) ||
               is(name, "WCKeyUtilizationByUser", 1) || core::iequals(name, "uuba") ||
               core::iequals(name, "uubw") || core::iequals(name, "wubu")) {
      res.err += "sreport: cluster " + name + " is not supported by drover's sreport yet\n";
      res.rc = 1;
      return res;
    } else {
      res.err += "Not valid report " + name + "\n" + kClusterReports;
      res.rc = 1;
      return res;
    }
  } else if (is(kind, "user", 1)) {
    if (!is(name, "TopUsage", 1)) {
      res.err += "Not valid report " + name + "\nValid user reports are, \"TopUsage\"\n";
      res.rc = 1;
      return res;
    }
    report = Report::TopUsage;
  } else if (is(kind, "job", 1) || is(kind, "reservation", 2)) {
    res.err += "sreport: " + kind + " reports are not supported by drover's sreport yet\n";
    res.rc = 1;
    return res;
  } else {
    res.err += "invalid keyword: " + kind + "\n";
    res.rc = 1;
    return res;
  }

  ReportArgs ra;
  for (size_t i = 2; i < words.size(); ++i) {
    const std::string& w = words[i];
    const auto eq = w.find('=');
    const std::string k = w.substr(0, eq), v = eq == std::string::npos ? "" : w.substr(eq + 1);
    if (eq == std::string::npos && is(w, "Tree", 4)) {
      ra.tree = true;
    } else if (eq == std::string::npos && is(w, "Group", 1)) {
      ra.group = true;
    } else if (eq == std::string::npos && (is(w, "All_Clusters", 1) || is(w, "where", 5))) {
    } else if (eq != std::string::npos && is(k, "Start", 1)) {
      ra.start = v;
    } else if (eq != std::string::npos && is(k, "End", 1)) {
      ra.end = v;
    } else if (eq != std::string::npos && is(k, "Format", 1)) {
      ra.format = v;
    } else if (eq != std::string::npos && (is(k, "Accounts", 2) || is(k, "Acct", 4))) {
      ra.accounts = list_of(core::to_lower(v));
    } else if (eq != std::string::npos && (is(k, "Users", 1) || is(k, "Login", 1))) {
      ra.users = list_of(v);
    } else if (eq != std::string::npos && is(k, "TopCount", 1)) {
      ra.top = std::atoi(v.c_str());
    } else if (eq != std::string::npos && is(k, "Clusters", 1)) {
    } else {
      res.err += " Unknown condition: " + w + "\n";
      res.rc = 1;
      return res;
    }
  }

  // The window: whole hours; by default yesterday.
  int64_t start = 0, end = 0;
  try {
    end = ra.end ? parse_past_time(*ra.end, now) / 3600 * 3600 : local_midnight(now);
    start = ra.start ? parse_past_time(*ra.start, now) / 3600 * 3600 : end - 86400;
  } catch (const core::ParseError& e) {
    res.err += std::string(e.what()) + "\n";
    res.rc = 1;
    return res;
  }
  if (end <= start) end = start + 3600;

  json reply;
  try {
    reply = env.call(proto::QueryRequest{.what = "usage", .start = start, .end = end}.to_json());
  } catch (const ControllerUnreachable&) {
    res.err +=
        "sreport: error: Problem talking to the database: Unable to contact slurm "
        "controller (connect failure)\n";
    res.rc = 1;
    return res;
  }
  if (!reply.value("ok", false)) {
    res.err += "sreport: error: " + reply.value("error", std::string("unknown error")) + "\n";
    res.rc = 1;
    return res;
  }
  o.cluster = reply.value("cluster", "");
  const auto usage = reply.at("report").get<core::UsageReport>();
  const std::map<std::string, std::string> parents =
      reply.value("parents", std::map<std::string, std::string>{});
  const std::string window =
      core::format_timestamp(start) + " - " + core::format_timestamp(end - 1);
  const std::string secs = " (" + std::to_string(end - start) + " secs)";
  std::string unknown;

  if (report == Report::Utilization) {
    const auto fields = utilization_fields();
    std::string format = ra.format;
    if (format.empty())
      format = o.tres_given ? "Cluster,TresName,Allocated,Down,PlannedDown,Idle,Planned,Reported"
                            : "Cluster,Allocated,Down,PlannedDown,Idle,Planned,Reported";
    const auto cols = choose(fields, format, o, unknown);
    if (!cols) {
      res.err += "Unknown field '" + unknown + "'\n";
      res.rc = 1;
      return res;
    }
    std::vector<Line> lines;
    for (const auto& t : o.tres) {
      Line l;
      l.tres = t;
      l.totals = &usage.cluster;
      lines.push_back(l);
    }
    res.out += banner("Cluster Utilization " + window, o) + render(*cols, lines, o);
    return res;
  }

  const auto fields = usage_fields();
  std::string format = ra.format;
  if (format.empty()) {
    if (report == Report::AccountByUser)
      format = o.tres_given ? "Cluster,Accounts,Login,Proper,TresName,Used"
                            : "Cluster,Accounts,Login,Proper,Used,Energy";
    else
      format = o.tres_given ? "Cluster,Login,Proper,Accounts,TresName,Used"
                            : "Cluster,Login,Proper,Accounts,Used,Energy";
  }
  auto cols = choose(fields, format, o, unknown);
  if (!cols) {
    res.err += "Unknown field '" + unknown + "'\n";
    res.rc = 1;
    return res;
  }
  // A line per TRES of each row, in -T's order.
  std::vector<Line> lines;
  auto add_row = [&](Line base, const std::map<std::string, int64_t>& used) {
    for (const auto& t : o.tres) {
      Line l = base;
      l.tres = t;
      l.used = get(used, t);
      l.total = get(usage.cluster.reported, t);
      l.energy = get(used, "energy");
      lines.push_back(l);
    }
  };

  if (report == Report::AccountByUser) {
    // Usage by account (everything below it) and by user association, in the tree's order:
    // an account, its users by name, then its sub-accounts by name.
    auto parent_of = [&](const std::string& a) -> std::string {
      if (a == "root") return "";
      auto it = parents.find(a);
      return it == parents.end() || it->second.empty() ? "root" : it->second;
    };
    std::map<std::string, std::map<std::string, std::map<std::string, int64_t>>> users_of;
    std::map<std::string, std::map<std::string, int64_t>> sums;
    std::set<std::string> has_usage;
    for (const auto& a : usage.assocs) {
      if (!listed(ra.users, a.user)) continue;
      users_of[a.account][a.user] = a.used;
      for (std::string acct = a.account; !acct.empty(); acct = parent_of(acct)) {
        for (const auto& [t, n] : a.used) sums[acct][t] += n;
        has_usage.insert(acct);
      }
    }
    std::map<std::string, std::vector<std::string>> children;
    for (const auto& acct : has_usage)
      if (acct != "root") children[parent_of(acct)].push_back(acct);
    for (auto& [p, list] : children) std::sort(list.begin(), list.end());
    std::vector<std::string> tops;
    if (ra.accounts.empty()) {
      tops.push_back("root");
    } else {
      // The accounts asked for, in the tree's order.
      std::vector<std::string> order;
      std::function<void(const std::string&)> walk = [&](const std::string& a) {
        order.push_back(a);
        for (const auto& c : children[a]) walk(c);
      };
      walk("root");
      for (const auto& a : order)
        if (listed(ra.accounts, a)) tops.push_back(a);
    }
    std::function<void(const std::string&, int)> emit = [&](const std::string& acct, int depth) {
      if (!has_usage.count(acct)) return;
      Line head;
      head.account = ra.tree ? std::string(static_cast<size_t>(depth), ' ') + acct : acct;
      add_row(head, sums[acct]);
      for (const auto& [user, used] : users_of[acct]) {
        Line u;
        u.account = ra.tree ? std::string(static_cast<size_t>(depth + 1), ' ') + acct : acct;
        u.login = user;
        u.proper = proper_name(env, user);
        add_row(u, used);
      }
      for (const auto& c : children[acct]) emit(c, depth + 1);
    };
    std::set<std::string> done;
    for (const auto& t : tops) {
      // A top below another top is already listed with it.
      bool inside = false;
      for (std::string a = parent_of(t); !a.empty(); a = parent_of(a))
        inside = inside || done.count(a);
      if (inside) continue;
      done.insert(t);
      emit(t, 0);
    }
    if (ra.tree)
      for (auto& c : *cols)
        if (c.field->names.front() == std::string("Accounts") && c.width == 15) c.width = -20;
    res.out +=
        banner("Cluster/Account/User Utilization " + window + secs, o) + render(*cols, lines, o);
    return res;
  }

  // TopUsage: users (per account, or with their accounts grouped) by what they used of the
  // first TRES, most first.
  struct Top {
    std::string user, accounts;
    std::map<std::string, int64_t> used;
  };
  std::vector<core::AssocUsage> by_user = usage.assocs;
  std::stable_sort(by_user.begin(), by_user.end(), [](const auto& x, const auto& y) {
    return std::tie(x.user, x.account) < std::tie(y.user, y.account);
  });
  std::vector<Top> tops;
  for (const auto& a : by_user) {
    if (!listed(ra.users, a.user) || !listed(ra.accounts, a.account)) continue;
    if (ra.group) {
      auto it =
          std::find_if(tops.begin(), tops.end(), [&](const Top& t) { return t.user == a.user; });
      if (it == tops.end()) {
        tops.push_back({a.user, a.account, a.used});
      } else {
        it->accounts += ", " + a.account;
        for (const auto& [t, n] : a.used) it->used[t] += n;
      }
    } else {
      tops.push_back({a.user, a.account, a.used});
    }
  }
  std::stable_sort(tops.begin(), tops.end(), [&](const Top& x, const Top& y) {
    return get(x.used, o.tres.front()) > get(y.used, o.tres.front());
  });
  if (ra.top >= 0 && tops.size() > static_cast<size_t>(ra.top))
    tops.resize(static_cast<size_t>(ra.top));
  for (const Top& t : tops) {
    Line l;
    l.login = t.user;
    l.proper = proper_name(env, t.user);
    l.account = t.accounts;
    add_row(l, t.used);
  }
  res.out += banner("Top " + std::to_string(ra.top) + " Users " + window + secs, o) +
             render(*cols, lines, o);
  return res;
}

}  // namespace drover::cli
