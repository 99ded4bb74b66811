#include "k8s/operator/reconcile.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>

namespace drover::k8s::op {
namespace {

using nlohmann::json;

constexpr int64_t kT0 = 1'800'000'000;

json container(const json& requests = json::object()) {
  return {
      {"name", "droverd"}, {"image", "drover/agent:1"}, {"resources", {{"requests", requests}}}};
}

json nodeset_json(int replicas, json extra = json::object()) {
  json ns = {
      {"apiVersion", "drover.io/v1alpha1"},
      {"kind", "NodeSet"},
      {"metadata",
       {{"name", "gpu"},
        {"namespace", "hpc"},
        {"uid", "ns-uid"},
        {"generation", 1},
        {"finalizers", {kFinalizer}}}},
      {"spec",
       {{"replicas", replicas},
        {"partitions", {"batch"}},
        {"template",
         {{"metadata", {{"labels", {{"app", "agent"}}}}},
          {"spec",
           {{"containers",
             {container({{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", "2"}})}}}}}}}}};
  ns["spec"].update(extra);
  return ns;
}

template <class T>
std::vector<T> of(const std::vector<Action>& as) {
  std::vector<T> out;
  for (const Action& a : as)
    if (auto* x = std::get_if<T>(&a)) out.push_back(*x);
  return out;
}

std::string dump(const std::vector<Action>& as) {
  std::string s;
  for (const Action& a : as) s += describe(a) + "\n";
  return s;
}

// A stand-in for the API server, the kubelet and the controller: applies actions the way they
// would take effect, so tests can drive the reconciler to its fixed point.
struct Sim {
  json nodeset;
  Observed obs;
  int64_t now = kT0;
  int uid_seq = 0;
  std::vector<EmitEvent> events;

  explicit Sim(json ns) : nodeset(std::move(ns)) {
    obs.k8s_nodes["kn1"] = {{"metadata", {{"name", "kn1"}, {"labels", {{"gpu.model", "h100"}}}}},
                            {"spec", json::object()}};
    obs.k8s_nodes["kn2"] = {{"metadata", {{"name", "kn2"}, {"labels", {{"gpu.model", "a100"}}}}},
                            {"spec", json::object()}};
  }

  std::vector<Action> pass() { return reconcile(parse_nodeset(nodeset), obs, now); }

  json* pod(const std::string& name) {
    for (json& p : obs.pods)
      if (p["metadata"]["name"] == name) return &p;
    return nullptr;
  }
  DroverNode& node(const std::string& name) { return obs.drover.nodes.at(name); }

  void apply(const std::vector<Action>& as) {
    for (const Action& a : as) {
      if (auto* x = std::get_if<CreatePod>(&a)) {
        json p = x->pod;
        p["metadata"]["uid"] = "uid-" + std::to_string(++uid_seq);
        p["status"] = {{"phase", "Pending"}};
        obs.pods.push_back(p);
      } else if (auto* x = std::get_if<DeletePod>(&a)) {
        std::erase_if(obs.pods, [&](const json& p) {
          return p["metadata"]["name"] == x->name && p["metadata"]["uid"] == x->uid;
        });
      } else if (auto* x = std::get_if<PatchPodLabels>(&a)) {
        for (const char* part : {"labels", "annotations"}) {
          json& l = (*pod(x->pod))["metadata"][part];
          if (l.is_null()) l = json::object();
          for (auto& [k, v] : (part[0] == 'l' ? x->labels : x->annotations).items()) {
            if (v.is_null())
              l.erase(k);
            else
              l[k] = v;
          }
        }
      } else if (auto* x = std::get_if<PatchPodConditions>(&a)) {
        json& st = (*pod(x->pod))["status"];
        if (!st.contains("conditions")) st["conditions"] = json::array();
        for (const json& c : x->conditions) {
          json kept = json::array();
          for (const json& o : st["conditions"])
            if (o["type"] != c["type"]) kept.push_back(o);
          kept.push_back(c);
          st["conditions"] = kept;
        }
      } else if (auto* x = std::get_if<DrainNode>(&a)) {
        DroverNode& n = node(x->node);
        n.drain = true;
        n.reason = x->reason;
        n.reason_by = ReasonBy::Operator;
        n.reason_since = now;
      } else if (auto* x = std::get_if<ResumeNode>(&a)) {
        DroverNode& n = node(x->node);
        n.drain = false;
        n.reason.clear();
        n.reason_by = ReasonBy::None;
      } else if (auto* x = std::get_if<DownNode>(&a)) {
        DroverNode& n = node(x->node);
        n.state = NodeState::Down;
        n.reason = x->reason;
        n.reason_by = ReasonBy::Operator;
        n.jobs.clear();  // requeued or failed, as for a failed node
      } else if (auto* x = std::get_if<DeleteDroverNode>(&a)) {
        obs.drover.nodes.erase(x->node);
      } else if (auto* x = std::get_if<SetNodeFeatures>(&a)) {
        node(x->node).features = x->features;
      } else if (auto* x = std::get_if<RequeueJob>(&a)) {
        end_job(x->job);
      } else if (auto* x = std::get_if<CancelJob>(&a)) {
        end_job(x->job);
      } else if (auto* x = std::get_if<UpdateStatus>(&a)) {
        nodeset["status"] = x->status;
      } else if (auto* x = std::get_if<SetFinalizer>(&a)) {
        json& f = nodeset["metadata"]["finalizers"];
        if (x->present)
          f.push_back(kFinalizer);
        else {
          json kept = json::array();
          for (const json& e : f)
            if (e != kFinalizer) kept.push_back(e);
          f = kept;
        }
      } else if (auto* x = std::get_if<ApplyPDB>(&a)) {
        obs.pdb = x->pdb;
      } else if (std::get_if<DeletePDB>(&a)) {
        obs.pdb.reset();
      } else if (auto* x = std::get_if<EmitEvent>(&a)) {
        events.push_back(*x);
      }
    }
  }
  void end_job(uint32_t id) {
    for (auto& [name, n] : obs.drover.nodes) {
      std::erase_if(n.jobs, [&](const JobOnNode& j) { return j.id == id; });
      if (n.jobs.empty() && n.state != NodeState::Down) n.state = NodeState::Idle;
    }
  }
  // Reconciles and applies until nothing is left to do; returns everything that was done.
  std::vector<Action> settle() {
    std::vector<Action> all;
    for (int i = 0; i < 20; ++i) {
      auto as = pass();
      if (as.empty()) return all;
      apply(as);
      all.insert(all.end(), as.begin(), as.end());
    }
    ADD_FAILURE() << "no fixed point; last pass:\n" << dump(pass());
    return all;
  }
  // The kubelet starts the pod on `k8s_node`.
  void run_pod(const std::string& name, const std::string& k8s_node = "kn1") {
    json& p = *pod(name);
    p["spec"]["nodeName"] = k8s_node;
    p["status"]["phase"] = "Running";
    p["status"]["startTime"] = format_rfc3339(now);
  }
  // droverd in the pod registers as a dynamic node.
  void register_node(const std::string& name) {
    DroverNode n;
    n.name = name;
    n.registered = true;
    n.registered_since = now;
    n.features = {};
    obs.drover.nodes[name] = n;
  }
  void start_job(const std::string& node_name, uint32_t id, int64_t end, bool requeue = true) {
    DroverNode& n = node(node_name);
    n.jobs.push_back({id, end, requeue});
    n.state = NodeState::Allocated;
  }
  // Creates, runs and registers `n` pods and settles.
  void bring_up() {
    settle();
    for (json& p : obs.pods) {
      std::string name = p["metadata"]["name"];
      run_pod(name, p["metadata"]["name"].get<std::string>().back() % 2 ? "kn2" : "kn1");
      register_node(name);
    }
    settle();
  }
  std::vector<std::string> pod_names() const {
    std::vector<std::string> out;
    for (const json& p : obs.pods) out.push_back(p["metadata"]["name"]);
    std::sort(out.begin(), out.end());
    return out;
  }
  bool has_event(const std::string& text) const {
    for (const EmitEvent& e : events)
      if (e.message.find(text) != std::string::npos) return true;
    return false;
  }
  json condition(const std::string& type) {
    for (const json& c : nodeset["status"]["conditions"])
      if (c["type"] == type) return c;
    return json();
  }
};

TEST(NodeSetParse, DefaultsAndFields) {
  NodeSetSpec s = parse_nodeset(nodeset_json(3));
  EXPECT_EQ(s.name, "gpu");
  EXPECT_EQ(s.ns, "hpc");
  EXPECT_EQ(s.replicas, 3);
  EXPECT_TRUE(s.has_finalizer);
  EXPECT_FALSE(s.deleting);
  EXPECT_EQ(s.update_type, UpdateType::RollingUpdate);
  EXPECT_EQ(s.max_unavailable_for(10), 1);
  EXPECT_EQ(s.max_drain_time, -1);
  EXPECT_EQ(s.drain_timeout_policy, DrainTimeoutPolicy::Requeue);
  EXPECT_TRUE(s.workload_protection);
  EXPECT_EQ(s.registration_timeout, 300);
  EXPECT_EQ(s.selector(), "drover.io/nodeset=gpu");

  s = parse_nodeset(nodeset_json(
      10, {{"updateStrategy",
            {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxUnavailable", "25%"}}}}},
           {"maxDrainTime", "1h30m"},
           {"drainTimeoutPolicy", "Cancel"},
           {"registrationTimeout", "90s"},
           {"workloadProtection", false}}));
  EXPECT_EQ(s.max_unavailable_for(10), 2);
  EXPECT_EQ(s.max_unavailable_for(2), 1);  // at least one
  EXPECT_EQ(s.max_drain_time, 5400);
  EXPECT_EQ(s.drain_timeout_policy, DrainTimeoutPolicy::Cancel);
  EXPECT_EQ(s.registration_timeout, 90);
  EXPECT_FALSE(s.workload_protection);
}

TEST(NodeSetParse, AutoscalingAndCost) {
  NodeSetSpec s = parse_nodeset(nodeset_json(3));
  EXPECT_FALSE(s.autoscaling.has_value());
  EXPECT_EQ(s.cost, 1);
  s = parse_nodeset(nodeset_json(0, {{"cost", 2.5},
                                     {"autoscaling",
                                      {{"minReplicas", 1},
                                       {"maxReplicas", 16},
                                       {"idleTimeout", "5m"},
                                       {"startupTime", "90s"}}}}));
  EXPECT_EQ(s.cost, 2.5);
  ASSERT_TRUE(s.autoscaling.has_value());
  EXPECT_EQ(s.autoscaling->min_replicas, 1);
  EXPECT_EQ(s.autoscaling->max_replicas, 16);
  EXPECT_EQ(s.autoscaling->idle_timeout, 300);
  EXPECT_EQ(s.autoscaling->startup_time, 90);
  s = parse_nodeset(nodeset_json(0, {{"autoscaling", {{"maxReplicas", 4}}}}));
  EXPECT_EQ(s.autoscaling->min_replicas, 0);
  EXPECT_EQ(s.autoscaling->idle_timeout, 600);
  EXPECT_EQ(s.autoscaling->startup_time, 60);

  auto msg = [](json ns) {
    try {
      parse_nodeset(ns);
    } catch (const core::ParseError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(msg(nodeset_json(0, {{"autoscaling", {{"minReplicas", 5}, {"maxReplicas", 4}}}})),
            "NodeSet spec.autoscaling: minReplicas must not exceed maxReplicas");
  EXPECT_EQ(msg(nodeset_json(0, {{"autoscaling", {{"minReplicas", 1}}}})),
            "NodeSet spec.autoscaling.maxReplicas: missing");
  EXPECT_EQ(msg(nodeset_json(0, {{"autoscaling", {{"maxReplicas", -1}}}})),
            "NodeSet spec.autoscaling.maxReplicas: must be an integer from 0 to 100000");
  EXPECT_EQ(msg(nodeset_json(0, {{"autoscaling", {{"maxReplicas", 2}, {"idleTimeout", "soon"}}}})),
            "NodeSet spec.autoscaling.idleTimeout: invalid duration \"soon\" (use e.g. 90s, 30m, "
            "1h30m)");
  EXPECT_EQ(msg(nodeset_json(0, {{"cost", -1}})), "NodeSet spec.cost: must be a number at least 0");
  EXPECT_EQ(msg(nodeset_json(0, {{"cost", "cheap"}})),
            "NodeSet spec.cost: must be a number at least 0");
}

TEST(NodeSetParse, ClearErrors) {
  auto msg = [](json ns) {
    try {
      parse_nodeset(ns);
    } catch (const core::ParseError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  json ns = nodeset_json(1);
  ns["spec"].erase("template");
  EXPECT_EQ(msg(ns), "NodeSet spec.template: missing");
  EXPECT_EQ(msg(nodeset_json(-1)), "NodeSet spec.replicas: must be an integer from 0 to 100000");
  EXPECT_EQ(
      msg(nodeset_json(1, {{"maxDrainTime", "10 minutes"}})),
      "NodeSet spec.maxDrainTime: invalid duration \"10 minutes\" (use e.g. 90s, 30m, 1h30m)");
  EXPECT_EQ(msg(nodeset_json(1, {{"drainTimeoutPolicy", "Kill"}})),
            "NodeSet spec.drainTimeoutPolicy: must be Requeue, Cancel or Wait, not \"Kill\"");
  EXPECT_EQ(
      msg(nodeset_json(1, {{"updateStrategy", {{"rollingUpdate", {{"maxUnavailable", 0}}}}}})),
      "NodeSet spec.updateStrategy.rollingUpdate.maxUnavailable: must be at least 1");
  EXPECT_EQ(
      msg(nodeset_json(1, {{"updateStrategy", {{"rollingUpdate", {{"maxUnavailable", "0%"}}}}}})),
      "NodeSet spec.updateStrategy.rollingUpdate.maxUnavailable: must be an integer >= 1 or a "
      "percentage from 1% to 100%");
  EXPECT_EQ(msg(nodeset_json(1, {{"partitions", {""}}})),
            "NodeSet spec.partitions: must be a list of non-empty strings");
  ns = nodeset_json(1);
  ns["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["memory"] = "lots";
  EXPECT_EQ(msg(ns),
            "NodeSet spec.template.spec.containers[].resources: invalid quantity \"lots\"");
  ns["spec"]["template"]["spec"]["containers"] = json::array();
  EXPECT_EQ(msg(ns),
            "NodeSet spec.template.spec.containers: needs at least one container (the agent)");
}

TEST(NodeSetHelpers, QuantitiesDurationsNames) {
  EXPECT_DOUBLE_EQ(static_cast<double>(parse_quantity("500m")), 0.5);
  EXPECT_DOUBLE_EQ(static_cast<double>(parse_quantity("4Gi")), 4.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(static_cast<double>(parse_quantity("2G")), 2e9);
  EXPECT_DOUBLE_EQ(static_cast<double>(parse_quantity("1e3")), 1000);
  EXPECT_DOUBLE_EQ(static_cast<double>(parse_quantity("1.5")), 1.5);
  EXPECT_THROW(parse_quantity("4GiB"), core::ParseError);
  EXPECT_THROW(parse_quantity(""), core::ParseError);
  EXPECT_EQ(parse_duration_seconds("90s"), 90);
  EXPECT_EQ(parse_duration_seconds("1h30m"), 5400);
  EXPECT_EQ(parse_duration_seconds("1.5h"), 5400);
  EXPECT_EQ(parse_duration_seconds("500ms"), 1);
  EXPECT_EQ(parse_duration_seconds("0"), 0);
  EXPECT_THROW(parse_duration_seconds("5"), core::ParseError);
  EXPECT_THROW(parse_duration_seconds("h"), core::ParseError);
  EXPECT_EQ(pod_name("gpu", 3), "gpu-3");
  EXPECT_EQ(pod_ordinal("gpu", "gpu-3"), 3);
  EXPECT_EQ(pod_ordinal("gpu", "gpu-a-3"), -1);
  EXPECT_EQ(pod_ordinal("gpu", "gpu-03"), -1);
  EXPECT_EQ(pod_ordinal("gpu", "gpu-"), -1);
  EXPECT_EQ(pod_ordinal("gpu-a", "gpu-3"), -1);
  json t = nodeset_json(1)["spec"]["template"];
  EXPECT_EQ(template_hash(t), template_hash(json::parse(t.dump())));
  json t2 = t;
  t2["spec"]["containers"][0]["image"] = "drover/agent:2";
  EXPECT_NE(template_hash(t), template_hash(t2));
}

TEST(NodeSetHelpers, ShapeFromPodResources) {
  // Part of a machine: two containers' requests add up; limits stand in for missing requests.
  json spec = {
      {"containers",
       {{{"name", "a"},
         {"resources",
          {{"requests", {{"cpu", "1500m"}, {"memory", "8Gi"}}},
           {"limits", {{"nvidia.com/gpu", "2"}}}}}},
        {{"name", "b"}, {"resources", {{"limits", {{"cpu", "1"}, {"memory", "512Mi"}}}}}}}}};
  NodeShape s = shape_from_pod_spec(spec);
  EXPECT_EQ(s.cpus, 2);
  EXPECT_EQ(s.real_memory_mb, 8 * 1024 + 512);
  EXPECT_EQ(s.gpus, 2);
  EXPECT_EQ(node_conf_line(s, {"h100", "ib"}), "CPUs=2 RealMemory=8704 Gres=gpu:2 Feature=h100,ib");
  EXPECT_EQ(node_conf_line(shape_from_pod_spec({{"containers", {{{"name", "a"}}}}}), {}), "CPUs=1");
}

TEST(Reconcile, ScaleUpCreatesMissingPodsAndSettles) {
  Sim sim(nodeset_json(3));
  auto first = sim.pass();
  auto creates = of<CreatePod>(first);
  ASSERT_EQ(creates.size(), 3u) << dump(first);
  const json& pod = creates[0].pod;
  EXPECT_EQ(pod["metadata"]["name"], "gpu-0");
  EXPECT_EQ(pod["metadata"]["namespace"], "hpc");
  EXPECT_EQ(pod["metadata"]["labels"]["app"], "agent");
  EXPECT_EQ(pod["metadata"]["labels"][kNodeSetLabel], "gpu");
  EXPECT_EQ(pod["metadata"]["labels"][kHashLabel], template_hash(sim.nodeset["spec"]["template"]));
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"], "ns-uid");
  EXPECT_EQ(pod["spec"]["readinessGates"][0]["conditionType"], kNodeStateCondition);
  json env = pod["spec"]["containers"][0]["env"];
  auto envv = [&](const std::string& k) {
    for (const json& e : env)
      if (e["name"] == k) return e.value("value", std::string("(ref)"));
    return std::string("(none)");
  };
  EXPECT_EQ(envv("DROVER_NODE_NAME"), "(ref)");
  EXPECT_EQ(envv("DROVER_NODE_CONF"), "CPUs=4 RealMemory=16384 Gres=gpu:2");
  EXPECT_EQ(envv("DROVER_PARTITIONS"), "batch");
  EXPECT_EQ(of<ApplyPDB>(first).size(), 1u);
  sim.bring_up();
  EXPECT_EQ(sim.pod_names(), (std::vector<std::string>{"gpu-0", "gpu-1", "gpu-2"}));
  EXPECT_TRUE(sim.pass().empty());
  EXPECT_EQ(sim.nodeset["status"]["idle"], 3);
  EXPECT_EQ(sim.nodeset["status"]["replicas"], 3);
  EXPECT_EQ(sim.nodeset["status"]["observedGeneration"], 1);
  EXPECT_EQ(sim.condition("Available")["status"], "True");
  EXPECT_EQ(sim.condition("Progressing")["status"], "False");
  // Pod conditions mirror the node state.
  const json& conds = (*sim.pod("gpu-0"))["status"]["conditions"];
  ASSERT_EQ(conds.size(), 1u);
  EXPECT_EQ(conds[0]["reason"], "Idle");
  EXPECT_EQ(conds[0]["status"], "True");
}

TEST(Reconcile, AgentPodsGetAVouchingSocketTheirJobsReach) {
  auto env_of = [](const json& c) {
    std::map<std::string, std::string> m;
    for (const json& e : c.value("env", json::array())) m[e["name"]] = e.value("value", "(ref)");
    return m;
  };
  // The chart's template names none: droverd serves it in an emptyDir of its own (writable
  // and reachable by the jobs' users whatever the image), and nothing else changes.
  NodeSetSpec spec = parse_nodeset(nodeset_json(1));
  json pod = make_pod(spec, 0);
  const json& c = pod["spec"]["containers"][0];
  EXPECT_EQ(env_of(c)["DROVER_AUTH_SOCKET"], "/run/drover/auth.sock");
  EXPECT_EQ(c["volumeMounts"], json::parse(R"([{"name":"drover-run","mountPath":"/run/drover"}])"));
  EXPECT_EQ(pod["spec"]["volumes"], json::parse(R"([{"name":"drover-run","emptyDir":{}}])"));
  EXPECT_FALSE(c.contains("securityContext"));
  // The hash is the template's: pods made before are not rolled for it.
  EXPECT_EQ(pod["metadata"]["labels"][kHashLabel], template_hash(spec.pod_template));

  // The template's own mounts and volumes are kept; a mount at the directory is reused.
  json t = spec.pod_template;
  t["spec"]["volumes"] = json::parse(R"([{"name":"spool","emptyDir":{}}])");
  t["spec"]["containers"][0]["volumeMounts"] =
      json::parse(R"([{"name":"spool","mountPath":"/var/spool/drover"}])");
  spec.pod_template = t;
  pod = make_pod(spec, 0);
  EXPECT_EQ(pod["spec"]["volumes"].size(), 2u);
  EXPECT_EQ(pod["spec"]["containers"][0]["volumeMounts"].size(), 2u);
  t["spec"]["volumes"][0]["name"] = "run";
  t["spec"]["containers"][0]["volumeMounts"] =
      json::parse(R"([{"name":"run","mountPath":"/run/drover"}])");
  spec.pod_template = t;
  pod = make_pod(spec, 0);
  EXPECT_EQ(env_of(pod["spec"]["containers"][0])["DROVER_AUTH_SOCKET"], "/run/drover/auth.sock");
  EXPECT_EQ(pod["spec"]["volumes"], t["spec"]["volumes"]);
  EXPECT_EQ(pod["spec"]["containers"][0]["volumeMounts"],
            t["spec"]["containers"][0]["volumeMounts"]);

  // A template that says where (the flag, or the variable) is left as it is.
  for (const json& said :
       {json{{"command", {"droverd", "--auth-socket", "/sock/a"}}},
        json{{"args", {"--controller", "c:1", "--auth-socket", "/sock/a"}}},
        json{{"env", json::parse(R"([{"name":"DROVER_AUTH_SOCKET","value":"/sock/a"}])")}}}) {
    json u = nodeset_json(1)["spec"]["template"];
    u["spec"]["containers"][0].update(said);
    spec.pod_template = u;
    pod = make_pod(spec, 0);
    const json& uc = pod["spec"]["containers"][0];
    EXPECT_FALSE(uc.contains("volumeMounts")) << said;
    EXPECT_FALSE(pod["spec"].contains("volumes")) << said;
    const auto env = env_of(uc);
    EXPECT_EQ(env.count("DROVER_AUTH_SOCKET") ? env.at("DROVER_AUTH_SOCKET") : "",
              said.contains("env") ? "/sock/a" : "")
        << said;
  }
}

TEST(Reconcile, AddsFinalizerFirst) {
  json ns = nodeset_json(0);
  ns["metadata"].erase("finalizers");
  Sim sim(ns);
  auto as = sim.pass();
  ASSERT_FALSE(as.empty());
  ASSERT_TRUE(std::holds_alternative<SetFinalizer>(as[0]));
  EXPECT_TRUE(std::get<SetFinalizer>(as[0]).present);
}

TEST(Reconcile, ScaleInIdleFirstThenSoonestEndAndDeletesOnlyWhenEmpty) {
  Sim sim(nodeset_json(4));
  sim.bring_up();
  sim.start_job("gpu-0", 10, kT0 + 1000);
  sim.start_job("gpu-2", 12, kT0 + 500);
  sim.start_job("gpu-3", 13, 0);  // no known end: last
  sim.settle();
  // gpu-1 is idle; of the busy ones gpu-2's job ends first.
  sim.nodeset["spec"]["replicas"] = 2;
  auto as = sim.pass();
  auto drains = of<DrainNode>(as);
  ASSERT_EQ(drains.size(), 2u) << dump(as);
  EXPECT_EQ(drains[0].node, "gpu-1");
  EXPECT_EQ(drains[0].reason, "scale-in");
  EXPECT_EQ(drains[1].node, "gpu-2");
  EXPECT_TRUE(of<DeletePod>(as).empty()) << "nothing is deleted before the drain took effect";
  sim.apply(as);
  as = sim.pass();
  auto deletes = of<DeletePod>(as);
  ASSERT_EQ(deletes.size(), 1u) << dump(as);
  EXPECT_EQ(deletes[0].name, "gpu-1");
  EXPECT_EQ(deletes[0].uid, (*sim.pod("gpu-1"))["metadata"]["uid"]);
  sim.settle();
  EXPECT_EQ(sim.pod_names(), (std::vector<std::string>{"gpu-0", "gpu-2", "gpu-3"}));
  EXPECT_FALSE(sim.obs.drover.nodes.count("gpu-1")) << "its drover node is deleted too";
  EXPECT_TRUE(sim.has_event("draining for scale-in"));
  // The busy victim stays, draining, until its job ends.
  EXPECT_TRUE(sim.node("gpu-2").drain);
  EXPECT_EQ((*sim.pod("gpu-2"))["status"]["conditions"][0]["reason"], "Drain");
  sim.end_job(12);
  sim.settle();
  EXPECT_EQ(sim.pod_names(), (std::vector<std::string>{"gpu-0", "gpu-3"}));
  EXPECT_TRUE(sim.pass().empty());
}

TEST(Reconcile, NeverABusyNodeWhileAnIdleOneWouldDo) {
  Sim sim(nodeset_json(3));
  sim.bring_up();
  sim.start_job("gpu-0", 1, kT0 + 10);
  sim.start_job("gpu-1", 2, kT0 + 10);
  sim.settle();
  sim.nodeset["spec"]["replicas"] = 2;
  auto drains = of<DrainNode>(sim.pass());
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_EQ(drains[0].node, "gpu-2");
}

TEST(Reconcile, ScaleUpDuringScaleInResumesAVictim) {
  Sim sim(nodeset_json(2));
  sim.bring_up();
  sim.start_job("gpu-1", 7, kT0 + 100);
  sim.start_job("gpu-0", 8, kT0 + 200);
  sim.settle();
  sim.nodeset["spec"]["replicas"] = 1;
  sim.settle();
  EXPECT_TRUE(sim.node("gpu-1").drain);
  sim.nodeset["spec"]["replicas"] = 2;
  auto as = sim.pass();
  ASSERT_EQ(of<ResumeNode>(as).size(), 1u) << dump(as);
  EXPECT_TRUE(of<CreatePod>(as).empty());
  sim.apply(as);
  sim.settle();
  EXPECT_FALSE(sim.node("gpu-1").drain);
}

TEST(Reconcile, MaxDrainTimePolicies) {
  for (const char* policy : {"Requeue", "Cancel", "Wait"}) {
    SCOPED_TRACE(policy);
    Sim sim(nodeset_json(2, {{"maxDrainTime", "1h"}, {"drainTimeoutPolicy", policy}}));
    sim.bring_up();
    // Both busy with no known end: the higher ordinal goes.
    sim.start_job("gpu-1", 1, 0, /*requeue=*/true);
    sim.start_job("gpu-1", 2, 0, /*requeue=*/false);
    sim.start_job("gpu-0", 3, 0);
    sim.start_job("gpu-0", 4, 0);
    sim.settle();
    sim.nodeset["spec"]["replicas"] = 1;
    sim.settle();
    sim.now += 3599;
    EXPECT_TRUE(sim.pass().empty());
    sim.now += 1;
    auto as = sim.pass();
    if (std::string(policy) == "Wait") {
      EXPECT_TRUE(as.empty()) << dump(as);
      continue;
    }
    auto rq = of<RequeueJob>(as);
    auto cn = of<CancelJob>(as);
    if (std::string(policy) == "Requeue") {
      ASSERT_EQ(rq.size(), 1u) << dump(as);
      EXPECT_EQ(rq[0].job, 1u);
      ASSERT_EQ(cn.size(), 1u);
      EXPECT_EQ(cn[0].job, 2u);
    } else {
      EXPECT_TRUE(rq.empty());
      EXPECT_EQ(cn.size(), 2u);
    }
    EXPECT_EQ(cn[0].reason, "node gpu-1 drained for scale-in: maxDrainTime 1h reached");
    sim.apply(as);
    sim.settle();
    EXPECT_EQ(sim.pod_names(), (std::vector<std::string>{"gpu-0"}));
  }
}

TEST(Reconcile, PodThatNeverRegistersIsReplaced) {
  Sim sim(nodeset_json(1, {{"registrationTimeout", "2m"}}));
  sim.settle();
  sim.run_pod("gpu-0");
  sim.settle();
  sim.now += 119;
  EXPECT_TRUE(sim.pass().empty());
  sim.now += 1;
  auto as = sim.pass();
  ASSERT_EQ(of<DeletePod>(as).size(), 1u) << dump(as);
  sim.settle();
  EXPECT_TRUE(sim.has_event("replaced: never registered within 2m"));
  // Replaced at once, under the next free name (the old pod's is taken until it is gone).
  ASSERT_EQ(sim.pod_names(), (std::vector<std::string>{"gpu-1"}));
  EXPECT_EQ((*sim.pod("gpu-1"))["status"]["phase"], "Pending");
}

TEST(Reconcile, FailedPodIsRecreatedAndItsNodeGoesDown) {
  Sim sim(nodeset_json(2));
  sim.bring_up();
  sim.start_job("gpu-1", 5, 0);
  sim.settle();
  (*sim.pod("gpu-1"))["status"]["phase"] = "Failed";
  auto as = sim.pass();
  ASSERT_EQ(of<DownNode>(as).size(), 1u) << dump(as);
  ASSERT_EQ(of<DeletePod>(as).size(), 1u);
  ASSERT_EQ(of<CreatePod>(as).size(), 1u) << "replaced at once";
  EXPECT_EQ(of<CreatePod>(as)[0].pod["metadata"]["name"], "gpu-2")
      << "gpu-1 is still taken by the failed pod and its node";
  sim.settle();
  EXPECT_TRUE(sim.has_event("replaced: pod failed"));
  EXPECT_FALSE(sim.obs.drover.nodes.count("gpu-1"));
  EXPECT_EQ(sim.pod_names(), (std::vector<std::string>{"gpu-0", "gpu-2"}));
}

TEST(Reconcile, DeletedPodMarksItsNodeDownAtOnce) {
  Sim sim(nodeset_json(2));
  sim.bring_up();
  sim.start_job("gpu-0", 5, 0);
  sim.settle();
  // kubectl delete pod: first terminating, then gone.
  (*sim.pod("gpu-0"))["metadata"]["deletionTimestamp"] = format_rfc3339(sim.now);
  auto as = sim.pass();
  auto downs = of<DownNode>(as);
  ASSERT_EQ(downs.size(), 1u) << dump(as);
  EXPECT_EQ(downs[0].node, "gpu-0");
  EXPECT_EQ(downs[0].reason, "pod gpu-0 deleted");
  // Its replacement starts at once, under a free name.
  ASSERT_EQ(of<CreatePod>(as).size(), 1u) << dump(as);
  EXPECT_EQ(of<CreatePod>(as)[0].pod["metadata"]["name"], "gpu-2");
  sim.apply(as);
  std::erase_if(sim.obs.pods, [](const json& p) { return p["metadata"]["name"] == "gpu-0"; });
  as = sim.pass();
  ASSERT_EQ(of<DeleteDroverNode>(as).size(), 1u) << dump(as);
  EXPECT_TRUE(of<CreatePod>(as).empty());
  sim.apply(as);
  sim.settle();
  // A later scale-up takes the lowest free name again.
  sim.nodeset["spec"]["replicas"] = 3;
  auto creates = of<CreatePod>(sim.settle());
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_EQ(creates[0].pod["metadata"]["name"], "gpu-0");
}

TEST(Reconcile, AnIdleNodeWhosePodIsGoingTakesNoMoreWork) {
  Sim sim(nodeset_json(2));
  sim.bring_up();
  (*sim.pod("gpu-1"))["metadata"]["deletionTimestamp"] = format_rfc3339(sim.now);
  auto downs = of<DownNode>(sim.pass());
  ASSERT_EQ(downs.size(), 1u);
  EXPECT_EQ(downs[0].node, "gpu-1");
  // A scale-in victim's pod, drained and empty, terminates with its node left as it is.
  Sim s2(nodeset_json(2));
  s2.bring_up();
  s2.nodeset["spec"]["replicas"] = 1;
  s2.apply(s2.pass());  // drains gpu-1
  auto as = s2.pass();
  ASSERT_EQ(of<DeletePod>(as).size(), 1u) << dump(as);
  (*s2.pod("gpu-1"))["metadata"]["deletionTimestamp"] = format_rfc3339(s2.now);
  as = s2.pass();
  EXPECT_TRUE(of<DownNode>(as).empty()) << dump(as);
}

TEST(Reconcile, NamesOfStaticNodesAreNotReused) {
  Sim sim(nodeset_json(1));
  DroverNode n;
  n.name = "gpu-0";
  n.dynamic = false;  // a slurm.conf node that happens to have such a name
  sim.obs.drover.nodes["gpu-0"] = n;
  auto creates = of<CreatePod>(sim.settle());
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_EQ(creates[0].pod["metadata"]["name"], "gpu-1");
  EXPECT_TRUE(sim.obs.drover.nodes.count("gpu-0"));
}

TEST(Reconcile, PoweredDownSlotsOfAnAutoscaledSetStayAndLendTheirNames) {
  Sim sim(nodeset_json(0, {{"autoscaling", {{"minReplicas", 0}, {"maxReplicas", 3}}}}));
  for (const char* n : {"gpu-0", "gpu-1", "gpu-2", "gpu-3"}) {
    DroverNode d;  // created State=CLOUD by the operator: never registered
    d.name = n;
    d.state = NodeState::Future;
    sim.obs.drover.nodes[n] = d;
  }
  auto all = sim.settle();
  ASSERT_EQ(of<DeleteDroverNode>(all).size(), 1u) << dump(all);
  EXPECT_EQ(of<DeleteDroverNode>(all)[0].node, "gpu-3");  // beyond maxReplicas
  EXPECT_EQ(sim.obs.drover.nodes.size(), 3u);

  sim.nodeset["spec"]["replicas"] = 2;
  auto creates = of<CreatePod>(sim.settle());
  ASSERT_EQ(creates.size(), 2u);
  EXPECT_EQ(creates[0].pod["metadata"]["name"], "gpu-0");
  EXPECT_EQ(creates[1].pod["metadata"]["name"], "gpu-1");

  // Scale-in before they registered: their pods go without a drain, the slots stay.
  sim.nodeset["spec"]["replicas"] = 0;
  all = sim.settle();
  EXPECT_TRUE(of<DrainNode>(all).empty()) << dump(all);
  EXPECT_TRUE(sim.pod_names().empty());
  EXPECT_EQ(sim.obs.drover.nodes.size(), 3u);

  // Deleting the set takes its slots too, so that its finalizer goes.
  sim.nodeset["metadata"]["deletionTimestamp"] = format_rfc3339(sim.now);
  all = sim.settle();
  EXPECT_TRUE(sim.obs.drover.nodes.empty());
  ASSERT_EQ(of<SetFinalizer>(all).size(), 1u);
  EXPECT_FALSE(of<SetFinalizer>(all)[0].present);
}

TEST(Reconcile, PodGoneWithoutWarningStillDownsABusyNode) {
  Sim sim(nodeset_json(1));
  sim.bring_up();
  sim.start_job("gpu-0", 5, 0);
  sim.settle();
  sim.obs.pods.clear();
  auto as = sim.pass();
  ASSERT_EQ(of<DownNode>(as).size(), 1u) << dump(as);
  EXPECT_TRUE(of<DeleteDroverNode>(as).empty()) << "not while it holds jobs";
  sim.settle();
  EXPECT_FALSE(sim.obs.drover.nodes.count("gpu-0"));
}

TEST(Reconcile, VanishedKubernetesNodeDownsItsDroverNodes) {
  Sim sim(nodeset_json(2));
  sim.bring_up();
  std::string on_kn1 = (*sim.pod("gpu-0"))["spec"]["nodeName"] == "kn1" ? "gpu-0" : "gpu-1";
  sim.obs.k8s_nodes.erase("kn1");
  auto as = sim.pass();
  auto downs = of<DownNode>(as);
  ASSERT_EQ(downs.size(), 1u) << dump(as);
  EXPECT_EQ(downs[0].node, on_kn1);
  EXPECT_EQ(downs[0].reason, "kubernetes node kn1 gone");
  EXPECT_EQ(of<DeletePod>(as).size(), 1u);
}

TEST(Reconcile, CordonWorksBothWaysAndLeavesAdminDrainsAlone) {
  Sim sim(nodeset_json(2));
  sim.bring_up();
  std::string a = (*sim.pod("gpu-0"))["spec"]["nodeName"] == "kn1" ? "gpu-0" : "gpu-1";
  sim.obs.k8s_nodes["kn1"]["spec"]["unschedulable"] = true;
  auto as = sim.pass();
  auto drains = of<DrainNode>(as);
  ASSERT_EQ(drains.size(), 1u) << dump(as);
  EXPECT_EQ(drains[0].node, a);
  EXPECT_EQ(drains[0].reason, "kubernetes node kn1 cordoned");
  sim.apply(as);
  sim.settle();
  EXPECT_EQ(sim.nodeset["status"]["drained"], 1);
  // Uncordon resumes what the operator drained.
  sim.obs.k8s_nodes["kn1"]["spec"]["unschedulable"] = false;
  as = sim.pass();
  ASSERT_EQ(of<ResumeNode>(as).size(), 1u) << dump(as);
  sim.apply(as);
  sim.settle();
  // An administrator's drain shows on the pod and survives cordon/uncordon.
  DroverNode& n = sim.node(a);
  n.drain = true;
  n.reason = "bad DIMM";
  n.reason_by = ReasonBy::Admin;
  as = sim.pass();
  auto conds = of<PatchPodConditions>(as);
  ASSERT_EQ(conds.size(), 1u) << dump(as);
  EXPECT_EQ(conds[0].conditions[0]["reason"], "Drain");
  EXPECT_EQ(conds[0].conditions[0]["message"], "bad DIMM");
  EXPECT_EQ(conds[0].conditions[0]["status"], "False");
  sim.apply(as);
  sim.settle();
  sim.obs.k8s_nodes["kn1"]["spec"]["unschedulable"] = true;
  sim.settle();
  sim.obs.k8s_nodes["kn1"]["spec"]["unschedulable"] = false;
  EXPECT_TRUE(of<ResumeNode>(sim.settle()).empty());
  EXPECT_EQ(sim.node(a).reason, "bad DIMM");
}

TEST(Reconcile, AWatchedNodeConditionDrainsLikeACordon) {
  Sim sim(nodeset_json(2, {{"drainOnNodeConditions", {"GPUUnhealthy"}}}));
  sim.bring_up();
  std::string a = (*sim.pod("gpu-0"))["spec"]["nodeName"] == "kn1" ? "gpu-0" : "gpu-1";
  json& kn1 = sim.obs.k8s_nodes["kn1"];
  kn1["status"]["conditions"] = {{{"type", "KernelDeadlock"}, {"status", "True"}},
                                 {{"type", "GPUUnhealthy"}, {"status", "False"}}};
  EXPECT_TRUE(of<DrainNode>(sim.settle()).empty()) << "only the watched type, only when True";
  kn1["status"]["conditions"][1]["status"] = "True";
  auto drains = of<DrainNode>(sim.settle());
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_EQ(drains[0].node, a);
  EXPECT_EQ(drains[0].reason, "kubernetes node kn1 condition GPUUnhealthy");
  kn1["status"]["conditions"][1]["status"] = "False";
  EXPECT_EQ(of<ResumeNode>(sim.settle()).size(), 1u);
  EXPECT_TRUE(sim.has_event("resumed: kubernetes node kn1 healthy again"));
  EXPECT_FALSE(sim.node(a).drain);
}

TEST(Reconcile, RollingUpdateReplacesAtMostMaxUnavailableWithoutKillingJobs) {
  Sim sim(nodeset_json(4));
  sim.bring_up();
  sim.start_job("gpu-0", 1, kT0 + 100);
  sim.start_job("gpu-1", 2, kT0 + 50);
  sim.settle();
  std::string old_hash = template_hash(sim.nodeset["spec"]["template"]);
  sim.nodeset["spec"]["template"]["spec"]["containers"][0]["image"] = "drover/agent:2";
  auto as = sim.pass();
  auto drains = of<DrainNode>(as);
  ASSERT_EQ(drains.size(), 1u) << dump(as);
  EXPECT_EQ(drains[0].node, "gpu-3") << "idle first";
  EXPECT_EQ(drains[0].reason, "rolling update");
  sim.apply(as);
  // Drained and empty: replaced; then the budget is spent on the new, not yet registered pod.
  for (int round = 0; round < 12; ++round) {
    as = sim.pass();
    EXPECT_TRUE(of<CancelJob>(as).empty() && of<RequeueJob>(as).empty());
    int unavailable = 0;
    for (const auto& [name, n] : sim.obs.drover.nodes)
      if (n.drain) ++unavailable;
    EXPECT_LE(unavailable, 1);
    sim.apply(as);
    // The kubelet starts new pods and their agents register.
    for (json& p : sim.obs.pods)
      if (p["status"]["phase"] == "Pending") {
        std::string name = p["metadata"]["name"];
        sim.run_pod(name);
        sim.register_node(name);
      }
    if (round == 6) {
      sim.end_job(1);
      sim.end_job(2);
    }
  }
  sim.settle();
  for (const json& p : sim.obs.pods)
    EXPECT_NE(p["metadata"]["labels"][kHashLabel], old_hash) << p["metadata"]["name"];
  EXPECT_EQ(sim.pod_names().size(), 4u);
  EXPECT_EQ(sim.nodeset["status"]["updatedReplicas"], 4);
  EXPECT_EQ(sim.condition("Progressing")["status"], "False");
}

TEST(Reconcile, AFailingNewPodStopsTheRollout) {
  Sim sim(nodeset_json(4));
  sim.bring_up();
  sim.nodeset["spec"]["template"]["spec"]["containers"][0]["image"] = "drover/agent:bad";
  sim.settle();  // drains one, replaces it with a pod of the new template
  ASSERT_EQ(sim.pod_names().size(), 4u);
  std::string new_pod;
  for (json& p : sim.obs.pods)
    if (p["status"]["phase"] == "Pending") new_pod = p["metadata"]["name"];
  ASSERT_FALSE(new_pod.empty());
  sim.run_pod(new_pod);
  (*sim.pod(new_pod))["status"]["containerStatuses"] = {
      {{"name", "droverd"}, {"state", {{"waiting", {{"reason", "CrashLoopBackOff"}}}}}}};
  sim.settle();
  EXPECT_EQ(sim.condition("Degraded")["status"], "True");
  EXPECT_TRUE(sim.has_event("rolling update stopped"));
  int drained = 0;
  for (const auto& [name, n] : sim.obs.drover.nodes) drained += n.drain;
  EXPECT_EQ(drained, 0) << "no working node is drained while the new template fails";
  EXPECT_EQ(sim.nodeset["status"]["updatedReplicas"], 1);
}

TEST(Reconcile, ARolloutRemembersFailedPodsUntilTheTemplateChanges) {
  Sim sim(nodeset_json(4, {{"updateStrategy", {{"rollingUpdate", {{"maxUnavailable", 2}}}}}}));
  sim.bring_up();
  sim.nodeset["spec"]["template"]["spec"]["containers"][0]["image"] = "drover/agent:bad";
  sim.settle();  // two drained and replaced
  std::vector<std::string> fresh;
  for (json& p : sim.obs.pods)
    if (p["status"]["phase"] == "Pending") fresh.push_back(p["metadata"]["name"]);
  ASSERT_EQ(fresh.size(), 2u);
  // One new pod comes up; the other exits (restartPolicy Never) and is recreated.
  sim.run_pod(fresh[0]);
  sim.register_node(fresh[0]);
  (*sim.pod(fresh[1]))["status"]["phase"] = "Failed";
  sim.settle();
  EXPECT_EQ(sim.nodeset["status"]["rolloutFailures"], 1);
  EXPECT_EQ(sim.condition("Degraded")["status"], "True");
  // Its replacement is Pending and the failed pod gone: still no more old nodes are drained.
  int drained = 0;
  for (const auto& [name, n] : sim.obs.drover.nodes) drained += n.drain;
  EXPECT_EQ(drained, 0);
  EXPECT_TRUE(of<DrainNode>(sim.settle()).empty());
  // A new template starts a new rollout.
  sim.nodeset["spec"]["template"]["spec"]["containers"][0]["image"] = "drover/agent:3";
  auto as = sim.pass();
  EXPECT_FALSE(of<DrainNode>(as).empty()) << dump(as);
  sim.apply(as);
  EXPECT_EQ(sim.nodeset["status"]["rolloutFailures"], 0);
}

TEST(Reconcile, RegistrationTimeoutCountsFromAControllerRestart) {
  Sim sim(nodeset_json(1, {{"registrationTimeout", "1m"}}));
  sim.bring_up();
  sim.now += 3600;
  // The controller restarted: its nodes are known again but their agents not yet back.
  sim.obs.drover.controller_start = sim.now - 5;
  sim.node("gpu-0").registered = false;
  auto all = sim.settle();
  EXPECT_TRUE(of<DeletePod>(all).empty()) << dump(all);
  sim.now += 60;
  EXPECT_EQ(of<DeletePod>(sim.pass()).size(), 1u);
}

TEST(Reconcile, PodsWithoutTheNodeSetLabelAreNeverTouched) {
  Sim sim(nodeset_json(1));
  sim.obs.pods.push_back({{"metadata", {{"name", "gpu-0"}, {"uid", "someone-else"}}},
                          {"status", {{"phase", "Failed"}}}});
  auto all = sim.settle();
  EXPECT_TRUE(of<DeletePod>(all).empty());
  auto creates = of<CreatePod>(all);
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_EQ(creates[0].pod["metadata"]["name"], "gpu-1");
}

TEST(Reconcile, OnDeleteLeavesOutdatedPodsRunning) {
  Sim sim(nodeset_json(2, {{"updateStrategy", {{"type", "OnDelete"}}}}));
  sim.bring_up();
  sim.nodeset["spec"]["template"]["spec"]["containers"][0]["image"] = "drover/agent:2";
  auto all = sim.settle();
  EXPECT_TRUE(of<DrainNode>(all).empty());
  EXPECT_EQ(sim.nodeset["status"]["updatedReplicas"], 0);
}

TEST(Reconcile, DeletingTheNodeSetDrainsThenReleasesIt) {
  Sim sim(nodeset_json(3));
  sim.bring_up();
  sim.start_job("gpu-0", 9, 0);
  sim.settle();
  sim.nodeset["metadata"]["deletionTimestamp"] = format_rfc3339(sim.now);
  auto all = sim.settle();
  EXPECT_EQ(of<DrainNode>(all).size(), 3u);
  EXPECT_EQ(sim.pod_names(), (std::vector<std::string>{"gpu-0"})) << "busy: stays";
  EXPECT_EQ(sim.node("gpu-0").reason, "nodeset deleted");
  EXPECT_TRUE(of<SetFinalizer>(all).empty());
  EXPECT_EQ(sim.condition("Progressing")["reason"], "Deleting");
  sim.end_job(9);
  all = sim.settle();
  EXPECT_TRUE(sim.pod_names().empty());
  EXPECT_TRUE(sim.obs.drover.nodes.empty());
  ASSERT_EQ(of<SetFinalizer>(all).size(), 1u);
  EXPECT_FALSE(of<SetFinalizer>(all)[0].present);
  EXPECT_FALSE(sim.obs.pdb.has_value());
}

TEST(Reconcile, BusyPodsAreLabelledForTheDisruptionBudget) {
  Sim sim(nodeset_json(2));
  sim.bring_up();
  ASSERT_TRUE(sim.obs.pdb.has_value());
  EXPECT_EQ((*sim.obs.pdb)["spec"]["maxUnavailable"], 0);
  EXPECT_EQ((*sim.obs.pdb)["spec"]["selector"]["matchLabels"][kBusyLabel], "true");
  EXPECT_EQ((*sim.obs.pdb)["spec"]["selector"]["matchLabels"][kNodeSetLabel], "gpu");
  sim.start_job("gpu-1", 3, 0);
  auto as = sim.pass();
  auto labels = of<PatchPodLabels>(as);
  ASSERT_EQ(labels.size(), 1u) << dump(as);
  EXPECT_EQ(labels[0].pod, "gpu-1");
  EXPECT_EQ(labels[0].labels[kBusyLabel], "true");
  sim.apply(as);
  EXPECT_TRUE(sim.pass().empty());
  sim.end_job(3);
  labels = of<PatchPodLabels>(sim.pass());
  ASSERT_EQ(labels.size(), 1u);
  EXPECT_TRUE(labels[0].labels[kBusyLabel].is_null());
  sim.settle();
  // Protection off: the budget and the labels go.
  sim.start_job("gpu-0", 4, 0);
  sim.settle();
  sim.nodeset["spec"]["workloadProtection"] = false;
  auto all = sim.settle();
  EXPECT_EQ(of<DeletePDB>(all).size(), 1u);
  EXPECT_FALSE((*sim.pod("gpu-0"))["metadata"]["labels"].contains(kBusyLabel));
}

TEST(Reconcile, FeaturesFromKubernetesNodeLabels) {
  Sim sim(nodeset_json(2, {{"features", {"ib"}}, {"featuresFromNodeLabels", {"gpu.model"}}}));
  auto all = sim.settle();
  sim.bring_up();
  EXPECT_EQ(sim.node("gpu-0").features, (std::vector<std::string>{"h100", "ib"}));
  EXPECT_EQ(sim.node("gpu-1").features, (std::vector<std::string>{"a100", "ib"}));
}

TEST(Reconcile, StatusCountsNodeStates) {
  Sim sim(nodeset_json(4));
  sim.bring_up();
  sim.start_job("gpu-0", 1, 0);
  sim.node("gpu-1").state = NodeState::Mixed;
  sim.node("gpu-1").jobs.push_back({2, 0, true});
  sim.node("gpu-2").state = NodeState::Down;
  sim.node("gpu-2").reason = "Not responding";
  sim.settle();
  const json& st = sim.nodeset["status"];
  EXPECT_EQ(st["allocated"], 1);
  EXPECT_EQ(st["mixed"], 1);
  EXPECT_EQ(st["down"], 1);
  EXPECT_EQ(st["idle"], 1);
  EXPECT_EQ(st["selector"], "drover.io/nodeset=gpu");
  EXPECT_EQ((*sim.pod("gpu-2"))["status"]["conditions"][0]["reason"], "Down");
  EXPECT_EQ((*sim.pod("gpu-0"))["status"]["conditions"][0]["reason"], "Allocated");
  EXPECT_EQ((*sim.pod("gpu-1"))["status"]["conditions"][0]["reason"], "Mixed");
  // A new generation is observed even when nothing else changes.
  sim.nodeset["metadata"]["generation"] = 2;
  auto as = sim.pass();
  ASSERT_EQ(of<UpdateStatus>(as).size(), 1u);
  EXPECT_EQ(of<UpdateStatus>(as)[0].status["observedGeneration"], 2);
}

TEST(Reconcile, TimesOfUnchangedConditionsAreKept) {
  Sim sim(nodeset_json(1));
  sim.bring_up();
  std::string t = sim.condition("Available")["lastTransitionTime"];
  sim.now += 100;
  sim.nodeset["metadata"]["generation"] = 5;
  sim.settle();
  EXPECT_EQ(sim.condition("Available")["lastTransitionTime"], t);
}

TEST(Reconcile, AThousandPodsSettleAndAPassStaysCheap) {
  Sim sim(nodeset_json(1000));
  sim.bring_up();
  for (int i = 0; i < 1000; i += 2) sim.start_job(pod_name("gpu", i), 10 + i, kT0 + i);
  sim.settle();
  const auto t0 = std::chrono::steady_clock::now();
  auto as = sim.pass();
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_TRUE(as.empty()) << dump(as);
  RecordProperty("pass_us", static_cast<int>(us));
  // Scale-in of 100: the idle half goes first, highest ordinals first.
  sim.nodeset["spec"]["replicas"] = 900;
  auto drains = of<DrainNode>(sim.pass());
  ASSERT_EQ(drains.size(), 100u);
  for (const DrainNode& d : drains) EXPECT_EQ(pod_ordinal("gpu", d.node) % 2, 1) << d.node;
  EXPECT_EQ(drains[0].node, "gpu-999");
}

// Every key of `a` is in `b` with a value of the same JSON type, recursively (arrays by their
// elements, matched by "type" where they have one).
void expect_same_shape(const json& a, const json& b, const std::string& path) {
  ASSERT_EQ(a.type_name(), b.type_name()) << path;
  if (a.is_object()) {
    for (auto& [k, v] : a.items()) {
      ASSERT_TRUE(b.contains(k)) << path << "." << k << " is not in the example";
      expect_same_shape(v, b[k], path + "." + k);
    }
  } else if (a.is_array()) {
    for (const json& e : a)
      for (const json& f : b)
        if (!e.is_object() || e.value("type", "") == f.value("type", ""))
          expect_same_shape(e, f, path + "[]");
  }
}

TEST(Reconcile, StatusHasTheShapeTheCrdKeeps) {
  std::ifstream in(DROVER_NODESET_STATUS_EXAMPLE);
  ASSERT_TRUE(in) << DROVER_NODESET_STATUS_EXAMPLE;
  json example = json::parse(in);
  Sim sim(nodeset_json(4, {{"updateStrategy", {{"rollingUpdate", {{"maxUnavailable", 2}}}}}}));
  sim.bring_up();
  sim.nodeset["spec"]["template"]["spec"]["containers"][0]["image"] = "drover/agent:bad";
  sim.settle();
  for (json& p : sim.obs.pods)
    if (p["status"]["phase"] == "Pending") {
      p["status"]["phase"] = "Failed";
      break;
    }
  sim.settle();
  const json& st = sim.nodeset["status"];
  ASSERT_EQ(sim.condition("Degraded")["status"], "True");
  expect_same_shape(st, example, "status");
  expect_same_shape(example, st, "status");
}

TEST(NodeSetParse, DisruptionTaints) {
  EXPECT_EQ(parse_nodeset(nodeset_json(1)).disruption_taints, default_disruption_taints());
  EXPECT_EQ(parse_nodeset(nodeset_json(1, {{"disruptionTaints", {"example.com/reclaim"}}}))
                .disruption_taints,
            (std::vector<std::string>{"example.com/reclaim"}));
  EXPECT_TRUE(parse_nodeset(nodeset_json(1, {{"disruptionTaints", json::array()}}))
                  .disruption_taints.empty());
  try {
    parse_nodeset(nodeset_json(1, {{"disruptionTaints", {1}}}));
    ADD_FAILURE() << "accepted";
  } catch (const core::ParseError& e) {
    EXPECT_STREQ(e.what(), "NodeSet spec.disruptionTaints: must be a list of non-empty strings");
  }
}

json annotations_of(Sim& sim, const std::string& pod) {
  return (*sim.pod(pod))["metadata"].value("annotations", json::object());
}

TEST(Reconcile, BusyPodsCarryTheAutoscalersAnnotationsOnlyWhileBusy) {
  Sim sim(nodeset_json(2));
  sim.bring_up();
  EXPECT_TRUE(annotations_of(sim, "gpu-0").empty());
  sim.start_job("gpu-1", 3, 0);
  auto as = sim.pass();
  auto patches = of<PatchPodLabels>(as);
  // One write for the label and both annotations.
  ASSERT_EQ(patches.size(), 1u) << dump(as);
  EXPECT_EQ(patches[0].pod, "gpu-1");
  EXPECT_EQ(patches[0].labels, json({{kBusyLabel, "true"}}));
  EXPECT_EQ(patches[0].annotations,
            json({{kSafeToEvictAnnotation, "false"}, {kDoNotDisruptAnnotation, "true"}}));
  sim.apply(as);
  EXPECT_TRUE(sim.pass().empty()) << "nothing is written again while the pod stays busy";
  sim.start_job("gpu-1", 4, 0);
  EXPECT_TRUE(sim.pass().empty());
  EXPECT_TRUE(annotations_of(sim, "gpu-0").empty());

  sim.end_job(3);
  sim.end_job(4);
  as = sim.pass();
  patches = of<PatchPodLabels>(as);
  ASSERT_EQ(patches.size(), 1u) << dump(as);
  EXPECT_EQ(patches[0].annotations,
            json({{kSafeToEvictAnnotation, nullptr}, {kDoNotDisruptAnnotation, nullptr}}));
  sim.apply(as);
  EXPECT_TRUE(annotations_of(sim, "gpu-1").empty());
  EXPECT_TRUE(sim.pass().empty());

  // Without workload protection no pod is protected from the autoscalers either.
  sim.nodeset["spec"]["workloadProtection"] = false;
  sim.settle();
  sim.start_job("gpu-0", 5, 0);
  EXPECT_TRUE(of<PatchPodLabels>(sim.settle()).empty());
}

TEST(Reconcile, AnAutoscalerAnnotationInTheTemplateIsLeftAlone) {
  // The site lets the cluster autoscaler evict agent pods whatever they run.
  json ns = nodeset_json(1);
  ns["spec"]["template"]["metadata"]["annotations"] = {{kSafeToEvictAnnotation, "true"}};
  Sim sim(ns);
  sim.bring_up();
  sim.start_job("gpu-0", 1, 0);
  auto patches = of<PatchPodLabels>(sim.settle());
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_EQ(patches[0].annotations, json({{kDoNotDisruptAnnotation, "true"}}));
  EXPECT_EQ(annotations_of(sim, "gpu-0")[kSafeToEvictAnnotation], "true");
  sim.end_job(1);
  sim.settle();
  EXPECT_EQ(annotations_of(sim, "gpu-0"), json({{kSafeToEvictAnnotation, "true"}}));
}

void taint(Sim& sim, const std::string& node, const std::string& key) {
  json& spec = sim.obs.k8s_nodes[node]["spec"];
  if (!spec.contains("taints")) spec["taints"] = json::array();
  spec["taints"].push_back({{"key", key}, {"value", "1"}, {"effect", "NoSchedule"}});
}

TEST(Reconcile, ASpotNoticeDrainsAtOnceAndRequeuesOrCancelsTheJobs) {
  Sim sim(nodeset_json(2));
  sim.bring_up();
  sim.start_job("gpu-0", 1, kT0 + 3600, /*requeue=*/true);
  sim.start_job("gpu-0", 2, kT0 + 3600, /*requeue=*/false);
  sim.start_job("gpu-1", 3, kT0 + 3600);
  sim.settle();
  taint(sim, "kn1", "aws-node-termination-handler/spot-itn");
  auto as = sim.pass();
  const std::string cause =
      "kubernetes node kn1 spot interruption (taint aws-node-termination-handler/spot-itn)";
  auto drains = of<DrainNode>(as);
  ASSERT_EQ(drains.size(), 1u) << dump(as);
  EXPECT_EQ(drains[0].node, "gpu-0");
  EXPECT_EQ(drains[0].reason, cause);
  auto rq = of<RequeueJob>(as);
  auto cn = of<CancelJob>(as);
  ASSERT_EQ(rq.size(), 1u) << dump(as);
  EXPECT_EQ(rq[0].job, 1u);
  ASSERT_EQ(cn.size(), 1u) << dump(as);
  EXPECT_EQ(cn[0].job, 2u);
  EXPECT_EQ(cn[0].reason, "node gpu-0 drained: " + cause);
  sim.apply(as);
  EXPECT_TRUE(sim.has_event("draining: " + cause));
  EXPECT_TRUE(sim.has_event("requeued job 1: " + cause));
  EXPECT_TRUE(sim.has_event("cancelled job 2: " + cause));
  auto rest = sim.settle();
  EXPECT_TRUE(of<RequeueJob>(rest).empty() && of<CancelJob>(rest).empty()) << dump(rest);
  EXPECT_EQ(sim.node("gpu-0").reason, cause);
  EXPECT_EQ(sim.node("gpu-1").jobs.size(), 1u) << "the other machine's job runs on";
  EXPECT_FALSE(sim.node("gpu-1").drain);
  // Its pod is idle now: the autoscalers may take the machine.
  EXPECT_TRUE(annotations_of(sim, "gpu-0").empty());

  // The notice is withdrawn (a scale-down cancelled): the node takes work again.
  sim.obs.k8s_nodes["kn1"]["spec"]["taints"] = json::array();
  as = sim.pass();
  ASSERT_EQ(of<ResumeNode>(as).size(), 1u) << dump(as);
  sim.apply(as);
  EXPECT_TRUE(sim.has_event("resumed: no longer going away (was: " + cause + ")"));
  EXPECT_FALSE(sim.node("gpu-0").drain);
}

TEST(Reconcile, AJobOnItsWayOutIsNotAskedAgain) {
  Sim sim(nodeset_json(2));
  sim.bring_up();
  sim.start_job("gpu-0", 1, 0);
  sim.node("gpu-0").jobs[0].ending = true;  // requeued, its processes still stopping
  sim.start_job("gpu-0", 2, 0);
  sim.settle();
  taint(sim, "kn1", "ToBeDeletedByClusterAutoscaler");
  auto as = sim.pass();
  auto rq = of<RequeueJob>(as);
  ASSERT_EQ(rq.size(), 1u) << dump(as);
  EXPECT_EQ(rq[0].job, 2u);
  EXPECT_EQ(of<DrainNode>(as)[0].reason,
            "kubernetes node kn1 removed by the cluster autoscaler (taint "
            "ToBeDeletedByClusterAutoscaler)");
}

TEST(Reconcile, DisruptionTargetConditionDrainsThePod) {
  Sim sim(nodeset_json(2));
  sim.bring_up();
  sim.start_job("gpu-1", 7, 0);
  sim.settle();
  (*sim.pod("gpu-1"))["status"]["conditions"].push_back(
      {{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", "PreemptionByScheduler"}});
  auto as = sim.pass();
  auto drains = of<DrainNode>(as);
  ASSERT_EQ(drains.size(), 1u) << dump(as);
  EXPECT_EQ(drains[0].node, "gpu-1");
  EXPECT_EQ(drains[0].reason, "pod DisruptionTarget: PreemptionByScheduler");
  ASSERT_EQ(of<RequeueJob>(as).size(), 1u);
  sim.apply(as);
  sim.settle();
  EXPECT_TRUE(sim.node("gpu-1").drain);
}

TEST(Reconcile, ADisruptionReplacesACordonButNotAnotherDrain) {
  Sim sim(nodeset_json(4, {{"disruptionTaints", {"example.com/reclaim"}}}));
  sim.bring_up();  // gpu-0, gpu-2 on kn1; gpu-1, gpu-3 on kn2
  sim.obs.k8s_nodes["kn1"]["spec"]["unschedulable"] = true;
  sim.settle();
  ASSERT_EQ(sim.node("gpu-0").reason, "kubernetes node kn1 cordoned");
  // An administrator's drain on kn2, with a job still running.
  DroverNode& admin = sim.node("gpu-1");
  admin.drain = true;
  admin.reason = "bad DIMM";
  admin.reason_by = ReasonBy::Admin;
  sim.start_job("gpu-1", 9, 0);
  sim.settle();

  // A default taint is not watched once the list is the NodeSet's own.
  taint(sim, "kn2", "karpenter.sh/disrupted");
  EXPECT_TRUE(of<RequeueJob>(sim.settle()).empty());

  taint(sim, "kn1", "example.com/reclaim");
  taint(sim, "kn2", "example.com/reclaim");
  auto as = sim.pass();
  std::map<std::string, std::string> drained;
  for (const DrainNode& d : of<DrainNode>(as)) drained[d.node] = d.reason;
  const std::string cause = "kubernetes node kn1 going away (taint example.com/reclaim)";
  EXPECT_EQ(drained, (std::map<std::string, std::string>{
                         {"gpu-0", cause},
                         {"gpu-2", cause},
                         {"gpu-3", "kubernetes node kn2 going away (taint example.com/reclaim)"}}))
      << dump(as);
  auto rq = of<RequeueJob>(as);
  ASSERT_EQ(rq.size(), 1u) << "the administrator's node keeps its drain, its job goes";
  EXPECT_EQ(rq[0].job, 9u);
  sim.apply(as);
  sim.settle();
  EXPECT_EQ(sim.node("gpu-1").reason, "bad DIMM");

  // The taint goes but the cordon stays: still drained; uncordoned too: resumed.
  sim.obs.k8s_nodes["kn1"]["spec"]["taints"] = json::array();
  EXPECT_TRUE(of<ResumeNode>(sim.settle()).empty());
  sim.obs.k8s_nodes["kn1"]["spec"]["unschedulable"] = false;
  EXPECT_EQ(of<ResumeNode>(sim.settle()).size(), 2u);
}

TEST(Reconcile, AScaleInVictimOnAMachineGoingAwayIsNotResumed) {
  Sim sim(nodeset_json(2, {{"maxDrainTime", "1h"}, {"drainTimeoutPolicy", "Wait"}}));
  sim.bring_up();
  sim.start_job("gpu-0", 1, kT0 + 100);
  sim.start_job("gpu-1", 2, kT0 + 200);
  sim.settle();
  sim.nodeset["spec"]["replicas"] = 1;
  sim.settle();
  ASSERT_EQ(sim.node("gpu-0").reason, kReasonScaleIn);
  taint(sim, "kn1", "cloud.google.com/impending-node-termination");
  sim.nodeset["spec"]["replicas"] = 2;  // needed again, but its machine is going
  auto as = sim.pass();
  EXPECT_TRUE(of<ResumeNode>(as).empty()) << dump(as);
  ASSERT_EQ(of<RequeueJob>(as).size(), 1u) << "Wait is for scale-in, not a machine going away";
  sim.apply(as);
  sim.settle();
  EXPECT_EQ(sim.pod_names().size(), 2u);
}

}  // namespace
}  // namespace drover::k8s::op
