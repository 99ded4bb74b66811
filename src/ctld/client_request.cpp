#include "ctld/client_request.hpp"

namespace drover::ctld {

std::optional<json> apply_client_request(StateMachine& m, const std::string& op, const json& req,
                                         const Caller& who, int64_t now, Effects& fx,
                                         std::string& text, const json& job_list_extras) {
  if (op == "submit") return m.submit(req, who, now, fx);
  if (op == "cancel") return m.cancel(req, who, now, fx);
  if (op == "query") {
    text = m.query_text(req, now, job_list_extras);
    return json();
  }
  if (op == "control") return m.control(req, who, now, fx);
  if (op == "update") return m.update(req, who, now, fx);
  if (op == "reservation") return m.reservation(req, who, now, fx);
  if (op == "node_update") return m.node_update(req, who, now, fx);
  if (op == "node_create") return m.node_create(req, who, fx);
  if (op == "node_delete") return m.node_delete(req, who, fx);
  if (op == "partition_update") return m.partition_update(req, who, fx);
  if (op == "step_create") return m.step_create(req, who, now, fx);
  if (op == "step_complete") return m.step_complete(req, who, now, fx);
  if (op == "allocation_info") return m.allocation_info(req, who, now);
  if (op == "allocation_complete") return m.allocation_complete(req, who, now, fx);
  if (op == "acct_show") return m.acct_show();
  return std::nullopt;
}

}  // namespace drover::ctld
