#pragma once
#include <cstdint>
#include <vector>

#include "k8s/operator/actions.hpp"
#include "k8s/operator/nodeset.hpp"
#include "k8s/operator/observed.hpp"

namespace drover::k8s::op {

// Drain reasons the operator sets (and so may lift or act on again).
inline constexpr const char* kReasonScaleIn = "scale-in";
inline constexpr const char* kReasonRollingUpdate = "rolling update";
inline constexpr const char* kReasonNodeSetDeleted = "nodeset deleted";

// One pass of the NodeSet controller: what to do now so that the pods, the drover nodes named
// after them and the NodeSet's status move towards the spec. Pure: the same inputs give the same
// actions, and once they have taken effect a second pass gives none. Every decision lives in
// drover's journaled state (a node drained with an operator reason is a victim), so a restarted
// operator carries on where it stopped.
std::vector<Action> reconcile(const NodeSetSpec& spec, const Observed& observed, int64_t now);

// The agent pod for `ordinal`: the template with drover's name, labels, readiness gate and the
// environment droverd reads (DROVER_NODE_NAME, DROVER_NODE_CONF, DROVER_NODESET,
// DROVER_PARTITIONS) in its first container.
nlohmann::json make_pod(const NodeSetSpec& spec, int ordinal);

// RFC 3339 UTC ("2026-11-28T09:46:00Z") and back; parse gives -1 for a malformed string.
std::string format_rfc3339(int64_t unix_seconds);
int64_t parse_rfc3339(const std::string& s);

}  // namespace drover::k8s::op
