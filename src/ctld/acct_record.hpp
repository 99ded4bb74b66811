#pragma once
// A job's accounting record (store/accounting.hpp) from its controller form. Pure: the state
// loop converts the jobs a batch touched and hands them to the accounting store.
#include <nlohmann/json.hpp>

#include "core/job.hpp"
#include "proto/request.hpp"
#include "store/accounting.hpp"
#include "store/acct_record_json.hpp"

namespace drover::ctld {

// Job row and steps as Slurm 22.05 records a job under a default configuration: the
// allocation, and once a batch job has started its `batch` step (no `extern` step without
// PrologFlags=Contain). A job the controller ended (cancelled, timed out, preempted...) keeps
// 0:0 on the allocation; the signal that ended the batch shell is on the batch step, whose
// state is CANCELLED for those.
// A job started by salloc or srun (spec.interactive) has no batch step. srun's steps follow as
// "0", "1", ... with their own name (JobName), state, exit code and signal, times, nodes, CPUs
// and tasks.
store::JobRecord acct_record(const core::Job& job);

// One srun step's row.
store::StepRecord acct_step(const core::Job& job, const core::Step& step);

// Memory a step holds on one of its nodes: what it asked for, else (as Slurm gives a step
// without --mem) all the job's memory there.
int64_t step_mem_mb(const core::Job& job, const core::NodeAlloc& step_node);

// TRES as sacct shows them: names in alphabetical order ("billing=2,cpu=2,mem=1G,node=1").
std::string acct_tres(int cpus, int64_t mem_mb, int nodes, int64_t gpus);

// sacct's request ({"op": "query", "what": "acct_jobs", "job_ids", "uids", "gids", "states",
// "partitions", "accounts", "nodes", "start", "end", "include_ineligible", "all_users"}) as a
// store filter. Without "uids" and "all_users" a caller sees only their own jobs (sacct sends
// the caller's uid unless -a or -u is given); PrivateData is not set, as in Slurm's default,
// so anyone may ask for all users.
store::JobFilter acct_filter(const proto::QueryRequest& req, uint32_t caller_uid);

// A record as sent to sacct (and as the journal keeps records not yet in the accounting store),
// and back (store/acct_record_json.hpp).
inline nlohmann::json acct_record_json(const store::JobRecord& r) { return store::record_json(r); }
inline store::JobRecord acct_record_from_json(const nlohmann::json& j) {
  return store::record_from_json(j);
}

}  // namespace drover::ctld
