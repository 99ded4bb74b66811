// Nodes that join and leave while the controller runs: scontrol create/delete NodeName=...
// and agents started as dynamic nodes (droverd -Z), bounded by MaxNodeCount.
#include <algorithm>
#include <sstream>

#include "core/error.hpp"
#include "core/hostlist.hpp"
#include "core/slurm_conf.hpp"
#include "core/text.hpp"
#include "ctld/state_machine.hpp"

namespace drover::ctld {

namespace {

// Keys of a node's shape: given any of them, the CPU count the agent found is not assumed
// (slurmd --conf overrides what slurmd -C reports the same way).
bool names_cpu_layout(const std::string& key) {
  for (const char* k : {"CPUs", "Procs", "Boards", "Sockets", "SocketsPerBoard", "CoresPerSocket",
                        "ThreadsPerCore"})
    if (core::iequals(key, k)) return true;
  return false;
}

}  // namespace

size_t StateMachine::max_node_count() const {
  // Below slurm.conf's own count it is ignored, as in Slurm.
  const int64_t set = config_.conf.get_int("MaxNodeCount", 0);
  return std::max<size_t>(config_.conf.nodes.size(), set > 0 ? static_cast<size_t>(set) : 0);
}

std::string StateMachine::parse_node_line(const std::string& line,
                                          std::vector<core::NodeConf>& out) const {
  try {
    core::SlurmConf c = core::parse_slurm_conf(line, "node");
    if (!c.warnings.empty() || c.nodes.empty() || !c.partitions.empty() || !c.options.empty())
      return "Failed to parse nodeline '" + line + "'";
    out = std::move(c.nodes);
  } catch (const core::ParseError&) {
    return "Failed to parse nodeline '" + line + "'";
  }
  return "";
}

bool StateMachine::partition_takes(const Partition& p, const core::Node& n) const {
  if (p.conf.all_nodes) return true;
  for (const auto& f : p.conf.node_set_features)
    if (std::find(n.features.begin(), n.features.end(), f) != n.features.end()) return true;
  return false;
}

NodeId StateMachine::add_dynamic_node(const core::NodeConf& nc, bool future, Effects& fx) {
  const NodeId id = nodes_.add(node_from_conf(nc), true);
  if (id == kNoNode) return id;
  nodes_.set_future(id, future);
  nodes_.set_cloud(id, nc.state == "CLOUD");
  nodes_.set_definition(id, node_definition(nc));
  const core::Node& n = *nodes_.get(id);
  for (auto& p : partitions_) {
    if (!partition_takes(p, n) || std::find(p.nodes.begin(), p.nodes.end(), id) != p.nodes.end())
      continue;
    // Nodes=ALL keeps Slurm's node order; a list keeps its own, the new node last.
    auto at =
        p.conf.all_nodes ? std::lower_bound(p.nodes.begin(), p.nodes.end(), id) : p.nodes.end();
    p.nodes.insert(at, id);
  }
  fx.journal(journal::Node{n.name});
  full_pass_needed_ = true;
  fx.notify(notice::Reschedule{});
  return id;
}

json StateMachine::node_create(const proto::NodeCreateRequest& req, const Caller& who,
                               Effects& fx) {
  if (!is_operator(who)) return error_reply(proto::Errno::kUserIdMissing);
  const std::string& line = req.line;
  std::vector<core::NodeConf> confs;
  if (std::string e = parse_node_line(line, confs); !e.empty()) {
    return proto::ErrorReply{.error = proto::Error(proto::Errno::kError), .detail = e}.to_json();
  }
  for (const auto& nc : confs) {
    if (nc.state != "FUTURE" && nc.state != "CLOUD") {
      return proto::ErrorReply{
          .error = proto::Error(proto::Errno::kInvalidNodeState),
          .detail = "Only State=FUTURE and State=CLOUD allowed for nodes created by scontrol"}
          .to_json();
    }
  }
  // Every node is checked before any is added: a refused request adds none.
  size_t count = nodes_.size();
  for (const auto& nc : confs) {
    if (nodes_.contains(nc.name)) {
      return proto::ErrorReply{.error = proto::Error(proto::Errno::kInvalidNodeName),
                               .detail = "Node '" + nc.name + "' already exists in the node table"}
          .to_json();
    }
    if (++count > max_node_count()) {
      return error_reply(proto::Errno::kError,
                         "Unable to add node '" + nc.name + "', node table is full");
    }
  }
  for (const auto& nc : confs) add_dynamic_node(nc, true, fx);
  return proto::Ack{}.to_json();
}

std::string StateMachine::node_definition(const core::NodeConf& nc) {
  std::string s = "NodeName=" + nc.name + " CPUs=" + std::to_string(nc.cpus) +
                  " Boards=" + std::to_string(nc.boards) +
                  " SocketsPerBoard=" + std::to_string(nc.sockets / std::max(1, nc.boards)) +
                  " CoresPerSocket=" + std::to_string(nc.cores_per_socket) +
                  " ThreadsPerCore=" + std::to_string(nc.threads_per_core) +
                  " RealMemory=" + std::to_string(nc.real_memory_mb);
  if (!nc.gres.empty()) s += " Gres=" + nc.gres;
  if (!nc.features.empty()) {
    std::string f;
    for (const auto& x : nc.features) f += (f.empty() ? "" : ",") + x;
    s += " Feature=" + f;
  }
  if (nc.weight != 1) s += " Weight=" + std::to_string(nc.weight);
  if (auto it = nc.other.find("TmpDisk"); it != nc.other.end()) s += " TmpDisk=" + it->second;
  // A powered-down node stays one across a restart until its agent registers.
  if (nc.state == "CLOUD") s += " State=CLOUD";
  return s;
}

json StateMachine::node_delete(const proto::NodeDeleteRequest& req, const Caller& who,
                               Effects& fx) {
  if (!is_operator(who)) return error_reply(proto::Errno::kUserIdMissing);
  std::vector<std::string> names;
  try {
    names = core::expand_hostlist(req.nodes);
  } catch (const std::exception&) {
    return error_reply(proto::Errno::kInvalidNodeName);
  }
  if (names.empty()) return error_reply(proto::Errno::kInvalidNodeName);
  std::vector<NodeId> ids;
  for (const auto& name : names) {
    const NodeId id = nodes_.find(name);
    if (id == kNoNode) return error_reply(proto::Errno::kInvalidNodeName);
    const core::Node& n = *nodes_.get(id);
    bool busy = n.running_jobs > 0 || n.alloc_cpus > 0;
    for (const auto& [rname, r] : reservations_)
      busy = busy || std::find(r.nodes.begin(), r.nodes.end(), name) != r.nodes.end();
    if (busy) return error_reply(proto::Errno::kNodesBusy);
    ids.push_back(id);
  }
  for (NodeId id : ids) {
    const std::string name = nodes_.get(id)->name;
    partitions_.remove_node(id);
    // Plans that counted on the node are made again (its id may go to another node).
    scheduler_->plans().forget_node(static_cast<uint32_t>(id));
    agent_instance_.erase(name);
    nodes_.remove(id);
    fx.journal(journal::NodeGone{name});
  }
  full_pass_needed_ = true;
  fx.notify(notice::Reschedule{});
  return proto::Ack{}.to_json();
}

std::optional<proto::Error> StateMachine::register_dynamic(const std::string& name,
                                                           const proto::Register& msg,
                                                           Effects& fx) {
  if (!msg.dynamic) return proto::Error(proto::Errno::kInvalidNodeName);
  // The agent's --conf, over the shape it found: slurm.conf's syntax for one node.
  const std::string& conf = msg.conf;
  std::string line = "NodeName=" + name;
  bool layout = false;
  std::istringstream words(conf);
  for (std::string item; words >> item;) {
    const std::string key = item.substr(0, item.find('='));
    if (core::iequals(key, "NodeName") || core::iequals(key, "Port"))
      return proto::Error(proto::Errno::kError,
                          "Failed to parse nodeline 'NodeName=" + name + " " + conf + "'");
    layout = layout || names_cpu_layout(key);
  }
  if (!layout && msg.cpus) line += " CPUs=" + std::to_string(*msg.cpus);
  if (msg.real_memory) line += " RealMemory=" + std::to_string(*msg.real_memory);
  if (!conf.empty()) line += " " + conf;
  std::vector<core::NodeConf> confs;
  if (std::string e = parse_node_line(line, confs); !e.empty())
    return proto::Error::from_message(e);  // the parser's
  if (confs.size() != 1)
    return proto::Error(proto::Errno::kError, "Failed to parse nodeline '" + line + "'");
  if (nodes_.size() + 1 > max_node_count())
    return proto::Error(proto::Errno::kError,
                        "Unable to add node '" + name + "', node table is full");
  add_dynamic_node(confs[0], false, fx);
  return std::nullopt;
}

void StateMachine::restore_dynamic_nodes(const std::map<std::string, json>& records) {
  // In the order they joined, so that they keep their places in Slurm's order.
  std::vector<std::pair<int64_t, const json*>> dynamic;
  for (const auto& [name, r] : records)
    if (r.is_object() && r.contains("definition"))
      dynamic.emplace_back(r.value("id", int64_t{0}), &r);
  std::sort(dynamic.begin(), dynamic.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  Effects ignored;
  for (const auto& [id, r] : dynamic) {
    std::vector<core::NodeConf> confs;
    const std::string line = r->value("definition", "");
    if (!parse_node_line(line, confs).empty() || confs.size() != 1) continue;
    add_dynamic_node(confs[0], r->value("future", false), ignored);
  }
}

std::vector<std::string> StateMachine::partitions_taking(const core::Node& n) const {
  std::vector<std::string> out;
  for (const auto& p : partitions_)
    if (partition_takes(p, n)) out.push_back(p.name);
  return out;
}

sched::ClusterView StateMachine::autoscale_view(int64_t now) const {
  sched::ClusterView v = view();
  for (const auto& [id, job] : jobs_) {
    if (job.state != core::JobState::Pending || job.completing || job.held != 0 ||
        !job.dependency.empty() || (job.eligible_time != core::kNoTime && job.eligible_time > now))
      continue;
    v.pending.push_back(&job);
    if (!job.array_pending.empty())
      v.start_limit[job.id] =
          static_cast<int>(std::min<uint64_t>(job.array_pending.size(), 1u << 16));
  }
  return v;
}

}  // namespace drover::ctld
