"""droverctld's NodeSet operator through an agent pod's life on the real API server (ctest
k8s_operator_lifecycle, through run-smoke, with the disruption controller running): jobs across
pods, scale-in that spares busy nodes, cordon both ways, eviction, lost pods, rolling updates,
maxDrainTime, deleting a NodeSet, and a controller restart in the middle of it all. The fakelet
runs each agent pod's droverd as a local process, as in operator_e2e_test.py."""
import os
import pathlib
import re
import signal
import subprocess
import time

import pytest

from conftest import wait_for
from operator_env import (NODESETS, PODS, agent_nodeset, cleanup_nodesets, evict, fakelet,
                          node_state_condition, nodes, pod_names, reasons, start_cluster)


@pytest.fixture
def cluster(api, tmp_path):
    c = start_cluster(api, tmp_path, k8s_nodes=("kn1", "kn2"))
    try:
        yield c
    finally:
        cleanup_nodesets(api, c)


def create(api, c, name, replicas, **kw):
    r = api("POST", NODESETS, agent_nodeset(c, name, replicas, **kw))
    assert r.status_code == 201, r.text
    return r.json()


def patch(api, name, spec):
    r = api("PATCH", f"{NODESETS}/{name}", {"spec": spec}, content_type="application/merge-patch+json")
    assert r.status_code == 200, r.text


def wait_idle(c, names, timeout=40):
    wait_for(f"{names} idle", lambda: all(nodes(c).get(n, "").startswith("idle") for n in names),
             timeout=timeout)


def ctld_log(c):
    return pathlib.Path(c.state_dir, "ctld.log").read_text()


def test_job_across_pods_and_scale_in_spares_the_busy_node(api, cluster):
    """sbatch -N2 with srun inside runs on two agent pods; 3 -> 1 takes the idle pod at once
    and the busy victim only once its job ended; a controller killed meanwhile loses nothing."""
    c = cluster
    create(api, c, "ops", 3)
    wait_idle(c, ["ops-0", "ops-1", "ops-2"])

    out = os.path.join(c.work, "out")
    flag = os.path.join(c.work, "go")
    script = c.write_script("two.sh", f"#!/bin/sh\nsrun -l sh -c 'echo $SLURMD_NODENAME'\n"
                                      f"while [ ! -e {flag} ]; do sleep 0.2; done\n")
    job = c.sbatch("-N2", "-w", "ops-[1-2]", "-o", out, script)
    c.wait_state(job, "RUNNING", timeout=30)
    wait_for("srun's output", lambda: os.path.exists(out) and len(open(out).read().splitlines()) == 2)
    assert sorted(open(out).read().splitlines()) == ["0: ops-1", "1: ops-2"]

    # 3 -> 1: the idle ops-0 goes first; one busy node drains (the higher ordinal of two nodes
    # whose job ends at the same time) and its pod stays while the job runs; the other is kept.
    patch(api, "ops", {"replicas": 1})
    wait_for("ops-0 gone", lambda: "ops-0" not in nodes(c) and "ops-0" not in pod_names(api, "ops"))
    wait_for("ops-2 draining", lambda: nodes(c).get("ops-2") in ("draining", "drng"))
    assert reasons(c).get("ops-2") == "scale-in"
    assert nodes(c)["ops-1"] == "allocated"
    assert pod_names(api, "ops") == ["ops-1", "ops-2"]
    cond = wait_for("ops-2's condition says Drain", lambda: (lambda x: x if x and x["reason"] == "Drain" else None)(
        node_state_condition(api, "ops-2")))
    assert cond["message"] == "scale-in"

    # The controller is killed and comes back: the drain, the job and the pods are as they were.
    os.kill(c.pid("ctld.pid"), signal.SIGKILL)
    time.sleep(0.5)
    c.up()
    assert c.job(job)["JobState"] == "RUNNING"
    assert reasons(c).get("ops-2") == "scale-in"
    time.sleep(2)  # a few operator passes after the restart
    assert pod_names(api, "ops") == ["ops-1", "ops-2"]
    assert c.job(job)["JobState"] == "RUNNING"

    # The job ends: ops-2's pod and node go, ops-1 stays, and the job was never disturbed.
    open(flag, "w").close()
    done = c.wait_state(job, "COMPLETED", timeout=30)
    assert done["Restarts"] == "0"
    wait_for("ops-2 gone", lambda: "ops-2" not in nodes(c) and pod_names(api, "ops") == ["ops-1"],
             timeout=20)
    wait_idle(c, ["ops-1"])
    st = wait_for("status settles", lambda: (lambda s: s if s.get("replicas") == 1 and s.get("idle") == 1
                                              else None)(api("GET", f"{NODESETS}/ops").json().get("status", {})))
    assert st["observedGeneration"] == 2


