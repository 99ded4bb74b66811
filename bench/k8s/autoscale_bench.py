#!/usr/bin/env python3
"""The autoscaler's decision latency on the real API server (tests/k8s/env), for
docs/benchmarks.md: from `sbatch` returning to the NodeSet's spec.replicas changed.

  tests/k8s/env/up /tmp/k8s && source /tmp/k8s/env
  DROVER_BUILD_DIR=build python3 bench/k8s/autoscale_bench.py [--samples 20] [--width 1]

An autoscaled NodeSet (min 0, max --samples x --width, startupTime 10s, idleTimeout 1h) of agent
pods the fakelet runs as local droverd processes, in a partition of its own. Each sample submits
one job of --width nodes that runs for an hour, so every submission needs --width more nodes,
and times the submission -> replicas + width. Prints p50, p99 and the worst, and `uptime`
before and after."""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "k8s"))
sys.path.insert(0, str(ROOT / "tests" / "k8s"))
from operator_bench import api_session, ensure_crd, wait  # noqa: E402
from operator_env import NODESETS, PODS, agent_nodeset, it  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--width", type=int, default=1)
    args = ap.parse_args()
    api = api_session()
    ensure_crd(api)
    print("uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    subprocess.run([os.environ["DROVER_K8S_FAKELET"], "node", "create", "kn1", "--cpu", "512",
                    "--memory", "2Ti"], check=True, capture_output=True)
    subprocess.run([os.environ["DROVER_K8S_FAKELET"], "node", "uncordon", "kn1"], check=True,
                   capture_output=True)
    most = args.samples * args.width
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="drover-k8s-autoscale-"))
    work = tmp / "work"
    work.mkdir()
    os.chmod(work, 0o1777)
    c = it.Cluster(str(tmp / "state"), str(work))
    c.up("--nodes", "1", "--cpus", "1", "--mem", "500", "--timeout", "120",
         "--set", "DroverK8sNamespace=default", "--set", f"DroverK8sKubeconfig={os.environ['KUBECONFIG']}",
         "--set", f"MaxNodeCount={2 * most + 8}", "--set", "NodeSet=elastic Feature=elastic",
         "--set", "PartitionName=elastic Nodes=elastic")
    try:
        body = agent_nodeset(c, "auto", 0, extra={
            "features": ["elastic"],
            "autoscaling": {"minReplicas": 0, "maxReplicas": most, "idleTimeout": "1h",
                            "startupTime": "10s"}})
        assert api("POST", NODESETS, body).status_code == 201

        def replicas():
            return api("GET", f"{NODESETS}/auto").json()["spec"].get("replicas", 0)
        wait("powered-down nodes", lambda: c.ok("sinfo", "-h", "-p", "elastic", "-o", "%D").strip()
             == str(most), 60, step=0.2)
        lat = []
        for i in range(args.samples):
            before = replicas()
            t0 = time.time()
            c.sbatch("-p", "elastic", f"-N{args.width}", "-t", "60", "--wrap", "sleep 3600",
                     "-o", "/dev/null")
            wait("replicas", lambda: replicas() >= before + args.width, 30, step=0.01)
            lat.append(time.time() - t0)
            time.sleep(0.5)  # let the new pods start, as submissions would arrive
        lat.sort()
        p99 = lat[min(len(lat) - 1, int(round(0.99 * (len(lat) - 1))))]
        print(f"submission -> replicas (+{args.width} per job, {len(lat)} jobs): "
              f"p50 {statistics.median(lat) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
              f"max {lat[-1] * 1000:.0f} ms")
    finally:
        c.ok("scancel", "-p", "elastic")
        api("PATCH", f"{NODESETS}/auto", {"metadata": {"finalizers": None}}, "application/merge-patch+json")
        api("DELETE", f"{NODESETS}/auto")
        c.down()
        api("DELETE", f"{PODS}?labelSelector=drover.io/nodeset")
        api("DELETE", "/api/v1/namespaces/default/secrets?labelSelector=drover.io/nodeset")
        print("uptime after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
