// sshare: the fair-share values of the associations. Options, messages, exit codes and the
// layout are Slurm 22.05's (checked against real sshare: tests/compat). Real sshare without
// slurmdbd has no associations to show, so the rows follow the man page and Slurm's sources:
// the controller's association tree (root, accounts, users), as sshare -a would list it.
#include <cmath>
#include <limits>

#include "cli/client.hpp"
#include "cli/getopt.hpp"
#include "cli/help.hpp"
#include "cli/report_cmds.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "proto/request.hpp"
#include "sched/fairshare.hpp"

namespace drover::cli {
namespace {

// --help and --usage (the same text): Slurm 22.05's layout and option set, drover's words.
constexpr const char* kUsage =
    "Usage:  sshare [OPTION]                                                    \n"
    "  Valid OPTIONs are:\n"
    "    -a or --all            every user, not only those with usage\n"
    "    -A or --accounts=      only these accounts (comma separated)\n"
    "    -e or --helpformat     list the field names --format takes\n"
    "    -l or --long           add the normalized usage columns\n"
    "    -m or --partition      show the partition of each association\n"
    "    -M or --cluster=names  ask these clusters (needs slurmdbd)\n"
    "    -n or --noheader       leave out the header line\n"
    "    -o or --format=        fields to print, comma separated (see\n"
    "                           --helpformat for their names)\n"
    "    -p or --parsable       fields split by '|', one more '|' at the end\n"
    "    -P or --parsable2      fields split by '|', none at the end\n"
    "    -u or --users=         only these users (comma separated)\n"
    "    -U or --Users          users' lines only, no account lines\n"
    "    -v or --verbose        more detail about what sshare does\n"
    "    -V or --version        print the version and exit\n"
    "          --help           print this help\n"
    "          --usage          print this help\n"
    "\n"
    "\n";

enum LongOnly { kHelpOpt = 0x100, kUsageOpt };

const std::vector<LongOption> kLongOptions = {
    {"accounts", ArgKind::Required, 'A'}, {"all", ArgKind::None, 'a'},
    {"helpformat", ArgKind::None, 'e'},   {"long", ArgKind::None, 'l'},
    {"partition", ArgKind::None, 'm'},    {"cluster", ArgKind::Required, 'M'},
    {"clusters", ArgKind::Required, 'M'}, {"noheader", ArgKind::None, 'n'},
    {"format", ArgKind::Required, 'o'},   {"parsable", ArgKind::None, 'p'},
    {"parsable2", ArgKind::None, 'P'},    {"users", ArgKind::Required, 'u'},
    {"Users", ArgKind::None, 'U'},        {"verbose", ArgKind::None, 'v'},
    {"version", ArgKind::None, 'V'},      {"help", ArgKind::None, kHelpOpt},
    {"usage", ArgKind::None, kUsageOpt},
};

// Adds the comma-separated names not already there (Slurm's lists ignore case).
void add_names(std::vector<std::string>& list, const std::string& text) {
  for (const std::string& n : core::split_list(text, ',')) {
    bool seen = false;
    for (const std::string& have : list) seen = seen || core::iequals(have, n);
    if (!seen) list.push_back(n);
  }
}

std::optional<double> wire_double(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  return std::nullopt;
}

// "cpu=1,mem=0,...": every TRES (Slurm leaves out only those it has no value for).
std::string tres_list(const json& names, const json& values) {
  std::string out;
  if (!values.is_array()) return out;
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (!out.empty()) out += ',';
    out += names[i].get<std::string>() + "=" + std::to_string(values[i].get<uint64_t>());
  }
  return out;
}

sched::SshareRow row_of(const json& r, const json& tres_names, const std::string& cluster) {
  sched::SshareRow row;
  row.id = r.value("id", sched::AssocId{0});
  row.account = r.value("account", "");
  row.user = r.value("user", "");
  row.parent = r.value("parent", "");
  row.cluster = cluster;
  const json& rs = r.value("raw_shares", json(nullptr));
  if (rs.is_string())
    row.raw_shares = sched::RawShares{1, true};
  else if (rs.is_number())
    row.raw_shares = sched::RawShares{rs.get<uint32_t>(), false};
  row.norm_shares = wire_double(r.value("norm_shares", json(0))).value_or(0);
  row.raw_usage = r.value("raw_usage", uint64_t{0});
  row.norm_usage = wire_double(r.value("norm_usage", json(nullptr)));
  row.effective_usage = wire_double(r.value("effective_usage", json(nullptr)));
  row.fairshare = wire_double(r.value("fairshare", json(nullptr)));
  row.level_fs = wire_double(r.value("level_fs", json(nullptr)));
  row.grp_tres_raw = tres_list(tres_names, r.value("grp_tres_raw", json(nullptr)));
  row.tres_run_mins = tres_list(tres_names, r.value("tres_run_mins", json(nullptr)));
  return row;
}

}  // namespace

