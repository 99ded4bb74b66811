"""Agent pods on a real kubelet (ctest k8s_kubelet, through run-kubelet): env/up with
DROVER_K8S_KUBELET=real starts two real nodes (containerd + runc + the pinned release's kubelet);
the agent image from deploy/images is loaded into their containerd; droverctld's operator runs
a NodeSet on each node, the kubelets run the pods from the image, and droverd in them registers
with the controller as dynamic nodes that run a job across the two pods. A deleted pod, which
the kubelet really stops, requeues its job and is replaced."""
import json
import os
import pathlib
import subprocess
import time

import pytest

from conftest import ROOT, wait_for
from operator_env import NODESETS, PODS, it, node_state_condition, nodes, pod_names, slurmctld_port, start_cluster

REAL_NODES = os.environ.get("DROVER_K8S_REAL_NODES", "").split()
pytestmark = pytest.mark.skipif(not REAL_NODES, reason="the environment has no real kubelet nodes "
                                "(tests/k8s/env/up with DROVER_K8S_KUBELET=real)")


def image_tag():
    for line in (ROOT / "deploy" / "helm" / "drover" / "Chart.yaml").read_text().splitlines():
        if line.startswith("appVersion:"):
            return line.split(":", 1)[1].strip().strip('"')
    raise AssertionError("no appVersion in Chart.yaml")


@pytest.fixture(scope="module")
def agent_image():
    """drover/agent:<tag> in every real node's containerd, built with deploy/images/build unless
    the build directory holds an image layout newer than its droverd."""
    build = pathlib.Path(it.BIN).parent
    oci = build / "images" / "oci"
    droverd = pathlib.Path(it.BIN, "droverd")
    if not (oci / "index.json").exists() or (oci / "index.json").stat().st_mtime < droverd.stat().st_mtime:
        subprocess.run([str(ROOT / "deploy" / "images" / "build"), "--build-dir", str(build)], check=True,
                       timeout=1200)
    tag = image_tag()
    index = json.loads((oci / "index.json").read_text())
    refs = [m.get("annotations", {}).get("org.opencontainers.image.ref.name") for m in index["manifests"]]
    assert f"agent-{tag}" in refs, refs
    name = f"drover/agent:{tag}"
    archive = subprocess.run(["tar", "-C", str(oci), "-cf", "-", "."], check=True, capture_output=True).stdout
    for n in REAL_NODES:
        sock = os.path.join(os.environ["DROVER_K8S_DIR"], "kubelet", n, "containerd.sock")
        ctr = ["ctr", "-a", sock, "-n", "k8s.io"]
        # The layout holds both images; the agent's gets the name the pods ask for.
        subprocess.run(ctr + ["images", "import", "--base-name", "drover/x", "-"], input=archive, check=True,
                       capture_output=True)
        # The kubelet asks for the name normalised, as a registry's would be.
        subprocess.run(ctr + ["images", "tag", "--force", f"drover/x:agent-{tag}", f"docker.io/{name}"],
                       check=True, capture_output=True)
    return name


def node_ip(api, node):
    addrs = api("GET", f"/api/v1/nodes/{node}").json()["status"]["addresses"]
    return next(a["address"] for a in addrs if a["type"] == "InternalIP")


def agent_nodeset(name, node, image, controller):
    """One agent pod on a real node: the chart's agent container (droverd on the pod's address,
    not privileged, four capabilities) and the image from the node's containerd. The vouching
    socket where srun in a job gets its credential is the operator's to add."""
    return {
        "apiVersion": "drover.io/v1alpha1", "kind": "NodeSet", "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "template": {"spec": {
                "nodeName": node,
                "enableServiceLinks": False,
                "automountServiceAccountToken": False,
                "terminationGracePeriodSeconds": 5,
                "containers": [{
                    "name": "droverd",
                    "image": image,
                    "imagePullPolicy": "Never",
                    "command": ["droverd", "--controller", controller, "--spool", "/var/spool/drover/%n",
                                "--listen", "$(DROVER_POD_IP)"],
                    "env": [{"name": "DROVER_POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                    "securityContext": {
                        "privileged": False, "allowPrivilegeEscalation": False, "runAsUser": 0,
                        "capabilities": {"drop": ["ALL"], "add": ["CHOWN", "KILL", "SETGID", "SETUID"]},
                        "seccompProfile": {"type": "RuntimeDefault"}},
                    "volumeMounts": [{"name": "spool", "mountPath": "/var/spool/drover"}],
                }],
                "volumes": [{"name": "spool", "emptyDir": {}}],
            }},
        },
    }


@pytest.fixture
def cluster(api, tmp_path):
    # The pods reach the controller through their node's bridge, not loopback.
    c = start_cluster(api, tmp_path, k8s_nodes=(), settings=("SlurmctldAddr=0.0.0.0",))
    try:
        yield c
    finally:
        c.down()
        for ns in api("GET", NODESETS).json().get("items", []):
            name = ns["metadata"]["name"]
            api("PATCH", f"{NODESETS}/{name}", {"metadata": {"finalizers": None}},
                content_type="application/merge-patch+json")
            api("DELETE", f"{NODESETS}/{name}")
        api("DELETE", f"{PODS}?labelSelector=drover.io/nodeset")


def pod(api, name):
    r = api("GET", f"{PODS}/{name}")
    return r.json() if r.status_code == 200 else None


def ready(p):
    return p and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or [])


