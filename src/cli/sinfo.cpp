// sinfo: partitions and nodes, as text or as data_parser v0.0.44's sinfo document (--json).
#include "cli/sinfo.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <tuple>

#include "cli/args.hpp"
#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "cli/json_output.hpp"
#include "core/duration.hpp"
#include "core/hostlist.hpp"
#include "core/text.hpp"
#include "proto/data_parser/cluster.hpp"
#include "proto/data_parser/sinfo.hpp"

namespace drover::cli {
namespace {

constexpr const char* kDefaultFormat = "%#P %.5a %.10l %.6D %.6t %N";
constexpr const char* kLongFormat = "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N";
constexpr const char* kNodeFormat = "%10N%.6D %.#P %6t";
constexpr const char* kNodeLongFormat = "%10N%.6D %.#P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E";
constexpr const char* kSummaryFormat = "%#P %.5a %.10l %.16F %N";
constexpr const char* kReasonFormat = "%20E %9u %19H %N";

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

// A compact state without its flag suffixes ("idle*" -> "idle").
std::string base_state(std::string compact) {
  while (!compact.empty() && std::string("*~#!%$@^-").find(compact.back()) != std::string::npos)
    compact.pop_back();
  return compact;
}

// sinfo's long state names (%T) from the compact ones (%t).
std::string long_state(const std::string& compact) {
  static const std::map<std::string, std::string> names = {
      {"idle", "idle"},     {"alloc", "allocated"}, {"mix", "mixed"},     {"drain", "drained"},
      {"drng", "draining"}, {"down", "down"},       {"resv", "reserved"}, {"maint", "maint"},
      {"unk", "unknown"},   {"comp", "completing"}, {"fail", "fail"},     {"plnd", "planned"}};
  const std::string base = base_state(compact), suffix = compact.substr(base.size());
  auto it = names.find(base);
  return (it == names.end() ? base : it->second) + suffix;
}

// A row: nodes of one partition (or none, for -R) that print alike.
struct Row {
  const json* partition = nullptr;
  std::vector<const json*> nodes;
};

std::string header_for(char code) {
  static const std::map<char, std::string> titles = {
      {'P', "PARTITION"}, {'R', "PARTITION"},     {'a', "AVAIL"},          {'l', "TIMELIMIT"},
      {'D', "NODES"},     {'t', "STATE"},         {'T', "STATE"},          {'N', "NODELIST"},
      {'E', "REASON"},    {'u', "USER"},          {'H', "TIMESTAMP"},      {'c', "CPUS"},
      {'m', "MEMORY"},    {'C', "CPUS(A/I/O/T)"}, {'F', "NODES(A/I/O/T)"}, {'s', "JOB_SIZE"},
      {'r', "ROOT"},      {'h', "OVERSUBSCRIBE"}, {'g', "GROUPS"},         {'z', "S:C:T"},
      {'d', "TMP_DISK"},  {'w', "WEIGHT"},        {'f', "AVAIL_FEATURES"}, {'b', "ACTIVE_FEATURES"},
      {'G', "GRES"},      {'O', "CPU_LOAD"},      {'e', "FREE_MEM"},       {'n', "HOSTNAMES"},
      {'o', "NODE_ADDR"}, {'X', "SOCKETS"},       {'Y', "CORES"},          {'Z', "THREADS"},
      {'V', "CLUSTER"}};
  auto it = titles.find(code);
  return it == titles.end() ? std::string(1, code) : it->second;
}

// A node's value for a per-node code (what rows are grouped by).
std::string node_value(char code, const json& n, const json* partition) {
  switch (code) {
    case 't':
      return n.value("state_short", "unk");
    case 'T':
      return long_state(n.value("state_short", "unk"));
    case 'E': {
      const std::string r = n.value("reason", "");
      return r.empty() ? "none" : r;
    }
    case 'u':
      return n.value("reason", "").empty() ? "Unknown" : user_name(n.value("reason_uid", 0u));
    case 'H': {
      const int64_t t = n.value("reason_time", int64_t{0});
      return n.value("reason", "").empty() || t == 0 ? "Unknown" : core::format_timestamp(t);
    }
    case 'c':
      return std::to_string(n.value("cpus", 1));
    case 'm':
      return std::to_string(n.value("real_memory_mb", int64_t{1}));
    case 'z':
      return std::to_string(n.value("sockets", 1)) + ":" +
             std::to_string(n.value("cores_per_socket", 1)) + ":" +
             std::to_string(n.value("threads_per_core", 1));
    case 'X':
      return std::to_string(n.value("sockets", 1));
    case 'Y':
      return std::to_string(n.value("cores_per_socket", 1));
    case 'Z':
      return std::to_string(n.value("threads_per_core", 1));
    case 'd':
      return std::to_string(n.value("tmp_disk_mb", int64_t{0}));
    case 'w':
      return "1";
    case 'f':
    case 'b': {
      std::string f;
      for (const auto& x : n.value("features", std::vector<std::string>{}))
        f += (f.empty() ? "" : ",") + x;
      return f.empty() ? "(null)" : f;
    }
    case 'G': {
      const std::string g = n.value("gres", "");
      return g.empty() ? "(null)" : g;
    }
    case 'O': {
      const double load = n.value("cpu_load", -1.0);
      if (load < 0) return "N/A";
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f", load);
      return buf;
    }
    case 'e': {
      const int64_t free_mb = n.value("free_mem_mb", int64_t{-1});
      return free_mb < 0 ? "N/A" : std::to_string(free_mb);
    }
    case 'P':
      return partition
                 ? partition->value("name", "") + (partition->value("is_default", false) ? "*" : "")
                 : "";
    case 'R':
      return partition ? partition->value("name", "") : "";
    default:
      return "";
  }
}

// Codes whose value sums or lists a row's nodes rather than telling nodes apart.
bool aggregate(char code) {
  return code == 'D' || code == 'N' || code == 'n' || code == 'o' || code == 'C' || code == 'F';
}

std::string row_value(char code, const Row& row) {
  const json* p = row.partition;
  switch (code) {
    case 'a': {
      if (!p) return "";
      const std::string state = core::to_lower(p->value("state", "UP"));
      return state == "inactive" ? "inact" : state;
    }
    case 'l': {
      if (!p) return "";
      const int64_t m = p->value("max_time_min", int64_t{-1});
      return m < 0 ? "infinite" : core::format_elapsed(m * 60);
    }
    case 's': {
      if (!p) return "";
      const int max = p->value("max_nodes", -1);
      return "1-" + (max < 0 ? std::string("infinite") : std::to_string(max));
    }
    case 'r':
      return "no";
    case 'h':
      return "NO";
    case 'g':
      return "all";
    case 'D':
      return std::to_string(row.nodes.size());
    case 'N':
    case 'n':
    case 'o': {
      std::vector<std::string> names;
      for (const json* n : row.nodes) names.push_back(n->value("name", ""));
      return core::compress_hostlist(names);
    }
    case 'C':
    case 'F': {
      const auto c = code == 'C' ? proto::data_parser::sinfo_cpu_counts(row.nodes)
                                 : proto::data_parser::sinfo_node_counts(row.nodes);
      return std::to_string(c.allocated) + "/" + std::to_string(c.idle) + "/" +
             std::to_string(c.other) + "/" + std::to_string(c.total);
    }
    case 't':
    case 'T':
      // A partition none of whose nodes passed the filters still gets its line.
      if (row.nodes.empty()) return "n/a";
      return node_value(code, *row.nodes.front(), p);
    default: {
      static const json no_node = json::object();
      return node_value(code, row.nodes.empty() ? no_node : *row.nodes.front(), p);
    }
  }
}

// The partition a line without one (-R, formats without partition fields) names in --json: the
// first that holds its first node, as Slurm's line keeps the partition it was built from.
const json* partition_of(const Row& row, const json& parts) {
  if (row.partition || row.nodes.empty()) return row.partition;
  const std::string name = row.nodes.front()->value("name", "");
  for (const auto& p : parts.at("partitions"))
    for (const auto& pn : p.at("nodes"))
      if (pn.get<std::string>() == name) return &p;
  return nullptr;
}

}  // namespace

CommandResult run_sinfo(const std::vector<std::string>& args, const CommandEnv& env) {
  CommandResult res;
  bool header = true, long_format = false, node_oriented = false, summarize = false,
       reasons = false, responding_only = false, dead_only = false;
  std::string format;
  std::set<std::string> want_partitions, want_states;
  std::set<std::string> want_nodes;
  JsonRequest json_req;
  ArgReader r("sinfo", args);
  while (r.next()) {
    const std::string& a = r.arg();
    if (r.is("-h", "--noheader"))
      header = false;
    else if (take_json_option(a, json_req))
      continue;
    else if (r.is("-l", "--long"))
      long_format = true;
    else if (r.is("-N", "--Node"))
      node_oriented = true;
    else if (r.is("-s", "--summarize"))
      summarize = true;
    else if (r.is("-R", "--list-reasons"))
      reasons = true;
    else if (r.is("-r", "--responding"))
      responding_only = true;
    else if (r.is("-d", "--dead"))
      dead_only = true;
    else if (r.is("-e", "--exact") || r.is("-a", "--all") || a == "--noconvert")
      continue;
    else if (r.take("-o", "--format"))
      format = r.value();
    else if (r.take("-p", "--partition"))
      want_partitions = split_set(r.value());
    else if (r.take("-t", "--states"))
      for (const auto& s : split_set(r.value())) want_states.insert(core::to_lower(s));
    else if (r.take("-n", "--nodes")) {
      for (const auto& item : split_set(r.value()))
        for (auto& n : core::expand_hostlist(item)) want_nodes.insert(std::move(n));
    } else {
      res.err =
          "sinfo: unrecognized option '" + a + "'\nTry \"sinfo --help\" for more information\n";
      res.rc = 1;
      return res;
    }
  }
  if (auto done = json_preamble("sinfo", json_req)) return *done;
  if (format.empty()) {
    format = reasons         ? kReasonFormat
             : summarize     ? kSummaryFormat
             : node_oriented ? (long_format ? kNodeLongFormat : kNodeFormat)
             : long_format   ? kLongFormat
                             : kDefaultFormat;
  }
  json parts, nodes;
  try {
    parts = env.call({{"op", "query"}, {"what", "partitions"}});
    nodes = env.call({{"op", "query"}, {"what", "nodes"}});
  } catch (const ControllerUnreachable&) {
    res.err = "slurm_load_partitions: Unable to contact slurm controller (connect failure)\n";
    res.rc = 1;
    return res;
  }
  std::map<std::string, const json*> by_name;
  for (const auto& n : nodes.at("nodes")) by_name[n.at("name").get<std::string>()] = &n;

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
      const std::string base = base_state(st);
      std::set<std::string> names = {base, long_state(base)};
      for (const auto& part : core::split_list(core::to_lower(n.value("state_long", "")), '+')) {
        names.insert(part);
        names.insert(long_state(part));
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

  const auto fields = parse_format(format);
  // The per-node codes this format shows: nodes that agree on all of them share a row.
  auto key_of = [&](const json& n, const json* p) {
    std::string key;
    for (const auto& f : fields)
      if (f.code && !aggregate(f.code)) key += node_value(f.code, n, p) + '\x1f';
    // --json also tells lines apart by the GRES in use, as Slurm's sinfo does for it.
    if (json_req.json) key += proto::data_parser::gres_used_text(n);
    return key;
  };
  std::vector<Row> rows;
  if (node_oriented) {
    // One row per node and partition, by node name.
    for (const auto& [name, n] : by_name) {
      if (!wanted(*n)) continue;
      for (const auto& p : parts.at("partitions")) {
        if (!want_partitions.empty() && !want_partitions.count(p.value("name", ""))) continue;
        for (const auto& pn : p.at("nodes"))
          if (pn.get<std::string>() == name) rows.push_back({&p, {n}});
      }
    }
  } else if (reasons || std::none_of(fields.begin(), fields.end(), [](const FormatField& f) {
               return std::string_view("PRalshgV").find(f.code) != std::string_view::npos &&
                      f.code != 0;
             })) {
    // Nodes out of service, grouped by reason, who set it and when; partitions do not matter.
    std::map<std::string, Row> groups;
    std::vector<std::string> order;
    // (Without partition fields, nodes of every partition that print alike share a row.)
    std::map<std::string, int> rank;
    for (const auto& [name, n] : by_name) {
      if (!wanted(*n)) continue;
      if (!reasons && !want_partitions.empty()) {
        bool in_one = false;
        for (const auto& p : parts.at("partitions"))
          if (want_partitions.count(p.value("name", "")))
            for (const auto& pn : p.at("nodes")) in_one = in_one || pn.get<std::string>() == name;
        if (!in_one) continue;
      }
      const std::string key = key_of(*n, nullptr);
      rank[key] = std::max(rank[key], state_rank(*n));
      if (!groups.count(key)) order.push_back(key);
      groups[key].nodes.push_back(n);
    }
    if (!reasons)
      std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
        return rank[a] > rank[b];
      });
    for (const auto& k : order) rows.push_back(groups[k]);
  } else {
    for (const auto& p : parts.at("partitions")) {
      if (!want_partitions.empty() && !want_partitions.count(p.value("name", ""))) continue;
      std::vector<std::pair<int, Row>> mine;
      std::map<std::string, size_t> index;
      for (const auto& name : p.at("nodes")) {
        const json& n = *by_name.at(name.get<std::string>());
        if (!wanted(n)) continue;
        const std::string key = summarize ? std::string() : key_of(n, &p);
        auto it = index.find(key);
        if (it == index.end()) {
          index[key] = mine.size();
          mine.push_back({state_rank(n), Row{&p, {}}});
          it = index.find(key);
        }
        mine[it->second].second.nodes.push_back(&n);
      }
      if (mine.empty() && (!want_states.empty() || responding_only || dead_only))
        mine.push_back({0, Row{&p, {}}});
      std::stable_sort(mine.begin(), mine.end(),
                       [](const auto& a, const auto& b) { return a.first > b.first; });
      for (auto& [rank, row] : mine) rows.push_back(std::move(row));
    }
  }
  if (json_req.json) {
    const std::string cluster = nodes.value("cluster_name", std::string());
    auto name_of = [&](uint32_t uid) { return env.name_of(uid).value_or(""); };
    json list = json::array();
    for (const Row& row : rows)
      list.push_back(
          proto::data_parser::sinfo_entry(partition_of(row, parts), row.nodes, cluster, name_of));
    json doc = proto::data_parser::envelope(command_meta("sinfo", args, cluster));
    doc["sinfo"] = std::move(list);
    res.out = json_text(doc);
    return res;
  }
  if (long_format && header) res.out = date_line(nodes.value("now", int64_t{0})) + '\n';
  res.out += render_table(
      fields, rows.size(), [&](char code, size_t i) { return row_value(code, rows[i]); },
      header_for, header);
  return res;
}

int sinfo_main(const std::vector<std::string>& args) {
  const CommandResult r = run_sinfo(args, system_env());
  std::cerr << r.err << std::flush;
  std::cout << r.out << std::flush;
  return r.rc;
}

}  // namespace drover::cli
