"""Helpers for the operator's end-to-end tests: a drover cluster whose controller runs the
NodeSet operator against the environment's API server, NodeSets of agent pods the fakelet runs
as local droverd processes, and what sinfo, scontrol and the API server say about them."""
import importlib.util
import os
import pathlib
import re
import subprocess

HERE = pathlib.Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("drover_it", HERE.parent / "integration" / "conftest.py")
it = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(it)

NS = "default"
NODESETS = f"/apis/drover.io/v1alpha1/namespaces/{NS}/nodesets"
PODS = f"/api/v1/namespaces/{NS}/pods"
MERGE = "application/merge-patch+json"


def fakelet(*args):
    subprocess.run([os.environ["DROVER_K8S_FAKELET"], *args], check=True, capture_output=True)


def start_cluster(api, tmp_path, k8s_nodes=("kn1",), settings=(), max_nodes=32):
    """Fake Kubernetes nodes and a drover cluster (one static node) whose controller runs the
    operator in namespace NS."""
    for n in k8s_nodes:
        fakelet("node", "create", n, "--cpu", "16", "--memory", "32Gi")
        fakelet("node", "uncordon", n)
    state = str(tmp_path / "state")
    work = str(tmp_path / "work")
    os.makedirs(work)
    os.chmod(work, 0o1777)
    c = it.Cluster(state, work)
    args = ["--nodes", "1", "--cpus", "1", "--mem", "500", "--timeout", "60",
            "--set", f"DroverK8sNamespace={NS}", "--set", f"DroverK8sKubeconfig={os.environ['KUBECONFIG']}",
            "--set", f"MaxNodeCount={max_nodes}"]
    for s in settings:
        args += ["--set", s]
    c.up(*args)
    c.k8s_nodes = k8s_nodes
    return c


def cleanup_nodesets(api, c):
    """Stops the cluster, then removes every NodeSet (finalizers included: no operator is left
    to lift them) and its pods, so the next test starts clean."""
    c.down()
    for ns in api("GET", NODESETS).json().get("items", []):
        name = ns["metadata"]["name"]
        api("PATCH", f"{NODESETS}/{name}", {"metadata": {"finalizers": None}}, content_type=MERGE)
        api("DELETE", f"{NODESETS}/{name}")
    # The agent pods' processes belong to the fakelet: deleting the pods stops them.
    api("DELETE", f"{PODS}?labelSelector=drover.io/nodeset")
    api("DELETE", f"/api/v1/namespaces/{NS}/secrets?labelSelector=drover.io/nodeset")
    for n in getattr(c, "k8s_nodes", ()):
        fakelet("node", "uncordon", n)


def slurmctld_port(c):
    conf = pathlib.Path(c.state_dir, "slurm.conf").read_text()
    return re.search(r"^SlurmctldPort=(\d+)", conf, re.M).group(1)


def agent_nodeset(c, name, replicas, k8s_node="kn1", max_unavailable=None, max_drain_time=None,
                  policy=None, extra=None):
    """A NodeSet whose pods run droverd (1 CPU, 1 GiB) on k8s_node, joining c's controller."""
    droverd = os.path.join(it.BIN, "droverd")
    spec = {
        "replicas": replicas,
        "template": {
            "metadata": {"annotations": {"fakelet.drover.test/exec": "true"}},
            "spec": {
                "nodeName": k8s_node,
                "containers": [{
                    "name": "droverd",
                    "image": "drover/agent",
                    "command": [droverd, "--controller", f"127.0.0.1:{slurmctld_port(c)}",
                                "--spool", os.path.join(c.state_dir, "spool-%n"),
                                "--listen", "127.0.0.1"],
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                }],
            },
        },
    }
    if max_unavailable is not None:
        spec["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": max_unavailable}}
    if max_drain_time is not None:
        spec["maxDrainTime"] = max_drain_time
    if policy is not None:
        spec["drainTimeoutPolicy"] = policy
    spec.update(extra or {})
    return {"apiVersion": "drover.io/v1alpha1", "kind": "NodeSet", "metadata": {"name": name}, "spec": spec}


def nodes(c):
    """sinfo's nodes as {name: state}."""
    out = c.ok("sinfo", "-h", "-N", "-o", "%N %T")
    return dict(line.split()[:2] for line in out.splitlines() if line.strip())


def reasons(c):
    """{node: reason} of the nodes out of service (scontrol show node)."""
    out = c.ok("scontrol", "-o", "show", "node")
    r = {}
    for line in out.splitlines():
        m = re.match(r"NodeName=(\S+)", line)
        why = re.search(r" Reason=(.*?)(?: \[[^\]]*\])?(?: \w+=|$)", line)
        if m and why and why.group(1) not in ("", "(null)"):
            r[m.group(1)] = why.group(1)
    return r


def node_state_condition(api, pod):
    r = api("GET", f"{PODS}/{pod}")
    if r.status_code != 200:
        return None
    for cond in r.json().get("status", {}).get("conditions") or []:
        if cond["type"] == "drover.io/NodeState":
            return cond
    return None


def pod_names(api, nodeset):
    """The NodeSet's pods not being deleted, sorted."""
    r = api("GET", f"{PODS}?labelSelector=drover.io/nodeset%3D{nodeset}")
    return sorted(p["metadata"]["name"] for p in r.json()["items"]
                  if not p["metadata"].get("deletionTimestamp"))


def evict(api, name):
    return api("POST", f"{PODS}/{name}/eviction", {
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": NS}})
