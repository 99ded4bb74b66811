#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/acct_admin.hpp"
#include "core/acct_data.hpp"
#include "core/array_spec.hpp"
#include "core/job.hpp"
#include "core/node.hpp"
#include "core/reservation.hpp"
#include "ctld/accounting_state.hpp"
#include "ctld/config.hpp"
#include "ctld/effects.hpp"
#include "ctld/job_table.hpp"
#include "ctld/node_table.hpp"
#include "ctld/partition_table.hpp"
#include "ctld/reservation_book.hpp"
#include "proto/agent_msg.hpp"
#include "proto/error.hpp"
#include "proto/reply.hpp"
#include "proto/request.hpp"
#include "sched/fairshare.hpp"
#include "sched/limits.hpp"
#include "sched/scheduler.hpp"

namespace drover::ctld {

using nlohmann::json;

// Who sent a request, as the kernel says (SO_PEERCRED) plus the names of those ids.
struct Caller {
  uint32_t uid = 0, gid = 0;
  std::string user, group;
};

// The Kubernetes operator inside droverctld (ctld/k8s_operator.hpp) acts as this caller, so its
// commands are an operator's and journaled as scontrol's are, and a reason it set is known as
// its own (reason_uid). (uid_t)-1 is no user's uid: the kernel never reports it as a peer's.
inline constexpr uint32_t kK8sOperatorUid = 0xffffffffu;
inline Caller k8s_operator_caller() {
  return {kK8sOperatorUid, kK8sOperatorUid, "drover-operator", "drover-operator"};
}

// Whether a job's allocation is still charged to its nodes (running, or processes still going).
// A request refused: {"ok": false, "error", "errno"} (proto/error.hpp), always with its
// number: Slurm's wording for it, or a message of drover's own (kError where Slurm has no
// number for the check).
inline json error_reply(const proto::Error& e) { return e.reply(); }
inline json error_reply(proto::Errno code) { return proto::Error(code).reply(); }
inline json error_reply(proto::Errno code, std::string message) {
  return proto::Error(code, std::move(message)).reply();
}
// One job's entry of a reply's "errors" list (scancel, scontrol on several jobs).
inline proto::JobError job_error(const std::string& ref, const proto::Error& e) {
  return {.job = ref, .error = e};
}
inline proto::JobError job_error(const std::string& ref, proto::Errno code) {
  return job_error(ref, proto::Error(code));
}

inline bool holds_resources(const core::Job& job) {
  return !job.alloc.empty() && (job.state == core::JobState::Running || job.completing);
}

// Where a batch job's stdout (or stderr) goes, as its launch names it: the pattern expanded and
// made absolute against the job's working directory.
std::string job_output_path(const core::Job& job, bool stderr_stream);

// The controller's rules, and the façade over the components that hold its state (nodes,
// jobs, reservations, accounting; partitions and the configuration are still its own
// members). One thread owns all of it: the controller's state thread is the only caller of
// StateMachine and the only one to touch its components, so nothing here locks. No I/O and
// no clock: time comes in as `now`.
class StateMachine {
 public:
  StateMachine(Config config, std::unique_ptr<sched::Scheduler> scheduler);

  void restore(uint64_t next_job_id, std::vector<core::Job> jobs, int64_t now);
  // The journal's "submit_id" records (journal::SubmitId).
  void restore_submit_ids(const std::map<std::string, json>& records);
  static constexpr int64_t kSubmitIdWindow = JobTable::kSubmitIdWindow;
  static constexpr size_t kMaxSubmitIds = JobTable::kMaxSubmitIds;
  size_t submit_id_count() const { return jobs_.submit_ids().size(); }

  // Client requests, decoded once at the server boundary (proto/request.hpp); each returns
  // the reply body.
  json submit(const proto::SubmitRequest& req, const Caller& who, int64_t now, Effects& fx);
  json cancel(const proto::CancelRequest& req, const Caller& who, int64_t now, Effects& fx);
  json query(const proto::QueryRequest& req, int64_t now) const;
  // query()'s reply as the text sent to the client (query(req, now).dump(), byte for byte), with
  // `job_list_extras` (an object) added to replies that list jobs.
  // A list of jobs is written job by job: as one json document it took ~11 KB of memory per
  // job, which the controller then kept (a queue of 10,000 jobs grew it by 120 MB).
  std::string query_text(const proto::QueryRequest& req, int64_t now,
                         const json& job_list_extras = {}) const;
  // scontrol hold|uhold|release|requeue|requeuehold on jobs named by their references.
  json control(const proto::ControlRequest& req, const Caller& who, int64_t now, Effects& fx);
  // scontrol update JobId=.. Key=Value....
  json update(const proto::JobUpdateRequest& req, const Caller& who, int64_t now, Effects& fx);

