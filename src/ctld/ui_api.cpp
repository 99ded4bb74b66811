#include "ctld/ui_api.hpp"

#include <algorithm>
#include <cctype>
#include <functional>

#include "core/gres.hpp"
#include "core/hostlist.hpp"
#include "core/text.hpp"
#include "ctld/acct_record.hpp"
#include "ctld/usage.hpp"

namespace drover::ctld {

using nlohmann::json;

namespace {

bool private_data(const Config& config, std::string_view what) {
  for (const std::string& item :
       core::split_list(core::to_lower(config.conf.get("PrivateData", "")), ','))
    if (item == what) return true;
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
  const Config& c = machine.config();
  UiViewer v{who, machine.is_operator(who), private_data(c, "jobs")};
  v.private_usage = private_data(c, "usage");
  v.private_reservations = private_data(c, "reservations");
  return v;
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
  // The start a pending job expects from the plan (its StartTime), else when it started.
  auto start_of = [](const core::Job& j) { return j.start_time; };
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
                {"expected_start", pending ? j.start_time : int64_t{0}},
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
  j["expected_start"] = job->state == core::JobState::Pending ? job->start_time : int64_t{0};
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

namespace {

uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211ull; }
constexpr uint64_t kFnvBasis = 14695981039346656037ull;

// What the dashboard shows of a job that may move.
uint64_t job_digest(const core::Job& j) {
  uint64_t d = kFnvBasis;
  d = mix(d, static_cast<uint64_t>(j.state));
  d = mix(d, std::hash<std::string>{}(j.reason.str()));
  d = mix(d, j.priority);
  d = mix(d, static_cast<uint64_t>(j.start_time));
  d = mix(d, static_cast<uint64_t>(j.end_time));
  d = mix(d, j.alloc.size());
  d = mix(d, (j.completing ? 1u : 0u) | (static_cast<uint64_t>(j.held) << 1));
  d = mix(d, j.steps.size());
  d = mix(d, std::hash<std::string>{}(j.sched_nodes.str()));
  return d;
}

}  // namespace

bool UiChangeTracker::look_nodes(const StateMachine& m) {
  // Nodes: few enough to digest on every look.
  uint64_t nd = kFnvBasis;
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
  if (nd == node_digest_) return false;
  node_digest_ = nd;
  ++node_version_;
  return true;
}

void UiChangeTracker::prime(const StateMachine& m) {
  jobs_.clear();
  jobs_.reserve(m.jobs().size());
  for (const auto& [id, j] : m.jobs()) jobs_.emplace(id, std::make_pair(job_digest(j), j.uid));
  noted_.clear();
  look_nodes(m);
  primed_ = true;
}

void UiChangeTracker::reset() {
  primed_ = false;
  jobs_ = {};
  noted_ = {};
}

void UiChangeTracker::note(const std::set<uint64_t>& dirty, const std::set<uint64_t>& erased,
                           const std::vector<uint64_t>& plan_changed) {
  if (!primed_) return;
  noted_.insert(dirty.begin(), dirty.end());
  noted_.insert(erased.begin(), erased.end());
  noted_.insert(plan_changed.begin(), plan_changed.end());
}

void UiChangeTracker::note(const Effects& fx, const std::vector<uint64_t>& plan_changed) {
  if (!primed_) return;
  for (const JournalWrite& w : fx.journal_writes()) {
    if (const auto* j = std::get_if<journal::Job>(&w)) noted_.insert(j->id);
    if (const auto* g = std::get_if<journal::JobGone>(&w)) noted_.insert(g->id);
  }
  noted_.insert(plan_changed.begin(), plan_changed.end());
}

UiChangeTracker::Changes UiChangeTracker::look(const StateMachine& m) {
  Changes out;
  if (!primed_) prime(m);
  out.nodes = look_nodes(m);
  out.node_version = node_version_;
  for (uint64_t id : noted_) {
    const core::Job* j = m.find_job(id);
    auto old = jobs_.find(id);
    if (j == nullptr) {
      if (old != jobs_.end()) {
        out.jobs.emplace_back(id, old->second.second);
        jobs_.erase(old);
      }
      continue;
    }
    const uint64_t d = job_digest(*j);
    if (old != jobs_.end() && old->second.first == d) continue;
    out.jobs.emplace_back(id, j->uid);
    jobs_[id] = {d, j->uid};
  }
  noted_.clear();
  std::sort(out.jobs.begin(), out.jobs.end());
  return out;
}

}  // namespace drover::ctld

namespace drover::ctld {

namespace {

// A number parameter ("" leaves `out` as it is); "" or why not.
std::string number_param(const std::map<std::string, std::string>& params, const char* key,
                         int64_t& out) {
  auto it = params.find(key);
  if (it == params.end() || it->second.empty()) return "";
  const std::string& s = it->second;
  if (s.size() > 15 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::string(key) + " is not a number: " + s;
  out = std::stoll(s);
  return "";
}

std::string param(const std::map<std::string, std::string>& params, const char* key) {
  auto it = params.find(key);
  return it == params.end() ? std::string() : it->second;
}

// The states a job may end in (sacct's long names).
const std::vector<std::string>& ended_states() {
  static const std::vector<std::string> states = {
      "BOOT_FAIL", "CANCELLED", "COMPLETED",     "DEADLINE", "FAILED",
      "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "REQUEUED", "TIMEOUT"};
  return states;
}

int64_t record_gpus(const store::JobRecord& r) {
  const auto t = core::parse_tres_counts(r.alloc_tres.empty() ? r.req_tres : r.alloc_tres);
  auto it = t.find("gres/gpu");
  return it == t.end() ? 0 : it->second;
}

}  // namespace

std::string ui_parse_history_query(const std::map<std::string, std::string>& params,
                                   UiHistoryQuery& q, int64_t now) {
  q.user = param(params, "user");
  q.account = param(params, "account");
  q.partition = param(params, "partition");
  q.name = param(params, "name");
  for (const auto& s : core::split_list(core::to_upper(param(params, "state")), ',')) {
    if (s.empty() || s == "ALL") continue;
    if (std::find(ended_states().begin(), ended_states().end(), s) == ended_states().end())
      return "Invalid job state specified: " + s;
    q.states.push_back(s);
  }
  q.end = now + 60;
  q.start = now - 7 * 86400;
  int64_t offset = 0, limit = static_cast<int64_t>(q.limit);
  for (auto [key, out] :
       {std::pair{"start", &q.start}, {"end", &q.end}, {"offset", &offset}, {"limit", &limit}})
    if (auto e = number_param(params, key, *out); !e.empty()) return e;
  if (q.end <= q.start) return "the period's end is not after its start";
  if (q.end - q.start > kUiMaxHistoryDays * 86400)
    return "at most " + std::to_string(kUiMaxHistoryDays) +
           " days of history at a time: choose a shorter period (start= and end=)";
  q.offset = static_cast<size_t>(offset);
  q.limit = std::clamp<size_t>(static_cast<size_t>(limit), 1, kUiMaxPage);
  return "";
}

store::JobFilter ui_history_filter(const UiHistoryQuery& q, const UiViewer& v) {
  store::JobFilter f;
  f.window_start = q.start;
  f.window_end = q.end;
  f.include_ineligible = true;  // cancelled while held: never eligible, still ended
  f.states = q.states.empty() ? ended_states() : q.states;
  if (!q.partition.empty()) f.partitions = {q.partition};
  if (!q.account.empty()) f.accounts = {q.account};
  if (!v.is_operator && v.private_jobs) f.uids = {v.who.uid};
  return f;
}

std::vector<std::pair<int64_t, int64_t>> ui_slices(int64_t start, int64_t end, int64_t len) {
  std::vector<std::pair<int64_t, int64_t>> out;
  len = std::max<int64_t>(len, 1);
  for (int64_t from = start; from < end; from += len)
    out.emplace_back(from, std::min(end, from + len));
  return out;
}

std::vector<std::pair<int64_t, int64_t>> UiHistoryScan::slices() const {
  auto s = ui_slices(q_.start, q_.end, kUiScanSlice);
  std::reverse(s.begin(), s.end());
  return s;
}

store::JobFilter UiHistoryScan::filter(int64_t from, int64_t to) const {
  store::JobFilter f = ui_history_filter(q_, v_);
  f.window_start = from;
  f.window_end = to;
  f.ended = {from, to};
  // The states are checked here (add) instead: the store would otherwise read by the state's
  // index, every ended job, for each day, rather than by the end time's.
  f.states.clear();
  return f;
}

void UiHistoryScan::add(const std::vector<store::JobRecord>& records, int64_t from, int64_t to) {
  std::vector<const store::JobRecord*> match;
  for (const auto& r : records) {
    if (r.end_time <= 0 || r.end_time < from || r.end_time >= to) continue;
    const auto& states = q_.states.empty() ? ended_states() : q_.states;
    if (std::find(states.begin(), states.end(), r.state) == states.end()) continue;
    if (!v_.may_see(r)) continue;
    if (!q_.user.empty() && r.user != q_.user) continue;
    if (!q_.name.empty() && r.name.find(q_.name) == std::string::npos) continue;
    match.push_back(&r);
  }
  std::stable_sort(match.begin(), match.end(), [](const auto* a, const auto* b) {
    return a->end_time != b->end_time ? a->end_time > b->end_time : a->job_id > b->job_id;
  });
  for (const store::JobRecord* rp : match) {
    const size_t i = total_++;
    if (i < q_.offset || i >= q_.offset + q_.limit) continue;
    const store::JobRecord& r = *rp;
    const std::string id = r.array_job_id == 0 ? std::to_string(r.job_id)
                                               : std::to_string(r.array_job_id) + "_" +
                                                     std::to_string(r.array_task_id);
    rows_.push_back({{"job_id", r.job_id},
                     {"id", id},
                     {"name", r.name},
                     {"user", r.user},
                     {"account", r.account},
                     {"partition", r.partition},
                     {"state", r.state},
                     {"submit_time", r.submit_time},
                     {"start_time", r.start_time},
                     {"end_time", r.end_time},
                     {"elapsed", r.start_time > 0 ? std::max<int64_t>(0, r.end_time - r.start_time)
                                                  : int64_t{0}},
                     {"exit_code", r.exit_code},
                     {"signal", r.exit_signal},
                     {"time_limit_min", r.time_limit_min},
                     {"nodes", r.nodelist},
                     {"cpus", r.alloc_cpus > 0 ? r.alloc_cpus : r.req_cpus},
                     {"gpus", record_gpus(r)}});
  }
}

json UiHistoryScan::page() const {
  return {{"total", total_},   {"offset", q_.offset}, {"limit", q_.limit},
          {"start", q_.start}, {"end", q_.end},       {"jobs", rows_}};
}

json ui_history_page(const std::vector<store::JobRecord>& records, const UiHistoryQuery& q,
                     const UiViewer& v) {
  UiHistoryScan scan(q, v);
  scan.add(records, q.start, q.end);
  return scan.page();
}

std::optional<json> ui_job_accounting(const std::vector<store::JobRecord>& records, uint64_t id,
                                      const UiViewer& v) {
  for (const auto& r : records) {
    if (r.job_id != id) continue;
    if (!v.may_see(r)) return std::nullopt;
    json j = acct_record_json(r);
    j["gpus"] = record_gpus(r);
    j["elapsed"] =
        r.start_time > 0 && r.end_time > 0 ? std::max<int64_t>(0, r.end_time - r.start_time) : 0;
    return j;
  }
  return std::nullopt;
}

std::string ui_parse_usage_query(const std::map<std::string, std::string>& params, UiUsageQuery& q,
                                 int64_t now) {
  const std::string step = param(params, "step");
  if (step == "hour")
    q.step = 3600;
  else if (step.empty() || step == "day")
    q.step = 86400;
  else
    return "step is hour or day";
  // Whole buckets, ending with the one in progress.
  q.end = (now / q.step + 1) * q.step;
  q.start = q.end - 30 * q.step;
  for (auto [key, out] : {std::pair{"start", &q.start}, {"end", &q.end}})
    if (auto e = number_param(params, key, *out); !e.empty()) return e;
  if (q.end <= q.start) return "the period's end is not after its start";
  if (static_cast<size_t>((q.end - q.start + q.step - 1) / q.step) > kUiMaxUsageBuckets)
    return "at most " + std::to_string(kUiMaxUsageBuckets) + " " + (step.empty() ? "day" : step) +
           "s at a time";
  return "";
}

UiUsageScan::UiUsageScan(UiUsageQuery q, UiViewer v, int64_t now)
    : q_(q),
      v_(std::move(v)),
      now_(now),
      buckets_(static_cast<size_t>((q.end - q.start + q.step - 1) / q.step)) {}

std::vector<std::pair<int64_t, int64_t>> UiUsageScan::slices() const {
  // Whole buckets a slice, at least a day's worth.
  const int64_t per = std::max<int64_t>(1, kUiScanSlice / q_.step);
  return ui_slices(q_.start, q_.end, per * q_.step);
}

store::JobFilter UiUsageScan::filter(int64_t from, int64_t to) const {
  store::JobFilter f;
  f.window_start = from;
  f.window_end = to;
  if (!v_.is_operator && v_.private_usage) f.uids = {v_.who.uid};
  return f;
}

void UiUsageScan::add(const std::vector<store::JobRecord>& records, int64_t lo, int64_t hi) {
  lo = std::max(lo, q_.start);
  hi = std::min(hi, q_.end);
  for (const auto& r : records) {
    if (r.start_time <= 0) continue;
    if (!v_.is_operator && v_.private_usage && r.uid != v_.who.uid) continue;
    const core::UsageJob u = usage_job(r);
    const int64_t from = std::max(r.start_time, lo);
    const int64_t to = std::min(r.end_time > 0 ? r.end_time : now_, hi);
    if (to <= from) continue;
    auto count = [&](const char* tres) {
      auto it = u.allocated.find(tres);
      return it == u.allocated.end() ? int64_t{0} : it->second;
    };
    const int64_t cpus = count("cpu"), gpus = count("gres/gpu");
    Series& s = by_[{u.account, u.user}];
    if (s.cpu.empty()) {
      s.cpu.assign(buckets_, 0);
      s.gpu.assign(buckets_, 0);
    }
    for (auto b = static_cast<size_t>((from - q_.start) / q_.step); b < buckets_; ++b) {
      const int64_t bs = q_.start + static_cast<int64_t>(b) * q_.step;
      const int64_t secs = std::min(to, bs + q_.step) - std::max(from, bs);
      if (secs <= 0) break;
      s.cpu[b] += secs * cpus;
      s.gpu[b] += secs * gpus;
      s.cpu_total += secs * cpus;
      s.gpu_total += secs * gpus;
    }
  }
}

json UiUsageScan::result() const {
  json buckets = json::array();
  for (size_t b = 0; b < buckets_; ++b)
    buckets.push_back(q_.start + static_cast<int64_t>(b) * q_.step);
  json series = json::array();
  for (const auto& [key, s] : by_)
    series.push_back({{"account", key.first},
                      {"user", key.second},
                      {"cpu_s", s.cpu},
                      {"gpu_s", s.gpu},
                      {"cpu_total_s", s.cpu_total},
                      {"gpu_total_s", s.gpu_total}});
  return {{"start", q_.start},
          {"end", q_.end},
          {"step", q_.step},
          {"now", now_},
          {"buckets", std::move(buckets)},
          {"series", std::move(series)}};
}

json ui_usage(const std::vector<store::JobRecord>& records, const UiUsageQuery& q,
              const UiViewer& v, int64_t now) {
  UiUsageScan scan(q, v, now);
  scan.add(records, q.start, q.end);
  return scan.result();
}

json ui_fairshare(const StateMachine& m, const UiViewer& v, int64_t now) {
  json reply = m.query(proto::QueryRequest{.what = "shares"}, now);
  json rows = json::array();
  for (auto& r : reply.value("rows", json::array())) {
    const std::string user = r.value("user", "");
    if (!v.is_operator && v.private_usage && !user.empty() && user != v.who.user) continue;
    r.erase("grp_tres_raw");
    r.erase("tres_run_mins");
    rows.push_back(std::move(r));
  }
  return {{"priority_type", reply.value("priority_type", "")},
          {"fair_tree", reply.value("fair_tree", false)},
          {"rows", std::move(rows)}};
}

json ui_reservations(const StateMachine& m, const UiViewer& v, int64_t now) {
  json list = json::array();
  std::vector<std::string> my_accounts;
  if (const auto& data = m.acct_data())
    for (const auto& a : data->assocs)
      if (a.user == v.who.user) my_accounts.push_back(a.account);
  for (auto& r : m.query(proto::QueryRequest{.what = "reservations"}, now)
                     .value("reservations", json::array())) {
    if (!v.is_operator && v.private_reservations) {
      bool named = false;
      for (const auto& u : core::split_list(r.value("users", ""), ','))
        named = named || u == v.who.user;
      for (const auto& a : core::split_list(r.value("accounts", ""), ','))
        named = named || std::find(my_accounts.begin(), my_accounts.end(), a) != my_accounts.end();
      if (!named) continue;
    }
    list.push_back(std::move(r));
  }
  return {{"now", now}, {"reservations", std::move(list)}};
}

std::optional<UiOutputFile> ui_output_file(const StateMachine& m, uint64_t id, bool stderr_stream,
                                           const UiViewer& v) {
  const core::Job* job = m.find_job(id);
  if (job == nullptr || !v.may_see(*job) || !v.may_read_output(job->uid)) return std::nullopt;
  if (job->spec.interactive) return std::nullopt;
  UiOutputFile f;
  f.path = job_output_path(*job, stderr_stream);
  f.uid = job->uid;
  f.started = job->state != core::JobState::Pending && job->start_time > 0;
  if (!job->alloc.empty()) f.node = job->alloc.front().node;
  return f;
}

std::string ui_output_missing(const UiOutputFile& f) {
  if (!f.started) return "The job has not started: its output file does not exist yet.";
  const std::string node = f.node.empty() ? "its node" : f.node;
  return "The controller does not see " + f.path + ": the job wrote it on " + node +
         "'s own disk, not on a file system the controller shares (such as home or scratch). "
         "The dashboard shows output from shared file systems only; read this one on " +
         node + ", or send the job's output to a shared directory (--output).";
}

}  // namespace drover::ctld
