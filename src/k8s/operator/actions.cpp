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
          [](const PatchPodLabels& x) { return "label pod " + x.pod + " " + x.labels.dump(); },
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

}  // namespace drover::k8s::op
