#include "k8s/operator/actions.hpp"

namespace drover::k8s::op {

namespace {

template <class... F>
struct Overload : F... {
  using F::operator()...;
};
template <class... F>
Overload(F...) -> Overload<F...>;

}  // namespace

std::string describe(const Action& a) {
  return std::visit(
      Overload{
          [](const CreatePod& x) {
            return "create pod " + x.pod["metadata"].value("name", std::string("?"));
          },
          [](const DeletePod& x) { return "delete pod " + x.name; },
          [](const PatchPodLabels& x) {
            std::string s = "label pod " + x.pod + " " + x.labels.dump();
            if (!x.annotations.empty()) s += " annotate " + x.annotations.dump();
            return s;
          },
          [](const PatchPodConditions& x) {
            std::string s = "condition pod " + x.pod;
            for (const auto& c : x.conditions)
              s += " " + c.value("status", std::string()) + "/" + c.value("reason", std::string());
            return s;
          },
          [](const DrainNode& x) { return "drain " + x.node + " (" + x.reason + ")"; },
          [](const ResumeNode& x) { return "resume " + x.node; },
          [](const DownNode& x) { return "down " + x.node + " (" + x.reason + ")"; },
          [](const DeleteDroverNode& x) { return "delete node " + x.node; },
          [](const SetNodeFeatures& x) {
            std::string s = "features " + x.node + " ";
            for (size_t i = 0; i < x.features.size(); ++i) s += (i ? "," : "") + x.features[i];
            return s;
          },
          [](const RequeueJob& x) {
            return "requeue job " + std::to_string(x.job) + " (" + x.reason + ")";
          },
          [](const CancelJob& x) {
            return "cancel job " + std::to_string(x.job) + " (" + x.reason + ")";
          },
          [](const UpdateStatus&) { return std::string("update status"); },
          [](const SetFinalizer& x) {
            return std::string(x.present ? "add" : "remove") + " finalizer";
          },
          [](const ApplyPDB& x) {
            return "apply pdb " + x.pdb["metadata"].value("name", std::string("?"));
          },
          [](const DeletePDB& x) { return "delete pdb " + x.name; },
          [](const EmitEvent& x) {
            return "event " + x.object.kind + "/" + x.object.name + " " + x.type + " " + x.reason +
                   ": " + x.message;
          },
      },
      a);
}

nlohmann::json to_json(const Action& a) {
  using nlohmann::json;
  return std::visit(
      Overload{
          [](const CreatePod& x) {
            return json{{"action", "CreatePod"}, {"pod", x.pod}};
          },
          [](const DeletePod& x) {
            return json{{"action", "DeletePod"}, {"name", x.name}, {"uid", x.uid}};
          },
          [](const PatchPodLabels& x) {
            return json{{"action", "PatchPodLabels"},
                        {"pod", x.pod},
                        {"labels", x.labels},
                        {"annotations", x.annotations}};
          },
          [](const PatchPodConditions& x) {
            return json{
                {"action", "PatchPodConditions"}, {"pod", x.pod}, {"conditions", x.conditions}};
          },
          [](const DrainNode& x) {
            return json{{"action", "DrainNode"}, {"node", x.node}, {"reason", x.reason}};
          },
          [](const ResumeNode& x) {
            return json{{"action", "ResumeNode"}, {"node", x.node}};
          },
          [](const DownNode& x) {
            return json{{"action", "DownNode"}, {"node", x.node}, {"reason", x.reason}};
          },
          [](const DeleteDroverNode& x) {
            return json{{"action", "DeleteDroverNode"}, {"node", x.node}};
          },
          [](const SetNodeFeatures& x) {
            return json{{"action", "SetNodeFeatures"}, {"node", x.node}, {"features", x.features}};
          },
          [](const RequeueJob& x) {
            return json{{"action", "RequeueJob"}, {"job", x.job}, {"reason", x.reason}};
          },
          [](const CancelJob& x) {
            return json{{"action", "CancelJob"}, {"job", x.job}, {"reason", x.reason}};
          },
          [](const UpdateStatus& x) {
            return json{{"action", "UpdateStatus"}, {"status", x.status}};
          },
          [](const SetFinalizer& x) {
            return json{{"action", "SetFinalizer"}, {"present", x.present}};
          },
          [](const ApplyPDB& x) {
            return json{{"action", "ApplyPDB"}, {"pdb", x.pdb}};
          },
          [](const DeletePDB& x) {
            return json{{"action", "DeletePDB"}, {"name", x.name}};
          },
          [](const EmitEvent& x) {
            return json{{"action", "EmitEvent"},
                        {"object",
                         {{"kind", x.object.kind}, {"name", x.object.name}, {"uid", x.object.uid}}},
                        {"type", x.type},
                        {"reason", x.reason},
                        {"message", x.message}};
          },
      },
      a);
}

}  // namespace drover::k8s::op
