// sinfo: partitions and nodes, as text or as data_parser v0.0.44's sinfo document (--json).
#include "cli/sinfo.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "cli/args.hpp"
#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "cli/getopt.hpp"
#include "cli/help.hpp"
#include "cli/iterate.hpp"
#include "cli/json_output.hpp"
#include "cli/sinfo_fields.hpp"
#include "core/duration.hpp"
#include "core/hostlist.hpp"
#include "core/text.hpp"
#include "proto/data_parser/cluster.hpp"
#include "proto/data_parser/sinfo.hpp"
#include "proto/request.hpp"

namespace drover::cli {
namespace {

// --usage and --help: Slurm 22.05's layout and option set, drover's words.
constexpr const char* kUsageText =
    "Usage: sinfo [-abdelNRrsTv] [-i seconds] [-t states] [-p partition] [-n nodes]\n"
    "             [-S fields] [-o format] [-O Format] [--federation] [--local]\n";

constexpr const char* kHelpText =
    "Usage: sinfo [OPTIONS]\n"
    "  -a, --all                  every partition, hidden ones too\n"
    "  -d, --dead                 only nodes that do not respond\n"
    "  -e, --exact                group nodes only when their configuration is the same\n"
    "      --federation           federated view (drover: one cluster)\n"
    "  -h, --noheader             leave out the header line\n"
    "  --hide                     leave out hidden partitions\n"
    "  -i, --iterate=seconds      report again every so many seconds\n"
    "      --json                 print a data_parser JSON document\n"
    "      --local                this cluster only (the default)\n"
    "  -l, --long                 the long report\n"
    "  -M, --clusters=names       ask other clusters (needs slurmdbd)\n"
    "  -n, --nodes=NODES          only these nodes\n"
    "  --noconvert                print sizes in the units they were given\n"
    "  -N, --Node                 one line per node\n"
    "  -o, --format=format        output format (%-codes)\n"
    "  -O, --Format=format        output format (field names)\n"
    "  -p, --partition=PARTITION  only this partition\n"
    "  -r, --responding           only nodes that respond\n"
    "  -R, --list-reasons         why nodes are down or drained\n"
    "  -s, --summarize            node counts by state only\n"
    "  -S, --sort=fields          sort by these fields (drover: not yet)\n"
    "  -t, --states=node_state    only nodes in these states\n"
    "  -T, --reservation          reservations (drover: not yet)\n"
    "  -v, --verbose              more detail about what sinfo does\n"
    "  -V, --version              print the version and exit\n"
    "      --yaml                 YAML output (drover: not supported)\n"
    "\n"
    "Help options:\n"
    "  --help                     print this help\n"
    "  --usage                    print a short synopsis\n"
    "\n"
    "drover's sinfo, compatible with Slurm 22.05's.\n";

enum LongOnly { kFederation = 0x100, kHelp, kHide, kJson, kLocal, kNoConvert, kUsage, kYaml };

// sinfo 22.05's long options (getopt_long: any unique prefix is taken too).
const std::vector<LongOption> kLongOptions = {
    {"all", ArgKind::None, 'a'},
    {"dead", ArgKind::None, 'd'},
    {"exact", ArgKind::None, 'e'},
    {"federation", ArgKind::None, kFederation},
    {"help", ArgKind::None, kHelp},
    {"hide", ArgKind::None, kHide},
    {"iterate", ArgKind::Required, 'i'},
    {"local", ArgKind::None, kLocal},
    {"long", ArgKind::None, 'l'},
    {"cluster", ArgKind::Required, 'M'},
    {"clusters", ArgKind::Required, 'M'},
    {"nodes", ArgKind::Required, 'n'},
    {"noconvert", ArgKind::None, kNoConvert},
    {"noheader", ArgKind::None, 'h'},
    {"Node", ArgKind::None, 'N'},
    {"format", ArgKind::Required, 'o'},
    {"Format", ArgKind::Required, 'O'},
    {"partition", ArgKind::Required, 'p'},
    {"responding", ArgKind::None, 'r'},
    {"list-reasons", ArgKind::None, 'R'},
    {"summarize", ArgKind::None, 's'},
    {"sort", ArgKind::Required, 'S'},
    {"states", ArgKind::Required, 't'},
    {"reservation", ArgKind::None, 'T'},
    {"usage", ArgKind::None, kUsage},
    {"verbose", ArgKind::None, 'v'},
    {"version", ArgKind::None, 'V'},
    {"json", ArgKind::Optional, kJson},
    {"yaml", ArgKind::Optional, kYaml},
};

constexpr const char* kDefaultFormat = "%#P %.5a %.10l %.6D %.6t %N";
constexpr const char* kLongFormat = "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N";
constexpr const char* kNodeFormat = "%10N%.6D %.#P %6t";
constexpr const char* kNodeLongFormat = "%10N%.6D %.#P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E";
constexpr const char* kSummaryFormat = "%#P %.5a %.10l %.16F %N";
constexpr const char* kReasonFormat = "%20E %9u %19H %N";
constexpr const char* kReasonLongFormat = "%20E %12U %19H %6t %N";

using sinfo::Column;
using sinfo::Field;
using sinfo::Grouping;
using sinfo::Line;

// Slurm sorts state groups by its numeric node state, highest first; flags weigh more
// than base states (so drained nodes come before mixed ones).
int state_rank(const json& node) {
  static const std::map<std::string, int> base = {
      {"UNKNOWN", 0}, {"DOWN", 1}, {"IDLE", 2}, {"ALLOCATED", 3}, {"MIXED", 5}};
  std::string s = node.value("state_long", "UNKNOWN");
  int rank = base.count(s.substr(0, s.find('+'))) ? base.at(s.substr(0, s.find('+'))) : 0;
  if (node.value("drain", false)) rank |= 0x200;
  if (node.value("not_responding", false)) rank |= 0x800;
  return rank;
}

// How nodes are gathered into lines.
struct Grouper {
  std::vector<const Field*> partition_fields;  // partitions differing in these stay apart
  std::vector<const Field*> node_fields;       // nodes differing in these stay apart
  bool summarize = false;                      // -s: a partition's nodes share one line
  bool gres_used = false;                      // --json: lines also differ in GRES in use
  const sinfo::Context* ctx = nullptr;

