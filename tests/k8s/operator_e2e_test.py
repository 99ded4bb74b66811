"""droverctld's NodeSet operator end to end (ctest k8s_operator_e2e, through run-smoke): a
controller started by `drover up` with DroverK8sNamespace= watches a NodeSet on the real API
server; the fakelet runs each agent pod's droverd as a local process (exec mode), which joins
as a dynamic node with the key the operator put in a Secret. Scale up, a job, scale down, and a
deleted pod marking its node DOWN."""
import json
import os
import pathlib
import time

import pytest

from conftest import wait_for
from operator_env import NODESETS, NS, PODS, it, node_state_condition, nodes, slurmctld_port, start_cluster


@pytest.fixture
def cluster(api, tmp_path):
    c = start_cluster(api, tmp_path, max_nodes=16)
    try:
        yield c
    finally:
        api("DELETE", f"{NODESETS}/ops")
        c.down()
        # The agent pods' processes belong to the fakelet: delete the pods so it stops them.
        api("DELETE", f"{PODS}?labelSelector=drover.io/nodeset%3Dops")


def test_nodeset_scales_runs_jobs_and_follows_pods(api, cluster):
    c = cluster
    port = slurmctld_port(c)
    droverd = os.path.join(it.BIN, "droverd")
    body = {
        "apiVersion": "drover.io/v1alpha1",
        "kind": "NodeSet",
        "metadata": {"name": "ops"},
        "spec": {
            "replicas": 2,
            "template": {
                "metadata": {"annotations": {"fakelet.drover.test/exec": "true"}},
                "spec": {
                    "nodeName": "kn1",
                    "containers": [{
                        "name": "droverd",
                        "image": "drover/agent",
                        "command": [droverd, "--controller", f"127.0.0.1:{port}",
                                    "--spool", os.path.join(c.state_dir, "spool-%n"),
                                    "--listen", "127.0.0.1"],
                        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                    }],
                },
            },
        },
    }
    t0 = time.time()
    r = api("POST", NODESETS, body)
    assert r.status_code == 201, r.text

    # Two agent pods, their droverd joined as idle nodes, the pods' condition says so.
    wait_for("ops-0 and ops-1 idle in sinfo",
             lambda: all(nodes(c).get(n, "").startswith("idle") for n in ("ops-0", "ops-1")),
             timeout=30)
    for pod in ("ops-0", "ops-1"):
        cond = wait_for(f"{pod} condition Idle",
                        lambda: (node_state_condition(api, pod) or {}).get("reason") == "Idle"
                        and node_state_condition(api, pod))
        assert cond["status"] == "True"
        secret = api("GET", f"/api/v1/namespaces/{NS}/secrets/{pod}-key")
        assert secret.status_code == 200
        pod_obj = api("GET", f"{PODS}/{pod}").json()
        assert "DROVER_NODE_KEY" in json.dumps(pod_obj)
        # The key is in the Secret only, never in the pod.
        key = secret.json()["data"]["key"]
        assert key not in json.dumps(pod_obj)
    print(f"2 nodes idle after {time.time() - t0:.1f}s")

    # A job runs on them.
    job = c.sbatch("-N", "2", "-w", "ops-[0-1]", "--wrap", "echo ran", "-o", os.path.join(c.work, "out"))
    done = c.wait_state(job, "COMPLETED", timeout=30)
    assert done["NodeList"] == "ops-[0-1]"
    assert open(os.path.join(c.work, "out")).read() == "ran\n"

    # Scale to 1: the higher ordinal is drained, its pod deleted, its node gone from sinfo.
    r = api("PATCH", f"{NODESETS}/ops", {"spec": {"replicas": 1}},
            content_type="application/merge-patch+json")
    assert r.status_code == 200, r.text
    wait_for("ops-1 gone", lambda: "ops-1" not in nodes(c)
             and api("GET", f"{PODS}/ops-1").status_code == 404, timeout=20)
    assert "ops-0" in nodes(c)
    assert "k8s operator: NodeSet ops: drain ops-1 (scale-in)" in pathlib.Path(c.state_dir, "ctld.log").read_text()

    # A deleted pod: its node DOWN within 2 s, which fails the job running there (not
    # requeueable) as a lost node does; once its pod is gone and it is empty, the node goes.
    job = c.sbatch("-w", "ops-0", "--no-requeue", "--wrap", "sleep 300", "-o", "/dev/null")
    c.wait_state(job, "RUNNING", timeout=20)
    r = api("DELETE", f"{PODS}/ops-0")
    assert r.status_code == 200, r.text
    deleted = time.time()
    failed = c.wait_state(job, "NODE_FAIL", timeout=5)
    took = time.time() - deleted
    print(f"job on the deleted pod's node failed after {took:.2f}s")
    assert took < 2.0
    log = pathlib.Path(c.state_dir, "ctld.log").read_text()
    assert "k8s operator: NodeSet ops: down ops-0" in log, log[-3000:]
    assert failed["NodeList"] == "ops-0"
    print(f"total {time.time() - t0:.1f}s")
