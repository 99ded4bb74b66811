// sprio: the factors of pending jobs' multifactor priorities. Options, messages, exit codes
// and output are Slurm 22.05's (checked against real sprio: tests/compat).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "cli/client.hpp"
#include "cli/getopt.hpp"
#include "cli/help.hpp"
#include "cli/report_cmds.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "proto/request.hpp"
#include "sched/priority.hpp"

namespace drover::cli {
namespace {

// --usage and --help: Slurm 22.05's layout and option set, drover's words.
constexpr const char* kUsage =
    "Usage: sprio [-j jid[s]] [-u user_name[s]] [-o format] [-p partitions]\n"
    "   [--federation] [--local] [--sibling] [--usage] [-hlnvVw]\n";

constexpr const char* kHelp =
    "Usage: sprio [OPTIONS]\n"
    "      --federation                jobs of the whole federation, if in one\n"
    "  -h, --noheader                  leave out the header line\n"
    "  -j, --jobs                      only these jobs (comma separated);\n"
    "                                  all pending jobs by default\n"
    "      --local                     jobs of this cluster only\n"
    "  -l, --long                      the long report\n"
    "  -M, --cluster=cluster_name      ask this cluster instead of the local\n"
    "                                  one (an empty name means the local\n"
    "                                  one); needs slurmdbd\n"
    "  -n, --norm                      print the factors normalized (0 to 1)\n"
    "  -o, --format=format             output format (%-codes)\n"
    "      --sibling                   one line per federation cluster a job is on\n"
    "  -p, --partition=partition_name  only these partitions (comma separated)\n"
    "  -u, --user=user_name            only these users' jobs (comma separated)\n"
    "  -v, --verbose                   more detail about what sprio does\n"
    "  -V, --version                   print the version and exit\n"
    "  -w, --weights                   print the weight of each priority factor\n"
    "\n"
    "Help options:\n"
    "  --help                          print this help\n"
    "  --usage                         print a short synopsis\n";

enum LongOnly { kFederation = 0x100, kHelpOpt, kLocal, kSibling, kUsageOpt };

const std::vector<LongOption> kLongOptions = {
    {"noheader", ArgKind::None, 'h'},
    {"jobs", ArgKind::Optional, 'j'},
    {"long", ArgKind::None, 'l'},
    {"cluster", ArgKind::Required, 'M'},
    {"clusters", ArgKind::Required, 'M'},
    {"norm", ArgKind::None, 'n'},
    {"format", ArgKind::Required, 'o'},
    {"sort", ArgKind::Required, 'S'},
    {"partition", ArgKind::Required, 'p'},
    {"user", ArgKind::Required, 'u'},
    {"users", ArgKind::Required, 'u'},
    {"verbose", ArgKind::None, 'v'},
    {"version", ArgKind::None, 'V'},
    {"weights", ArgKind::None, 'w'},
    {"federation", ArgKind::None, kFederation},
    {"help", ArgKind::None, kHelpOpt},
    {"local", ArgKind::None, kLocal},
    {"sib", ArgKind::None, kSibling},
    {"sibling", ArgKind::None, kSibling},
    {"usage", ArgKind::None, kUsageOpt},
};

// sprio -j: job ids, a het job's "N+M" naming job N+M; nothing else (not "N_M", not steps).
std::optional<uint32_t> parse_job_id(const std::string& s) {
  auto digits = [](std::string_view d) {
    return !d.empty() && d.size() <= 10 &&
           std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const auto plus = s.find('+');
  const std::string id = s.substr(0, plus);
  if (!digits(id)) return std::nullopt;
  uint64_t v = std::stoull(id);
  if (plus != std::string::npos) {
    const std::string off = s.substr(plus + 1);
    if (!digits(off)) return std::nullopt;
    v += std::stoull(off);
  }
  if (v == 0 || v > 0xffffffffULL) return std::nullopt;
  return static_cast<uint32_t>(v);
}

double factor(const json& f, const char* key) { return f.value(key, 0.0); }

sched::SprioRow row_of(const json& r) {
  sched::SprioRow row;
  row.job_id = r.value("job_id", uint32_t{0});
  row.partition = r.value("partition", "");
  row.user = r.value("user", "");
  const json& f = r.at("factors");
  row.factors.age = factor(f, "age");
  row.factors.assoc = factor(f, "assoc");
  row.factors.fairshare = factor(f, "fairshare");
  row.factors.job_size = factor(f, "job_size");
  row.factors.partition = factor(f, "partition");
  row.factors.qos = factor(f, "qos");
  row.factors.site = f.value("site", int64_t{0});
  row.factors.nice = f.value("nice", int64_t{0});
  if (f.contains("tres"))
    for (const auto& [name, v] : f["tres"].items()) row.factors.tres[name] = v.get<double>();
  return row;
}

// -S: sprio applies the keys from the last to the first, each a stable sort, so the first key
// decides. '-' before a key sorts it descending.
bool sort_rows(std::vector<sched::SprioRow>& rows, const std::string& spec,
               const sched::PriorityConfig& conf, char& bad) {
  for (std::size_t i = spec.size(); i-- > 0;) {
    const char c = spec[i];
    if (c == ',' || c == '-' || c == '+') continue;
    const bool descend = i > 0 && spec[i - 1] == '-';
    std::function<double(const sched::SprioRow&)> num;
    std::function<std::string(const sched::SprioRow&)> str;
    auto weighted = [&](const sched::SprioRow& r) { return sched::weigh_factors(r.factors, conf); };
    switch (c) {
      case 'c':
        str = [](const sched::SprioRow&) { return std::string(); };
        break;
      case 'i':
        num = [](const sched::SprioRow& r) { return static_cast<double>(r.job_id); };
        break;
      case 'N':
        num = [](const sched::SprioRow& r) { return static_cast<double>(r.factors.nice); };
        break;
      case 'r':
        str = [](const sched::SprioRow& r) { return r.partition; };
        break;
      case 'u':
        str = [](const sched::SprioRow& r) { return r.user; };
        break;
      case 'A':
      case 'a':
        num = [&](const sched::SprioRow& r) { return weighted(r).age; };
        break;
      case 'F':
      case 'f':
        num = [&](const sched::SprioRow& r) { return weighted(r).fairshare; };
        break;
      case 'J':
      case 'j':
        num = [&](const sched::SprioRow& r) { return weighted(r).job_size; };
        break;
      case 'P':
      case 'p':
        num = [&](const sched::SprioRow& r) { return weighted(r).partition; };
        break;
      case 'Q':
      case 'q':
        num = [&](const sched::SprioRow& r) { return weighted(r).qos; };
        break;
      case 'T':
      case 't':
        num = [&](const sched::SprioRow& r) { return weighted(r).tres_sum; };
        break;
      case 'Y':
      case 'y':
        num = [&](const sched::SprioRow& r) {
          return static_cast<double>(sched::multifactor_priority(r.factors, conf));
        };
        break;
      default:
        bad = c;
        return false;
    }
    std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
      if (num) {
        const double x = num(a), y = num(b);
        if (std::fabs(x - y) < 1e-9) return false;
        return descend ? x > y : x < y;
      }
      return descend ? str(a) > str(b) : str(a) < str(b);
    });
  }
  return true;
}

CommandResult usage_error(CommandResult r, const std::string& line) {
  r.err += line + "\nTry \"sprio --help\" for more information\n";
  r.rc = 1;
  return r;
}

}  // namespace

