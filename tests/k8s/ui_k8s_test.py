"""The dashboard's Kubernetes view against a controller that runs the NodeSet operator (ctest
k8s_ui, through run-smoke): /ui/api/k8s shows the NodeSet, its pods with the drover node each
runs, and the event stream says when the operator's view moves (a scale-in)."""
import json
import os
import re
import time

import pytest
import requests

from conftest import wait_for
from operator_env import NODESETS, PODS, agent_nodeset, nodes, start_cluster


@pytest.fixture
def cluster(api, tmp_path):
    c = start_cluster(api, tmp_path, max_nodes=8)
    try:
        yield c
    finally:
        api("DELETE", f"{NODESETS}/uiset")
        c.down()
        api("DELETE", f"{PODS}?labelSelector=drover.io/nodeset%3Duiset")


def ui(c):
    with open(os.path.join(c.state_dir, "env.sh")) as f:
        base = re.search(r"^export DROVER_API=(\S+)$", f.read(), re.M).group(1)
    tok = re.fullmatch(r"SLURM_JWT=(\S+)\n", c.ok("scontrol", "token")).group(1)
    headers = {"X-SLURM-USER-TOKEN": tok}

    def get(path, **kw):
        return requests.get(base + path, headers=headers, **{"timeout": 10, **kw})
    return get


def test_kubernetes_view_follows_the_operator(api, cluster):
    c = cluster
    r = api("POST", NODESETS, agent_nodeset(c, "uiset", 2, extra={"cost": 3}))
    assert r.status_code == 201, r.text
    wait_for("uiset-0 and uiset-1 idle", lambda: all(
        nodes(c).get(n, "").startswith("idle") for n in ("uiset-0", "uiset-1")), timeout=40)
    get = ui(c)
    assert get("/ui/api/whoami").json()["k8s"] is True

    def view_with(check):
        def look():
            v = get("/ui/api/k8s").json()
            return v if check(v) else None
        return look
    v = wait_for("both pods idle in the view", view_with(lambda v: [
        p["node_state"] for p in v.get("pods", [])] == ["idle", "idle"]), timeout=20)
    assert v["enabled"] and v["namespace"] == "default"
    (ns,) = v["nodesets"]
    assert ns["name"] == "uiset" and ns["replicas"] == 2 and ns["cost"] == 3, ns
    assert ns["update_strategy"] == "RollingUpdate" and ns["autoscaling"] is None, ns
    assert ns["node_states"] == {"idle": 2}, ns
    assert [p["name"] for p in v["pods"]] == ["uiset-0", "uiset-1"]
    for p in v["pods"]:
        assert p["phase"] == "Running" and p["k8s_node"] == "kn1" and not p["busy"], p
    # Nothing of the pods' specs (the agent's command line) goes out.
    assert "--controller" not in json.dumps(v)

    # The event stream says when the operator's view moves: a scale-in.
    with get("/ui/api/events", stream=True, timeout=30) as s:
        # Line by line as they come (the default chunk waits for 512 bytes).
        lines = s.iter_lines(chunk_size=1, decode_unicode=True)
        hello = None
        for line in lines:
            if line.startswith("data:"):
                hello = json.loads(line[5:])
                break
        assert hello and hello["k8s"] > 0, hello
        r = api("PATCH", f"{NODESETS}/uiset", {"spec": {"replicas": 1}},
                content_type="application/merge-patch+json")
        assert r.status_code == 200, r.text
        deadline = time.time() + 20
        event = None
        for line in lines:
            assert time.time() < deadline, "no k8s event after the scale-in"
            if line == "event: k8s":
                event = json.loads(next(lines)[5:])
                break
        assert event and event["version"] > hello["k8s"], (hello, event)
    wait_for("uiset-1 gone from the view", view_with(
        lambda v: [p["name"] for p in v["pods"]] == ["uiset-0"]
        and v["nodesets"][0]["replicas"] == 1), timeout=30)