extern const CommandHelp kSshareHelp{
    "sshare", "shows the fair-share standing of accounts and users", kUsage, kUsage,
    "Options follow getopt_long's rules: any unique prefix of a long option is taken.\n\n"
    "The figures come from drover's own usage records and the associations set with sacctmgr; "
    "-M/--cluster needs slurmdbd, which drover does not have, and fails as Slurm's does."};

CommandResult run_sshare(const std::vector<std::string>& args, const CommandEnv& env) {
  CommandResult res;
  const ParsedArgs parsed = parse_options("sshare", args, "aA:ehlM:no:pPqUu:t:vVm", kLongOptions);
  bool all_users = false, long_format = false, partitions = false, users_only = false;
  sched::SshareOptions opt;
  std::vector<std::string> users, accounts;
  std::string field_list;
  int verbose = 0;
  for (const ParsedOption& o : parsed.options) {
    const std::string v = o.value.value_or("");
    switch (o.id) {
      case 'a':
        all_users = true;
        break;
      case 'A':
        add_names(accounts, v);
        break;
      case 'e': {
        const auto names = sched::sshare_field_names();
        for (std::size_t i = 0; i < names.size(); ++i) {
          if (i & 3)
            res.out += ' ';
          else if (i)
            res.out += '\n';
          std::string cell = names[i];
          cell.resize(std::max<std::size_t>(cell.size(), 17), ' ');
          res.out += cell;
        }
        res.out += '\n';
        return res;
      }
      case 'h':
      case 'n':
        opt.no_header = true;
        break;
      case 'l':
        long_format = true;
        break;
      case 'M':
        res.err += cluster_unreachable("sshare", v);
        res.rc = 1;
        return res;
      case 'm':
        partitions = true;
        break;
      case 'o':
        field_list += v + ",";
        break;
      case 'p':
        opt.parsable = true;
        opt.parsable2 = false;
        break;
      case 'P':
        opt.parsable2 = true;
        opt.parsable = false;
        break;
      case 'u': {
        if (v == "-1") {
          all_users = true;
          break;
        }
        all_users = false;
        for (std::string name : core::split_list(v, ',')) {
          if (name[0] >= '0' && name[0] <= '9') {
            const auto uid = static_cast<uint32_t>(std::strtoul(name.c_str(), nullptr, 10));
            auto known = env.name_of(uid);
            if (!known) {
              res.err += "Invalid user id: " + std::to_string(uid) + "\n";
              res.rc = 1;
              return res;
            }
            name = *known;
          }
          add_names(users, name);
        }
        break;
      }
      case 'U':
        users_only = true;
        break;
      case 'v':
        ++verbose;
        break;
      case 'V':
        res.out = version_text();
        return res;
      case kHelpOpt:
      case kUsageOpt:
        res.out = kUsage;
        return res;
      default:  // -q and -t are in sshare's option string but have no case
        res.err += std::string("getopt error, returned ") + static_cast<char>(o.id) + "\n";
        res.rc = 1;
        return res;
    }
  }
  if (!parsed.error.empty()) {
    res.err += parsed.error + "\nTry \"sshare --help\" for more information\n";
    res.rc = 1;
    return res;
  }

  // Without -a or -u, the caller's own associations (and every account).
  if (all_users) {
    users.clear();
    if (verbose) res.err += "Users requested:\n\t: all\n";
  } else if (verbose && !users.empty()) {
    res.err += "Users requested:\n";
    for (const auto& u : users) res.err += "\t: " + u + "\n";
  } else if (users.empty() && !env.user.empty()) {
    users.push_back(env.user);
    if (verbose) res.err += "Users requested:\n\t: " + env.user + "\n";
  }
  if (verbose && !accounts.empty()) {
    res.err += "Accounts requested:\n";
    for (const auto& a : accounts) res.err += "\t: " + a + "\n";
  } else if (verbose) {
    res.err += "Accounts requested:\n\t: all\n";
  }

  proto::QueryRequest req{.what = "shares"};
  if (!users.empty()) req.users = users;
  if (!accounts.empty()) req.accounts = accounts;
  const std::optional<json> answer = query_controller(env, req.to_json(), "shares", res);
  if (!answer) return res;
  const json& reply = *answer;

  opt.long_format = long_format;
  opt.fair_tree = reply.value("fair_tree", true);
  std::vector<sched::SshareField> fields;
  try {
    fields = field_list.empty()
                 ? sched::sshare_default_fields(long_format, opt.fair_tree, partitions)
                 : sched::parse_sshare_fields(field_list);
  } catch (const core::ParseError& e) {
    res.err += std::string("sshare: error: ") + e.what() + "\n";
    res.rc = 1;
    return res;
  }

  const json tres_names = reply.value("tres_names", json::array());
  const std::string cluster = reply.value("cluster_name", "");
  std::vector<sched::SshareRow> rows;
  for (const auto& r : reply.value("rows", json::array())) {
    sched::SshareRow row = row_of(r, tres_names, cluster);
    if (users_only && row.user.empty()) continue;
    rows.push_back(std::move(row));
  }
  sched::sshare_print_depths(rows);
  res.out += sched::format_sshare(rows, fields, opt);
  return res;
}

}  // namespace drover::cli
