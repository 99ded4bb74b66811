"""A real local drover cluster per test: `drover up` in a temporary state dir, torn down after."""
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

BUILD = os.environ.get("DROVER_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
BIN = os.path.abspath(os.path.join(BUILD, "bin"))
SLURM_BIN = os.path.abspath(os.path.join(BUILD, "slurm-bin"))


class Cluster:
    def __init__(self, state_dir, work_dir):
        self.state_dir = state_dir
        self.work = work_dir
        self.env = dict(os.environ)
        self.env.update(
            DROVER_STATE_DIR=state_dir,
            DROVER_SOCKET=os.path.join(state_dir, "ctld.sock"),
            PATH=SLURM_BIN + ":" + os.environ.get("PATH", "/usr/bin:/bin"),
        )

    def drover(self, *args, check=True):
        p = subprocess.run([os.path.join(BIN, "drover"), *args], capture_output=True, text=True, timeout=120)
        if check and p.returncode != 0:
            raise AssertionError(f"drover {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        return p

    def up(self, *extra):
        return self.drover("up", "--state-dir", self.state_dir, *extra)

    def down(self):
        return self.drover("down", "--state-dir", self.state_dir, check=False)

    def run(self, *args, user=None, input=None, cwd=None, timeout=60):
        """Runs a Slurm-named command (optionally as another user) and returns the process."""
        cmd = list(args)
        cmd[0] = os.path.join(SLURM_BIN, cmd[0])
        if user is not None:
            cmd = ["runuser", "-u", user, "--", "env", f"DROVER_SOCKET={self.env['DROVER_SOCKET']}"] + cmd
        return subprocess.run(cmd, capture_output=True, text=True, env=self.env, input=input,
                              cwd=cwd or self.work, timeout=timeout)

    def ok(self, *args, **kw):
        p = self.run(*args, **kw)
        assert p.returncode == 0, f"{args} exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
        return p.stdout

    def sbatch(self, *args, **kw):
        out = self.ok("sbatch", "--parsable", *args, **kw)
        return int(out.strip())

    def write_script(self, name, body, mode=0o755):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(body)
        os.chmod(path, mode)
        return path

    def job(self, job_id):
        """scontrol show job as a dict (keys as scontrol prints them)."""
        p = self.run("scontrol", "-o", "show", "job", str(job_id))
        if p.returncode != 0:
            return None
        fields = {}
        for item in p.stdout.split():
            if "=" in item:
                k, v = item.split("=", 1)
                fields[k] = v
        return fields

    def wait_state(self, job_id, states, timeout=60):
        states = {states} if isinstance(states, str) else set(states)
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            last = self.job(job_id)
            if last and last["JobState"] in states:
                return last
            time.sleep(0.1)
        raise AssertionError(f"job {job_id} not in {states} after {timeout}s: {last}")

    def wait_all_done(self, ids, timeout=120):
        deadline = time.time() + timeout
        pending = set(ids)
        while pending and time.time() < deadline:
            out = self.ok("squeue", "-h", "-o", "%i")
            active = {int(x) for x in out.split()}
            pending &= active
            if pending:
                time.sleep(0.2)
        assert not pending, f"jobs still active after {timeout}s: {sorted(pending)[:20]}"

    def pid(self, name):
        with open(os.path.join(self.state_dir, name)) as f:
            return int(f.read().strip())


@pytest.fixture
def make_cluster():
    """Factory: make_cluster(nodes=2, cpus=2, mem=1000, settings=[...], node_conf={k: "..."})
    -> running Cluster."""
    made = []

    def make(nodes=2, cpus=2, mem=1000, settings=(), up=True, node_conf=None):
        state = tempfile.mkdtemp(prefix="drover-it-state-")
        work = tempfile.mkdtemp(prefix="drover-it-work-")
        os.chmod(work, 0o1777)  # other test users write their outputs here too
        c = Cluster(state, work)
        made.append(c)
        if up:
            args = ["--nodes", str(nodes), "--cpus", str(cpus), "--mem", str(mem), "--timeout", "60"]
            for s in settings:
                args += ["--set", s]
            for k, conf in (node_conf or {}).items():  # {node number: "Gres=gpu:2 ..."}
                args += ["--node-conf", str(k), conf]
            c.up(*args)
        return c

    yield make
    for c in made:
        c.down()
        # Jobs left running by a test that killed an agent are ended by their process group.
        for name in os.listdir(c.work):
            if name.endswith(".pgid"):
                try:
                    os.killpg(int(open(os.path.join(c.work, name)).read()), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
        remove_job_cgroups(c.state_dir)
        if os.environ.get("DROVER_IT_KEEP"):  # keep logs and state to debug a failure
            print(f"kept {c.state_dir} {c.work}")
            continue
        shutil.rmtree(c.state_dir, ignore_errors=True)
        shutil.rmtree(c.work, ignore_errors=True)


def node_cgroup_name(node, spool):
    """The agent's cgroup subtree, as agent/proctrack.cpp names it."""
    h = 14695981039346656037
    for b in os.path.normpath(os.path.abspath(spool)).encode():
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{node}_{(h ^ (h >> 32)) & 0xFFFFFFFF:08x}"


def remove_job_cgroups(state_dir):
    """What agents killed by a test left in their cgroups is killed, and the cgroups removed."""
    spool = os.path.join(state_dir, "spool")
    if not os.path.isdir(spool):
        return
    for node in os.listdir(spool):
        name = node_cgroup_name(node, os.path.join(spool, node))
        for root in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup", "/sys/fs/cgroup/memory",
                     "/sys/fs/cgroup/freezer", "/sys/fs/cgroup/cpuset", "/sys/fs/cgroup/devices"):
            top = os.path.join(root, "drover", name)
            if not os.path.isdir(top):
                continue
            try:
                with open(os.path.join(top, "cgroup.kill"), "w") as f:
                    f.write("1")
            except OSError:
                pass
            deadline = time.time() + 10
            for d, _, _ in sorted(os.walk(top), key=lambda w: -w[0].count("/")):
                while time.time() < deadline:
                    try:
                        os.rmdir(d)
                        break
                    except FileNotFoundError:
                        break
                    except OSError:
                        time.sleep(0.05)


def ensure_user(name):
    """Creates a local test user (root only) and returns its pwd entry."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", name], check=True)
        return pwd.getpwnam(name)


requires_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch users")