  // scontrol create|update|delete reservation. Operators only. (reservations.cpp)
  json reservation(const proto::ReservationRequest& req, const Caller& who, int64_t now,
                   Effects& fx);
  // scontrol update NodeName=... State=DRAIN|DOWN|RESUME|UNDRAIN Reason=...
  json node_update(const proto::NodeUpdateRequest& req, const Caller& who, int64_t now,
                   Effects& fx);
  // What node_update set, to journal; a dynamic node's record also holds its definition.
  json node_admin_record(const std::string& name) const;
  void restore_node_admin(const std::string& name, const json& record);
  // Nodes that join and leave (dynamic_nodes.cpp). scontrol create NodeName=... (the node's
  // slurm.conf line; State=FUTURE or CLOUD) and scontrol delete NodeName=... (a hostlist;
  // refused while a node runs jobs or is in a reservation); operators only.
  // MaxNodeCount bounds how many nodes there may be in all.
  json node_create(const proto::NodeCreateRequest& req, const Caller& who, Effects& fx);
  json node_delete(const proto::NodeDeleteRequest& req, const Caller& who, Effects& fx);
  // The journal's node records that define dynamic nodes, recreated in the order they joined;
  // before the jobs are restored (their allocations are charged to them).
  void restore_dynamic_nodes(const std::map<std::string, json>& records);
  size_t max_node_count() const;
  // scontrol reconfigure and SIGHUP (reconfigure.cpp): `next`, slurm.conf read again, becomes
  // the configuration: partitions are rebuilt from it (what scontrol update changed is kept
  // as ReconfigFlags says), scheduling, priority and limit settings apply at once, and jobs
  // are left as they are. Refused ("<why>", nothing changed) when it changes what needs a
  // restart (restart_only_changes, slurm.conf's nodes), removes a partition jobs are in, or
  // has settings the accounting data cannot take; "" when applied. Operators only: the caller
  // checks (the controller's own SIGHUP has no caller).
  std::string reconfigure(Config next, int64_t now, Effects& fx);
  // scontrol update PartitionName=... with typed settings checked by scontrol; operators only
  // (partition_admin.cpp).
  json partition_update(const proto::PartitionUpdateRequest& req, const Caller& who, Effects& fx);
  json partition_admin_record(const std::string& name) const;  // every setting changed so far
  void restore_partition_admin(const std::string& name, const json& record);
  // Reservations from the journal, and the counter that numbers unnamed ones.
  void restore_reservations(std::vector<core::Reservation> resvs, int64_t next_resv_id,
                            int64_t now);
  const core::Reservation* find_reservation(const std::string& name) const;
  // Fair-share usage as the journal keeps it (each user association's own decayed usage and
  // the time it is valued at), and back: usage survives restarts as in Slurm.
  json usage_record() const;
  void restore_usage(const json& record);
  int64_t next_resv_id() const { return reservations_.next_id(); }
  // Whether a user name exists (Users= of a reservation); getpwnam unless replaced (tests).
  std::function<bool(const std::string&)> user_exists;

  // sacctmgr (acct_admin.cpp). acct_show: the accounts, users, associations and QOS (those a
  // first change would create when there are none yet). acct_change previews a change (what
  // sacctmgr prints before asking) or makes it (commit); the reply has sacctmgr's "out", "err" and
  // "rc". A committed change is left in `to_store` for the server, which stores it and then
  // installs it; a commit whose preview was made on other data (another "generation") is refused.
  json acct_show() const;
  json acct_change(const proto::AcctChangeRequest& req, const Caller& who,
                   std::optional<core::AcctData>& to_store);
  // Makes `data` the accounting entities: the limits, the QOS' preemption settings and the
  // fair-share tree (usage kept for the associations that remain) are rebuilt, and the queue
  // is planned again with them. Throws core::ParseError for data the limits cannot take.
  void install_accounting(core::AcctData data, Effects& fx);
  // What install_accounting would refuse ("" when it would take it).
  std::string check_accounting(const core::AcctData& data) const;
  const std::optional<core::AcctData>& acct_data() const { return acct_.data(); }

