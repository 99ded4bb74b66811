// Test helper for tests/k8s/nodeset_actions_test.py: reads {"nodeset": ..., "pods": [...],
// "nodes": [...], "pdb": ..., "drover": {name: {state, drain, registered, features, jobs: [ids]}},
// "now": t}
// on stdin, runs one reconcile pass and prints its actions as a JSON array (to_json), so the
// test can carry them out against the real API server.
#include <iostream>
#include <iterator>
#include <string>

#include "k8s/operator/reconcile.hpp"

using nlohmann::json;
using namespace drover::k8s::op;

int main() {
  try {
    const std::string text{std::istreambuf_iterator<char>(std::cin),
                           std::istreambuf_iterator<char>()};
    json in = json::parse(text);
    Observed obs;
    for (const json& p : in.value("pods", json::array())) obs.pods.push_back(p);
    for (const json& n : in.value("nodes", json::array()))
      obs.k8s_nodes[n["metadata"]["name"].get<std::string>()] = n;
    if (in.contains("pdb") && !in["pdb"].is_null()) obs.pdb = in["pdb"];
    const json drover = in.value("drover", json::object());
    for (const auto& [name, d] : drover.items()) {
      DroverNode n;
      n.name = name;
      const std::string st = d.value("state", "idle");
      n.state = st == "down"        ? NodeState::Down
                : st == "allocated" ? NodeState::Allocated
                : st == "mixed"     ? NodeState::Mixed
                                    : NodeState::Idle;
      n.drain = d.value("drain", false);
      n.registered = d.value("registered", true);
      n.features = d.value("features", std::vector<std::string>{});
      for (const json& id : d.value("jobs", json::array()))
        n.jobs.push_back({id.get<uint32_t>(), 0, true});
      obs.drover.nodes[name] = n;
    }
    json out = json::array();
    for (const Action& a :
         reconcile(parse_nodeset(in.at("nodeset")), obs, in.value("now", int64_t{0})))
      out.push_back(to_json(a));
    std::cout << out.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "operator_fixture: " << e.what() << "\n";
    return 1;
  }
}
