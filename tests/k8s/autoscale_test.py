"""droverctld's autoscaler on the real API server (ctest k8s_autoscale, through run-smoke): a
NodeSet of 0 to 4 grows by a job's width in one decision and the job runs, shrinks back to zero
after its idleTimeout, does not grow for a job it could never run and says why; of two NodeSets,
a GPU job grows the GPU set only and a CPU job the cheaper set. The fakelet runs each agent
pod's droverd as a local process, as in operator_lifecycle_test.py."""
import os
import re
import time
import urllib.request

import pytest

from conftest import wait_for
from operator_env import (NODESETS, NS, agent_nodeset, cleanup_nodesets, fakelet, nodes, pod_names,
                          start_cluster)

EVENTS = f"/apis/events.k8s.io/v1/namespaces/{NS}/events"


@pytest.fixture
def cluster(api, tmp_path):
    # The autoscaled NodeSets' nodes (Feature=elastic) make up partition "elastic".
    c = start_cluster(api, tmp_path, k8s_nodes=("kn1",), settings=(
        "GresTypes=gpu", "NodeSet=elastic Feature=elastic", "PartitionName=elastic Nodes=elastic"))
    try:
        yield c
    finally:
        cleanup_nodesets(api, c)


def autoscaled(c, name, max_replicas, idle="4s", cost=None, gpus=0, min_replicas=0, k8s_node="kn1"):
    ns = agent_nodeset(c, name, 0, k8s_node=k8s_node, extra={"autoscaling": {
        "minReplicas": min_replicas, "maxReplicas": max_replicas, "idleTimeout": idle,
        "startupTime": "10s"}, "features": ["elastic"]})
    if cost is not None:
        ns["spec"]["cost"] = cost
    if gpus:
        res = ns["spec"]["template"]["spec"]["containers"][0]["resources"]
        res["requests"]["nvidia.com/gpu"] = str(gpus)
        res["limits"] = {"nvidia.com/gpu": str(gpus)}  # not overcommitable: both, equal
    return ns


def create(api, obj, c=None):
    """Creates the NodeSet; with c, waits for its powered-down nodes."""
    r = api("POST", NODESETS, obj)
    assert r.status_code == 201, r.text
    if c is not None:
        name, most = obj["metadata"]["name"], obj["spec"]["autoscaling"]["maxReplicas"]
        wait_for(f"{name}'s powered-down nodes", lambda: elastic_nodes(c, name + "-") ==
                 {f"{name}-{i}": "idle~" for i in range(most)}, timeout=10)


def replicas(api, name):
    return api("GET", f"{NODESETS}/{name}").json()["spec"].get("replicas")


def events(api, name, reason=None):
    """The NodeSet's Events (events.k8s.io) as (reason, note), oldest first."""
    items = api("GET", EVENTS).json().get("items", [])
    out = [(e.get("reason"), e.get("note", "")) for e in items
           if e.get("regarding", {}).get("kind") == "NodeSet" and e["regarding"].get("name") == name]
    return [e for e in out if reason is None or e[0] == reason]


def metrics_text(c):
    with open(os.path.join(c.state_dir, "env.sh")) as f:
        url = re.search(r"^export DROVER_METRICS_URL=(\S+)$", f.read(), re.M).group(1)
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def elastic_nodes(c, prefix):
    return {n: st for n, st in nodes(c).items() if n.startswith(prefix)}


