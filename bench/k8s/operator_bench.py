#!/usr/bin/env python3
"""The NodeSet operator's figures on the real API server (tests/k8s/env), for docs/benchmarks.md.

  tests/k8s/env/up /tmp/k8s && source /tmp/k8s/env
  DROVER_BUILD_DIR=build python3 bench/k8s/operator_bench.py [--agents 100] [--simulated 1000]

1. NodeSet created -> nodes idle: a NodeSet of --agents real agent pods (the fakelet runs each
   pod's droverd as a local process), from the POST to every node idle in sinfo.
2. Node state -> pod condition: `scontrol update State=DRAIN` / `RESUME` on one node, until the
   pod's drover.io/NodeState condition says so (--samples times each).
3. Scale-in of the --agents pods to 0 (all idle): from the /scale patch to every pod gone and
   every drover node deleted.
4. The operator's CPU and memory with --simulated pods: a NodeSet whose pods the fakelet only
   marks Running (no droverd, so no drover nodes; registrationTimeout is an hour, so they are
   not replaced). Each pass still reads every pod, and each pod's condition is written once
   (Unregistered). The figures are droverctld's CPU time (utime+stime from /proc) and RSS
   until the pods run, until every condition is written, then over --steady seconds of
   steady state (nothing changes; a pass a second).
Prints one line per figure, and `uptime` before and after."""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import requests

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "k8s"))
from operator_env import NODESETS, PODS, agent_nodeset, it, nodes  # noqa: E402

CRD = ROOT / "deploy" / "crds" / "drover.io_nodesets.yaml"


def api_session():
    s = requests.Session()
    s.headers["Authorization"] = "Bearer " + os.environ["DROVER_K8S_TOKEN"]
    server, ca = os.environ["DROVER_K8S_SERVER"], os.environ["DROVER_K8S_CA"]

    def call(method, path, body=None, content_type="application/json"):
        return s.request(method, server + path, json=body, headers={"Content-Type": content_type},
                         timeout=60, verify=ca)
    return call


def ensure_crd(api):
    import yaml
    r = api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", yaml.safe_load(CRD.read_text()))
    assert r.status_code in (201, 409), r.text
    wait("CRD", lambda: api("GET", NODESETS).status_code == 200, 30)


def wait(what, check, timeout, step=0.05):
    deadline = time.time() + timeout
    while True:
        v = check()
        if v:
            return v
        if time.time() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(step)


