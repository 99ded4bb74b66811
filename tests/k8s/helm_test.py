"""The Helm chart (deploy/helm/drover) on a real kube-apiserver, with helm and kubectl built from
Go modules (tests/k8s/tools). Run by CTest (k8s_helm) through run-smoke.

- helm lint; the CRD in the chart is deploy/crds' file;
- the rendered chart applied with server-side dry-run, then for real (kubectl apply
  --server-side), and removed again; the pods judged by PodSecurity admission;
- two releases of the same name in two namespaces install side by side, and each one's
  ServiceAccount can reach its own namespace's objects only; an upgrade keeps the generated
  cluster key;
- a release whose NodeSet asks for 3 agent pods: droverctld runs beside the API server (no
  scheduler here; statefulset_test.py runs it in its StatefulSet's pod) with the slurm.conf the
  chart rendered into its ConfigMap, the cluster key from the chart's Secret and the chart's ServiceAccount's token, so
  the operator works with exactly the Role the chart grants; the fakelet runs the agent pods'
  droverd, and they become 3 idle nodes; a job makes its pod busy (label and PDB); a NodeSet
  of another release's namespace is left alone.
"""
import base64
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import time

import pytest
import yaml

from conftest import ROOT, wait_for

CHART = ROOT / "deploy" / "helm" / "drover"
BUILD = pathlib.Path(os.environ.get("DROVER_BUILD_DIR", ROOT / "build")).resolve()


@pytest.fixture(scope="module")
def tools():
    if not os.environ.get("KUBECONFIG"):
        if os.environ.get("DROVER_K8S_REQUIRED") == "1":
            pytest.fail("KUBECONFIG is not set")
        pytest.skip("no Kubernetes API server (tests/k8s/env/up)")
    bindir = subprocess.run([str(ROOT / "tests" / "k8s" / "tools" / "build")], check=True,
                            capture_output=True, text=True).stdout.strip()
    return pathlib.Path(bindir)