extern const CommandHelp kSprioHelp{
    "sprio", "shows the priority of pending jobs and the factors it is made of", kUsage, kHelp,
    "Options follow getopt_long's rules: any unique prefix of a long option is taken.\n\n"
    "The factors are those of drover's multifactor priority (age, fair-share, job size, "
    "partition, QOS, TRES), weighted by slurm.conf's PriorityWeight* as in Slurm. "
    "-M/--cluster needs slurmdbd; --federation, --sibling and --local change nothing on "
    "drover's single cluster."};

CommandResult run_sprio(const std::vector<std::string>& args, const CommandEnv& env) {
  CommandResult res;
  const ParsedArgs parsed = parse_options("sprio", args, "hj::lM:no:S:p:u:vVw", kLongOptions);
  sched::SprioOptions opt;
  bool job_flag = false, format_set = false;
  std::optional<std::string> format, jobs_text, parts_text, users_text;
  std::vector<uint32_t> job_ids, uids;
  std::vector<std::string> partitions;
  std::string sort = "i";
  int verbose = 0;
  auto parse_jobs = [&](const std::string& text) {
    job_ids.clear();
    jobs_text = text;
    for (const std::string& token : core::split_list(text, ',')) {
      auto id = parse_job_id(token);
      if (!id) {
        res.err += "sprio: error: Invalid job id: " + token + "\n";
        res.rc = 1;
        return false;
      }
      job_ids.push_back(*id);
    }
    return true;
  };
  for (const ParsedOption& o : parsed.options) {
    const std::string v = o.value.value_or("");
    switch (o.id) {
      case 'h':
        opt.no_header = true;
        break;
      case 'j':
        if (o.value && !parse_jobs(v)) return res;
        job_flag = true;
        break;
      case 'l':
        opt.long_format = true;
        format_set = true;
        break;
      case 'M':
        res.err += cluster_unreachable("sprio", v);
        res.rc = 1;
        return res;
      case 'n':
        opt.normalized = true;
        break;
      case 'o':
        format = v;
        format_set = true;
        break;
      case 'S':
        sort = v;
        break;
      case 'p':
        parts_text = v;
        partitions = core::split_list(v, ',');
        break;
      case 'u':
        users_text = v;
        uids.clear();
        for (const std::string& name : core::split_list(v, ',')) {
          if (auto uid = env.uid_of(name))
            uids.push_back(*uid);
          else
            res.err += "sprio: error: Invalid user: " + name + "\n\n";
        }
        break;
      case 'v':
        ++verbose;
        break;
      case 'V':
        res.out = version_text();
        return res;
      case 'w':
        opt.weights = true;
        break;
      case kHelpOpt:
        res.out = kHelp;
        return res;
      case kUsageOpt:
        res.out = kUsage;
        return res;
      default:  // --federation, --local, --sibling: one cluster, not federated
        break;
    }
  }
  if (!parsed.error.empty()) return usage_error(std::move(res), parsed.error);
  if (opt.long_format && format) {
    res.err +=
        "sprio: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please "
        "remove one and retry.\n";
    res.rc = 1;
    return res;
  }
  if (!format_set)
    if (auto it = env.env.find("SPRIO_FORMAT"); it != env.env.end()) format = it->second;
  std::size_t next = 0;
  if (job_flag && next < parsed.operands.size() && !parse_jobs(parsed.operands[next++])) return res;
  if (next < parsed.operands.size()) {
    res.err += "sprio: error: Unrecognized option: " + parsed.operands[next] + "\n" + kUsage;
    res.rc = 1;
    return res;
  }
  opt.users = users_text.has_value();
  if (verbose) {
    auto or_null = [](const std::optional<std::string>& s) { return s ? *s : "(null)"; };
    res.out += "-----------------------------\n";
    res.out += "format     = " + or_null(format) + "\n";
    res.out += "job_flag   = " + std::to_string(job_flag ? 1 : 0) + "\n";
    res.out += "jobs       = " + or_null(jobs_text) + "\n";
    res.out += "partition  = " + or_null(parts_text) + "\n";
    res.out += "users      = " + or_null(users_text) + "\n";
    res.out += "verbose    = " + std::to_string(verbose) + "\n";
    if (verbose > 1) {
      for (std::size_t i = 0; i < job_ids.size(); ++i)
        res.out += "job_list[" + std::to_string(i) + "] = " + std::to_string(job_ids[i]) + "\n";
      for (std::size_t i = 0; i < uids.size(); ++i)
        res.out += "user_list[" + std::to_string(i) + "] = " + std::to_string(uids[i]) + "\n";
    }
    res.out += "-----------------------------\n\n\n";
  }

  proto::QueryRequest req{.what = "priority_factors"};
  if (jobs_text && !job_ids.empty()) req.job_ids.emplace(job_ids.begin(), job_ids.end());
  if (users_text) req.uids = uids;
  if (parts_text) req.partitions = partitions;
  const std::optional<json> answer = query_controller(env, req.to_json(), "priority factors", res);
  if (!answer) return res;
  const json& reply = *answer;
  const std::string type = reply.value("priority_type", "priority/basic");
  if (type != "priority/multifactor") {
    res.err += "You are not running a supported priority plugin\n(" + type +
               ").\nOnly 'priority/multifactor' is supported.\n";
    res.rc = 1;
    return res;
  }

  sched::PriorityConfig conf;
  conf.type = sched::PriorityType::Multifactor;
  const json& w = reply.at("weights");
  conf.weight_age = w.value("age", 0u);
  conf.weight_assoc = w.value("assoc", 0u);
  conf.weight_fairshare = w.value("fairshare", 0u);
  conf.weight_job_size = w.value("job_size", 0u);
  conf.weight_partition = w.value("partition", 0u);
  conf.weight_qos = w.value("qos", 0u);
  conf.weight_tres_text = reply.value("weight_tres", "");
  if (!conf.weight_tres_text.empty()) {
    try {
      conf.weight_tres = sched::parse_tres_weights(conf.weight_tres_text, "PriorityWeightTRES");
    } catch (const core::ParseError&) {
      // The controller checked it at startup; show the text without per-TRES values.
    }
  }

  const sched::SprioFormat fmt =
      sched::parse_sprio_format(format ? *format : sched::sprio_default_format(conf, opt));
  for (char bad : fmt.invalid)
    res.err += std::string("sprio: error: Invalid job format specification: ") + bad + "\n";

  std::vector<sched::SprioRow> rows;
  for (const auto& r : reply.value("rows", json::array())) rows.push_back(row_of(r));
  if (jobs_text && rows.empty()) {
    res.out += "Unable to find jobs matching user/id(s) specified\n";
    return res;
  }
  if (!opt.no_header) {
    sched::SprioOptions header_only = opt;
    header_only.weights = false;
    res.out += sched::format_sprio({}, conf, fmt, header_only);
  }
  sched::SprioOptions body = opt;
  body.no_header = true;
  if (!opt.weights && !rows.empty()) {
    char bad = 0;
    if (!sort_rows(rows, sort, conf, bad)) {
      res.err += std::string("sprio: error: Invalid sort specification: ") + bad + "\n";
      res.rc = 1;
      return res;
    }
  }
  res.out += sched::format_sprio(rows, conf, fmt, body);
  return res;
}

}  // namespace drover::cli
