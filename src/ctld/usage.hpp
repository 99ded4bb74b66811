#pragma once
// sreport in the controller: the cluster's TRES as registered in the accounting store, nodes
// out of service, and the job records of a window turned into the sums sreport prints
// (core/usage_report.hpp). Pure.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/acct_data.hpp"
#include "core/node.hpp"
#include "core/usage_report.hpp"
#include "ctld/config.hpp"
#include "store/accounting.hpp"

namespace drover::ctld {

// The configured nodes' TRES in Slurm's order: "cpu=4,mem=2000M,node=2,billing=4,gres/gpu=2"
// (billing = CPUs, as without TRESBillingWeights; GRES counted by name, every type together).
std::string cluster_tres(const Config& config);
// One node's: "cpu=2,mem=1000M,node=1,billing=2,gres/gpu=1".
std::string node_tres(const core::NodeConf& node);
// How sreport counts a node now: "DOWN" (down, or drained with nothing running), "MAINT" (in a
// maintenance reservation) or "" (in service).
std::string node_service_state(const core::Node& node);

core::UsageJob usage_job(const store::JobRecord& r);

// The reply to {"op": "query", "what": "usage", "start", "end"}: the cluster's name, the sums
// and each account's parent (for sreport's account tree, from `data`).
nlohmann::json usage_reply(const std::string& cluster, const std::vector<store::JobRecord>& jobs,
                           const std::vector<store::ClusterTresRecord>& tres,
                           const std::vector<store::NodeEventRecord>& node_events,
                           const core::AcctData& data, int64_t start, int64_t end, int64_t now);

}  // namespace drover::ctld