def run(tools, tool, *args, input=None, check=True, timeout=120):
    p = subprocess.run([str(tools / tool), *args], input=input, capture_output=True, text=True,
                       timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"{tool} {' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def kubectl(tools, *args, **kw):
    return run(tools, "kubectl", *args, **kw)


def helm(tools, *args, **kw):
    return run(tools, "helm", *args, **kw)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_lint_and_crd_is_deploy_crds(tools):
    out = helm(tools, "lint", "--strict", str(CHART)).stdout
    assert "1 chart(s) linted, 0 chart(s) failed" in out, out
    # One CRD file: the chart's is deploy/crds' own (a symlink), so the two cannot drift.
    link = CHART / "crds" / "drover.io_nodesets.yaml"
    assert link.is_symlink()
    assert link.resolve() == (ROOT / "deploy" / "crds" / "drover.io_nodesets.yaml").resolve()
    # helm packages the file itself, not the link.
    pkg = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"drover-helm-pkg-{os.getpid()}"
    try:
        helm(tools, "package", str(CHART), "-d", str(pkg))
        tgz = next(pkg.glob("drover-*.tgz"))
        listing = subprocess.run(["tar", "-xzOf", str(tgz), "drover/crds/drover.io_nodesets.yaml"],
                                 check=True, capture_output=True, text=True).stdout
        assert listing == link.read_text()
    finally:
        shutil.rmtree(pkg, ignore_errors=True)


def rendered(tools, release, ns, *args):
    out = helm(tools, "template", release, str(CHART), "-n", ns, *args).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def test_rendered_objects(tools):
    docs = rendered(tools, "hpc", "team-x", "--set", "metrics.serviceMonitor.enabled=true")
    kinds = {(d["kind"], d["metadata"]["name"]) for d in docs}
    assert ("StatefulSet", "hpc-drover") in kinds
    assert ("ServiceMonitor", "hpc-drover") in kinds
    assert ("NodeSet", "cpu") in kinds
    assert ("ClusterRole", "drover:team-x:hpc-drover:nodes") in kinds
    for d in docs:
        if d["kind"] not in ("ClusterRole", "ClusterRoleBinding"):
            assert d["metadata"]["namespace"] == "team-x", d["metadata"]
    conf = next(d for d in docs if d["kind"] == "ConfigMap")["data"]["slurm.conf"]
    assert "DroverK8sNamespace=team-x\n" in conf
    assert "SlurmctldHost=hpc-drover-0(0.0.0.0)\n" in conf
    # A setting replaces the chart's key instead of repeating it.
    docs = rendered(tools, "hpc", "team-x", "--set", "slurmConf.settings.SlurmUser=root")
    conf = next(d for d in docs if d["kind"] == "ConfigMap")["data"]["slurm.conf"]
    assert conf.count("SlurmUser=") == 1 and "SlurmUser=root\n" in conf
    # Agent pods: not privileged, only the capabilities jobs need.
    ns = next(d for d in docs if d["kind"] == "NodeSet")
    c = ns["spec"]["template"]["spec"]["containers"][0]
    assert c["securityContext"]["privileged"] is False
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert c["securityContext"]["capabilities"] == {"drop": ["ALL"],
                                                    "add": ["CHOWN", "KILL", "SETGID", "SETUID"]}
    assert c["command"] == ["droverd", "--controller", "hpc-drover.team-x.svc:6817",
                            "--spool", "/var/spool/drover/%n", "--listen", "$(DROVER_POD_IP)"]
    assert c["env"][0] == {"name": "DROVER_POD_IP",
                           "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
    # The Role: namespaced, and nothing beyond what the operator calls.
    role = next(d for d in docs if d["kind"] == "Role")
    verbs = {(r["apiGroups"][0], res): set(r["verbs"]) for r in role["rules"] for res in r["resources"]}
    assert verbs[("", "secrets")] == {"create"}
    assert verbs[("", "pods")] == {"list", "watch", "create", "delete", "patch"}
    assert verbs[("policy", "poddisruptionbudgets")] == {"list", "watch", "create", "patch", "delete"}
    assert not any("*" in v for v in verbs.values())
    # Bad values are refused with the reason: by values.schema.json (a NodeSet without a name,
    # as `--set nodeSets[0].replicas=2` makes by replacing the list; a misspelt key), and by the
    # template itself when the schema is skipped.
    p = helm(tools, "template", "hpc", str(CHART), "--set", "nodeSets[0].replicas=2", check=False)
    assert p.returncode != 0 and "/nodeSets/0': missing property 'name'" in p.stderr, p.stderr
    p = helm(tools, "template", "hpc", str(CHART), "--set", "controler.resources=1", check=False)
    assert p.returncode != 0 and "additional properties 'controler' not allowed" in p.stderr, p.stderr
    p = helm(tools, "template", "hpc", str(CHART), "--set", "nodeSets[0].replicas=2",
             "--skip-schema-validation", check=False)
    assert p.returncode != 0 and "every nodeSets entry needs a name" in p.stderr, p.stderr


def test_rendered_chart_applies_server_side_dry_run_then_for_real(tools):
    ns = "drover-apply"
    kubectl(tools, "create", "namespace", ns)
    try:
        # The CRD first (helm installs crds/ before the templates): a NodeSet needs its kind.
        kubectl(tools, "apply", "--server-side", "-f", str(CHART / "crds"))
        kubectl(tools, "wait", "--for=condition=Established", "crd/nodesets.drover.io", "--timeout=60s")
        manifest = helm(tools, "template", "apply", str(CHART), "-n", ns,
                        "--set", "nodeSets[0].name=cpu", "--set", "nodeSets[0].replicas=0").stdout
        out = kubectl(tools, "apply", "--server-side", "--dry-run=server", "-f", "-", input=manifest).stdout
        assert "statefulset.apps/apply-drover serverside-applied (server dry run)" in out, out
        assert "nodeset.drover.io/cpu serverside-applied (server dry run)" in out, out
        assert kubectl(tools, "get", "statefulset", "-n", ns, "-o", "name").stdout.strip() == ""
        out = kubectl(tools, "apply", "--server-side", "-f", "-", input=manifest).stdout
        assert "statefulset.apps/apply-drover serverside-applied" in out, out
        sts = json.loads(kubectl(tools, "get", "statefulset", "apply-drover", "-n", ns, "-o", "json").stdout)
        assert sts["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] == "8Gi"
        out = kubectl(tools, "get", "nodesets", "-n", ns).stdout
        assert out.split("\n")[0].split()[:5] == ["NAME", "REPLICAS", "READY", "IDLE", "ALLOCATED"], out
        kubectl(tools, "delete", "-f", "-", "--wait=false", input=manifest)
    finally:
        kubectl(tools, "delete", "namespace", ns, "--wait=false", check=False)


def test_pods_meet_the_pod_security_standards(tools):
    """Kubernetes' own PodSecurity admission judges the pods: the controller's meets
    `restricted`; an agent pod (root with four capabilities) meets `baseline`, not `restricted`."""
    docs = rendered(tools, "pss", "pss")
    sts = next(d for d in docs if d["kind"] == "StatefulSet")
    nodeset = next(d for d in docs if d["kind"] == "NodeSet")

    def pod(name, template):
        spec = dict(template["spec"])
        # What the StatefulSet controller and the operator would add; volumes here are only
        # names (dry run), so the PVC becomes an emptyDir.
        spec["volumes"] = [v for v in spec.get("volumes", []) if v["name"] != "state"] + \
            ([{"name": "state", "emptyDir": {}}] if name == "controller" else [])
        return yaml.safe_dump({"apiVersion": "v1", "kind": "Pod",
                               "metadata": {"name": name, "labels": template["metadata"].get("labels", {})},
                               "spec": spec})

    for level in ("restricted", "baseline"):
        ns = f"pss-{level}"
        kubectl(tools, "create", "namespace", ns)
        try:
            kubectl(tools, "label", "namespace", ns, f"pod-security.kubernetes.io/enforce={level}")
            # The default ServiceAccount appears shortly after the namespace.
            wait_for(f"{ns}/default", lambda: kubectl(tools, "get", "serviceaccount", "default",
                                                       "-n", ns, check=False).returncode == 0)
            ctl = pod("controller", sts["spec"]["template"])
            ctl = ctl.replace("serviceAccountName: pss-drover", "serviceAccountName: default")
            p = kubectl(tools, "create", "--dry-run=server", "-n", ns, "-f", "-", input=ctl, check=False)
            assert p.returncode == 0, f"controller pod under {level}: {p.stderr}"
            p = kubectl(tools, "create", "--dry-run=server", "-n", ns, "-f", "-",
                        input=pod("agent", nodeset["spec"]["template"]), check=False)
            if level == "baseline":
                assert p.returncode == 0, f"agent pod under baseline: {p.stderr}"
            else:
                assert p.returncode != 0 and "violates PodSecurity" in p.stderr, p.stderr
                assert "runAsNonRoot" in p.stderr and "capabilities" in p.stderr, p.stderr
        finally:
            kubectl(tools, "delete", "namespace", ns, "--wait=false", check=False)


def can_i(tools, sa_ns, verb, resource, ns=None):
    args = ["auth", "can-i", verb, resource, f"--as=system:serviceaccount:{sa_ns}:drover"]
    args += ["-n", ns] if ns else []
    p = kubectl(tools, *args, check=False)
    return p.stdout.strip() == "yes"


def test_two_releases_in_two_namespaces_do_not_see_each_other(tools):
    for ns in ("team-a", "team-b"):
        # The same release name in both: the cluster-scoped objects carry the namespace.
        helm(tools, "install", "drover", str(CHART), "-n", ns, "--create-namespace",
             "--set", "nodeSets[0].name=cpu", "--set", "nodeSets[0].replicas=0", timeout=300)
    try:
        for me, other in (("team-a", "team-b"), ("team-b", "team-a")):
            assert can_i(tools, me, "list", "nodesets.drover.io", me)
            assert can_i(tools, me, "create", "pods", me)
            assert can_i(tools, me, "patch", "pods/status", me)
            assert not can_i(tools, me, "list", "nodesets.drover.io", other)
            assert not can_i(tools, me, "create", "pods", other)
            assert not can_i(tools, me, "create", "secrets", other)
            # Least privilege at home too: secrets are created, never read; nodes only read.
            assert not can_i(tools, me, "get", "secrets", me)
            assert not can_i(tools, me, "delete", "nodesets.drover.io", me)
            assert can_i(tools, me, "watch", "nodes")
            assert not can_i(tools, me, "patch", "nodes")
            conf = kubectl(tools, "get", "configmap", "drover-config", "-n", me,
                           "-o", "jsonpath={.data.slurm\\.conf}").stdout
            assert f"DroverK8sNamespace={me}\n" in conf
        # The generated cluster key survives an upgrade (lookup), and differs per release.
        def key(ns):
            return kubectl(tools, "get", "secret", "drover-secrets", "-n", ns,
                           "-o", "jsonpath={.data.cluster\\.key}").stdout
        before = key("team-a")
        assert len(base64.b64decode(before)) == 64 and before != key("team-b")
        helm(tools, "upgrade", "drover", str(CHART), "-n", "team-a", "--reuse-values",
             "--set", "slurmConf.maxNodeCount=64", timeout=300)
        assert key("team-a") == before
        conf = kubectl(tools, "get", "configmap", "drover-config", "-n", "team-a",
                       "-o", "jsonpath={.data.slurm\\.conf}").stdout
        assert "MaxNodeCount=64\n" in conf
    finally:
        for ns in ("team-a", "team-b"):
            helm(tools, "uninstall", "drover", "-n", ns, check=False, timeout=300)
            kubectl(tools, "delete", "namespace", ns, "--wait=false", check=False)


def sinfo(env):
    p = subprocess.run([str(BUILD / "slurm-bin" / "sinfo"), "-h", "-N", "-o", "%N %T"],
                       capture_output=True, text=True, env=env, timeout=30)
    if p.returncode != 0:
        return {}
    return dict(line.split()[:2] for line in p.stdout.splitlines() if line.strip())


def test_chart_nodeset_of_three_gives_three_idle_nodes(tools, tmp_path):
    droverctld, droverd = BUILD / "bin" / "droverctld", BUILD / "bin" / "droverd"
    assert droverctld.exists() and droverd.exists(), "build drover first"
    ns = "hpc"
    port, http_port = free_port(), free_port()
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    subprocess.run([os.environ["DROVER_K8S_FAKELET"], "node", "create", "kn-helm", "--cpu", "16",
                    "--memory", "32Gi"], check=True, capture_output=True)
    sa_kubeconfig = tmp_path / "sa.kubeconfig"
    values = {
        "service": {"ports": {"slurmctld": port, "http": http_port}},
        "slurmConf": {"settings": {
            # Beside the API server on this machine: loopback only, files of the test's own.
            "SlurmctldAddr": "127.0.0.1",
            "DroverHttpAddress": "127.0.0.1",
            "DroverMetricsTokenFile": str(tmp_path / "metrics-token"),
            "SlurmUser": "root",
            "DroverK8sKubeconfig": str(sa_kubeconfig),
        }},
        "agent": {"command": [str(droverd), "--controller", f"127.0.0.1:{port}",
                              "--spool", str(tmp_path / "spool-%n"),
                              # The chart's env: the pod's IP (127.0.0.1 under the fakelet).
                              "--listen", "$(DROVER_POD_IP)"],
                  "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
        "nodeSets": [{
            "name": "cpu", "replicas": 3, "partitions": ["batch"],
            # The fakelet runs the container's command as a local process on its node.
            "template": {"metadata": {"annotations": {"fakelet.drover.test/exec": "true"}},
                         "spec": {"nodeName": "kn-helm"}},
        }],
    }
    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(values))
    # Another release's namespace with a NodeSet of its own (no controller runs for it): this
    # release's controller must leave it alone.
    other_values = dict(values, nodeSets=[dict(values["nodeSets"][0], name="other", replicas=2)])
    (tmp_path / "other.yaml").write_text(yaml.safe_dump(other_values))
    helm(tools, "install", "drover", str(CHART), "-n", "hpc-other", "--create-namespace", "-f",
         str(tmp_path / "other.yaml"), timeout=300)
    t0 = time.time()
    helm(tools, "install", "drover", str(CHART), "-n", ns, "--create-namespace", "-f",
         str(values_file), timeout=300)
    ctld = None
    try:
        # The agent pods the operator creates must pass Pod Security admission at `baseline`.
        kubectl(tools, "label", "namespace", ns, "pod-security.kubernetes.io/enforce=baseline")
        # What the controller's pod would get from the chart: slurm.conf from the ConfigMap, the
        # cluster key from the Secret (installed 0600, as the init container does), and its
        # ServiceAccount's token.
        conf = kubectl(tools, "get", "configmap", "drover-config", "-n", ns,
                       "-o", "jsonpath={.data.slurm\\.conf}").stdout
        (tmp_path / "slurm.conf").write_text(conf)
        key = base64.b64decode(kubectl(tools, "get", "secret", "drover-secrets", "-n", ns,
                                       "-o", "jsonpath={.data.cluster\\.key}").stdout)
        fd = os.open(state / "cluster.key", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, key)
        os.close(fd)
        token = base64.b64decode(kubectl(tools, "get", "secret", "drover-secrets", "-n", ns,
                                         "-o", "jsonpath={.data.metrics-token}").stdout)
        fd = os.open(tmp_path / "metrics-token", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, token)
        os.close(fd)
        sa_token = kubectl(tools, "create", "token", "drover", "-n", ns, "--duration=1h").stdout.strip()
        admin = yaml.safe_load(pathlib.Path(os.environ["KUBECONFIG"]).read_text())
        admin["users"] = [{"name": "drover-sa", "user": {"token": sa_token}}]
        admin["contexts"][0]["context"]["user"] = "drover-sa"
        sa_kubeconfig.write_text(yaml.safe_dump(admin))
        sa_kubeconfig.chmod(0o600)
        log = open(tmp_path / "ctld.log", "w")
        ctld = subprocess.Popen([str(droverctld), "--conf", str(tmp_path / "slurm.conf"),
                                 "--state-dir", str(state)], stdout=log, stderr=subprocess.STDOUT)
        env = dict(os.environ, DROVER_SOCKET=str(state / "ctld.sock"))

        def idle():
            assert ctld.poll() is None, (tmp_path / "ctld.log").read_text()[-3000:]
            n = sinfo(env)
            return all(n.get(f"cpu-{i}", "").startswith("idle") for i in range(3)) and n

        nodes = wait_for("cpu-0..2 idle in sinfo", idle, timeout=60)
        took = time.time() - t0
        print(f"helm install -> 3 idle nodes in {took:.1f}s: {nodes}")
        # The NodeSet's status says so too (kubectl get nodesets' columns).
        def status_idle():
            out = kubectl(tools, "get", "nodesets", "cpu", "-n", ns, "--no-headers").stdout.split()
            return out[1:4] == ["3", "3", "3"] and out
        wait_for("nodeset cpu 3 ready, 3 idle", status_idle, timeout=30)
        # A job makes its pod busy: the label and the PDB, applied with the chart's Role too.
        p = subprocess.run([str(BUILD / "slurm-bin" / "sbatch"), "--parsable", "-w", "cpu-0",
                            "--wrap", "sleep 120", "-o", "/dev/null"],
                           capture_output=True, text=True, env=env, timeout=30)
        assert p.returncode == 0, p.stderr
        job = p.stdout.strip()
        wait_for("pdb cpu-busy", lambda: kubectl(tools, "get", "pdb", "cpu-busy", "-n", ns,
                                                 check=False).returncode == 0, timeout=30)
        wait_for("cpu-0 labelled busy", lambda: kubectl(
            tools, "get", "pod", "cpu-0", "-n", ns, "-o", "jsonpath={.metadata.labels.drover\\.io/busy}",
            check=False).stdout == "true", timeout=30)
        subprocess.run([str(BUILD / "slurm-bin" / "scancel"), job], env=env, timeout=30)
        assert set(sinfo(env)) == {"cpu-0", "cpu-1", "cpu-2"}
        # No agent pods there (its StatefulSet's controller pod, unscheduled here, is its own).
        assert kubectl(tools, "get", "pods", "-n", "hpc-other", "-l", "drover.io/nodeset",
                       "-o", "name").stdout.strip() == ""
        ctld_log = (tmp_path / "ctld.log").read_text()
        assert "NodeSet other" not in ctld_log
        assert "forbidden" not in ctld_log.lower() and " 403" not in ctld_log, ctld_log[-3000:]
        assert f"NodeSets in namespace {ns}" in ctld_log
        # The metrics token from the chart's Secret lets a scrape in.
        import urllib.request
        req = urllib.request.Request(f"http://127.0.0.1:{http_port}/metrics/nodes",
                                     headers={"Authorization": "Bearer " + token.decode()})
        with urllib.request.urlopen(req, timeout=10) as r:
            assert r.status == 200
    finally:
        if ctld is not None:
            ctld.send_signal(signal.SIGTERM)
            try:
                ctld.wait(timeout=20)
            except subprocess.TimeoutExpired:
                ctld.kill()
        # Nobody drains any more: lift the operator's finalizer so the NodeSet can go.
        kubectl(tools, "patch", "nodeset", "cpu", "-n", ns, "--type=merge",
                "-p", '{"metadata":{"finalizers":null}}', check=False)
        # The agents are the fakelet's processes: deleting their pods stops them.
        kubectl(tools, "delete", "pods", "-n", ns, "-l", "drover.io/nodeset=cpu", "--wait=false",
                check=False)
        for n in (ns, "hpc-other"):
            helm(tools, "uninstall", "drover", "-n", n, check=False, timeout=300)
            kubectl(tools, "delete", "namespace", n, "--wait=false", check=False)
