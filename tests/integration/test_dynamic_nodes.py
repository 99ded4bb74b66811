"""Nodes that join and leave: droverd -Z registering a node slurm.conf does not list,
scontrol create/delete NodeName=..., MaxNodeCount, and a controller restart keeping them."""
import json
import os
import re
import signal
import subprocess
import time
import urllib.request

from conftest import BIN


def conf_value(c, key):
    with open(os.path.join(c.state_dir, "slurm.conf")) as f:
        for line in f:
            if line.startswith(key + "="):
                return line.strip().split("=", 1)[1]
    raise AssertionError(f"{key} not in slurm.conf")


def start_dynamic_agent(c, name, conf):
    """droverd -Z for `name`, as an operator starts one on a new machine."""
    spool = os.path.join(c.state_dir, "spool", name)
    os.makedirs(spool, exist_ok=True)
    log = open(os.path.join(c.state_dir, f"agent-dyn-{name}.log"), "a")
    # The node's own key, as an operator makes one for a new machine (docs/security.md).
    key = os.path.join(c.state_dir, f"node-{name}.key")
    if not os.path.exists(key):
        c.drover("node-key", name, "--state-dir", c.state_dir, "--out", key)
    p = subprocess.Popen(
        [os.path.join(BIN, "droverd"), "--node", name, "--controller",
         "127.0.0.1:" + conf_value(c, "SlurmctldPort"), "--key-file", key,
         "--spool", spool, "--listen", "127.0.0.1",
         "-Z", "--conf", conf],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return p


def stop(p):
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def node_fields(c, name, *flags):
    p = c.run("scontrol", *flags, "-o", "show", "node", name)
    if p.returncode != 0:
        return None
    return dict(item.split("=", 1) for item in p.stdout.split() if "=" in item)


def metrics_text(c):
    with open(os.path.join(c.state_dir, "env.sh")) as f:
        url = re.search(r"^export DROVER_METRICS_URL=(\S+)$", f.read(), re.M).group(1)
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def rest_node_names(c):
    """GET /slurm/v0.0.44/nodes with a token, as a REST client sees the nodes."""
    with open(os.path.join(c.state_dir, "env.sh")) as f:
        base = re.search(r"^export DROVER_API=(\S+)$", f.read(), re.M).group(1)
    tok = c.ok("scontrol", "token").strip().split("=", 1)[1]
    user = os.environ.get("USER") or "root"
    req = urllib.request.Request(base + "/slurm/v0.0.44/nodes",
                                 headers={"X-SLURM-USER-TOKEN": tok, "X-SLURM-USER-NAME": user})
    with urllib.request.urlopen(req, timeout=10) as r:
        return [n["name"] for n in json.loads(r.read())["nodes"]]


def wait_for(pred, timeout=30, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_dynamic_agent_joins_runs_jobs_and_survives_a_restart(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500,
                     settings=["MaxNodeCount=3", "PartitionName=all Nodes=ALL"])
    agent = start_dynamic_agent(c, "dyn1", "CPUs=2 RealMemory=800 Feature=big")
    try:
        n = wait_for(lambda: (f := node_fields(c, "dyn1")) and f["State"].startswith("IDLE") and f,
                     what="dyn1 idle")
        assert n["State"] == "IDLE+DYNAMIC_NORM", n
        assert n["CPUTot"] == "2" and n["RealMemory"] == "800", n
        assert n["AvailableFeatures"] == "big", n
        assert n["Partitions"] == "debug,all", n  # drover up's debug is Nodes=ALL too
        # sinfo, the REST-shaped JSON and metrics see it without a restart.
        assert "dyn1" in c.ok("sinfo", "-h", "-N", "-o", "%N %P")
        assert 'node="dyn1"' in metrics_text(c)
        assert rest_node_names(c) == ["node1", "dyn1"]
        # A job only dyn1 can hold (2 CPUs) runs there through Nodes=ALL.
        jid = c.sbatch("-p", "all", "-N", "1", "-n", "2", "--mem=100", "--wrap", "hostname; sleep 3")
        info = c.wait_state(jid, "RUNNING", timeout=30)
        assert info["NodeList"] == "dyn1", info
        # Deleting a node that runs a job is refused with Slurm's words.
        p = c.run("scontrol", "delete", "NodeName=dyn1")
        assert p.returncode == 1
        assert "delete_node NodeName=dyn1: Requested nodes are busy" in p.stderr, p.stderr
        c.wait_state(jid, "COMPLETED", timeout=60)

        # The controller restarts: the dynamic node, its id and state are kept.
        os.kill(c.pid("ctld.pid"), signal.SIGKILL)
        time.sleep(0.5)
        c.up()
        assert node_fields(c, "dyn1") is not None
        # Its agent (the same process) registers again: the same node, no second one.
        wait_for(lambda: (f := node_fields(c, "dyn1")) and f["State"] == "IDLE+DYNAMIC_NORM",
                 what="dyn1 back")
        jid = c.sbatch("-p", "all", "-N", "1", "-n", "2", "--mem=100", "--wrap", "true")
        assert c.wait_state(jid, "COMPLETED", timeout=60)["NodeList"] == "dyn1"
        listing = c.ok("scontrol", "-o", "show", "node")
        assert listing.count("NodeName=dyn1 ") == 1, listing
    finally:
        stop(agent)

    # A replacement agent under the same name is the same node.
    agent = start_dynamic_agent(c, "dyn1", "CPUs=2 RealMemory=800 Feature=big")
    try:
        wait_for(lambda: (f := node_fields(c, "dyn1")) and f["State"] == "IDLE+DYNAMIC_NORM",
                 what="dyn1 replaced")
        # Deleted, it leaves every listing at once.
        c.ok("scontrol", "delete", "NodeName=dyn1")
        assert node_fields(c, "dyn1") is None
        assert "dyn1" not in c.ok("sinfo", "-h", "-N", "-o", "%N")
        assert 'node="dyn1"' not in metrics_text(c)
        assert rest_node_names(c) == ["node1"]
    finally:
        stop(agent)


def test_scontrol_create_and_delete_and_max_node_count(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500,
                     settings=["MaxNodeCount=3", "NodeSet=bigset Feature=big",
                               "PartitionName=bigp Nodes=bigset"])
    p = c.run("scontrol", "create", "NodeName=f1", "CPUs=2", "State=IDLE")
    assert p.returncode == 1
    assert p.stderr == ("scontrol: error: Only State=FUTURE and State=CLOUD allowed for nodes "
                        "created by scontrol\nError creating the node(s): Invalid node state "
                        "specified\n"), p.stderr
    p = c.run("scontrol", "create", "NodeName=f1", "CPUs=abc", "State=FUTURE")
    assert p.returncode == 1
    assert "Failed to parse nodeline 'NodeName=f1 CPUs=abc State=FUTURE'" in p.stderr
    assert "Error creating the node(s): Unspecified error" in p.stderr
    # Only operators create nodes.
    p = c.run("scontrol", "create", "NodeName=f1", "CPUs=2", "State=FUTURE", user="nobody")
    assert p.returncode == 1

    c.ok("scontrol", "create", "NodeName=f1", "CPUs=2", "RealMemory=700", "Feature=big",
         "State=FUTURE")
    # FUTURE nodes are listed with -F only, as in Slurm.
    assert node_fields(c, "f1") is None
    n = node_fields(c, "f1", "-F")
    assert n["State"] == "FUTURE+DYNAMIC_NORM", n
    assert n["Partitions"] == "debug,bigp", n  # debug: Nodes=ALL; bigp: NodeSet Feature=big
    # One more fits (3 in all), a fourth does not.
    c.ok("scontrol", "create", "NodeName=f2", "CPUs=1", "State=CLOUD")
    p = c.run("scontrol", "create", "NodeName=f3", "CPUs=1", "State=FUTURE")
    assert p.returncode == 1
    assert "Unable to add node 'f3', node table is full" in p.stderr, p.stderr
    p = c.run("scontrol", "create", "NodeName=f2", "CPUs=1", "State=FUTURE")
    assert p.returncode == 1

    # Deleting: unknown names and reservations refuse it.
    p = c.run("scontrol", "delete", "NodeName=nope")
    assert p.returncode == 1
    assert p.stderr == ("scontrol: error: failed to delete nodes nope\n"
                        "delete_node NodeName=nope: Invalid node name specified\n"), p.stderr
    c.ok("scontrol", "create", "reservation", "ReservationName=r1", "Nodes=f2", "StartTime=now",
         "Duration=10", "Users=root")
    p = c.run("scontrol", "delete", "NodeName=f2")
    assert p.returncode == 1 and "Requested nodes are busy" in p.stderr, p.stderr
    c.ok("scontrol", "delete", "ReservationName=r1")
    c.ok("scontrol", "delete", "NodeName=f2")
    assert node_fields(c, "f2", "-F") is None
    # Room again.
    c.ok("scontrol", "create", "NodeName=f3", "CPUs=1", "State=FUTURE")

    # Kept over a restart, with their state.
    c.down()
    c.up()
    assert node_fields(c, "f1", "-F")["State"] == "FUTURE+DYNAMIC_NORM"
    assert node_fields(c, "f3", "-F") is not None
    assert node_fields(c, "f2", "-F") is None