def test_cordon_both_ways_and_eviction(api, cluster):
    """A cordoned Kubernetes node drains its drover nodes (the reason in sinfo -R) and uncordon
    undoes only that; an administrator's drain shows on the pod within a second; the eviction
    API refuses a busy pod and evicts an idle one."""
    c = cluster
    create(api, c, "a", 2, k8s_node="kn1")
    create(api, c, "b", 1, k8s_node="kn2")
    wait_idle(c, ["a-0", "a-1", "b-0"])

    # An administrator's drain: on the pod's condition within a second.
    c.ok("scontrol", "update", "NodeName=a-1", "State=DRAIN", "Reason=disk check")
    t0 = time.time()  # the drain is committed once scontrol returns
    wait_for("a-1's condition", lambda: (node_state_condition(api, "a-1") or {}).get("message") == "disk check",
             timeout=5)
    took = time.time() - t0
    print(f"drain -> pod condition {took:.2f}s")
    assert took < 1.0
    assert node_state_condition(api, "a-1")["reason"] == "Drain"

    # Cordon kn1: a-0 drains with the reason; a-1 keeps the administrator's.
    subprocess.run([os.environ["DROVER_K8S_FAKELET"], "node", "cordon", "kn1"], check=True,
                   capture_output=True)
    wait_for("a-0 drained", lambda: reasons(c).get("a-0") == "kubernetes node kn1 cordoned")
    r = reasons(c)
    assert r["a-1"] == "disk check"
    assert "b-0" not in r
    sinfo_r = c.ok("sinfo", "-R", "-h", "-o", "%E|%N")
    assert "kubernetes node kn1 cordoned|a-0" in sinfo_r, sinfo_r
    wait_for("a-0's condition", lambda: (node_state_condition(api, "a-0") or {}).get("message")
             == "kubernetes node kn1 cordoned")

    # Uncordon: a-0 resumes, a-1 stays drained by its administrator.
    subprocess.run([os.environ["DROVER_K8S_FAKELET"], "node", "uncordon", "kn1"], check=True,
                   capture_output=True)
    wait_idle(c, ["a-0"])
    assert reasons(c).get("a-1") == "disk check"
    assert "a-0" not in reasons(c)
    c.ok("scontrol", "update", "NodeName=a-1", "State=RESUME")
    wait_for("a-1's condition Idle", lambda: (node_state_condition(api, "a-1") or {}).get("reason") == "Idle")

    # Eviction: a busy pod is refused (its PDB), an idle one is evicted and replaced.
    job = c.sbatch("-w", "a-0", "--wrap", "sleep 300", "-o", "/dev/null")
    c.wait_state(job, "RUNNING", timeout=20)
    wait_for("a-0 labelled busy", lambda: api("GET", f"{PODS}/a-0").json()["metadata"]["labels"]
             .get("drover.io/busy") == "true")
    nudges = iter(range(1_000_000))

    def budget_counts_busy_pod():
        # The disruption controller finds the NodeSet kind at its next discovery refresh (30 s)
        # and syncs a budget again only when it changes: touch it until then.
        n = next(nudges)
        if n % 10 == 9:
            api("PATCH", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/a-busy",
                {"metadata": {"annotations": {"drover.test/nudge": str(n)}}},
                content_type="application/merge-patch+json")
        p = api("GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/a-busy").json()
        s = p.get("status", {})
        return s.get("currentHealthy") == 1 and s.get("disruptionsAllowed") == 0 and \
            s.get("observedGeneration") == p["metadata"]["generation"]
    wait_for("the disruption controller to count the busy pod", budget_counts_busy_pod, timeout=90)
    r = evict(api, "a-0")
    assert r.status_code == 429, r.text
    assert c.job(job)["JobState"] == "RUNNING"
    old_uid = api("GET", f"{PODS}/a-1").json()["metadata"]["uid"]
    r = evict(api, "a-1")
    assert r.status_code == 201, r.text
    # The idle node goes with its pod and comes back with a new one (under the lowest free
    # name: a-1 again, or a-2 while a-1's old pod is still terminating).

    def replaced():
        names = pod_names(api, "a")
        fresh = [n for n in names if n != "a-0"]
        return len(names) == 2 and all(nodes(c).get(n, "").startswith("idle") for n in fresh) and \
            api("GET", f"{PODS}/{fresh[0]}").json()["metadata"]["uid"] != old_uid
    wait_for("a-1 replaced", replaced, timeout=40)
    assert c.job(job)["JobState"] == "RUNNING"
    c.ok("scancel", str(job))


