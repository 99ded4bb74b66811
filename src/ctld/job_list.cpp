// The job list's compact form (proto/job_list.hpp): one array of values per job, in
// kJobColumnNames' order, each value as the job view writes the key of the same name.
#include "proto/job_list.hpp"

#include <algorithm>

#include "core/hostlist.hpp"
#include "ctld/state_machine.hpp"
#include "proto/json_text.hpp"

namespace drover::ctld {

void StateMachine::job_row_text(std::string& out, const core::Job& job, int64_t now) {
  using W = proto::JsonObjectText;
  // Comma-separated values; each call writes one column.
  bool first = true;
  auto put = [&](const auto& value) {
    out += first ? '[' : ',';
    first = false;
    W::write(out, value);
  };
  put(job.id);
  put(job.array_job_id);
  put(job.array_task_id);
  put(job.array_max_running);
  if (job.array_pending.empty())
    put(std::string_view());
  else
    put(job.array_pending.format_ranges());
  put(core::job_state_name(job.state));
  put(job.completing);
  put(job.reason);
  put(job.partition);
  put(job.user);
  // A job without an allocation (every pending one) has no nodes to name.
  if (job.alloc.empty())
    put(std::string_view());
  else
    put(core::compress_hostlist(job.node_names()));
  put(job.sched_nodes);
  put(job.priority);
  put(job.uid);
  put(job.start_time);
  int64_t run = 0;
  if (job.start_time != core::kNoTime)
    run = (job.end_time != core::kNoTime ? job.end_time : now) - job.start_time;
  put(std::max<int64_t>(run, 0));
  put(job.time_limit_min);
  int cpus = 0;
  for (const auto& a : job.alloc) cpus += a.cpus;
  put(static_cast<int64_t>(job.alloc.size()));
  put(cpus);
  put(job.spec.name);
  put(job.spec.account);
  put(job.spec.qos);
  put(job.spec.ntasks);
  put(job.spec.nodes_min);
  put(job.spec.cpus_per_task);
  out += ']';
}

}  // namespace drover::ctld
