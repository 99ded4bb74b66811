#pragma once
// What the operator's last pass saw, kept for people (the dashboard's Kubernetes view): the
// NodeSets as listed, their pods without their specs, and drover's view of the nodes. A copy,
// so readers on other threads never touch the informers' caches or the pass's own state.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/operator/observed.hpp"

namespace drover::k8s::op {

struct ObservedView {
  int64_t time = 0;      // when the pass ran (unix seconds); 0: none yet
  uint64_t version = 0;  // moves whenever anything below (or the decision log) changes
  std::string ns;        // the namespace the operator watches
  std::vector<nlohmann::json> nodesets;
  // Each pod's metadata, spec.nodeName and status: enough to show, nothing of its containers.
  std::vector<nlohmann::json> pods;
  ControllerSnapshot drover;
};

// A pod as the view keeps it (see ObservedView::pods).
inline nlohmann::json pod_for_view(const nlohmann::json& pod) {
  nlohmann::json out = nlohmann::json::object();
  if (!pod.is_object()) return out;
  if (auto it = pod.find("metadata"); it != pod.end() && it->is_object()) {
    nlohmann::json md = *it;
    md.erase("managedFields");
    md.erase("annotations");  // may carry last-applied specs with their environment
    out["metadata"] = std::move(md);
  }
  if (auto it = pod.find("spec"); it != pod.end() && it->is_object() && it->contains("nodeName"))
    out["spec"] = {{"nodeName", (*it)["nodeName"]}};
  if (auto it = pod.find("status"); it != pod.end()) out["status"] = *it;
  return out;
}

}  // namespace drover::k8s::op