def test_deleted_pod_requeues_its_job_and_the_pod_comes_back(api, cluster):
    """A deleted agent pod: its node DOWN within 2 s, its requeueable batch job requeued (as
    Slurm does for a node failure with JobRequeue=1), a --no-requeue one NODE_FAIL; the pod is
    recreated and its node idle again."""
    c = cluster
    create(api, c, "ops", 2)
    wait_idle(c, ["ops-0", "ops-1"])
    requeueable = c.sbatch("-w", "ops-0", "--wrap", "sleep 300", "-o", "/dev/null")
    fragile = c.sbatch("-w", "ops-1", "--no-requeue", "--wrap", "sleep 300", "-o", "/dev/null")
    c.wait_state(requeueable, "RUNNING", timeout=20)
    c.wait_state(fragile, "RUNNING", timeout=20)

    t0 = time.time()
    assert api("DELETE", f"{PODS}/ops-0").status_code == 200
    assert api("DELETE", f"{PODS}/ops-1").status_code == 200
    info = c.wait_state(requeueable, ("PENDING", "REQUEUED"), timeout=5)
    took = time.time() - t0
    failed = c.wait_state(fragile, "NODE_FAIL", timeout=5)
    print(f"requeued after {took:.2f}s")
    assert took < 2.0
    assert info["Restarts"] == "1", info
    assert failed["NodeList"] == "ops-1"
    log = ctld_log(c)
    assert "k8s operator: NodeSet ops: down ops-0 (pod ops-0 deleted)" in log, log[-3000:]

    # Both pods are replaced at once, under the lowest free names (an old one is taken until its
    # pod and node are gone, so a replacement may come back under another), and their nodes join.
    wait_for("two idle agents again", lambda: len(pod_names(api, "ops")) == 2 and all(
        nodes(c).get(n, "").startswith("idle") for n in pod_names(api, "ops")), timeout=40)
    wait_for("the lost nodes deleted", lambda: len([n for n in nodes(c) if n.startswith("ops-")]) == 2)
    assert c.job(requeueable)["JobState"] == "PENDING"
    c.ok("scancel", str(requeueable))


