"""The controller in its StatefulSet pod, as the Helm chart installs it. Run by CTest
(k8s_statefulset) through run-smoke, with kube-scheduler (DROVER_K8S_SCHEDULER=1) and Services on
loopback cluster IPs that the fakelet proxies (DROVER_K8S_SERVICE_CIDR=loopback).

`helm install` of deploy/helm/drover with only test values (the build's binaries as commands,
loopback listeners, a fixed cluster IP): the StatefulSet controller creates the controller's pod
and its journal claim, the scheduler places the pod, the fakelet's provisioner gives the claim a
directory and the fakelet runs the init container and droverctld with the chart's ConfigMap,
Secret, claim and service-account token mounted at the chart's paths. A NodeSet of 3 becomes 3
idle nodes and Ready pods whose agents reach the controller through its Service; `sbatch -N2`
with srun runs across two agent pods; the controller's pod deleted, the StatefulSet makes a new
one on the same claim, droverctld recovers its journal, and the job runs on to completion.
Every command goes through the Service's address, as from a login pod.
"""
import base64
import json
import os
import pathlib
import random
import re
import subprocess
import time

import pytest
import yaml

import helm_test as ht
from conftest import wait_for

CHART = ht.CHART
BUILD = ht.BUILD
NS = "hpc"
tools = ht.tools
kubectl, helm = ht.kubectl, ht.helm


def pod(t, name):
    p = kubectl(t, "get", "pod", name, "-n", NS, "-o", "json", check=False)
    return json.loads(p.stdout) if p.returncode == 0 else None


def ready(p):
    conds = {c["type"]: c["status"] for c in (p or {}).get("status", {}).get("conditions") or []}
    return p is not None and not p["metadata"].get("deletionTimestamp") and conds.get("Ready") == "True"


def droverctld_pid(uid):
    """The pid of the droverctld the fakelet started for the pod with this UID."""
    log = (pathlib.Path(os.environ["DROVER_K8S_DIR"]) / "logs" / "fakelet.log").read_text()
    pids = re.findall(rf"pod {NS}/drover-0 container droverctld: started pid (\d+): .*{uid}", log)
    return int(pids[-1]) if pids else None


