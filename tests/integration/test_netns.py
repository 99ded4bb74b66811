"""drover up --netns: each agent in a network namespace of its own, with its own address on a
bridge; node names resolve inside; drover down (also after a crash) leaves nothing behind."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from conftest import BIN, SLURM_BIN, ensure_user

IP = shutil.which("ip") or "/usr/sbin/ip"


def _why_no_netns():
    if os.geteuid() != 0:
        return "needs root: drover up --netns creates network namespaces"
    if not os.access(IP, os.X_OK):
        return "needs iproute2's ip"
    probe = f"drvprobe{os.getpid()}"
    p = subprocess.run([IP, "netns", "add", probe], capture_output=True, text=True)
    if p.returncode != 0:
        return f"`ip netns add` fails here: {p.stderr.strip()}"
    subprocess.run([IP, "netns", "del", probe], capture_output=True)
    return None


WHY_NOT = _why_no_netns()
needs_netns = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")


def plan(c):
    """tag and subnet from the state dir's netns file, node addresses from slurm.conf."""
    rec = dict(l.split("=", 1) for l in open(os.path.join(c.state_dir, "netns")).read().splitlines()
               if "=" in l and not l.startswith("#"))
    addrs = []
    for line in open(os.path.join(c.state_dir, "slurm.conf")):
        for item in line.split():
            if item.startswith("NodeAddr="):
                addrs = item.split("=", 1)[1].split(",")
    return rec["tag"], rec["subnet"], addrs


def leftovers(tag):
    """Everything of the cluster with this tag still on the host."""
    found = [l.split()[0] for l in subprocess.run([IP, "netns", "list"], capture_output=True,
                                                  text=True).stdout.splitlines()
             if l.startswith(f"drv-{tag}-")]
    found += [n for n in os.listdir("/sys/class/net") if n.startswith((f"drv-{tag}-", f"drv{tag}h"))]
    if os.path.isdir("/etc/netns"):
        found += [n for n in os.listdir("/etc/netns") if n.startswith(f"drv-{tag}-")]
    return found


def up_netns(make_cluster, nodes=2):
    c = make_cluster(up=False)
    p = c.up("--netns", "--nodes", str(nodes), "--cpus", "1", "--mem", "500", "--timeout", "60")
    assert "network namespace" in p.stdout, p.stdout
    return c


def run_on(c, node, script_body, name):
    """Runs a bash script as a job on `node`, returns its output."""
    script = c.write_script(name, "#!/bin/bash\n" + script_body)
    jid = c.sbatch("-w", node, "-o", f"{name}.out", script)
    info = c.wait_state(jid, ("COMPLETED", "FAILED"))
    text = open(os.path.join(c.work, f"{name}.out")).read()
    assert info["JobState"] == "COMPLETED", text
    return text


def gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def kill_daemons(c):
    """SIGKILLs the controller and the agents (a crash) and waits until they are gone."""
    pids = [c.pid(n) for n in os.listdir(c.state_dir) if n.endswith(".pid")]
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    deadline = time.time() + 20
    while time.time() < deadline and not all(gone(pid) for pid in pids):
        time.sleep(0.05)