def test_rolling_update_replaces_every_pod_and_a_failing_pod_stops_it(api, cluster):
    c = cluster
    create(api, c, "ops", 3, max_unavailable=1)
    wait_idle(c, ["ops-0", "ops-1", "ops-2"])
    old = {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods_of(api, "ops")}
    flag = os.path.join(c.work, "go")
    job = c.sbatch("-w", "ops-1", "--wrap", f"while [ ! -e {flag} ]; do sleep 0.2; done", "-o", "/dev/null")
    c.wait_state(job, "RUNNING", timeout=20)

    # A new template: the idle pods are replaced one at a time, the busy one waits for its job.
    # A replacement takes the lowest free name: the old pod's is taken until it is gone.
    ns = api("GET", f"{NODESETS}/ops").json()
    tpl = ns["spec"]["template"]
    tpl["metadata"].setdefault("annotations", {})["drover.test/version"] = "2"
    patch(api, "ops", {"template": tpl})
    new_hash = None
    max_out = 0

    def updated():
        """The NodeSet's pods of the new template whose nodes are idle, once there are 3."""
        nonlocal max_out, new_hash
        pods = pods_of(api, "ops")
        st = nodes(c)
        ours = {n: s for n, s in st.items() if n.startswith("ops-")}
        max_out = max(max_out, 3 - sum(1 for s in ours.values() if s.startswith(("idle", "alloc", "mix"))))
        fresh = [p for p in pods if p["metadata"]["uid"] not in old.values()]
        if fresh:
            new_hash = fresh[0]["metadata"]["labels"]["drover.io/template-hash"]
        return [p["metadata"]["name"] for p in fresh if st.get(p["metadata"]["name"], "").startswith("idle")]
    wait_for("the idle pods replaced", lambda: len(updated()) == 2, timeout=60)
    assert c.job(job)["JobState"] == "RUNNING"
    # Its turn comes once the new pods are in service; it waits for its job.
    wait_for("ops-1 drained for the update", lambda: reasons(c).get("ops-1") == "rolling update")
    assert api("GET", f"{PODS}/ops-1").json()["metadata"]["uid"] == old["ops-1"]
    # A controller killed mid-rollout carries on from its journal: the busy pod stays drained
    # for the update, its job running.
    os.kill(c.pid("ctld.pid"), signal.SIGKILL)
    time.sleep(0.5)
    c.up()
    time.sleep(2)
    assert reasons(c).get("ops-1") == "rolling update"
    assert c.job(job)["JobState"] == "RUNNING"
    assert api("GET", f"{PODS}/ops-1").json()["metadata"]["uid"] == old["ops-1"]
    assert max_out <= 2, max_out  # the busy draining node and at most maxUnavailable=1 other
    open(flag, "w").close()
    assert c.wait_state(job, "COMPLETED", timeout=20)["Restarts"] == "0"
    wait_for("every pod replaced", lambda: len(updated()) == 3 and len(pods_of(api, "ops")) == 3, timeout=60)
    assert all(p["metadata"]["labels"]["drover.io/template-hash"] == new_hash for p in pods_of(api, "ops"))
    st = wait_for("updated", lambda: (lambda s: s if s.get("updatedReplicas") == 3 and s.get("idle") == 3
                                      else None)(api("GET", f"{NODESETS}/ops").json().get("status", {})))
    assert {x["type"]: x["status"] for x in st["conditions"]}["Progressing"] == "False"

    # A template whose pods fail: one pod is taken down, then the rollout stops (Degraded).
    tpl = api("GET", f"{NODESETS}/ops").json()["spec"]["template"]
    tpl["spec"]["restartPolicy"] = "Never"
    tpl["spec"]["containers"][0]["command"] = ["/bin/false"]
    patch(api, "ops", {"template": tpl})
    degraded = wait_for("Degraded", lambda: (lambda s: s if {x["type"]: x["status"] for x in s.get("conditions", [])}
                                             .get("Degraded") == "True" else None)(
        api("GET", f"{NODESETS}/ops").json().get("status", {})), timeout=40)
    print("degraded:", [x for x in degraded["conditions"] if x["type"] == "Degraded"])
    time.sleep(4)  # the rollout stays stopped: the two other pods keep their nodes in service
    idle = [n for n, s in nodes(c).items() if n.startswith("ops-") and s.startswith("idle")]
    assert len(idle) == 2, nodes(c)
    assert len([p for p in pods_of(api, "ops") if p["metadata"]["labels"]["drover.io/template-hash"]
                == new_hash]) == 2


def test_max_drain_time_wait_cancel_requeue(api, cluster):
    c = cluster
    create(api, c, "ops", 2, max_drain_time="2s", policy="Wait")
    wait_idle(c, ["ops-0", "ops-1"])
    # ops-1's job ends sooner by its time limit: it is the victim of the first scale-in.
    short = c.sbatch("-w", "ops-1", "-t", "10", "--wrap", "sleep 300", "-o", "/dev/null")
    long = c.sbatch("-w", "ops-0", "-t", "60", "--wrap", "sleep 300", "-o", "/dev/null")
    c.wait_state(short, "RUNNING", timeout=20)
    c.wait_state(long, "RUNNING", timeout=20)

    patch(api, "ops", {"replicas": 1})
    wait_for("ops-1 draining", lambda: reasons(c).get("ops-1") == "scale-in")
    assert "ops-0" not in reasons(c)
    time.sleep(4)  # past maxDrainTime: Wait leaves the job alone
    assert c.job(short)["JobState"] == "RUNNING"

    # Cancel: the job is cancelled, the pod goes, and the job says why (its SystemComment, in
    # scontrol show job and in accounting).
    patch(api, "ops", {"drainTimeoutPolicy": "Cancel"})
    c.wait_state(short, "CANCELLED", timeout=10)
    why = "node ops-1 drained for scale-in: maxDrainTime 2s reached"
    assert f"SystemComment={why}" in c.ok("scontrol", "show", "job", str(short))
    wait_for("sacct's SystemComment", lambda: c.ok(
        "sacct", "-n", "-X", "-j", str(short), "-o", "SystemComment%80").strip() == why)
    wait_for("ops-1 gone", lambda: "ops-1" not in nodes(c) and pod_names(api, "ops") == ["ops-0"],
             timeout=20)
    assert "maxDrainTime" in ctld_log(c)

    # Requeue: a requeueable job goes back to the queue.
    patch(api, "ops", {"drainTimeoutPolicy": "Requeue", "replicas": 0})
    info = c.wait_state(long, ("PENDING", "REQUEUED"), timeout=15)
    assert info["Restarts"] == "1", info
    wait_for("ops-0 gone", lambda: "ops-0" not in nodes(c) and pod_names(api, "ops") == [], timeout=20)
    c.ok("scancel", str(long))


