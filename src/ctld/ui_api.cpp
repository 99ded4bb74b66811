#include "ctld/ui_api.hpp"

#include <algorithm>
#include <cctype>
#include <functional>

#include "core/gres.hpp"
#include "core/hostlist.hpp"
#include "core/text.hpp"

namespace drover::ctld {

using nlohmann::json;

namespace {

bool private_jobs(const Config& config) {
  for (const std::string& item :
       core::split_list(core::to_lower(config.conf.get("PrivateData", "")), ','))
    if (item == "jobs") return true;
  return false;
}

std::string display_id(const core::Job& job) {
  if (job.array_job_id == 0) return std::to_string(job.id);
  if (job.array_task_id == core::kNoArrayTask)
    return std::to_string(job.array_job_id) + "_[" + job.array_pending.format_ranges() + "]";
  return std::to_string(job.array_job_id) + "_" + std::to_string(job.array_task_id);
}

// The GPUs a job asks for, all per-node/per-task forms counted per job where they can be.
struct GpuAsk {
  int64_t count = 0;
  std::string type;
};
GpuAsk gpu_ask(const core::Job& job) {
  GpuAsk a;
  auto take = [&](const core::GresCount& g, int64_t times) {
    if (g.name != "gpu") return;
    a.count += g.count * times;
    if (a.type.empty()) a.type = g.type;
  };
  try {
    const int nodes = std::max(1, job.spec.nodes_min);
    if (!job.spec.gpus.empty()) take(core::parse_gpu_count(job.spec.gpus), 1);
    if (!job.spec.gpus_per_node.empty()) take(core::parse_gpu_count(job.spec.gpus_per_node), nodes);
    if (!job.spec.gpus_per_task.empty())
      take(core::parse_gpu_count(job.spec.gpus_per_task), std::max(1, job.spec.ntasks));
    if (!job.spec.gres.empty())
      for (const auto& g : core::parse_gres_list(job.spec.gres)) take(g, nodes);
  } catch (const std::exception&) {
    // Validated at submission; a spec that no longer parses just shows no GPUs.
  }
  return a;
}

int64_t job_gpus(const core::Job& job) {
  if (job.alloc.empty()) return gpu_ask(job).count;
  int64_t n = 0;
  for (const auto& a : job.alloc)
    for (const auto& g : a.gres) n += g.name == "gpu" ? g.count : 0;
  return n;
}

int job_cpus(const core::Job& job) {
  if (!job.alloc.empty()) return job.alloc_cpus();
  return std::max(1, job.spec.ntasks) * std::max(1, job.spec.cpus_per_task);
}

// "AssocGrpCpuLimit" -> "group CPU" (the words of a limit's name, without its prefix).
std::string limit_words(std::string_view code) {
  static const std::map<std::string, std::string> words = {
      {"Grp", "group"},  {"Max", "maximum"},   {"Min", "minimum"},     {"Cpu", "CPU"},
      {"Mem", "memory"}, {"GRES", "GPU/GRES"}, {"BB", "burst buffer"}, {"Per", "per"},
      {"Wall", "wall"},  {"Duration", "time"}, {"Submit", "submitted"}};
  std::vector<std::string> parts;
  std::string cur;
  for (size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    const bool upper = std::isupper(static_cast<unsigned char>(c)) != 0;
    // A new word at an upper-case letter after a lower-case one ("GrpCpu"), runs of capitals
    // ("GRES", "BB") stay one word.
    if (upper && !cur.empty() && std::islower(static_cast<unsigned char>(cur.back())) != 0) {
      parts.push_back(cur);
      cur.clear();
    }
    cur += c;
  }
  if (!cur.empty()) parts.push_back(cur);
  std::string out;
  for (const auto& p : parts) {
    if (p == "Limit") continue;
    auto it = words.find(p);
    const std::string w = it != words.end() ? it->second : core::to_lower(p);
    out += (out.empty() ? "" : " ") + w;
  }
  return out;
}

}  // namespace

UiViewer ui_viewer(const StateMachine& machine, const Caller& who) {
  return {who, machine.is_operator(who), private_jobs(machine.config())};
}

std::string ui_reason_text(const core::Job& job) {
  if (job.state != core::JobState::Pending) return "";
  const std::string& r = job.reason.str();
  auto resources = [&] {
    const GpuAsk g = gpu_ask(job);
    std::string what;
    if (g.count > 0)
      what = std::to_string(g.count) + (g.count == 1 ? " GPU" : " GPUs") +
             (g.type.empty() ? "" : " of type " + g.type) + " and ";
    const int cpus = job_cpus(job);
    what += std::to_string(cpus) + (cpus == 1 ? " CPU" : " CPUs");
    if (job.spec.nodes_min > 1) what += " on " + std::to_string(job.spec.nodes_min) + " nodes";
    return what;
  };
  if (r == "Resources") return "waiting for " + resources() + " to be free";
  if (r == "Priority") return "waiting behind higher-priority jobs for " + resources();
  if (r == "Dependency") return "waiting for the jobs it depends on";
  if (r == "DependencyNeverSatisfied") return "its dependency can never be satisfied";
  if (r == "JobHeldUser") return "held by its owner; release it to let it run";
  if (r == "JobHeldAdmin") return "held by an administrator";
  if (r == "job_requeued_in_held_state") return "requeued and held; release it to let it run";
  if (r == "BeginTime") return "not allowed to start before its begin time";
  if (r == "DeadLine") return "its deadline can no longer be met";
  if (r == "JobArrayTaskLimit") return "its array already runs as many tasks as it allows";
  if (r == "PartitionDown") return "its partition is down";
  if (r == "PartitionInactive") return "its partition is inactive";
  if (r == "Reservation") return "waiting for its reservation to begin";
  if (r == "ReqNodeNotAvail") return "the nodes it needs are down, drained or reserved";
  if (r == "None") return "not looked at by the scheduler yet";
  if (r.rfind("Assoc", 0) == 0)
    return "held back by its account's " + limit_words(std::string_view(r).substr(5)) + " limit";
  if (r.rfind("QOS", 0) == 0)
    return "held back by its QOS's " + limit_words(std::string_view(r).substr(3)) + " limit";
  return r;
}

std::string ui_parse_job_query(const std::map<std::string, std::string>& params, UiJobQuery& q) {
  auto get = [&](const char* k) {
    auto it = params.find(k);
    return it == params.end() ? std::string() : it->second;
  };
  q.user = get("user");
  q.account = get("account");
  q.partition = get("partition");
  q.name = get("name");
  for (const auto& s : core::split_list(core::to_upper(get("state")), ','))
    if (!s.empty()) q.states.push_back(s);
  if (std::find(q.states.begin(), q.states.end(), "ALL") != q.states.end()) q.states.clear();
  if (const std::string s = get("sort"); !s.empty()) q.sort = s;
  static const char* const kSorts[] = {"id",         "name",       "user",     "account",
                                       "partition",  "state",      "priority", "submit_time",
                                       "start_time", "time_limit", "cpus",     "gpus"};
  if (std::find(std::begin(kSorts), std::end(kSorts), q.sort) == std::end(kSorts))
    return "Unknown sort key " + q.sort;
  const std::string order = get("order");
  if (!order.empty() && order != "asc" && order != "desc") return "order is asc or desc";
  q.descending = order == "desc";
  auto number = [&](const char* k, size_t& out) -> std::string {
    const std::string s = get(k);
    if (s.empty()) return "";
    if (s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos)
      return std::string(k) + " is not a number: " + s;
    out = std::stoull(s);
    return "";
  };
  if (auto e = number("offset", q.offset); !e.empty()) return e;
  if (auto e = number("limit", q.limit); !e.empty()) return e;
  q.limit = std::clamp<size_t>(q.limit, 1, kUiMaxPage);
  return "";
}

json ui_job_page(const StateMachine& m, const UiJobQuery& q, const UiViewer& v, int64_t now,
                 int64_t version) {
  const auto& jobs = m.jobs();
  std::vector<const core::Job*> match;
  match.reserve(jobs.size());
  for (const auto& [id, job] : jobs) {
    if (!v.may_see(job)) continue;
    if (!q.user.empty() && job.user.str() != q.user) continue;
    if (!q.account.empty() && job.spec.account.str() != q.account) continue;
    if (!q.partition.empty() && job.partition.str() != q.partition) continue;
    if (!q.name.empty() && job.spec.name.str().find(q.name) == std::string::npos) continue;
    if (!q.states.empty()) {
      const std::string_view st = core::job_state_name(job.state);
      const bool completing =
          job.completing &&
          q.states.end() != std::find(q.states.begin(), q.states.end(), "COMPLETING");
      if (!completing && std::find(q.states.begin(), q.states.end(), st) == q.states.end())
        continue;
    }
    match.push_back(&job);
  }
  // The start a pending job expects from the plan, else when it started.
  auto start_of = [](const core::Job& j) {
    return j.state == core::JobState::Pending ? j.sched_start : j.start_time;
  };
  using Less = std::function<bool(const core::Job*, const core::Job*)>;
  auto by = [](auto key) -> Less {
    return [key](const core::Job* a, const core::Job* b) {
      const auto& ka = key(*a);
      const auto& kb = key(*b);
      return ka != kb ? ka < kb : a->id < b->id;
    };
  };
  Less less;
  const std::string& s = q.sort;
  if (s == "name")
    less = by([](const core::Job& j) -> const std::string& { return j.spec.name.str(); });
  else if (s == "user")
    less = by([](const core::Job& j) -> const std::string& { return j.user.str(); });
  else if (s == "account")
    less = by([](const core::Job& j) -> const std::string& { return j.spec.account.str(); });
  else if (s == "partition")
    less = by([](const core::Job& j) -> const std::string& { return j.partition.str(); });
  else if (s == "state")
    less = by([](const core::Job& j) { return core::job_state_name(j.state); });
  else if (s == "priority")
    less = by([](const core::Job& j) { return j.priority; });
  else if (s == "submit_time")
    less = by([](const core::Job& j) { return j.submit_time; });
  else if (s == "start_time")
    less = by(start_of);
  else if (s == "time_limit")
    less = by([](const core::Job& j) { return j.time_limit_min; });
  else if (s == "cpus")
    less = by(job_cpus);
  else if (s == "gpus")
    less = by(job_gpus);
  else
    less = [](const core::Job* a, const core::Job* b) { return a->id < b->id; };
  Less order = q.descending
                   ? Less([less](const core::Job* a, const core::Job* b) { return less(b, a); })
                   : less;
  // Only the rows up to the page's end are put in order.
  const size_t end = std::min(match.size(), q.offset + q.limit);
  if (q.offset < match.size()) {
    if (!(s == "id" && !q.descending))  // the map's order already
      std::partial_sort(match.begin(), match.begin() + static_cast<std::ptrdiff_t>(end),
                        match.end(), order);
  }
  json rows = json::array();
  for (size_t i = q.offset; i < end; ++i) {
    const core::Job& j = *match[i];
    const bool pending = j.state == core::JobState::Pending;
    json row = {{"job_id", j.id},
                {"id", display_id(j)},
                {"name", j.spec.name.str()},
                {"user", j.user.str()},
                {"account", j.spec.account.str()},
                {"partition", j.partition.str()},
                {"state", core::job_state_name(j.state)},
                {"completing", j.completing},
                {"reason", j.reason.str()},
                {"reason_text", ui_reason_text(j)},
                {"priority", j.priority},
                {"submit_time", j.submit_time},
                {"start_time", j.start_time},
                {"end_time", j.end_time},
                {"expected_start", pending ? j.sched_start : int64_t{0}},
                {"time_limit_min", j.time_limit_min},
                {"nodes", pending ? j.sched_nodes.str() : core::compress_hostlist(j.node_names())},
                {"cpus", job_cpus(j)},
                {"gpus", job_gpus(j)},
                {"held", j.held}};
    rows.push_back(std::move(row));
  }
  return {{"total", match.size()},   {"offset", q.offset}, {"limit", q.limit},
          {"jobs", std::move(rows)}, {"now", now},         {"version", version}};
}

std::optional<json> ui_job_detail(const StateMachine& m, uint64_t id, const UiViewer& v,
                                  int64_t now) {
  const core::Job* job = m.find_job(id);
  if (job == nullptr || !v.may_see(*job)) return std::nullopt;
  json view = m.query(proto::QueryRequest{.what = "jobs", .job_id = id, .detail = true}, now);
  json j;
  for (const auto& one : view.value("jobs", json::array()))
    if (one.value("id", uint64_t{0}) == id) j = one;
  if (!j.is_object()) return std::nullopt;
  // Never the script or the environment, whoever asks: they may hold secrets, and the
  // dashboard has no need of them.
  for (const char* key : {"script", "environment", "argv"}) {
    j.erase(key);
    if (j.contains("spec")) j["spec"].erase(key);
  }
  j["display_id"] = display_id(*job);
  j["reason_text"] = ui_reason_text(*job);
  j["expected_start"] = job->state == core::JobState::Pending ? job->sched_start : int64_t{0};
  j["cpus"] = job_cpus(*job);
  j["gpus"] = job_gpus(*job);
  const bool owner = v.is_operator || job->uid == v.who.uid;
  j["may_act"] = owner;
  j["may_release_admin_hold"] = v.is_operator;
  return j;
}

json ui_nodes(const StateMachine& m) {
  std::map<std::string, json> parts_of;
  json partitions = json::array();
  for (const auto& p :
       m.query(proto::QueryRequest{.what = "partitions"}, 0).value("partitions", json::array())) {
    partitions.push_back({{"name", p.value("name", "")},
                          {"state", p.value("state", "")},
                          {"total_nodes", p.value("total_nodes", 0)},
                          {"total_cpus", p.value("total_cpus", 0)}});
    for (const auto& n : p.value("nodes", json::array()))
      parts_of[n.get<std::string>()].push_back(p.value("name", ""));
  }
  json nodes = json::array();
  const NodeTable& table = m.nodes();
  for (auto it = table.begin(); it != table.end(); ++it) {
    if (table.future(it.id())) continue;
    const core::Node& n = *it;
    int64_t gpus = 0, gpus_used = 0;
    for (const auto& g : n.gres_total) gpus += g.name == "gpu" ? g.count : 0;
    for (const auto& g : n.gres_used) gpus_used += g.name == "gpu" ? g.count : 0;
    auto p = parts_of.find(n.name);
    nodes.push_back({{"name", n.name},
                     {"state", n.state_long(true)},
                     {"state_short", n.state_short()},
                     {"reason", n.reason},
                     {"reason_time", n.reason_time},
                     {"cpus", n.cpus},
                     {"alloc_cpus", n.alloc_cpus},
                     {"memory_mb", n.real_memory_mb},
                     {"alloc_memory_mb", n.alloc_mem_mb},
                     {"gpus", gpus},
                     {"alloc_gpus", gpus_used},
                     {"gres", n.gres},
                     {"features", n.features},
                     {"cpu_load", n.cpu_load},
                     {"running_jobs", n.running_jobs},
                     {"partitions", p == parts_of.end() ? json::array() : p->second}});
  }
  return {{"nodes", std::move(nodes)}, {"partitions", std::move(partitions)}};
}

UiChangeTracker::Changes UiChangeTracker::look(const StateMachine& m, int64_t job_version) {
  Changes out;
  auto mix = [](uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211ull; };
  // Nodes: few enough to digest on every look.
  uint64_t nd = 14695981039346656037ull;
  const NodeTable& table = m.nodes();
  for (auto it = table.begin(); it != table.end(); ++it) {
    const core::Node& n = *it;
    nd = mix(nd, std::hash<std::string>{}(n.name));
    nd = mix(nd, (n.registered ? 1u : 0u) | (n.down ? 2u : 0u) | (n.drain ? 4u : 0u) |
                     (n.not_responding ? 8u : 0u) | (n.reserved ? 16u : 0u));
    nd = mix(nd, static_cast<uint64_t>(n.alloc_cpus));
    nd = mix(nd, static_cast<uint64_t>(n.alloc_mem_mb));
    nd = mix(nd, static_cast<uint64_t>(n.running_jobs));
    nd = mix(nd, std::hash<std::string>{}(n.reason));
  }
  if (nd != node_digest_) {
    node_digest_ = nd;
    ++node_version_;
    out.nodes = primed_;
  }
  out.node_version = node_version_;
  if (job_version == job_version_ && primed_) return out;
  job_version_ = job_version;
  std::unordered_map<uint64_t, std::pair<uint64_t, uint32_t>> next;
  next.reserve(jobs_.size() + 16);
  for (const auto& [id, j] : m.jobs()) {
    uint64_t d = 14695981039346656037ull;
    d = mix(d, static_cast<uint64_t>(j.state));
    d = mix(d, std::hash<std::string>{}(j.reason.str()));
    d = mix(d, j.priority);
    d = mix(d, static_cast<uint64_t>(j.sched_start));
    d = mix(d, static_cast<uint64_t>(j.start_time));
    d = mix(d, static_cast<uint64_t>(j.end_time));
    d = mix(d, j.alloc.size());
    d = mix(d, (j.completing ? 1u : 0u) | (static_cast<uint64_t>(j.held) << 1));
    d = mix(d, j.steps.size());
    d = mix(d, std::hash<std::string>{}(j.sched_nodes.str()));
    auto old = jobs_.find(id);
    if (primed_ && (old == jobs_.end() || old->second.first != d)) out.jobs.emplace_back(id, j.uid);
    next.emplace(id, std::make_pair(d, j.uid));
  }
  if (primed_)
    for (const auto& [id, e] : jobs_)
      if (!next.contains(id)) out.jobs.emplace_back(id, e.second);
  jobs_ = std::move(next);
  primed_ = true;
  return out;
}

}  // namespace drover::ctld