  // srun (steps.cpp): a step inside a running allocation (the reply has the layout, the agents'
  // addresses and the signed credential), its end, and the end of an allocation that has no batch
  // shell (salloc, srun outside one).
  json step_create(const proto::StepCreateRequest& req, const Caller& who, int64_t now,
                   Effects& fx);
  json step_complete(const proto::StepCompleteRequest& req, const Caller& who, int64_t now,
                     Effects& fx);
  json allocation_complete(const proto::AllocationCompleteRequest& req, const Caller& who,
                           int64_t now, Effects& fx);
  // The state of a job (for salloc and srun waiting for it) and, once it runs, the
  // environment its holder passes on (SLURM_JOB_ID, SLURM_JOB_NODELIST, ...).
  json allocation_info(const proto::AllocationInfoRequest& req, const Caller& who, int64_t now);
  // The controller's own secret (net/keys.hpp): step credentials are signed with the key pair
  // derived from it, and each node's step key with that node's key derived from it.
  void set_cluster_key(std::string key) { cluster_key_ = std::move(key); }

  // Agent events.
  json agent_register(const std::string& node, const proto::Register& msg, int64_t now,
                      Effects& fx);
  void agent_heartbeat(const std::string& node, const proto::Heartbeat& msg, int64_t now);
  // The node's agent connection dropped: not responding (no new work goes there) until it
  // registers again; its jobs stay as they are until then or until SlurmdTimeout.
  void agent_disconnected(const std::string& node, int64_t now);
  void agent_exited(const std::string& node, const proto::JobExited& msg, int64_t now, Effects& fx);
  // A step's tasks on a node have all ended: once every node
  // of the step said so, the step ends (if srun has not ended it already).
  void agent_step_exited(const std::string& node, const proto::StepExited& msg, int64_t now,
                         Effects& fx);
  // Whether an agent's report of run `run` (none: the current one) is about the job's current run.
  bool current_run(uint64_t id, std::optional<uint32_t> run) const;

  // Time-driven duties: time limits, unresponsive nodes, purging old jobs.
  // `full_pass`: also re-plan the whole queue at the next schedule() (the server paces this
  // by bf_interval and by how long passes take).
  void tick(int64_t now, Effects& fx, bool full_pass = true);
  // Ends the pending jobs whose --deadline passed and notes for the next pass those whose
  // eligible time came (the job table's time indexes; tick and every pass call it).
  void act_on_due(int64_t now, Effects& fx);
  bool full_pass_pending() const { return full_pass_needed_; }
  // `out_of_time`: bf_max_time's deadline (ClusterView::out_of_time); unset: none.
  void schedule(int64_t now, Effects& fx, std::function<bool()> out_of_time = {});
  // Pending jobs the last pass did not get to (bf_max_time).
  size_t last_pass_not_considered() const { return last_pass_not_considered_; }
  // Pending jobs the engine holds a plan for (its PlanMemory).
  size_t planned_jobs() const;
  // Jobs whose plan-only fields (reason, priority, expected start, planned nodes) changed since
  // the last call: these change without a journal write (so without a journal::Job write), and
  // the dashboard's change feed needs them too. The server takes them after every batch.
  std::vector<uint64_t> take_plan_changes() { return std::exchange(plan_changed_, {}); }

  // root or SlurmUser: may act on anyone's jobs, and ask tokens for other users.
  bool is_operator(const Caller& who) const;
  bool knows_node(const std::string& name) const { return nodes_.contains(name); }
  // Whether the job may go back to pending (--requeue, JobRequeue, batch jobs only).
  bool requeue_allowed(const core::Job& job) const;
  const Config& config() const { return config_; }
  const core::Job* find_job(uint64_t id) const;
  const core::Node* find_node(const std::string& name) const;
  size_t job_count() const { return jobs_.size(); }
  uint64_t next_job_id() const { return jobs_.next_id(); }
  // The components, read-only (the metrics text, tests).
  const JobTable& jobs() const { return jobs_; }
  const NodeTable& nodes() const { return nodes_; }
  const ReservationBook& reservations() const { return reservations_; }
  // What a full scheduling pass would be given at `now` (the pending jobs it would offer the
  // engine: not held, dependent or before their begin time), for the autoscaler's what-if.
  sched::ClusterView autoscale_view(int64_t now) const;
  // The partitions a dynamic node of this shape would join (Nodes=ALL, or a NodeSet feature).
  std::vector<std::string> partitions_taking(const core::Node& n) const;
  const AccountingState& accounting() const { return acct_; }
  // Each partition's name and nodes, in slurm.conf's order.
  std::vector<std::pair<std::string, const std::vector<NodeId>*>> partition_nodes() const;

