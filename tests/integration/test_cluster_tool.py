"""drover up/down: the state dir's layout, env.sh, slurm.conf, and refusal of bad configs."""
import os
import stat
import subprocess


def test_state_dir_layout_and_env_sh(make_cluster):
    c = make_cluster(nodes=2, cpus=1, mem=300)
    names = set(os.listdir(c.state_dir))
    for f in ["ctld.pid", "agent-node1.pid", "agent-node2.pid", "ctld.log", "agent-node1.log",
              "slurm.conf", "env.sh", "cluster.key", "ctld.sock"]:
        assert f in names, f
    assert stat.S_IMODE(os.stat(os.path.join(c.state_dir, "cluster.key")).st_mode) == 0o600
    conf = open(os.path.join(c.state_dir, "slurm.conf")).read()
    assert "NodeName=node[1-2] CPUs=1 RealMemory=300" in conf
    out = subprocess.run(["bash", "-c", f"source {c.state_dir}/env.sh && command -v sbatch && squeue -h | wc -l"],
                         capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].endswith("/slurm-bin/sbatch")
    assert out.stdout.splitlines()[1] == "0"


def test_unknown_config_keys_are_reported(make_cluster):
    c = make_cluster(up=False)
    with open(os.path.join(c.state_dir, "slurm.conf"), "w") as f:
        f.write("ClusterName=x\nSlurmctldPort=%d\nBogusKey=1\nNodeName=node1 CPUs=1 RealMemory=100\n"
                "PartitionName=p Nodes=node1 Default=YES\n" % _free_port())
    p = c.up()
    assert "BogusKey" in p.stderr
    assert "BogusKey" in open(os.path.join(c.state_dir, "ctld.log")).read()


def test_debian_node_range_with_one_address_comes_up(make_cluster):
    # Debian's Slurm (multiple-slurmd) takes one NodeAddr for a node range and a Port per node.
    c = make_cluster(up=False)
    with open(os.path.join(c.state_dir, "slurm.conf"), "w") as f:
        f.write("ClusterName=x\nSlurmctldPort=%d\n"
                "NodeName=node[1-2] NodeAddr=127.0.0.1 Port=[17001-17002] CPUs=1 RealMemory=100\n"
                "PartitionName=p Nodes=ALL Default=YES\n" % _free_port())
    c.up("--timeout", "60")
    out = c.ok("scontrol", "show", "node", "node2")
    assert "NodeAddr=127.0.0.1 NodeHostName=node2" in out
    with open(os.path.join(c.state_dir, "slurm.conf"), "a") as f:
        f.write("NodeName=node[3-5] Port=[17003-17004]\n")
    c.down()
    p = c.drover("up", "--state-dir", c.state_dir, check=False)
    assert p.returncode == 1
    assert ("Port count must equal that of NodeName records or there must be no more than one"
            " (2 != 3)") in p.stderr


def test_down_without_cluster_fails(tmp_path):
    from conftest import BIN
    p = subprocess.run([os.path.join(BIN, "drover"), "down", "--state-dir", str(tmp_path / "none")],
                       capture_output=True, text=True)
    assert p.returncode == 1 and "no cluster" in p.stderr


def _free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_down_stops_daemons_whose_binaries_were_replaced(tmp_path):
    """A rebuild or upgrade replaces the binaries under running daemons: `drover down` must
    still stop them (the kernel then names their executables "PATH (deleted)")."""
    import shutil
    import time
    from conftest import BIN
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("drover", "droverctld", "droverd", "drover-cmd"):
        shutil.copy2(os.path.join(BIN, name), bin_dir / name)
    state = tmp_path / "state"
    drover = str(bin_dir / "drover")
    p = subprocess.run([drover, "up", "--state-dir", str(state), "--nodes", "1", "--cpus", "1",
                        "--mem", "100"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    pids = [int(open(state / f).read()) for f in ("ctld.pid", "agent-node1.pid")]
    for name in ("droverctld", "droverd"):  # a new file in place of the old one
        shutil.copy2(os.path.join(BIN, name), bin_dir / (name + ".new"))
        os.replace(bin_dir / (name + ".new"), bin_dir / name)
    p = subprocess.run([drover, "down", "--state-dir", str(state)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr

    def running(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False
    deadline = time.time() + 5
    while any(running(pid) for pid in pids) and time.time() < deadline:
        time.sleep(0.05)
    still = [pid for pid in pids if running(pid)]
    for pid in still:
        os.kill(pid, 9)
    assert not still, "drover down left these running"