@pytest.fixture()
def cluster(tools, tmp_path):
    cidr = os.environ.get("DROVER_K8S_SERVICE_CIDR", "")
    if not cidr.startswith("127."):
        pytest.fail("needs env/up with DROVER_K8S_SERVICE_CIDR=loopback and DROVER_K8S_SCHEDULER=1")
    droverctld, droverd = BUILD / "bin" / "droverctld", BUILD / "bin" / "droverd"
    assert droverctld.exists() and droverd.exists(), "build drover first"
    for n in ("kn-a", "kn-b"):
        subprocess.run([os.environ["DROVER_K8S_FAKELET"], "node", "create", n, "--cpu", "16",
                        "--memory", "32Gi"], check=True, capture_output=True)
    port, http_port = ht.free_port(), ht.free_port()
    svc_ip = cidr.rsplit(".", 1)[0] + "." + str(random.randint(100, 250))
    values = {
        "service": {"clusterIP": svc_ip, "ports": {"slurmctld": port, "http": http_port}},
        "controller": {
            "command": [str(droverctld)],
            # The fakelet runs the pod's containers as local processes, volumes mounted.
            "podAnnotations": {"fakelet.drover.test/exec": "true"},
        },
        "slurmConf": {"settings": {
            # Every pod here has the host's loopback address: listen on it only.
            "SlurmctldAddr": "127.0.0.1",
            "DroverHttpAddress": "127.0.0.1",
            # The fakelet runs every process as root.
            "SlurmUser": "root",
        }},
        "agent": {"command": [str(droverd), "--controller", f"{svc_ip}:{port}",
                              "--spool", str(tmp_path / "spool-%n"), "--listen", "$(DROVER_POD_IP)"],
                  "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
        "nodeSets": [{"name": "cpu", "replicas": 3, "partitions": ["batch"],
                      "template": {"metadata": {"annotations": {"fakelet.drover.test/exec": "true"}}}}],
    }
    (tmp_path / "values.yaml").write_text(yaml.safe_dump(values))
    t0 = time.time()
    helm(tools, "install", "drover", str(CHART), "-n", NS, "--create-namespace",
         "-f", str(tmp_path / "values.yaml"), timeout=300)
    env = dict(os.environ, DROVER_CONTROLLER=f"{svc_ip}:{port}")
    env.pop("DROVER_SOCKET", None)
    yield {"t0": t0, "env": env, "svc_ip": svc_ip, "port": port, "tmp": tmp_path}
    helm(tools, "uninstall", "drover", "-n", NS, check=False, timeout=300)
    # Nobody drains any more: lift the operator's finalizer so the NodeSet can go.
    kubectl(tools, "patch", "nodeset", "cpu", "-n", NS, "--type=merge",
            "-p", '{"metadata":{"finalizers":null}}', check=False)
    kubectl(tools, "delete", "pods", "-n", NS, "--all", "--wait=false", check=False)
    kubectl(tools, "delete", "namespace", NS, "--wait=false", check=False)


def auth_socket(c):
    """cpu-0's vouching socket, as a login pod would have one: the operator gives every agent pod
    one in an emptyDir at /run/drover, which the fakelet keeps in the pod's directory. Reached
    through a link: the directory's path is longer than a socket's address may be."""
    dirs = sorted(pathlib.Path(os.environ["DROVER_K8S_DIR"], "fakelet").glob(
        f"{NS}_cpu-0_*/volumes/drover-run"), key=lambda d: d.stat().st_mtime)
    link = c["tmp"] / "run-cpu-0"
    if dirs and (not link.is_symlink() or os.readlink(link) != str(dirs[-1])):
        link.unlink(missing_ok=True)
        link.symlink_to(dirs[-1])
    return str(link / "auth.sock")


def cmd(c, name, *args, check=True):
    p = subprocess.run([str(BUILD / "slurm-bin" / name), *args], capture_output=True, text=True,
                       env=dict(c["env"], DROVER_AUTH_SOCKET=auth_socket(c)), timeout=60)
    if check:
        assert p.returncode == 0, f"{name} {args}: {p.stdout}{p.stderr}"
    return p


def sinfo(c):
    p = cmd(c, "sinfo", "-h", "-N", "-o", "%N %T", check=False)
    return dict(line.split()[:2] for line in p.stdout.splitlines() if line.strip()) if p.returncode == 0 else {}


def test_controller_in_its_statefulset_pod_survives_its_deletion(tools, cluster):
    c = cluster
    # The controller's pod: placed by the scheduler (the chart names no node), its journal claim
    # bound to a volume the fakelet provisioned, Ready once droverctld listens.
    ctl = wait_for("drover-0 Ready", lambda: (p := pod(tools, "drover-0")) and ready(p) and p, timeout=90)
    assert ctl["spec"]["nodeName"] in ("kn-a", "kn-b")
    pvc = json.loads(kubectl(tools, "get", "pvc", "state-drover-0", "-n", NS, "-o", "json").stdout)
    assert pvc["status"]["phase"] == "Bound" and pvc["spec"]["storageClassName"] == "fakelet-hostpath"
    pv = json.loads(kubectl(tools, "get", "pv", pvc["spec"]["volumeName"], "-o", "json").stdout)
    journal_dir = pathlib.Path(pv["spec"]["hostPath"]["path"])

    # droverctld sees the chart's files at the chart's paths (its mount namespace, through
    # /proc/PID/root), and talks to the API server as the chart's ServiceAccount, not as the
    # fakelet's admin.
    uid = ctl["metadata"]["uid"]
    pid = wait_for("droverctld's pid", lambda: droverctld_pid(uid))
    root = pathlib.Path(f"/proc/{pid}/root")
    conf = kubectl(tools, "get", "configmap", "drover-config", "-n", NS,
                   "-o", "jsonpath={.data.slurm\\.conf}").stdout
    assert (root / "etc/drover/slurm.conf").read_text() == conf
    assert oct((root / "var/lib/drover/cluster.key").stat().st_mode & 0o777) == "0o600"
    environ = dict(kv.split("=", 1) for kv in
                   pathlib.Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0") if "=" in kv)
    assert "KUBECONFIG" not in environ and environ["KUBERNETES_SERVICE_HOST"]
    # /var/run is a link to /run: resolved here, since /proc/PID/root does not follow links
    # within the process's view.
    sa = root / os.path.realpath("/var/run/secrets/kubernetes.io/serviceaccount").lstrip("/")
    token = (sa / "token").read_text()
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["sub"] == f"system:serviceaccount:{NS}:drover", claims
    assert (sa / "namespace").read_text() == NS

    # The NodeSet of 3: three idle nodes (sinfo through the Service) and three Ready pods.
    def idle():
        n = sinfo(c)
        return all(n.get(f"cpu-{i}", "").startswith("idle") for i in range(3)) and n
    nodes = wait_for("cpu-0..2 idle", idle, timeout=90)
    print(f"helm install -> 3 idle nodes in {time.time() - c['t0']:.1f}s: {nodes}")
    for i in range(3):
        wait_for(f"cpu-{i} Ready", lambda i=i: ready(pod(tools, f"cpu-{i}")), timeout=30)
    wait_for("nodeset 3 3 3", lambda: kubectl(tools, "get", "nodesets", "cpu", "-n", NS, "--no-headers")
             .stdout.split()[1:4] == ["3", "3", "3"], timeout=30)

    # A job across two agent pods, srun inside, long enough to outlive the controller's pod.
    srun = BUILD / "slurm-bin" / "srun"
    script = c["tmp"] / "job.sh"
    script.write_text(f"#!/bin/bash\n{srun} -l bash -c 'sleep 12; echo on $SLURMD_NODENAME'\n")
    out = c["tmp"] / "job.out"
    job = cmd(c, "sbatch", "--parsable", "-N2", "-o", str(out), str(script)).stdout.strip()
    wait_for("job running", lambda: cmd(c, "squeue", "-h", "-j", job, "-o", "%T %D",
                                        check=False).stdout.split() == ["RUNNING", "2"], timeout=30)
    wait_for("step 0 running", lambda: f"{job}.0" in cmd(c, "squeue", "-h", "-s", "-o", "%i",
                                                          check=False).stdout, timeout=30)

    # The controller's pod goes: the StatefulSet makes a new one on the same claim, droverctld
    # recovers its journal from it, and the Service leads to the new pod.
    t_del = time.time()
    kubectl(tools, "delete", "pod", "drover-0", "-n", NS, "--wait=false")
    new = wait_for("a new drover-0 Ready", lambda: (p := pod(tools, "drover-0")) and
                   p["metadata"]["uid"] != uid and ready(p) and p, timeout=90)
    print(f"controller pod deleted -> new pod Ready in {time.time() - t_del:.1f}s")
    new_pvc = [v["persistentVolumeClaim"]["claimName"] for v in new["spec"]["volumes"]
               if "persistentVolumeClaim" in v]
    assert new_pvc == ["state-drover-0"]
    state = wait_for("squeue through the Service", lambda: (p := cmd(c, "squeue", "-h", "-j", job,
                                                                      "-o", "%T", check=False))
                     .returncode == 0 and p.stdout.strip(), timeout=30)
    assert state in ("RUNNING", "COMPLETING", "COMPLETED"), state
    new_pid = wait_for("the new droverctld's pid", lambda: droverctld_pid(new["metadata"]["uid"]))
    assert new_pid != pid
    log = next(pathlib.Path(os.environ["DROVER_K8S_DIR"], "fakelet").glob(
        f"{NS}_drover-0_{new['metadata']['uid']}/droverctld.log")).read_text()
    assert re.search(r"journal: [1-9]\d* jobs", log), log[-2000:]
    assert any(journal_dir.iterdir())

    # The job runs on to completion, its step on both agent pods.
    def done():
        p = cmd(c, "sacct", "-n", "-X", "-j", job, "-o", "State%20,ExitCode", check=False)
        return p.returncode == 0 and p.stdout.split()[:1] in (["COMPLETED"], ["FAILED"], ["CANCELLED"],
                                                             ["NODE_FAIL"]) and p.stdout.split()
    st = wait_for("job done", done, timeout=60)
    assert st[:2] == ["COMPLETED", "0:0"], (st, out.read_text() if out.exists() else "")
    lines = sorted(out.read_text().split("\n"))
    on = sorted(line.split()[-1] for line in lines if " on " in line)
    assert len(on) == 2 and len(set(on)) == 2 and all(n.startswith("cpu-") for n in on), lines
    # The nodes stayed in the cluster throughout: idle again, not DOWN.
    wait_for("nodes idle again", idle, timeout=30)
