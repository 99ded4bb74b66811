"""Jobs confined to cgroups: every process of a job ends with it (also those that called setsid),
its memory is limited to what it asked for (OUT_OF_MEMORY when exceeded, MaxRSS in sacct), and a
restarted agent kills what its previous instance left (and no supervisor runs) before it
registers."""
import os
import signal
import time

import pytest


def _cgroups_writable():
    if os.geteuid() != 0:
        return False
    for root in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup", "/sys/fs/cgroup/freezer"):
        if os.path.exists(os.path.join(root, "cgroup.procs")) and os.access(root, os.W_OK):
            return True
    return False


def _memory_controller():
    if os.path.exists("/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        return True
    try:
        return "memory" in open("/sys/fs/cgroup/cgroup.controllers").read().split()
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not _cgroups_writable(),
                                reason="needs root and a writable cgroup hierarchy")
needs_memory = pytest.mark.skipif(not _memory_controller(), reason="no cgroup memory controller")


def alive(pid):
    """A process that exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pid, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline and alive(pid):
        time.sleep(0.1)
    return not alive(pid)


def wait_file(path, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path) and open(path).read().strip():
            return open(path).read()
        time.sleep(0.1)
    raise AssertionError(f"{path} never written")


def daemon_script(c, tag):
    """A batch script that leaves a sleeper in a session of its own and records its pid."""
    pidfile = os.path.join(c.work, f"{tag}.pid")
    return pidfile, (f"#!/bin/sh\nsetsid sh -c 'echo $$ > {pidfile}; exec sleep 4321' "
                     "</dev/null >/dev/null 2>&1 &\n")


def sacct_steps(c, jid, timeout=30):
    """{step id: (MaxRSS, State)} once sacct lists the batch step as ended."""
    deadline = time.time() + timeout
    rows = {}
    while time.time() < deadline:
        out = c.ok("sacct", "-j", str(jid), "-n", "-P", "-o", "JobID,MaxRSS,State")
        rows = {r.split("|")[0]: tuple(r.split("|")[1:]) for r in out.splitlines() if r}
        batch = rows.get(f"{jid}.batch")
        if batch and batch[1] not in ("RUNNING", "PENDING"):
            return rows
        time.sleep(0.3)
    raise AssertionError(f"sacct never showed {jid}.batch ended: {rows}")


def rss_kb(text):
    units = {"K": 1, "M": 1024, "G": 1024 ** 2, "T": 1024 ** 3}
    return int(text[:-1]) * units[text[-1]] if text and text[-1] in units else int(text or -1)


def test_setsid_process_ends_with_the_batch_script(make_cluster):
    c = make_cluster(nodes=1)
    pidfile, body = daemon_script(c, "daemon")
    jid = c.sbatch(c.write_script("d.sh", body + "sleep 1\n"))
    pid = int(wait_file(pidfile))
    c.wait_state(jid, "COMPLETED", timeout=60)
    assert wait_gone(pid), f"pid {pid} outlived job {jid}"


def test_setsid_process_ends_with_scancel(make_cluster):
    c = make_cluster(nodes=1, settings=["KillWait=2"])
    pidfile, body = daemon_script(c, "cancelled")
    jid = c.sbatch(c.write_script("c.sh", body + "sleep 300\n"))
    pid = int(wait_file(pidfile))
    c.wait_state(jid, "RUNNING")
    c.ok("scancel", str(jid))
    c.wait_state(jid, "CANCELLED")
    # SIGTERM reaches it too (not only SIGKILL after KillWait): sleep dies of it at once.
    assert wait_gone(pid), f"pid {pid} outlived scancel of job {jid}"
    c.wait_all_done([jid], timeout=30)


@needs_memory
def test_job_beyond_its_memory_ends_out_of_memory(make_cluster):
    c = make_cluster(nodes=1)
    err = os.path.join(c.work, "oom.err")
    # 1 GiB allocated and filled against a 100M limit.
    jid = c.sbatch("--mem=100M", "-e", err, "--wrap",
                   "python3 -c \"x = b'x' * (1 << 30)\"; echo after $?")
    info = c.wait_state(jid, "OUT_OF_MEMORY", timeout=90)
    assert info["Reason"] == "OutOfMemory"
    assert info["ExitCode"] == "0:125"
    text = open(err).read()
    assert f"oom-kill event(s) in StepId={jid}.batch" in text, text
    rows = sacct_steps(c, jid)
    assert rows[str(jid)][1] == "OUT_OF_MEMORY"
    maxrss, state = rows[f"{jid}.batch"]
    assert state == "OUT_OF_MEMORY"
    assert 0 < rss_kb(maxrss) <= 101 * 1024, maxrss


@needs_memory
def test_normal_job_shows_maxrss(make_cluster):
    c = make_cluster(nodes=1)
    jid = c.sbatch("--wrap", "python3 -c \"x = b'x' * (60 << 20); import time; time.sleep(0.3)\"")
    c.wait_state(jid, "COMPLETED", timeout=60)
    rows = sacct_steps(c, jid)
    maxrss, state = rows[f"{jid}.batch"]
    assert state == "COMPLETED"
    assert rss_kb(maxrss) >= 60 * 1024, maxrss
    assert rows[str(jid)][0] == ""  # on the step's line only, as in Slurm


def test_restarted_agent_kills_what_its_predecessor_left(make_cluster):
    c = make_cluster(nodes=1)
    starts = os.path.join(c.work, "starts")
    dup = os.path.join(c.work, "duplicate")
    current = os.path.join(c.work, "current")
    pidfile, body = daemon_script(c, "left")
    # Each run notes itself; a run that finds an earlier one still alive (not a zombie) says so.
    script = body + (f"if [ -f {current} ]; then s=$(ps -o stat= -p $(cat {current})); "
                     f"case \"$s\" in ''|Z*) ;; *) echo $$ >> {dup};; esac; fi\n"
                     f"echo $$ > {current}\necho $$ >> {starts}\nsleep 300\n")
    jid = c.sbatch(c.write_script("r.sh", script))
    first = int(wait_file(starts).split()[0])
    sleeper = int(wait_file(pidfile))
    # The agent dies and so does the job's supervisor (with it alive, the job is adopted).
    with open(f"/proc/{first}/stat") as f:
        supervisor = int(f.read().rsplit(")", 1)[1].split()[1])
    os.kill(c.pid("agent-node1.pid"), signal.SIGKILL)
    os.kill(supervisor, signal.SIGKILL)
    time.sleep(0.5)
    assert alive(first) and alive(sleeper)  # nothing killed them with the agent
    c.up()  # starts the missing agent
    # Before it registered, the new agent killed the old run, whose supervisor was gone, and
    # what it had started; the controller, not hearing of the run, starts it again: never
    # beside the first.
    assert wait_gone(first, 5) and wait_gone(sleeper, 5)
    deadline = time.time() + 60
    while time.time() < deadline and len(open(starts).read().split()) < 2:
        time.sleep(0.2)
    runs = open(starts).read().split()
    assert len(runs) == 2, runs
    assert not os.path.exists(dup), open(dup).read()
    assert c.wait_state(jid, "RUNNING")["Restarts"] == "1"
    log = open(os.path.join(c.state_dir, "agent-node1.log")).read()
    assert f"job {jid}: killing" in log, log
    c.ok("scancel", str(jid))


@needs_memory
def test_memory_limited_on_every_node_of_the_job(make_cluster):
    c = make_cluster(nodes=2)
    out = os.path.join(c.work, "steps.out")
    # Each node's task fills 1 GiB against the job's 100M there, batch node or not.
    jid = c.sbatch("-N2", "-n2", "--mem=100M", "-o", out, "--wrap",
                   "srun -N2 -n2 bash -c "
                   "'python3 -c \"x = b\\\"x\\\" * (1 << 30)\" 2>/dev/null; "
                   "echo $SLURMD_NODENAME $?'")
    c.wait_state(jid, ["OUT_OF_MEMORY", "COMPLETED", "FAILED"], timeout=90)
    lines = sorted(l for l in open(out).read().splitlines() if l.startswith("node"))
    assert lines == ["node1 137", "node2 137"], open(out).read()


def test_without_cgroups_jobs_end_by_process_group(make_cluster, monkeypatch):
    # As Slurm's ProctrackType=proctrack/pgid (and an agent that is not root): what stays in
    # the job's process group still ends with it, and MaxRSS comes from the shell's rusage.
    monkeypatch.setenv("DROVER_PROCTRACK", "pgid")
    c = make_cluster(nodes=1, settings=["KillWait=2"])
    log = open(os.path.join(c.state_dir, "agent-node1.log")).read()
    assert "DROVER_PROCTRACK=pgid: jobs are not confined to cgroups" in log, log
    pidfile = os.path.join(c.work, "child.pid")
    jid = c.sbatch("--wrap", f"sleep 4322 & echo $! > {pidfile}; "
                   "python3 -c \"x = b'x' * (60 << 20)\"; wait")
    pid = int(wait_file(pidfile))
    c.ok("scancel", str(jid))
    c.wait_state(jid, "CANCELLED")
    assert wait_gone(pid), f"pid {pid} outlived scancel of job {jid}"
    jid = c.sbatch("--wrap", "python3 -c \"x = b'x' * (60 << 20)\"")
    c.wait_state(jid, "COMPLETED", timeout=60)
    maxrss, state = sacct_steps(c, jid)[f"{jid}.batch"]
    assert rss_kb(maxrss) >= 60 * 1024, maxrss