 private:
  // Slurm's errno text for a script over max_script_size or a text field over its bound
  // (job name, comment, mail user: kMaxTextField bytes, as Slurm 22.05 refuses them).
  static constexpr const char* kTooLong =
      "Pathname of a file, directory or other parameter too long";
  static constexpr size_t kMaxTextField = 1024;
  // A partition as slurm.conf defines it, with the nodes known now. Throws core::ParseError.
  Partition partition_from_conf(const core::PartitionConf& pc) const;
  // Applies typed settings (partition_update's "set") to `p`; false if a node is unknown.
  bool apply_partition_settings(Partition& p, const json& set);
  // With EnforcePartLimits=ALL|ANY|YES, Slurm's refusal of a job beyond its partition's CPUs,
  // nodes or MaxTime ("" when within them, or when limits are not enforced at submit).
  std::optional<proto::Error> part_limits_error(const core::JobSpec& spec,
                                                const Partition& p) const;

  // The job `job_id` names, if the caller may act on it (else `error` is set).
  core::Job* caller_job(uint64_t job_id, const Caller& who, json& error);
  std::string step_key(const std::string& node, const std::string& cred_sig) const;
  std::map<std::string, std::string> allocation_env(const core::Job& job) const;
  // Steps past their own time limit (srun -t) end TIMEOUT: their tasks get SIGTERM, then
  // SIGKILL after KillWait, and srun hears "... CANCELLED AT <time> DUE TO TIME LIMIT".
  void step_time_limits(core::Job& job, int64_t now, Effects& fx);
  // A signal to every task of the job's running steps (scancel -s, --signal without B:).
  void signal_steps(const core::Job& job, int sig, Effects& fx) const;
  // Steps still running when their job ends end with it.
  void end_steps(core::Job& job, core::JobState state, int64_t now);
  bool may_act_on(const Caller& who, const core::Job& job) const {
    return job.uid == who.uid || is_operator(who);
  }
  // The records a job reference names: a job, a whole array (its remainder and every task
  // split off) or some of its tasks. Tasks still in the remainder are split off first when
  // `split` is set (a task acted on alone gets its own record, as in Slurm).
  // The job references of a request ("jobs": ["36", "36_5", "36_[1-3]", ...]) resolved in
  // order; a reference that names nothing yields an (error) entry. Without `split`, tasks
  // still in an array's remainder come back as `remainder_tasks` of `remainder` instead.
  struct Target {
    std::string ref;
    std::vector<core::Job*> jobs;
    std::optional<proto::Errno> error;  // set when the reference names no job
    core::Job* remainder = nullptr;
    core::IndexSet remainder_tasks;
  };
  void resolve(const core::JobRef& ref, bool split, Effects& fx, Target& out);
  std::vector<Target> resolve_all(const std::vector<std::string>& refs, bool split, Effects& fx);
  // Moves one index out of an array's remainder into a record of its own and returns it: a new
  // job id, or the remainder record itself when it was the last index.
  core::Job& split_array_task(core::Job& remainder, uint32_t index, Effects& fx);
  int running_array_tasks(uint64_t array_job_id) const;
  // priority/basic: each job gets one less than the lowest given so far (less its nice), so
  // submission order wins; held jobs have 0 and get a new one when released.
  uint32_t next_priority(int nice);
  // Why a pending job may not be considered for resources at all ("" when it may).
  std::string eligibility(core::Job& job, int64_t now, Effects& fx,
                          std::set<std::pair<uint32_t, std::string>>& singletons_seen);
  // Re-evaluates a job's dependency entries; returns whether the whole dependency changed.
  bool evaluate_dependency(core::Job& job, int64_t now);
  // `own_task`: the array task being decided (aftercorr looks at the same task of the other).
  core::DepState evaluate_entry(uint32_t own_task, const core::DepEntry& e, int64_t now) const;
  // aftercorr on an array's remainder: splits off every task whose verdict is known.
  void split_correlated_tasks(core::Job& remainder, int64_t now, Effects& fx);
  std::optional<proto::Error> check_dependency_targets(const core::Dependency& dep,
                                                       uint64_t self) const;
  // Back to PENDING for another run; `processes_alive`: they must be killed first (else they
  // are known gone, e.g. with their node).
  // `kill_wait` (-1: KillWait) and `notice` go to the processes being stopped.
  void requeue_job(core::Job& job, int64_t now, uint8_t hold, bool processes_alive, Effects& fx,
                   int64_t kill_wait = -1, const std::string& notice = "");
  std::optional<proto::Error> update_one(core::Job& job, const json& set, const Caller& who,
                                         int64_t now, Effects& fx);
  const Partition* find_partition(const std::string& name) const;
  // submit's --test-only answer: when and where the engine would start `spec` in `part`.
  json test_only_plan(core::JobSpec spec, const Partition& part, const Caller& who, int64_t now,
                      Effects& fx);
  void start_job(core::Job& job, const sched::Start& start, int64_t now, Effects& fx);
  // priority/multifactor (priority.cpp).
  // The fair-share association a job charges: its (user, account) from the accounting file,
  // else the user under root.
  sched::AssocId charged_association(const core::Job& job);
  // Accounts, users and QOS (accounting.cpp): sets a new job's account and QOS and checks the
  // limits that refuse submissions; the error text, "" when admitted. `count`: its jobs (array
  // tasks), counted as submitted unless `test_only`.
  std::string admit(core::JobSpec& spec, const Caller& who, const Partition& part, int64_t count,
                    bool test_only);
  // Submitted (not finished) jobs per association and QOS, recounted after jobs end.
  const sched::Limits::Usage& submit_usage();
  void charge_usage(const core::Job& job, int64_t now, Effects& fx);
  void update_priorities(int64_t now);
  // What every job's factors are normalised by; computed once per recomputation.
  struct PriorityTotals {
    uint32_t cluster_cpus = 0;
    uint32_t max_partition_job_factor = 0;
  };
  PriorityTotals priority_totals() const;
  // What priority/multifactor computes a job's factors from, in partition `part` (the job's
  // own when null), given its association's fair-share factor. Shared by the priorities the
  // controller sets and by what sprio shows.
  sched::JobPriorityInput priority_input(const core::Job& job, const Partition* part, int64_t now,
                                         double fairshare, const PriorityTotals& totals) const;
  uint32_t multifactor_priority_of(const core::Job& job, int64_t now,
                                   const std::vector<sched::ShareInfo>& shares,
                                   const PriorityTotals& totals);
  // A new job's priority: priority/basic's counter, or its multifactor priority.
  uint32_t initial_priority(const core::Job& job, int64_t now);
  // sprio and sshare (priority_report.cpp): query what="priority_factors" (job_ids, uids,
  // partitions: optional filters) and what="shares" (users, accounts).
  json priority_factors_report(const proto::QueryRequest& req, int64_t now) const;
  json shares_report(const proto::QueryRequest& req, int64_t now) const;
  void end_job(core::Job& job, core::JobState state, const std::string& reason, int64_t now,
               bool completing, Effects& fx);
  void release(core::Job& job);
  // A completing job's processes are gone: it stops completing and frees what it held.
  void processes_gone(core::Job& job);
  // A node went down: its jobs are requeued (where allowed) or end NODE_FAIL.
  void fail_jobs_on(const core::Node& node, int64_t now, Effects& fx);
  // Takes one node out of a running job's allocation and frees what the job held there.
  void excise_node(core::Job& job, const std::string& node);
  void finish_exit(core::Job& job, int status, int64_t now, Effects& fx, int64_t oom_kills = 0);
  // `why` is appended to Slurm's cancellation notice in the job's error file ("" or " DUE TO ...").
  // `kill_wait`: seconds between SIGTERM and SIGKILL (-1: KillWait).
  void send_terminate(const core::Job& job, int64_t now, const std::string& why, Effects& fx,
                      int64_t kill_wait = -1);
  // The text Slurm writes to a job's error file when it is stopped ("" for `why`: cancelled).
  std::string cancel_notice(const core::Job& job, int64_t now, const std::string& why) const;
  // Stops a running job the engine preempted: requeued or cancelled (preemption.cpp).
  void preempt_job(const sched::Preemption& p, int64_t now, Effects& fx);
  proto::Launch launch_message(const core::Job& job) const;
  sched::ClusterView view(bool with_running = true) const;
  void add_running(sched::ClusterView& v) const;
  // Reservations (reservations.cpp).
  std::optional<proto::Error> reservation_access(const core::JobSpec& spec,
                                                 const std::string& user) const;
  // Ends reservations whose time is up (repeating ones move on; their running members are
  // stopped as Slurm does with ResvOverRun=0) and marks nodes RESERVED/MAINT.
  void advance_reservations(int64_t now, Effects& fx);
  void mark_reserved_nodes(int64_t now);
  // Checks a reservation about to be created or changed against nodes, jobs and the other
  // reservations; picks NodeCnt nodes. Returns an error text ("" if fine).
  std::optional<proto::Error> settle_reservation(core::Reservation& r, const core::ResvRequest& req,
                                                 bool pick_nodes, int64_t now) const;
  json reservation_view(const core::Reservation& r, int64_t now) const;
  // `detail` adds the expanded stdout/stderr/stdin paths (scontrol show job).
  json job_view(const core::Job& job, int64_t now, bool detail) const;
  // Which of a job view's keys (and of its spec's) a client asked for; unset: all.
  struct KeyFilter {
    std::optional<std::vector<std::string>> keys, spec_keys;  // sorted
  };
  // job_view(...).dump()'s content (keys in another order), written straight into `out`.
  void job_view_text(std::string& out, const core::Job& job, int64_t now, bool detail,
                     const KeyFilter& only = {}) const;
  template <class Put>
  void job_view_extras(const core::Job& job, int64_t now, bool detail, Put&& put) const;
  // One job as a row of the job list's compact form (proto/job_list.hpp; job_list.cpp).
  static void job_row_text(std::string& out, const core::Job& job, int64_t now);
  json node_view(const core::Node& node) const;
  // Dynamic nodes (dynamic_nodes.cpp). A registration from an agent no node is known for:
  // "" when it became a node (droverd -Z), else why not.
  std::optional<proto::Error> register_dynamic(const std::string& name, const proto::Register& msg,
                                               Effects& fx);
  NodeId add_dynamic_node(const core::NodeConf& nc, bool future, Effects& fx);
  // Whether a node joining later belongs to the partition (Nodes=ALL, or a NodeSet's feature).
  bool partition_takes(const Partition& p, const core::Node& n) const;
  // One node line (slurm.conf syntax) into `out`; the error text, "" when it parses.
  std::string parse_node_line(const std::string& line, std::vector<core::NodeConf>& out) const;
  static std::string node_definition(const core::NodeConf& nc);
  json partition_view(const Partition& p) const;