def test_agent_pods_from_the_image_register_and_run_a_job(api, agent_image, cluster):
    c = cluster
    assert len(REAL_NODES) >= 2, "the test wants two real nodes (DROVER_K8S_KUBELET_NODES)"
    port = slurmctld_port(c)
    sets = {}
    t0 = time.time()
    for i, n in enumerate(REAL_NODES[:2]):
        name = f"real{i}"
        sets[name] = n
        r = api("POST", NODESETS, agent_nodeset(name, n, agent_image, f"{node_ip(api, n)}:{port}"))
        assert r.status_code == 201, r.text

    # The kubelets start the pods from the image; droverd registers; the operator's readiness
    # gate makes them Ready once their nodes are idle.
    try:
        wait_for("real0-0 and real1-0 idle in sinfo",
                 lambda: all(nodes(c).get(f"{s}-0", "").startswith("idle") for s in sets), timeout=120)
    except AssertionError:
        for s in sets:
            print(f"pod {s}-0:", json.dumps((pod(api, f"{s}-0") or {}).get("status"), indent=1))
        raise
    took = time.time() - t0
    for s, n in sets.items():
        p = wait_for(f"{s}-0 Ready", lambda: ready(pod(api, f"{s}-0")) and pod(api, f"{s}-0"), timeout=30)
        assert p["spec"]["nodeName"] == n
        st = p["status"]["containerStatuses"][0]
        assert st["ready"] and "running" in st["state"], st
        assert st["containerID"].startswith("containerd://"), st
        assert st["image"].endswith(agent_image), st
        # The pod's address is on its node's bridge (10.244.X.0/24, the node's IP being .1).
        prefix = node_ip(api, n).rsplit(".", 1)[0] + "."
        assert p["status"]["podIP"].startswith(prefix), (p["status"]["podIP"], prefix)
        # The operator gave droverd a vouching socket in a directory of the pod's own.
        c0 = p["spec"]["containers"][0]
        assert {"name": "DROVER_AUTH_SOCKET", "value": "/run/drover/auth.sock"} in c0["env"], c0
        assert {"name": "drover-run", "mountPath": "/run/drover"} in c0["volumeMounts"], c0
        assert {"name": "drover-run", "emptyDir": {}} in p["spec"]["volumes"], p["spec"]["volumes"]
        cond = wait_for(f"{s}-0 condition Idle",
                        lambda: (node_state_condition(api, f"{s}-0") or {}).get("reason") == "Idle"
                        and node_state_condition(api, f"{s}-0"))
        assert cond["status"] == "True"
    ips = {pod(api, f"{s}-0")["status"]["podIP"] for s in sets}
    assert len(ips) == 2, ips
    print(f"2 agent pods on real kubelets idle after {took:.1f}s")

    # A job across the two pods: srun in the batch script runs a task in each pod (hostname is
    # the pod's name); the output file is in the batch pod's spool, an emptyDir the kubelet
    # keeps under its root directory. The job is submitted with this host's environment, whose
    # DROVER_SOCKET names a file the pod does not have: the agent gives the job its own way to
    # the controller instead (its address, its vouching socket), and srun goes that way.
    assert c.env.get("DROVER_SOCKET"), "the submitting environment names its socket"
    job = c.sbatch("-N", "2", "-w", "real0-0,real1-0", "-D", "/tmp", "-o", "/var/spool/drover/job.out",
                   "--wrap", "echo ${DROVER_SOCKET-none} $DROVER_CONTROLLER $DROVER_AUTH_SOCKET; srun hostname")
    done = c.wait_state(job, ("COMPLETED", "FAILED"), timeout=60)
    batch = pod(api, done["BatchHost"])
    out = pathlib.Path(os.environ["DROVER_K8S_DIR"], "kubelet", batch["spec"]["nodeName"], "root", "pods",
                       batch["metadata"]["uid"], "volumes", "kubernetes.io~empty-dir", "spool", "job.out")
    text = out.read_text() if out.exists() else "(no output file)"
    assert done["JobState"] == "COMPLETED" and done["ExitCode"] == "0:0", (done, text)
    assert done["NodeList"] in ("real[0-1]-0", "real0-0,real1-0"), done
    first, *tasks = text.splitlines()
    assert first == f"none {node_ip(api, batch['spec']['nodeName'])}:{port} /run/drover/auth.sock", text
    assert sorted(tasks) == ["real0-0", "real1-0"], text

    # A deleted pod: its node DOWN and its job requeued at once; the kubelet stops the container
    # (SIGTERM to droverd) and confirms the deletion; the replacement pod joins.
    job = c.sbatch("-w", "real1-0", "-D", "/tmp", "-o", "/dev/null", "--wrap", "sleep 300")
    c.wait_state(job, "RUNNING", timeout=20)
    old = pod(api, "real1-0")["metadata"]["uid"]
    t0 = time.time()
    assert api("DELETE", f"{PODS}/real1-0").status_code == 200
    info = c.wait_state(job, ("PENDING", "REQUEUED"), timeout=5)
    took = time.time() - t0
    print(f"job on the deleted pod requeued after {took:.2f}s")
    assert took < 2.0 and info["Restarts"] == "1", info
    selector = f"{PODS}?labelSelector=drover.io/nodeset%3Dreal1"
    wait_for("the deleted pod gone",
             lambda: all(p["metadata"]["uid"] != old for p in api("GET", selector).json()["items"]), timeout=60)
    wait_for("a replacement agent idle", lambda: len(pod_names(api, "real1")) == 1 and all(
        nodes(c).get(n, "").startswith("idle") and ready(pod(api, n)) for n in pod_names(api, "real1")), timeout=60)
    c.ok("scancel", str(job))