def test_scale_up_in_one_decision_then_back_to_zero(api, cluster):
    c = cluster
    create(api, autoscaled(c, "as", 4))
    # The nodes not started are there, powered down, as Slurm's power saving shows them.
    wait_for("4 powered-down nodes", lambda: elastic_nodes(c, "as-") ==
             {f"as-{i}": "idle~" for i in range(4)}, timeout=10)
    assert replicas(api, "as") == 0 and pod_names(api, "as") == []

    t0 = time.time()
    job = c.sbatch("-p", "elastic", "-N3", "-t", "1", "--wrap", "sleep 1", "-o", "/dev/null")
    wait_for("replicas 3", lambda: replicas(api, "as") == 3, timeout=10)
    took = time.time() - t0
    print(f"submission -> replicas 3: {took:.3f}s")
    assert took < 1.0
    ups = events(api, "as", "ScaleUp")
    assert len(ups) == 1 and "0 -> 3" in ups[0][1] and f"job {job}" in ups[0][1], ups
    # While they start: powering up ("#"; or up already), the fourth still powered down, and
    # the job says what it waits for (unless it started already).
    states = wait_for("three nodes powering up", lambda: (lambda st: st if all(
        st.get(f"as-{i}") in ("idle#", "idle", "allocated", "mixed") for i in range(3)) else None)(
        elastic_nodes(c, "as-")), timeout=10)
    reason = c.job(job).get("Reason")
    print(f"while starting: {states}, job reason {reason}")
    assert states["as-3"] == "idle~"
    assert reason in ("NodesPoweringUp", "None"), reason

    # The demand, for HPA/KEDA users.
    text = metrics_text(c)
    assert 'drover_nodeset_nodes_wanted{nodeset="as",gpu_type=""} 3' in text, text[-2000:]

    done = c.wait_state(job, "COMPLETED", timeout=60)
    assert done["NodeList"] == "as-[0-2]", done
    assert len(events(api, "as", "ScaleUp")) == 1  # nothing more was asked for

    # Idle for idleTimeout: drained for scale-in, pods deleted, back to zero and powered down.
    wait_for("back to zero", lambda: replicas(api, "as") == 0 and pod_names(api, "as") == []
             and elastic_nodes(c, "as-") == {f"as-{i}": "idle~" for i in range(4)}, timeout=40)
    downs = events(api, "as", "ScaleDown")
    assert downs and "-> 0" in downs[-1][1], downs


def test_a_job_no_nodeset_can_run_is_not_scaled_for(api, cluster):
    c = cluster
    create(api, autoscaled(c, "as", 4), c)
    job = c.sbatch("-p", "elastic", "-N5", "--wrap", "true", "-o", "/dev/null")
    note = wait_for("NotScaled event", lambda: next(
        (n for r, n in events(api, "as", "NotScaled") if f"job {job}" in n), None), timeout=10)
    assert "maxReplicas" in note, note
    assert c.job(job)["Reason"] == "PartitionNodeLimit"  # as for a partition too small
    time.sleep(1.5)
    assert replicas(api, "as") == 0 and pod_names(api, "as") == []
    c.ok("scancel", str(job))


def test_gpu_job_scales_the_gpu_set_and_cpu_job_the_cheaper_set(api, cluster):
    c = cluster
    fakelet("node", "create", "kg1", "--cpu", "16", "--memory", "32Gi", "--gpus", "2")
    fakelet("node", "uncordon", "kg1")
    create(api, autoscaled(c, "cheap", 2, cost=1, idle="60s"), c)
    create(api, autoscaled(c, "gpu", 2, cost=5, gpus=1, idle="60s", k8s_node="kg1"), c)
    gpu_job = c.sbatch("-p", "elastic", "--gpus=1", "-t", "1", "--wrap", "sleep 5", "-o", "/dev/null")
    wait_for("gpu grows", lambda: replicas(api, "gpu") == 1, timeout=10)
    time.sleep(1)
    assert replicas(api, "cheap") == 0
    cpu_job = c.sbatch("-p", "elastic", "-t", "1", "--wrap", "true", "-o", "/dev/null")
    wait_for("cheap grows", lambda: replicas(api, "cheap") == 1, timeout=10)
    assert replicas(api, "gpu") == 1
    assert c.wait_state(gpu_job, "COMPLETED", timeout=60)["NodeList"] == "gpu-0"
    assert c.wait_state(cpu_job, "COMPLETED", timeout=60)["NodeList"] == "cheap-0"
