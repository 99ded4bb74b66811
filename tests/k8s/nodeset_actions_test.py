"""The reconciler's actions carried out against the real API server.

k8s_operator_fixture (tests/k8s/operator_fixture.cpp) runs one reconcile pass on what this test
reads from the server plus a made-up drover snapshot, and prints the actions; the test carries
out the Kubernetes ones as drover's client will and checks that the server takes them, that
the eviction API then refuses busy pods and evicts idle ones, and that a pass on the result
asks for nothing more.
"""
import json
import os
import subprocess
import time

import pytest

from conftest import NS_URL, wait_for

PODS = "/api/v1/namespaces/default/pods"
PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


def reconcile(nodeset, pods=(), nodes=(), pdb=None, drover=None, now=None):
    tool = os.environ.get("DROVER_K8S_OPERATOR_FIXTURE")
    if not tool:
        pytest.fail("DROVER_K8S_OPERATOR_FIXTURE is not set (ctest sets it)")
    data = {"nodeset": nodeset, "pods": list(pods), "nodes": list(nodes), "pdb": pdb,
            "drover": drover or {}, "now": int(now or time.time())}
    out = subprocess.run([tool], input=json.dumps(data), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def of(actions, kind):
    return [a for a in actions if a["action"] == kind]


def carry_out(api, actions, drover=None):
    """The Kubernetes actions, as the client will execute them; drover's change the test's
    snapshot `drover` as the controller would."""
    for a in actions:
        kind = a["action"]
        if kind == "SetNodeFeatures":
            drover[a["node"]]["features"] = a["features"]
        elif kind == "DeleteDroverNode":
            del drover[a["node"]]
        elif kind in ("DrainNode", "ResumeNode", "DownNode", "RequeueJob", "CancelJob"):
            pytest.fail(f"unexpected {a}")
        elif kind == "CreatePod":
            r = api("POST", PODS, a["pod"])
            assert r.status_code == 201, r.text
        elif kind == "DeletePod":
            r = api("DELETE", f"{PODS}/{a['name']}",
                    {"preconditions": {"uid": a["uid"]}})
            assert r.status_code in (200, 202), r.text
        elif kind == "PatchPodLabels":
            meta = {"labels": a["labels"]}
            if a.get("annotations"):
                meta["annotations"] = a["annotations"]
            r = api("PATCH", f"{PODS}/{a['pod']}", {"metadata": meta}, MERGE)
            assert r.status_code == 200, r.text
        elif kind == "PatchPodConditions":
            # Strategic merge: conditions merge by type, the kubelet's stay.
            r = api("PATCH", f"{PODS}/{a['pod']}/status", {"status": {"conditions": a["conditions"]}},
                    STRATEGIC)
            assert r.status_code == 200, r.text
        elif kind == "ApplyPDB":
            name = a["pdb"]["metadata"]["name"]
            r = api("PUT", f"{PDBS}/{name}", a["pdb"])
            if r.status_code == 404:
                r = api("POST", PDBS, a["pdb"])
            assert r.status_code in (200, 201), r.text
        elif kind == "DeletePDB":
            r = api("DELETE", f"{PDBS}/{a['name']}")
            assert r.status_code == 200, r.text
        elif kind == "SetFinalizer":
            ns = api("GET", f"{NS_URL}/agents").json()
            fins = [f for f in ns["metadata"].get("finalizers", []) if f != "drover.io/drain"]
            if a["present"]:
                fins.append("drover.io/drain")
            r = api("PATCH", f"{NS_URL}/agents", {"metadata": {"finalizers": fins}}, MERGE)
            assert r.status_code == 200, r.text
        elif kind == "UpdateStatus":
            r = api("PATCH", f"{NS_URL}/agents/status", {"status": a["status"]}, MERGE)
            assert r.status_code == 200, r.text


def observe(api):
    ns = api("GET", f"{NS_URL}/agents").json()
    pods = api("GET", PODS + "?labelSelector=drover.io/nodeset%3Dagents").json()["items"]
    nodes = api("GET", "/api/v1/nodes").json()["items"]
    r = api("GET", f"{PDBS}/agents-busy")
    return ns, pods, nodes, (r.json() if r.status_code == 200 else None)


def test_agent_pods_patches_pdb_and_eviction(api):
    subprocess.run([os.environ["DROVER_K8S_FAKELET"], "node", "create", "op-kn1", "--cpu", "16",
                    "--memory", "64Gi", "--gpus", "8", "--label", "gpu.model=h100"],
                   check=True, capture_output=True)
    body = {
        "apiVersion": "drover.io/v1alpha1", "kind": "NodeSet", "metadata": {"name": "agents"},
        "spec": {
            "replicas": 2, "partitions": ["gpu"], "featuresFromNodeLabels": ["gpu.model"],
            "template": {
                "metadata": {"labels": {"app": "drover-agent"}},
                "spec": {
                    "nodeName": "op-kn1",  # no scheduler in the test environment
                    "containers": [{
                        "name": "droverd", "image": "drover/agent:0.1",
                        "resources": {"requests": {"cpu": "2", "memory": "4Gi"},
                                      "limits": {"nvidia.com/gpu": "2"}},
                    }],
                },
            },
        },
    }
    r = api("POST", NS_URL, body)
    assert r.status_code == 201, r.text

    ns, pods, nodes, pdb = observe(api)
    actions = reconcile(ns, pods, nodes, pdb)
    assert len(of(actions, "CreatePod")) == 2, actions
    carry_out(api, actions)
    pod = api("GET", f"{PODS}/agents-0").json()
    env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
    assert env["DROVER_NODE_CONF"] == "CPUs=2 RealMemory=4096 Gres=gpu:2"
    assert env["DROVER_PARTITIONS"] == "gpu"
    assert pod["metadata"]["ownerReferences"][0]["uid"] == ns["metadata"]["uid"]
    assert pod["spec"]["readinessGates"] == [{"conditionType": "drover.io/NodeState"}]
    assert "drover.io/drain" in api("GET", f"{NS_URL}/agents").json()["metadata"]["finalizers"]
    wait_for("agent pods running", lambda: all(
        p["status"].get("phase") == "Running" for p in observe(api)[1]) and len(observe(api)[1]) == 2)

    # Both agents registered; agents-0 runs a job.
    drover = {"agents-0": {"state": "allocated", "jobs": [1]}, "agents-1": {"state": "idle"}}
    now = int(time.time())
    ns, pods, nodes, pdb = observe(api)
    actions = reconcile(ns, pods, nodes, pdb, drover, now)
    labels = of(actions, "PatchPodLabels")
    assert [(a["pod"], a["labels"]) for a in labels] == [("agents-0", {"drover.io/busy": "true"})]
    assert len(of(actions, "PatchPodConditions")) == 2
    assert [a["features"] for a in of(actions, "SetNodeFeatures")] == [["h100"], ["h100"]]
    carry_out(api, actions, drover)
    pod = api("GET", f"{PODS}/agents-0").json()
    # The annotations that keep Cluster Autoscaler and Karpenter from removing its machine.
    assert pod["metadata"]["annotations"]["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "false"
    assert pod["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] == "true"
    conds = {c["type"]: c for c in pod["status"]["conditions"]}
    assert conds["drover.io/NodeState"]["reason"] == "Allocated"
    assert "Ready" in conds, "the kubelet's conditions stay"
    st = api("GET", f"{NS_URL}/agents").json()["status"]
    assert (st["allocated"], st["idle"], st["replicas"]) == (1, 1, 2)

    # On what the server now returns, a second pass asks for nothing.
    ns, pods, nodes, pdb = observe(api)
    assert reconcile(ns, pods, nodes, pdb, drover, now) == []

    # The eviction API (kubectl drain) refuses the busy pod and evicts the idle one. The
    # disruption controller sizes the budget from the pods' controller, the NodeSet's /scale
    # (2 pods expected, 1 healthy selected: no disruption allowed). It finds a kind created
    # after it started only when it next refreshes its discovery (every 30 s), and syncs a
    # budget again only on a change: the test touches it until then.
    nudges = iter(range(1_000_000))

    def pdb_ready():
        n = next(nudges)
        if n % 10 == 9:
            api("PATCH", f"{PDBS}/agents-busy",
                {"metadata": {"annotations": {"drover.test/nudge": str(n)}}}, MERGE)
        p = api("GET", f"{PDBS}/agents-busy").json()
        s = p.get("status", {})
        return (s.get("observedGeneration") == p["metadata"]["generation"]
                and s.get("expectedPods") == 2 and s.get("currentHealthy") == 1
                and s.get("disruptionsAllowed") == 0)
    wait_for("the disruption controller to count the busy pod", pdb_ready, timeout=60)

    def evict(name):
        return api("POST", f"{PODS}/{name}/eviction", {
            "apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": name, "namespace": "default"}})
    r = evict("agents-0")
    assert r.status_code == 429, r.text
    assert "disruption budget" in r.json()["message"]
    r = evict("agents-1")
    assert r.status_code == 201, r.text

    # The evicted pod's node is deleted once its pod is gone, and a replacement is created.
    wait_for("the evicted pod to go", lambda: api("GET", f"{PODS}/agents-1").status_code == 404)
    ns, pods, nodes, pdb = observe(api)
    actions = reconcile(ns, pods, nodes, pdb, drover, now)
    assert [a["node"] for a in of(actions, "DeleteDroverNode")] == ["agents-1"]
    assert [a["pod"]["metadata"]["name"] for a in of(actions, "CreatePod")] == ["agents-1"]
    carry_out(api, actions, drover)

    # The job ended: the label goes, and the pod may be evicted.
    drover["agents-0"] = {"state": "idle", "features": ["h100"]}
    ns, pods, nodes, pdb = observe(api)
    actions = reconcile(ns, pods, nodes, pdb, drover, now)
    assert [a["labels"] for a in of(actions, "PatchPodLabels")] == [{"drover.io/busy": None}]
    carry_out(api, actions, drover)
    meta = api("GET", f"{PODS}/agents-0").json()["metadata"]
    assert "drover.io/busy" not in meta["labels"]
    assert "karpenter.sh/do-not-disrupt" not in meta.get("annotations", {})
    # The eviction API checks the budgets that select the pod now: none (whatever the budget's
    # status still says about the pod it selected before).
    r = evict("agents-0")
    assert r.status_code == 201, r.text
