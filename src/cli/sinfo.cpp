// sinfo: partitions and nodes.
#include <algorithm>
#include <iostream>
#include <map>

#include "cli/args.hpp"
#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "core/duration.hpp"
#include "core/hostlist.hpp"
#include "core/text.hpp"

namespace drover::cli {
namespace {

constexpr const char* kDefaultFormat = "%#P %.5a %.10l %.6D %.6t %N";

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

struct Group {
  std::string partition;
  bool is_default = false;
  std::string avail;
  int64_t max_time_min = -1;
  std::string state;
  int rank = 0;
  std::vector<std::string> nodes;
};

std::string header_for(char code) {
  switch (code) {
    case 'P':
    case 'R':
      return "PARTITION";
    case 'a':
      return "AVAIL";
    case 'l':
      return "TIMELIMIT";
    case 'D':
      return "NODES";
    case 't':
    case 'T':
      return "STATE";
    case 'N':
      return "NODELIST";
    default:
      return std::string(1, code);
  }
}

}  // namespace

int sinfo_main(const std::vector<std::string>& args) {
  bool header = true;
  std::string format = kDefaultFormat;
  ArgReader r("sinfo", args);
  while (r.next()) {
    const std::string& a = r.arg();
    if (r.is("-h", "--noheader"))
      header = false;
    else if (r.take("-o", "--format"))
      format = r.value();
    else {
      std::cerr << "sinfo: unrecognized option '" << a << "'\n"
                << "Try \"sinfo --help\" for more information\n";
      return 1;
    }
  }
  json parts, nodes;
  try {
    parts = call_controller({{"op", "query"}, {"what", "partitions"}});
    nodes = call_controller({{"op", "query"}, {"what", "nodes"}});
  } catch (const ControllerUnreachable&) {
    std::cerr << "slurm_load_partitions: Unable to contact slurm controller (connect failure)\n";
    return 1;
  }
  std::map<std::string, const json*> by_name;
  for (const auto& n : nodes.at("nodes")) by_name[n.at("name").get<std::string>()] = &n;

  // One line per partition and node state, as sinfo's default view.
  std::vector<Group> groups;
  for (const auto& p : parts.at("partitions")) {
    std::vector<Group> mine;
    for (const auto& name : p.at("nodes")) {
      const json& n = *by_name.at(name.get<std::string>());
      std::string st = n.value("state_short", "unk");
      auto it =
          std::find_if(mine.begin(), mine.end(), [&](const Group& g) { return g.state == st; });
      if (it == mine.end()) {
        Group g;
        g.partition = p.at("name");
        g.is_default = p.value("is_default", false);
        const std::string state = core::to_lower(p.value("state", "UP"));
        g.avail = state == "inactive" ? "inact" : state;
        g.max_time_min = p.value("max_time_min", int64_t{-1});
        g.state = st;
        g.rank = state_rank(n);
        mine.push_back(g);
        it = mine.end() - 1;
      }
      it->nodes.push_back(name.get<std::string>());
    }
    std::stable_sort(mine.begin(), mine.end(),
                     [](const Group& a, const Group& b) { return a.rank > b.rank; });
    groups.insert(groups.end(), mine.begin(), mine.end());
  }
  auto value = [&](char code, size_t r) -> std::string {
    const Group& g = groups[r];
    switch (code) {
      case 'P':
        return g.partition + (g.is_default ? "*" : "");
      case 'R':
        return g.partition;
      case 'a':
        return g.avail;
      case 'l':
        return g.max_time_min < 0 ? "infinite" : core::format_elapsed(g.max_time_min * 60);
      case 'D':
        return std::to_string(g.nodes.size());
      case 't':
        return g.state;
      case 'N':
        return core::compress_hostlist(g.nodes);
      default:
        return "";
    }
  };
  std::cout << render_table(parse_format(format), groups.size(), value, header_for, header);
  return 0;
}

}  // namespace drover::cli