def test_deleting_a_nodeset_drains_it_and_the_controller_stays_up(api, cluster):
    c = cluster
    create(api, c, "ops", 2)
    wait_idle(c, ["ops-0", "ops-1"])
    flag = os.path.join(c.work, "go")
    job = c.sbatch("-w", "ops-0", "--wrap", f"while [ ! -e {flag} ]; do sleep 0.2; done", "-o", "/dev/null")
    c.wait_state(job, "RUNNING", timeout=20)

    assert api("DELETE", f"{NODESETS}/ops").status_code == 200
    wait_for("ops-1 gone", lambda: "ops-1" not in nodes(c) and pod_names(api, "ops") == ["ops-0"])
    assert reasons(c).get("ops-0") == "nodeset deleted"
    assert api("GET", f"{NODESETS}/ops").status_code == 200  # the finalizer holds it
    c.ok("scontrol", "ping")
    assert c.job(job)["JobState"] == "RUNNING"

    open(flag, "w").close()
    assert c.wait_state(job, "COMPLETED", timeout=20)["Restarts"] == "0"
    wait_for("the NodeSet gone", lambda: api("GET", f"{NODESETS}/ops").status_code == 404
             and pod_names(api, "ops") == [] and "ops-0" not in nodes(c), timeout=30)
    c.ok("scontrol", "ping")
    assert os.path.exists(os.path.join(c.state_dir, "ctld.pid"))
    os.kill(c.pid("ctld.pid"), 0)


def pods_of(api, nodeset):
    r = api("GET", f"{PODS}?labelSelector=drover.io/nodeset%3D{nodeset}")
    return [p for p in r.json()["items"] if not p["metadata"].get("deletionTimestamp")]



def test_kubernetes_node_labels_become_features(api, cluster):
    """featuresFromNodeLabels: a label of the pod's Kubernetes node is a drover feature of its
    node (scontrol update AvailableFeatures= ActiveFeatures=, as the operator's command); a new
    label value replaces it, and a job's constraint follows."""
    c = cluster
    fakelet("node", "create", "kn2", "--cpu", "16", "--memory", "32Gi", "--label", "drover.test/zone=east")
    create(api, c, "z", 1, k8s_node="kn2",
           extra={"features": ["agent"], "featuresFromNodeLabels": ["drover.test/zone"]})
    wait_idle(c, ["z-0"])

    def features(node):
        out = c.ok("scontrol", "-o", "show", "node", node)
        avail = re.search(r"AvailableFeatures=(\S+)", out).group(1)
        active = re.search(r"ActiveFeatures=(\S+)", out).group(1)
        return avail, active
    wait_for("z-0's features", lambda: features("z-0") == ("agent,east", "agent,east"))
    assert c.wait_state(c.sbatch("-C", "east", "--wrap", "true", "-o", "/dev/null"), "COMPLETED",
                        timeout=20)["NodeList"] == "z-0"

    r = api("PATCH", "/api/v1/nodes/kn2", {"metadata": {"labels": {"drover.test/zone": "west"}}},
            content_type="application/merge-patch+json")
    assert r.status_code == 200, r.text
    wait_for("z-0's new features", lambda: features("z-0") == ("agent,west", "agent,west"))
    # The operator's change is journaled: a restarted controller has it.
    c.down()
    c.up()
    assert features("z-0") == ("agent,west", "agent,west")