  // State below is protected by being the state thread's alone: only that thread calls this
  // class (see the class comment), so none of it is locked and no reference to it may leave
  // the thread (readers on other threads get copies: query_text, metrics_text). Each
  // component keeps its own invariants; the rules above decide what changes.
  Config config_;
  // The engine, which owns its plan memory (sched::PlanMemory): schedule() writes it; the
  // rules tell it when a job leaves the queue (start_job, end_job), when an array task is split
  // off (split_array_task) and when a node is deleted.
  std::unique_ptr<sched::Scheduler> scheduler_;
  JobTable jobs_;
  NodeTable nodes_;
  // The agent process each node last registered from (its "instance", new at each start), and
  // the agent process each running job's launch went to: a registration that does not list a
  // launch sent to that same process may have been written before the launch arrived (in
  // memory: after a controller restart every launch is judged as before).
  std::unordered_map<std::string, std::string> agent_instance_;
  std::unordered_map<uint64_t, std::string> launched_to_;
  PartitionTable partitions_;
  int64_t start_time_ = 0;
  uint32_t lowest_priority_ = 0xffff0000u;
  AccountingState acct_;
  ReservationBook reservations_;
  std::string cluster_key_;
  // Nodes whose tasks of a running step have ended, by (job, step); not journaled (a restart
  // leaves the step to srun's report or the job's end).
  std::map<std::pair<uint64_t, uint32_t>, std::set<std::string>> step_nodes_ended_;

  // Incremental scheduling: while nothing has been freed, a pass over only the newly
  // submitted jobs (the lowest priority ones) decides the same as a pass over all.
  bool full_pass_needed_ = true;
  size_t last_pass_not_considered_ = 0;
  std::set<std::string> blocked_partitions_;
  std::vector<uint64_t> plan_changed_;  // see take_plan_changes()
};

}  // namespace drover::ctld
