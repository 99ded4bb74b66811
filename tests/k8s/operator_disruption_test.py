"""droverctld's NodeSet operator when a Kubernetes node is about to go away (ctest
k8s_operator_disruption, through run-smoke): busy agent pods carry the annotations that keep
Cluster Autoscaler and Karpenter from removing their machine and idle ones do not, and a spot
reclaim notice (a node taint) drains the pods on that machine at once and requeues their jobs,
or cancels those that cannot be requeued with the reason on the job. The fakelet runs each agent
pod's droverd as a local process, as in operator_lifecycle_test.py."""
import time

import pytest

from conftest import wait_for
from operator_env import (NODESETS, NS, PODS, agent_nodeset, cleanup_nodesets, fakelet, nodes,
                          reasons, start_cluster)

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
SPOT = "aws-node-termination-handler/spot-itn"


@pytest.fixture
def cluster(api, tmp_path):
    c = start_cluster(api, tmp_path, k8s_nodes=("kn1", "kn2"))
    try:
        yield c
    finally:
        cleanup_nodesets(api, c)
        for n in ("kn1", "kn2"):  # without --taint: the node's taints are cleared
            fakelet("node", "create", n, "--cpu", "16", "--memory", "32Gi")


def create(api, c, name, k8s_node, cpus):
    body = agent_nodeset(c, name, 1, k8s_node=k8s_node)
    body["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = str(cpus)
    r = api("POST", NODESETS, body)
    assert r.status_code == 201, r.text


def metadata(api, pod):
    return api("GET", f"{PODS}/{pod}").json()["metadata"]


def pod_events(api, pod):
    r = api("GET", f"/apis/events.k8s.io/v1/namespaces/{NS}/events")
    return [e.get("note", "") for e in r.json()["items"] if e["regarding"].get("name") == pod]


def system_comment(c, job):
    """The job's SystemComment= line of scontrol show job (None when it has none)."""
    for line in c.ok("scontrol", "show", "job", str(job)).splitlines():
        line = line.strip()
        if line.startswith("SystemComment="):
            return line[len("SystemComment="):]
    return None


def test_spot_notice_requeues_jobs_and_annotations_follow_busy(api, cluster):
    c = cluster
    create(api, c, "spot", "kn1", 2)
    create(api, c, "steady", "kn2", 1)
    wait_for("agents idle", lambda: nodes(c).get("spot-0", "").startswith("idle")
             and nodes(c).get("steady-0", "").startswith("idle"), timeout=40)
    assert SAFE_TO_EVICT not in metadata(api, "spot-0").get("annotations", {})

    requeueable = c.sbatch("-w", "spot-0", "--requeue", "--wrap", "sleep 300", "-o", "/dev/null")
    fragile = c.sbatch("-w", "spot-0", "--no-requeue", "--wrap", "sleep 300", "-o", "/dev/null")
    other = c.sbatch("-w", "steady-0", "--wrap", "sleep 300", "-o", "/dev/null")
    for j in (requeueable, fragile, other):
        c.wait_state(j, "RUNNING", timeout=20)

    # Busy: the label the PDB selects and the annotations the cluster autoscalers read.
    def protected(pod):
        m = metadata(api, pod)
        a = m.get("annotations", {})
        return m["labels"].get("drover.io/busy") == "true" and a.get(SAFE_TO_EVICT) == "false" \
            and a.get(DO_NOT_DISRUPT) == "true"
    wait_for("busy pods annotated", lambda: protected("spot-0") and protected("steady-0"))

    # A spot interruption notice on kn1 (as aws-node-termination-handler taints it).
    t0 = time.time()
    fakelet("node", "create", "kn1", "--cpu", "16", "--memory", "32Gi",
            "--taint", f"{SPOT}=1700000000:NoSchedule")
    info = c.wait_state(requeueable, ("PENDING", "REQUEUED"), timeout=10)
    took = time.time() - t0
    print(f"taint -> job requeued {took:.2f}s")
    assert info["Restarts"] == "1", info
    cancelled = c.wait_state(fragile, "CANCELLED", timeout=10)
    cause = f"kubernetes node kn1 spot interruption (taint {SPOT})"
    assert reasons(c).get("spot-0") == cause
    sinfo_r = c.ok("sinfo", "-R", "-h", "-o", "%E|%N")
    assert f"{cause}|spot-0" in sinfo_r, sinfo_r
    # The cancelled job says why (scontrol show job, as Slurm shows a system comment).
    assert system_comment(c, fragile) == f"node spot-0 drained: {cause}"
    wait_for("sacct's SystemComment", lambda: c.ok(
        "sacct", "-n", "-X", "-j", str(fragile), "-o", "SystemComment%120").strip()
        == f"node spot-0 drained: {cause}")
    # The other machine is untouched.
    assert c.job(other)["JobState"] == "RUNNING"
    assert "steady-0" not in reasons(c)

    # Events on the pod, and its protection lifted once its jobs are gone (the node may go).
    wait_for("events on the pod", lambda: any(f"requeued job {requeueable}" in e
                                              for e in pod_events(api, "spot-0")))
    assert any(f"cancelled job {fragile}" in e for e in pod_events(api, "spot-0"))
    assert any(f"draining: {cause}" in e for e in pod_events(api, "spot-0"))

    def unprotected(pod):
        m = metadata(api, pod)
        a = m.get("annotations", {})
        return "drover.io/busy" not in m["labels"] and SAFE_TO_EVICT not in a \
            and DO_NOT_DISRUPT not in a
    wait_for("spot-0 unprotected", lambda: unprotected("spot-0"), timeout=20)
    assert protected("steady-0")
    # The requeued job does not start on the drained node.
    time.sleep(1)
    assert c.job(requeueable)["JobState"] == "PENDING"

    # The notice is withdrawn: the node takes work again (the requeued job itself waits out
    # Slurm's requeue delay first).
    fakelet("node", "create", "kn1", "--cpu", "16", "--memory", "32Gi")
    wait_for("spot-0 resumed", lambda: "spot-0" not in reasons(c), timeout=20)
    again = c.sbatch("-w", "spot-0", "--wrap", "sleep 300", "-o", "/dev/null")
    c.wait_state(again, "RUNNING", timeout=20)
    wait_for("spot-0 protected again", lambda: protected("spot-0"))
    for j in (requeueable, again, other):
        c.ok("scancel", str(j))
    wait_for("both unprotected", lambda: unprotected("spot-0") and unprotected("steady-0"),
             timeout=20)