def cpu_rss(pid):
    """(CPU seconds used so far, RSS in MiB) of a process."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1)) / 1024
    return cpu, rss


def pod_condition(api, pod):
    r = api("GET", f"{PODS}/{pod}")
    for c in r.json().get("status", {}).get("conditions") or []:
        if c["type"] == "drover.io/NodeState":
            return c
    return {}


def live_pods(api, name):
    r = api("GET", f"{PODS}?labelSelector=drover.io/nodeset%3D{name}")
    return [p for p in r.json()["items"] if not p["metadata"].get("deletionTimestamp")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agents", type=int, default=100)
    ap.add_argument("--simulated", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--steady", type=int, default=30)
    args = ap.parse_args()
    api = api_session()
    ensure_crd(api)
    print("uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    subprocess.run([os.environ["DROVER_K8S_FAKELET"], "node", "create", "kn1", "--cpu", "512",
                    "--memory", "2Ti"], check=True, capture_output=True)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="drover-k8s-bench-"))
    work = tmp / "work"
    work.mkdir()
    c = it.Cluster(str(tmp / "state"), str(work))
    c.up("--nodes", "1", "--cpus", "1", "--mem", "500", "--timeout", "120",
         "--set", "DroverK8sNamespace=default", "--set", f"DroverK8sKubeconfig={os.environ['KUBECONFIG']}",
         "--set", f"MaxNodeCount={args.agents + 8}")
    ctld = c.pid("ctld.pid")
    try:
        n = args.agents
        names = [f"bench-{i}" for i in range(n)]
        body = agent_nodeset(c, "bench", n)
        body["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["memory"] = "256Mi"
        t0 = time.time()
        assert api("POST", NODESETS, body).status_code == 201
        wait("agents idle", lambda: sum(1 for x in names if nodes(c).get(x, "").startswith("idle")) == n,
             300, step=0.2)
        print(f"nodeset of {n} created -> {n} nodes idle: {time.time() - t0:.1f} s")

        lat = {"drain": [], "resume": []}
        for i in range(args.samples):
            node = names[i % n]
            for state, reason in (("DRAIN", "Drain"), ("RESUME", "Idle")):
                cmd = ["scontrol", "update", f"NodeName={node}", f"State={state}"]
                if state == "DRAIN":
                    cmd.append("Reason=bench")
                t = time.time()
                c.ok(*cmd)
                wait(f"{node} {reason}", lambda: pod_condition(api, node).get("reason") == reason, 10, 0.01)
                lat[state.lower()].append(time.time() - t)
        for k, v in lat.items():
            v.sort()
            print(f"scontrol {k} -> pod condition: median {v[len(v) // 2] * 1000:.0f} ms, "
                  f"max {v[-1] * 1000:.0f} ms ({len(v)} samples, including scontrol itself)")

        cpu0, _ = cpu_rss(ctld)
        t0 = time.time()
        r = api("PATCH", f"{NODESETS}/bench/scale", {"spec": {"replicas": 0}},
                "application/merge-patch+json")
        assert r.status_code == 200, r.text
        wait("scale-in", lambda: not live_pods(api, "bench") and not any(x.startswith("bench-") for x in nodes(c)),
             300, step=0.2)
        cpu1, _ = cpu_rss(ctld)
        print(f"scale-in of {n} idle agent pods -> pods and nodes gone: {time.time() - t0:.1f} s "
              f"(droverctld CPU {cpu1 - cpu0:.2f} s)")
        api("DELETE", f"{NODESETS}/bench")
        wait("bench deleted", lambda: api("GET", f"{NODESETS}/bench").status_code == 404, 60)

        # Simulated pods: the fakelet marks them Running; no droverd, so no drover nodes.
        m = args.simulated
        body = agent_nodeset(c, "sim", m, extra={"registrationTimeout": "1h"})
        body["spec"]["template"]["metadata"]["annotations"] = {}
        body["spec"]["template"]["spec"]["containers"][0]["command"] = ["/bin/true"]
        cpu0, rss0 = cpu_rss(ctld)
        t0 = time.time()
        assert api("POST", NODESETS, body).status_code == 201
        wait("simulated pods", lambda: sum(1 for p in live_pods(api, "sim")
                                           if p.get("status", {}).get("phase") == "Running") == m, 600, step=1)
        cpu1, rss1 = cpu_rss(ctld)
        print(f"{m} simulated pods created and Running: {time.time() - t0:.1f} s, droverctld CPU "
              f"{cpu1 - cpu0:.1f} s, RSS {rss0:.0f} -> {rss1:.0f} MiB")
        def with_condition():
            return sum(1 for p in live_pods(api, "sim")
                       if any(x["type"] == "drover.io/NodeState" for x in p["status"].get("conditions") or []))
        wait("conditions", lambda: with_condition() == m, 900, step=2)
        cpu2, rss2 = cpu_rss(ctld)
        print(f"... and every pod's condition written: {time.time() - t0:.1f} s, droverctld CPU "
              f"{cpu2 - cpu0:.1f} s, RSS {rss2:.0f} MiB")
        time.sleep(3)
        cpu2, _ = cpu_rss(ctld)
        time.sleep(args.steady)
        cpu3, rss3 = cpu_rss(ctld)
        print(f"steady state with {m} pods: droverctld CPU {(cpu3 - cpu2) / args.steady * 100:.1f}% of a core "
              f"over {args.steady} s (a pass a second), RSS {rss3:.0f} MiB")
    finally:
        for name in ("bench", "sim"):
            api("PATCH", f"{NODESETS}/{name}", {"metadata": {"finalizers": None}}, "application/merge-patch+json")
            api("DELETE", f"{NODESETS}/{name}")
        c.down()
        api("DELETE", f"{PODS}?labelSelector=drover.io/nodeset")
        api("DELETE", "/api/v1/namespaces/default/secrets?labelSelector=drover.io/nodeset")
        print("uptime after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
