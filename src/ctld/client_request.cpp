#include "ctld/client_request.hpp"

#include <type_traits>

namespace drover::ctld {

std::optional<json> apply_client_request(StateMachine& m, const proto::Request& req,
                                         const Caller& who, int64_t now, Effects& fx,
                                         std::string& text, const json& job_list_extras) {
  return std::visit(
      [&](const auto& r) -> std::optional<json> {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, proto::SubmitRequest>)
          return m.submit(r, who, now, fx);
        else if constexpr (std::is_same_v<T, proto::CancelRequest>)
          return m.cancel(r, who, now, fx);
        else if constexpr (std::is_same_v<T, proto::QueryRequest>) {
          text = m.query_text(r, now, job_list_extras);
          return json();
        } else if constexpr (std::is_same_v<T, proto::ControlRequest>)
          return m.control(r, who, now, fx);
        else if constexpr (std::is_same_v<T, proto::JobUpdateRequest>)
          return m.update(r, who, now, fx);
        else if constexpr (std::is_same_v<T, proto::ReservationRequest>)
          return m.reservation(r, who, now, fx);
        else if constexpr (std::is_same_v<T, proto::NodeUpdateRequest>)
          return m.node_update(r, who, now, fx);
        else if constexpr (std::is_same_v<T, proto::NodeCreateRequest>)
          return m.node_create(r, who, fx);
        else if constexpr (std::is_same_v<T, proto::NodeDeleteRequest>)
          return m.node_delete(r, who, fx);
        else if constexpr (std::is_same_v<T, proto::PartitionUpdateRequest>)
          return m.partition_update(r, who, fx);
        else if constexpr (std::is_same_v<T, proto::StepCreateRequest>)
          return m.step_create(r, who, now, fx);
        else if constexpr (std::is_same_v<T, proto::StepCompleteRequest>)
          return m.step_complete(r, who, now, fx);
        else if constexpr (std::is_same_v<T, proto::AllocationInfoRequest>)
          return m.allocation_info(r, who, now);
        else if constexpr (std::is_same_v<T, proto::AllocationCompleteRequest>)
          return m.allocation_complete(r, who, now, fx);
        else if constexpr (std::is_same_v<T, proto::AcctShowRequest>)
          return m.acct_show();
        else  // reconfigure, token, acct_change: the server's own
          return std::nullopt;
      },
      req);
}

}  // namespace drover::ctld
