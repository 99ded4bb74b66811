// Advance reservations: scontrol create|update|delete reservation, who may use one, and
// their life (start, end, repetition). The engine keeps their nodes for their members.
#include <pwd.h>

#include <algorithm>
#include <set>

#include "core/hostlist.hpp"
#include "core/text.hpp"
#include "ctld/state_machine.hpp"

namespace drover::ctld {
namespace {

// Slurm's stand-in for an UNLIMITED duration.
constexpr int64_t kUnlimitedResvSeconds = int64_t{365} * 86400;

bool getpw_exists(const std::string& name) {
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buf[4096];
  return getpwnam_r(name.c_str(), &pw, buf, sizeof buf, &found) == 0 && found != nullptr;
}

// "alice,bob" or "-alice,bob" (every name denied) into the reservation.
void set_users(core::Reservation& r, const std::string& text) {
  r.users.clear();
  r.users_denied = false;
  for (auto name : core::split_list(text, ',')) {
    if (name[0] == '-') {
      r.users_denied = true;
      name.erase(0, 1);
    }
    if (!name.empty()) r.users.push_back(name);
  }
}

void add_names(std::vector<std::string>& list, const std::vector<std::string>& add,
               const std::vector<std::string>& remove) {
  for (const auto& n : add)
    if (std::find(list.begin(), list.end(), n) == list.end()) list.push_back(n);
  for (const auto& n : remove) list.erase(std::remove(list.begin(), list.end(), n), list.end());
}

}  // namespace

const core::Reservation* StateMachine::find_reservation(const std::string& name) const {
  return reservations_.get(name);
}

void StateMachine::restore_reservations(std::vector<core::Reservation> resvs, int64_t next_resv_id,
                                        int64_t now) {
  reservations_.set_next_id(next_resv_id);
  for (auto& r : resvs) reservations_.put(std::move(r));
  mark_reserved_nodes(now);
}

std::optional<proto::Error> StateMachine::reservation_access(const core::JobSpec& spec,
                                                             const std::string& user) const {
  if (spec.reservation.empty()) return std::nullopt;
  const core::Reservation* r = find_reservation(spec.reservation);
  if (r == nullptr) return proto::Error(proto::Errno::kReservationInvalid);
  if (!r->admits(user, spec.account)) return proto::Error(proto::Errno::kReservationAccess);
  return std::nullopt;
}

std::optional<proto::Error> StateMachine::settle_reservation(core::Reservation& r,
                                                             const core::ResvRequest& req,
                                                             bool pick_nodes, int64_t now) const {
  if (r.end <= r.start || r.end <= now) return proto::Error(proto::Errno::kInvalidTimeValue);
  if (r.users.empty() && r.accounts.empty())
    return proto::Error(proto::Errno::kError,
                        "Either Users/Groups and/or Accounts must be specified");
  for (const auto& u : r.users)
    if (!(user_exists ? user_exists(u) : getpw_exists(u)))
      return proto::Error(proto::Errno::kUserIdMissing);
  const bool may_overlap = (r.flags & (core::kResvOverlap | core::kResvMaint)) != 0;
  const bool ignore_jobs = (r.flags & core::kResvIgnoreJobs) != 0;
  // A node is busy for the reservation when a job on it may still run at its start.
  // Nodes where a job may still run at its start (its own members aside), found once.
  std::set<std::string> busy_nodes;
  if (!ignore_jobs)
    for (uint64_t id : jobs_.active()) {
      const core::Job& job = *jobs_.get(id);
      if (!holds_resources(job) || job.spec.reservation == r.name) continue;
      if (!job.completing && job.time_limit_min >= 0 &&
          job.start_time + job.time_limit_min * 60 <= r.start)
        continue;
      for (const auto& a : job.alloc) busy_nodes.insert(a.node);
    }
  auto busy = [&](const std::string& node) { return busy_nodes.count(node) > 0; };
  auto clashes = [&](const std::string& node) {
    if (may_overlap) return false;
    for (const auto& [name, other] : reservations_) {
      if (name == r.name || !other.overlaps(r.start, r.end)) continue;
      if (std::find(other.nodes.begin(), other.nodes.end(), node) != other.nodes.end()) return true;
    }
    return false;
  };
  if (pick_nodes) {
    r.nodes.clear();
    r.flags &= ~(core::kResvSpecNodes | core::kResvAllNodes);
    if (req.nodes) {
      if (core::iequals(*req.nodes, "ALL")) {
        for (const auto& n : nodes_) r.nodes.push_back(n.name);
        r.flags |= core::kResvSpecNodes | core::kResvAllNodes;
      } else {
        try {
          r.nodes = core::expand_hostlist(*req.nodes);
        } catch (const core::ParseError&) {
          return proto::Error(proto::Errno::kInvalidNodeName);
        }
        for (const auto& n : r.nodes)
          if (!nodes_.contains(n)) return proto::Error(proto::Errno::kInvalidNodeName);
        r.flags |= core::kResvSpecNodes;
      }
      r.partition.clear();
    } else if (req.node_cnt) {
      // NodeCnt: the first usable nodes of the partition (the default one unless named)
      // that no job or other reservation needs then.
      const Partition* part = nullptr;
      if (req.partition) {
        part = find_partition(*req.partition);
        if (part == nullptr) return proto::Error(proto::Errno::kInvalidPartitionName);
      } else {
        part = partitions_.default_partition();
        if (part == nullptr && !partitions_.empty()) part = &partitions_.front();
      }
      if (part == nullptr) return proto::Error(proto::Errno::kInvalidPartitionName);
      r.partition = part->name;
      for (NodeId idx : part->nodes) {
        if (static_cast<int>(r.nodes.size()) >= *req.node_cnt) break;
        const core::Node& n = *nodes_.get(idx);
        if (!n.schedulable() || busy(n.name) || clashes(n.name)) continue;
        r.nodes.push_back(n.name);
      }
      if (static_cast<int>(r.nodes.size()) < *req.node_cnt)
        return proto::Error(proto::Errno::kNodesBusy);
      return std::nullopt;
    }
  }
  if (r.nodes.empty()) return proto::Error(proto::Errno::kRequestedNodeConfigUnavailable);
  for (const auto& n : r.nodes)
    if (clashes(n)) return proto::Error(proto::Errno::kReservationOverlap);
  for (const auto& n : r.nodes)
    if (busy(n)) return proto::Error(proto::Errno::kNodesBusy);
  return std::nullopt;
}

json StateMachine::reservation(const proto::ReservationRequest& req, const Caller& who, int64_t now,
                               Effects& fx) {
  // Slurm answers a user who may not manage reservations this way.
  if (!is_operator(who)) return error_reply(proto::Errno::kUserIdMissing);
  const std::string& action = req.action;
  if (action == "delete") {
    const std::string name = req.name.value_or("");
    auto it = reservations_.find(name);
    if (it == reservations_.end()) return error_reply(proto::Errno::kReservationInvalid);
    for (const auto& [id, job] : jobs_)
      if (job.spec.reservation == name && (!core::is_finished(job.state) || job.completing))
        return error_reply(proto::Errno::kReservationBusy);
    reservations_.erase(it);
    fx.journal(journal::ReservationGone{name});
    mark_reserved_nodes(now);
    fx.notify(notice::Reschedule{});
    full_pass_needed_ = true;
    return proto::ReservationReply{}.to_json();
  }
  if (!req.request)
    return proto::Error(proto::Errno::kError, "Invalid request: field \"request\" is missing")
        .reply();
  core::ResvRequest rq = *req.request;
  core::Reservation r;
  bool pick_nodes = true;
  if (action == "create") {
    if (!rq.start)
      return error_reply(proto::Errno::kInvalidTimeValue, "A start time must be given");
    r.start = *rq.start;
    if (rq.end)
      r.end = *rq.end;
    else if (rq.duration_min)
      r.end = r.start + (*rq.duration_min < 0 ? kUnlimitedResvSeconds : *rq.duration_min * 60);
    else
      return error_reply(proto::Errno::kInvalidTimeValue, "An end time or duration must be given");
    if (rq.users) set_users(r, *rq.users);
    if (rq.accounts) r.accounts = core::split_list(*rq.accounts, ',');
    add_names(r.users, rq.users_add, rq.users_remove);
    add_names(r.accounts, rq.accounts_add, rq.accounts_remove);
    r.flags = (rq.flags.value_or(0) | rq.flags_add) & ~rq.flags_remove;
    if (!rq.nodes && !rq.node_cnt)
      return error_reply(proto::Errno::kRequestedNodeConfigUnavailable);
    if (!rq.name.empty()) {
      r.name = rq.name;
      if (reservations_.contains(r.name)) return error_reply(proto::Errno::kReservationNameDup);
    } else {
      // Named after its first user (or account) and the reservation counter, as Slurm.
      const std::string base = !r.users.empty()      ? r.users.front()
                               : !r.accounts.empty() ? r.accounts.front()
                                                     : "resv";
      r.name = reservations_.unused_name(base);
    }
  } else if (action == "update") {
    auto it = reservations_.find(rq.name);
    if (it == reservations_.end()) return error_reply(proto::Errno::kReservationInvalid);
    r = it->second;
    const int64_t length = r.end - r.start;
    if (rq.start) {
      r.start = *rq.start;
      r.end = r.start + length;  // a new start keeps the duration
    }
    if (rq.end) r.end = *rq.end;
    if (rq.duration_min)
      r.end = r.start + (*rq.duration_min < 0 ? kUnlimitedResvSeconds : *rq.duration_min * 60);
    if (rq.users) set_users(r, *rq.users);
    if (rq.accounts) r.accounts = core::split_list(*rq.accounts, ',');
    add_names(r.users, rq.users_add, rq.users_remove);
    add_names(r.accounts, rq.accounts_add, rq.accounts_remove);
    const uint32_t fixed = r.flags & (core::kResvSpecNodes | core::kResvAllNodes);
    if (rq.flags) r.flags = *rq.flags | fixed;
    r.flags = (r.flags | rq.flags_add) & ~rq.flags_remove;
    pick_nodes = rq.nodes.has_value() || rq.node_cnt.has_value();
    // A new NodeCnt picks from the partition the nodes came from unless told otherwise.
    if (rq.node_cnt && !rq.nodes && !rq.partition && !r.partition.empty())
      rq.partition = r.partition;
  } else {
    return error_reply(proto::Errno::kError, "Unknown reservation request");
  }
  if (auto err = settle_reservation(r, rq, pick_nodes, now)) return error_reply(*err);
  const bool created = action == "create";
  if (created) {
    reservations_.count_created();
    fx.journal(journal::NextResvId{});
  }
  const std::string name = r.name;
  reservations_.put(std::move(r));
  fx.journal(journal::Reservation{name});
  mark_reserved_nodes(now);
  fx.notify(notice::Reschedule{});
  full_pass_needed_ = true;
  return proto::ReservationReply{.name = name}.to_json();
}

void StateMachine::advance_reservations(int64_t now, Effects& fx) {
  for (auto it = reservations_.begin(); it != reservations_.end();) {
    core::Reservation& r = it->second;
    if (r.end > now) {
      ++it;
      continue;
    }
    // Its members may not run past its end (ResvOverRun=0), FLEX ones aside.
    if (!(r.flags & core::kResvFlex))
      for (uint64_t id : jobs_.active_ids()) {
        core::Job& job = *jobs_.get(id);
        if (job.spec.reservation == r.name && job.state == core::JobState::Running &&
            !job.completing) {
          end_job(job, core::JobState::Timeout, "TimeLimit", now, true, fx);
          send_terminate(job, now, " DUE TO TIME LIMIT", fx);
        }
      }
    full_pass_needed_ = true;
    if (const int64_t period = r.period(); period > 0) {
      const int64_t steps = (now - r.end) / period + 1;
      r.start += steps * period;
      r.end += steps * period;
      fx.journal(journal::Reservation{r.name});
      ++it;
    } else {
      fx.journal(journal::ReservationGone{r.name});
      it = reservations_.erase(it);
    }
  }
  mark_reserved_nodes(now);
}

void StateMachine::mark_reserved_nodes(int64_t now) {
  // A reservation that has begun since the last look lets its members start: re-plan.
  if (reservations_.started_since_last_look(now)) full_pass_needed_ = true;
  for (auto& n : nodes_) n.reserved = n.maint = false;
  for (const auto& [name, r] : reservations_) {
    if (!r.active(now)) continue;
    for (const auto& node : r.nodes)
      if (core::Node* n = nodes_.get(node)) {
        n->reserved = true;
        if (r.flags & core::kResvMaint) n->maint = true;
      }
  }
}

json StateMachine::reservation_view(const core::Reservation& r, int64_t now) const {
  int cores = 0, cpus = 0;
  for (const auto& name : r.nodes)
    if (const core::Node* n = find_node(name)) {
      cores += n->sockets * n->cores_per_socket;
      cpus += n->cpus;
    }
  std::string users;
  for (const auto& u : r.users) {
    if (!users.empty()) users += ',';
    users += (r.users_denied ? "-" : "") + u;
  }
  std::string accounts;
  for (const auto& a : r.accounts) accounts += (accounts.empty() ? "" : ",") + a;
  return {{"name", r.name},
          {"start", r.start},
          {"end", r.end},
          {"nodes", core::compress_hostlist(r.nodes)},
          {"node_cnt", r.nodes.size()},
          {"core_cnt", cores},
          {"cpus", cpus},
          {"partition", r.partition},
          {"flags", core::format_resv_flags(r.flags)},
          {"users", users},
          {"accounts", accounts},
          {"state", r.active(now) ? "ACTIVE" : "INACTIVE"}};
}

}  // namespace drover::ctld