  bool same_partition(const json& a, const json& b) const {
    if (&a == &b) return true;
    for (const Field* f : partition_fields)
      if (sinfo::partition_key(*f, a, *ctx) != sinfo::partition_key(*f, b, *ctx)) return false;
    return true;
  }
  bool same_node(const json& a, const json& b) const {
    if (summarize) return true;
    for (const Field* f : node_fields)
      if (sinfo::node_key(*f, a, *ctx) != sinfo::node_key(*f, b, *ctx)) return false;
    return !gres_used ||
           proto::data_parser::gres_used_text(a) == proto::data_parser::gres_used_text(b);
  }
};

}  // namespace

extern const CommandHelp kSinfoHelp{
    "sinfo", "shows the partitions and nodes of the cluster", kUsageText, kHelpText,
    "Options follow getopt_long's rules: any unique prefix of a long option is taken.\n\n--yaml is "
    "refused (drover writes JSON documents only); -M/--clusters needs slurmdbd; -S and -T are not "
    "implemented yet; --federation and --local change nothing on drover's single cluster."};

CommandResult run_sinfo(const std::vector<std::string>& args, const CommandEnv& env,
                        const IterateIo& io) {
  CommandResult res;
  bool header = true, long_format = false, node_oriented = false, summarize = false,
       reasons = false, responding_only = false, dead_only = false, exact = false;
  std::optional<std::string> letters, names;  // -o, -O as given
  int iterate_s = 0;
  std::set<std::string> want_partitions, want_states;
  std::set<std::string> want_nodes;
  JsonRequest json_req;
  const ParsedArgs parsed =
      parse_options("sinfo", args, "adehi:lM:n:No:O:p:rRsS:t:TvV", kLongOptions);
  int unsupported = 0;  // the first option given that drover does not act on yet
  auto fail = [&res](const std::string& text) {
    res.err = text;
    res.rc = 1;
    return res;
  };
  for (const ParsedOption& o : parsed.options) {
    const std::string value = o.value.value_or("");
    switch (o.id) {
      case 'h':
        header = false;
        break;
      case kJson:
      case kYaml:
        (o.id == kJson ? json_req.json : json_req.yaml) = true;
        if (o.value) json_req.parser = value;
        break;
      case 'l':
        long_format = true;
        break;
      case 'N':
        node_oriented = true;
        break;
      case 's':
        summarize = true;
        break;
      case 'R':
        reasons = true;
        break;
      case 'r':
        responding_only = true;
        break;
      case 'd':
        dead_only = true;
        break;
      case 'e':
        exact = true;
        break;
      case 'o':
        letters = value;
        break;
      case 'O':
        names = value;
        break;
      case 'i':
        iterate_s = iterate_seconds(value);
        if (iterate_s <= 0)
          return fail("sinfo: error: Error: invalid entry for --iterate=" + value + "\n");
        break;
      case 'p':
        want_partitions = split_set(value);
        break;
      case 't':
        for (const auto& st : split_set(value)) want_states.insert(core::to_lower(st));
        break;
      case 'n':
        for (const auto& item : split_set(value))
          for (auto& n : core::expand_hostlist(item)) want_nodes.insert(std::move(n));
        break;
      case 'M':
        return fail(cluster_unreachable("sinfo", value));
      case 'S':
      case 'T':
        if (unsupported == 0) unsupported = o.id;
        break;
      case 'V':
        res.out = version_text();
        return res;
      case kHelp:
        res.out = kHelpText;
        return res;
      case kUsage:
        res.out = kUsageText;
        return res;
      default:  // -a, -v, --hide, --noconvert, --federation, --local: nothing to change
        break;  // on one cluster without hidden partitions
    }
  }
  if (!parsed.error.empty()) return fail(parsed.error + "\n" + try_help("sinfo"));
  // Options drover does not act on yet, said once the whole line is known good.
  if (unsupported == 'S') return fail("sinfo: error: -S/--sort is not supported by drover yet\n");
  if (unsupported == 'T')
    return fail(
        "sinfo: error: -T/--reservation is not supported by drover yet (scontrol show "
        "reservation lists them)\n");
  // Words that are not options are ignored, as Slurm's sinfo ignores them.
  if (auto done = json_preamble("sinfo", json_req)) return *done;
  if (long_format && (letters || names)) {
    res.err =
        "sinfo: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove "
        "one and retry.\n";
    res.rc = 1;
    return res;
  }
  // -O before -o before SINFO_FORMAT, which -N, -s and -R set aside for their own formats.
  std::vector<Column> columns;
  if (names) {
    columns = sinfo::parse_names(*names, res.err);
  } else {
    std::string format;
    bool builtin = false;
    if (letters) {
      format = *letters;
    } else if (auto it = env.env.find("SINFO_FORMAT"); it != env.env.end() && !it->second.empty() &&
                                                       !node_oriented && !summarize && !reasons) {
      format = it->second;
    } else {
      builtin = true;
      format = reasons         ? (long_format ? kReasonLongFormat : kReasonFormat)
               : summarize     ? kSummaryFormat
               : node_oriented ? (long_format ? kNodeLongFormat : kNodeFormat)
               : long_format   ? kLongFormat
                               : kDefaultFormat;
    }
    columns = sinfo::parse_letters(format, builtin, res.err);
  }
  if (json_req.json) res.err.clear();  // --json ignores the formats

  auto name_of = [&](uint32_t uid) {
    if (env.name_of)
      if (auto n = env.name_of(uid)) return *n;
    return std::to_string(uid);
  };
  const sinfo::Context ctx{name_of};
  Grouper grouper;
  grouper.summarize = summarize;
  grouper.gres_used = json_req.json;
  grouper.ctx = &ctx;
  bool partition_lines = false;  // the format names partitions: each gets a line, even empty
  for (const auto& c : columns) {
    if (!c.field) continue;
    if (c.field->code == 'P' || c.field->code == 'R') partition_lines = true;
    if (c.field->grouping == Grouping::Partition) grouper.partition_fields.push_back(c.field);
    if (c.field->grouping == Grouping::Node || (exact && c.field->grouping == Grouping::Exact))
      grouper.node_fields.push_back(c.field);
  }
  const bool filtering =
      !want_nodes.empty() || !want_states.empty() || responding_only || dead_only || reasons;

  auto wanted = [&](const json& n) {
    const std::string name = n.value("name", ""), st = n.value("state_short", "");
    if (!want_nodes.empty() && !want_nodes.count(name)) return false;
    const bool responding = st.find('*') == std::string::npos;
    if (responding_only && !responding) return false;
    if (dead_only && responding) return false;
    if (reasons && n.value("reason", "").empty()) return false;
    if (!want_states.empty() && !want_states.count("all")) {
      // A state matches the compact form, its long name, or any part of the node's full state
      // (a drained idle node is "idle" too).
      const std::string base = sinfo::base_state(st);
      std::set<std::string> names = {base, sinfo::long_state(base)};
      for (const auto& part : core::split_list(core::to_lower(n.value("state_long", "")), '+')) {
        names.insert(part);
        names.insert(sinfo::long_state(part));
      }
      static const std::map<std::string, std::string> aliases = {
          {"allocated", "alloc"}, {"mixed", "mix"}, {"drained", "drain"}, {"draining", "drng"}};
      for (const auto& w : want_states) {
        if (names.count(w)) return true;
        if (auto it = aliases.find(w); it != aliases.end() && names.count(it->second)) return true;
      }
      return false;
    }
    return true;
  };

  // One report: the controller's partitions and nodes, grouped into lines and printed.
  auto report = [&]() -> CommandResult {
    CommandResult out;
    json parts, nodes;
    try {
      parts = env.call(proto::QueryRequest{.what = "partitions"}.to_json());
      nodes = env.call(proto::QueryRequest{.what = "nodes"}.to_json());
    } catch (const ControllerUnreachable&) {
      out.err = "slurm_load_partitions: Unable to contact slurm controller (connect failure)\n";
      out.rc = 1;
      return out;
    }
    // A refusal (an authentication failure, say) is said as Slurm's load call says its error.
    for (const json* r : {&parts, &nodes}) {
      if (r->value("ok", true) && r->is_object()) continue;
      out.err = std::string(r == &parts ? "slurm_load_partitions" : "slurm_load_node") + ": " +
                r->value("error", "Unknown error") + "\n";
      out.rc = 1;
      return out;
    }
    // Slurm walks a partition's nodes in the order of its node table (slurm.conf's).
    auto in_partition = [](const json& p) {
      std::set<std::string> members;
      for (const auto& pn : p.at("nodes")) members.insert(pn.get<std::string>());
      return members;
    };
    std::vector<const json*> partitions;
    for (const auto& p : parts.at("partitions"))
      if (want_partitions.empty() || want_partitions.count(p.value("name", "")))
        partitions.push_back(&p);

    std::vector<Line> lines;
    if (node_oriented) {
      // One line per node and partition, by node name.
      std::map<std::string, const json*> by_name;
      for (const auto& n : nodes.at("nodes")) by_name[n.value("name", "")] = &n;
      for (const auto& [name, n] : by_name) {
        if (!wanted(*n)) continue;
        for (const json* p : partitions)
          if (in_partition(*p).count(name)) lines.push_back({p, {n}});
      }
    } else {
      // A node joins the first line of a like partition whose nodes it is like, once; Slurm
      // then orders lines by partition and by the state of their first node, highest first.
      std::vector<std::pair<size_t, int>> order;  // per line: partition index, state rank
      std::set<const json*> listed;  // -R lists a node once, in the first partition holding it
      for (size_t pi = 0; pi < partitions.size(); ++pi) {
        const json& p = *partitions[pi];
        const std::set<std::string> members = in_partition(p);
        bool any = false;
        for (const auto& n : nodes.at("nodes")) {
          if (!members.count(n.value("name", "")) || !wanted(n)) continue;
          if (reasons && !listed.insert(&n).second) continue;
          any = true;
          auto it = std::find_if(lines.begin(), lines.end(), [&](const Line& l) {
            return !l.nodes.empty() && grouper.same_partition(*l.partition, p) &&
                   grouper.same_node(*l.nodes.front(), n);
          });
          if (it == lines.end()) {
            lines.push_back({&p, {&n}});
            order.push_back({pi, state_rank(n)});
          } else if (std::find(it->nodes.begin(), it->nodes.end(), &n) == it->nodes.end()) {
            it->nodes.push_back(&n);
          }
        }
        if (!any && filtering && partition_lines) {
          lines.push_back({&p, {}});
          order.push_back({pi, 0});
        }
      }
      if (!reasons) {
        std::vector<size_t> idx(lines.size());
        for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
        std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
          if (order[a].first != order[b].first) return order[a].first < order[b].first;
          return order[a].second > order[b].second;
        });
        std::vector<Line> sorted;
        for (size_t i : idx) sorted.push_back(std::move(lines[i]));
        lines = std::move(sorted);
      }
    }
    if (json_req.json) {
      const std::string cluster = nodes.value("cluster_name", std::string());
      json list = json::array();
      for (const Line& line : lines)
        list.push_back(
            proto::data_parser::sinfo_entry(line.partition, line.nodes, cluster, name_of));
      json doc = proto::data_parser::envelope(command_meta("sinfo", args, cluster));
      doc["sinfo"] = std::move(list);
      out.out = json_text(doc);
      return out;
    }
    out.out = sinfo::render(columns, lines, ctx, header);
    return out;
  };

  const bool dated = header && !json_req.json && (long_format || iterate_s > 0);
  IterateIo sink = io;
  if (iterate_s > 0) {
    sink.write("", res.err);  // complaints about the format come once, first
    res.err.clear();
  } else {
    sink.write = [&](const std::string& out, const std::string& err) {
      res.err += err;
      res.out += out;
    };
  }
  res.rc = run_reports(iterate_s, dated, report, sink);
  return res;
}

int sinfo_main(const std::vector<std::string>& args) {
  CommandEnv env = system_env();
  if (const char* v = std::getenv("SINFO_FORMAT")) env.env["SINFO_FORMAT"] = v;
  const CommandResult r = run_sinfo(args, env, system_iterate_io());
  std::cerr << r.err << std::flush;
  std::cout << r.out << std::flush;
  return r.rc;
}

}  // namespace drover::cli