@needs_netns
def test_nodes_have_their_own_addresses_and_names(make_cluster):
    c = up_netns(make_cluster)
    tag, subnet, (ip1, ip2) = plan(c)
    assert len(tag) == 6 and subnet.endswith(".0/24")
    bridge_ip = subnet.replace(".0/24", ".1")
    conf = open(os.path.join(c.state_dir, "slurm.conf")).read()
    assert f"({bridge_ip})" in conf and f"NodeAddr={ip1},{ip2}" in conf
    assert set(leftovers(tag)) >= {f"drv-{tag}-node1", f"drv-{tag}-node2", f"drv-{tag}-br"}
    assert c.ok("sinfo", "-h", "-o", "%D %t").split() == ["2", "idle"]

    out = run_on(c, "node2", f"{IP} -4 -o addr show\ngetent hosts node1\nhostname\n", "where")
    assert f"inet {ip2}/24" in out, out
    assert f"{ip1}" in out and "node1" in out.split(ip1, 1)[1].splitlines()[0], out
    assert "127.0.0.1" in out and bridge_ip not in out  # the host's interfaces are not there
    assert out.splitlines()[-1] == "node2"

    # node1 reaches a listener on node2's address, by node2's name, across the bridge.
    server = subprocess.Popen(
        [IP, "netns", "exec", f"drv-{tag}-node2", sys.executable, "-c",
         "import socket, sys\n"
         f"s = socket.create_server(('{ip2}', 0)); s.settimeout(60)\n"
         "print(s.getsockname()[1], flush=True)\n"
         "conn, peer = s.accept(); conn.sendall(('hello ' + peer[0] + '\\n').encode())\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        out = run_on(c, "node1", f"exec 3<>/dev/tcp/node2/{port}\ncat <&3\n", "reach")
        assert out == f"hello {ip1}\n", out
    finally:
        server.kill()
        server.wait()

    # The controller's Unix socket is a path: commands reach it from inside a namespace too.
    p = subprocess.run([IP, "netns", "exec", f"drv-{tag}-node1", os.path.join(SLURM_BIN, "sinfo"),
                        "-h", "-o", "%D"], capture_output=True, text=True, env=c.env)
    assert p.returncode == 0 and p.stdout.strip() == "2", p.stderr

    assert c.down().returncode == 0
    assert leftovers(tag) == []
    assert c.down().returncode == 0  # a second down is harmless


@needs_netns
def test_restart_and_down_after_a_crash(make_cluster):
    c = up_netns(make_cluster)
    tag, subnet, (ip1, ip2) = plan(c)
    kill_daemons(c)
    # The namespaces a crash left are recreated; the state dir remembers --netns.
    p = c.up("--timeout", "60")
    assert "network namespace" in p.stdout
    assert plan(c)[:2] == (tag, subnet)
    out = run_on(c, "node2", f"{IP} -4 -o addr show dev eth0\n", "again")
    assert f"inet {ip2}/24" in out
    kill_daemons(c)
    assert c.down().returncode == 0
    assert leftovers(tag) == []


@needs_netns
def test_two_clusters_at_once_do_not_collide(make_cluster):
    clusters = [make_cluster(up=False) for _ in range(2)]
    results = [None, None]

    def start(i):
        results[i] = clusters[i].drover("up", "--state-dir", clusters[i].state_dir, "--netns",
                                        "--nodes", "2", "--cpus", "1", "--mem", "500", "--timeout",
                                        "60", check=False)

    threads = [threading.Thread(target=start, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert r.returncode == 0, r.stderr
    (tag_a, net_a, _), (tag_b, net_b, _) = plan(clusters[0]), plan(clusters[1])
    assert tag_a != tag_b and net_a != net_b
    for i, c in enumerate(clusters):
        out = run_on(c, "node2", f"{IP} -4 -o addr show dev eth0\n", f"two{i}")
        assert plan(c)[2][1] + "/24" in out
    for c in clusters:
        assert c.down().returncode == 0
    assert leftovers(tag_a) == [] and leftovers(tag_b) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run drover as another user")
def test_netns_needs_root():
    user = ensure_user("drovertest")
    state = tempfile.mkdtemp(prefix="drover-it-state-")
    os.chmod(state, 0o777)
    try:
        p = subprocess.run(["runuser", "-u", user.pw_name, "--", os.path.join(BIN, "drover"), "up",
                            "--netns", "--state-dir", os.path.join(state, "s")],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode != 0 and "--netns needs root" in p.stderr, p.stderr
        assert not os.path.exists(os.path.join(state, "s"))
    finally:
        shutil.rmtree(state, ignore_errors=True)
