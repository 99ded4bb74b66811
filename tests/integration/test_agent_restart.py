"""Agents restart without killing jobs: each batch job, and each srun step on each node, runs
under a supervisor of its own (`droverd --stepd`) that outlives the agent. An agent killed with
SIGKILL, or stopped with SIGTERM, leaves the job running; the next agent of the node adopts it,
lists it as running when it registers, and reports its end: the job ends once, as it ended,
with its output, and is not requeued. A step's supervisor holds srun's link, so srun keeps its
tasks' output and exits, and scancel still reaches an adopted step. (A job whose supervisor is
gone as well is cleaned up and requeued: test_exactly_once.py.)"""
import os
import shutil
import signal
import subprocess
import time

from conftest import BIN, SLURM_BIN

FIELDS = ["-P", "-n", "-X", "-S", "now-1hours", "-o", "JobID,State,ExitCode"]


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def wait_for(cond, timeout=20, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def gated_job(c, name, code):
    """A job that records its shell's pid, waits for a file, then prints and exits `code`."""
    runs = os.path.join(c.work, f"{name}.runs")
    gate = os.path.join(c.work, f"{name}.go")
    jid = c.sbatch("-o", os.path.join(c.work, f"{name}.out"), "--wrap",
                   f"echo $$ >> {runs}; echo $(ps -o pgid= $$) > {c.work}/{name}.pgid; "
                   f"echo started; while [ ! -e {gate} ]; do sleep 0.05; done; "
                   f"echo finished; exit {code}")
    c.wait_state(jid, "RUNNING")
    wait_for(lambda: os.path.exists(runs) and open(runs).read().strip(), what="the job's start")
    return jid, runs, gate


def kill_agent(c, sig=signal.SIGKILL):
    pid = c.pid("agent-node1.pid")
    os.kill(pid, sig)
    wait_for(lambda: not alive(pid), what="the agent's end")


def sacct_runs(c, jid):
    out = c.ok("sacct", *FIELDS, "-j", str(jid))
    return [line.split("|") for line in out.splitlines()]


def test_a_job_outlives_a_killed_agent_and_ends_once(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500)
    jid, runs, gate = gated_job(c, "a", 7)
    shell = int(open(runs).read().split()[0])
    kill_agent(c)
    time.sleep(0.5)
    assert alive(shell)  # the agent is gone, the job is not
    c.up()
    adopted = f"job {jid}: run 1 (pid {shell}) goes on under its supervisor; adopted"
    wait_for(lambda: adopted in open(os.path.join(c.state_dir, "agent-node1.log")).read(),
             what="the adoption")
    # Adopted, not requeued: still the same run, and the only job on the CPU.
    time.sleep(1)
    info = c.job(jid)
    assert (info["JobState"], info["Restarts"]) == ("RUNNING", "0")
    open(gate, "w").close()
    done = c.wait_state(jid, ["COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL"])
    assert (done["JobState"], done["ExitCode"], done["Restarts"]) == ("FAILED", "7:0", "0")
    assert open(runs).read().split() == [str(shell)]  # ran once
    assert open(os.path.join(c.work, "a.out")).read() == "started\nfinished\n"
    assert sacct_runs(c, jid) == [[str(jid), "FAILED", "7:0"]]
    # The node takes new work afterwards.
    other = c.sbatch("--wrap", "true")
    assert c.wait_state(other, ["COMPLETED", "FAILED"])["JobState"] == "COMPLETED"


def test_an_exit_while_no_agent_runs_is_reported_by_the_next(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500)
    jid, runs, gate = gated_job(c, "b", 0)
    shell = int(open(runs).read().split()[0])
    kill_agent(c)
    open(gate, "w").close()  # the job ends with no agent to hear it
    wait_for(lambda: not alive(shell), what="the job's end")
    exits = os.path.join(c.state_dir, "spool", "node1", "exits")
    wait_for(lambda: os.path.exists(os.path.join(exits, str(jid))), what="the exit record")
    sock = os.path.join(c.state_dir, "spool", "node1", "stepd", f"job{jid}.sock")
    wait_for(lambda: not os.path.exists(sock), what="the supervisor's end")
    assert c.job(jid)["JobState"] == "RUNNING"  # the controller has not heard yet
    c.up()
    done = c.wait_state(jid, ["COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL"])
    assert (done["JobState"], done["ExitCode"], done["Restarts"]) == ("COMPLETED", "0:0", "0")
    time.sleep(1)  # a requeued copy would have started by now
    assert open(runs).read().split() == [str(shell)]
    assert sacct_runs(c, jid) == [[str(jid), "COMPLETED", "0:0"]]
    wait_for(lambda: not os.listdir(exits), what="the acknowledged record's removal")


def test_sigterm_stops_the_agent_and_leaves_the_job_running(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500)
    jid, runs, gate = gated_job(c, "c", 0)
    shell = int(open(runs).read().split()[0])
    t0 = time.time()
    kill_agent(c, signal.SIGTERM)
    assert time.time() - t0 < 3  # it does not wait for its jobs
    time.sleep(0.5)
    assert alive(shell)
    c.up()
    time.sleep(0.5)
    assert c.job(jid)["JobState"] == "RUNNING"
    open(gate, "w").close()
    done = c.wait_state(jid, ["COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL"])
    assert (done["JobState"], done["ExitCode"], done["Restarts"]) == ("COMPLETED", "0:0", "0")
    assert open(runs).read().split() == [str(shell)]
    assert open(os.path.join(c.work, "c.out")).read() == "started\nfinished\n"


def test_scancel_while_the_agent_is_down_ends_the_job_once_it_is_back(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500)
    jid, runs, gate = gated_job(c, "d", 0)
    shell = int(open(runs).read().split()[0])
    kill_agent(c)
    c.ok("scancel", str(jid))
    time.sleep(1)
    assert c.job(jid)["JobState"] == "COMPLETING"
    assert alive(shell)  # nobody on the node has heard of the cancellation yet
    c.up()
    done = c.wait_state(jid, ["CANCELLED", "COMPLETED", "FAILED"], timeout=30)
    assert done["JobState"] == "CANCELLED"
    wait_for(lambda: not alive(shell), what="the job's processes to end")
    wait_for(lambda: c.ok("squeue", "-h", "-j", str(jid), "-o", "%t").strip() == "",
             what="the job to leave the queue")
    assert open(runs).read().split() == [str(shell)]


def test_an_srun_step_outlives_its_killed_agents(make_cluster):
    # A two-node step inside a batch job; both agents are killed while it runs. Each node's
    # tasks go on under their step's supervisor, which holds srun's link: their output still
    # reaches srun, and the step and the job end as they would have.
    c = make_cluster(nodes=2, cpus=1, mem=500)
    gate = os.path.join(c.work, "s.go")
    out = os.path.join(c.work, "s.out")
    jid = c.sbatch("-N2", "-n2", "-o", out, "--wrap",
                   f"srun -l bash -c 'echo start; while [ ! -e {gate} ]; do sleep 0.05; done; "
                   f"echo end'; echo srun=$?")
    c.wait_state(jid, "RUNNING")
    wait_for(lambda: os.path.exists(out) and open(out).read().count("start") == 2,
             what="both tasks' start")
    for node in ("node1", "node2"):
        pid = c.pid(f"agent-{node}.pid")
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not alive(pid), what=f"the end of {node}'s agent")
    time.sleep(0.5)
    c.up()
    for node in ("node1", "node2"):
        wait_for(lambda: f"step {jid}.0 goes on under its supervisor; adopted" in
                 open(os.path.join(c.state_dir, f"agent-{node}.log")).read(),
                 what=f"{node}'s adoption of the step")
    open(gate, "w").close()
    done = c.wait_state(jid, ["COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL"])
    assert (done["JobState"], done["ExitCode"], done["Restarts"]) == ("COMPLETED", "0:0", "0")
    lines = open(out).read().splitlines()
    assert sorted(lines) == ["0: end", "0: start", "1: end", "1: start", "srun=0"], lines
    rows = c.ok("sacct", "-P", "-n", "-S", "now-1hours", "-j", str(jid), "-o",
                "JobID,State,ExitCode").split()
    assert f"{jid}.0|COMPLETED|0:0" in rows, rows


def test_an_interactive_srun_goes_on_through_sigterm_of_its_agent(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500)
    gate = os.path.join(c.work, "i.go")
    srun = subprocess.Popen(
        [os.path.join(SLURM_BIN, "srun"), "-n1", "bash", "-c",
         f"echo before; while [ ! -e {gate} ]; do sleep 0.05; done; echo after; exit 3"],
        env=c.env, cwd=c.work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert srun.stdout.readline() == "before\n"
        kill_agent(c, signal.SIGTERM)
        time.sleep(0.5)
        assert srun.poll() is None  # srun's link is the supervisor's: nothing ended it
        c.up()
        open(gate, "w").close()
        out, err = srun.communicate(timeout=30)
    finally:
        if srun.poll() is None:
            srun.kill()
    assert (srun.returncode, out) == (3, "after\n"), err


def test_scancel_of_an_adopted_step_reaches_its_supervisor(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500)
    out = os.path.join(c.work, "k.out")
    jid = c.sbatch("-o", out, "--wrap",
                   "srun bash -c 'echo step; sleep 300'; echo srun=$?; sleep 300")
    c.wait_state(jid, "RUNNING")
    wait_for(lambda: os.path.exists(out) and "step" in open(out).read(), what="the step's start")
    kill_agent(c)
    c.up()
    wait_for(lambda: f"step {jid}.0 goes on under its supervisor; adopted" in
             open(os.path.join(c.state_dir, "agent-node1.log")).read(), what="the adoption")
    c.ok("scancel", f"{jid}.0")
    # The step's tasks are killed; srun ends, and the batch script goes on.
    wait_for(lambda: "srun=" in open(out).read(), timeout=30, what="srun's end")
    assert c.job(jid)["JobState"] == "RUNNING"
    wait_for(lambda: c.ok("sacct", "-P", "-n", "-S", "now-1hours", "-j", f"{jid}.0", "-o",
                          "State").strip() == "CANCELLED", what="the step's end in sacct")
    c.ok("scancel", str(jid))
    c.wait_state(jid, "CANCELLED")


def test_a_new_build_of_the_agent_adopts_what_the_old_one_started(make_cluster):
    # The binary is replaced while the agent is down (an upgrade: a new file under the same
    # name); the old supervisor keeps running the old code, the new agent adopts its job.
    c = make_cluster(nodes=1, cpus=1, mem=500)
    jid, runs, gate = gated_job(c, "u", 0)
    shell = int(open(runs).read().split()[0])
    kill_agent(c)
    droverd = os.path.join(BIN, "droverd")
    shutil.copy2(droverd, droverd + ".new")
    os.replace(droverd + ".new", droverd)
    with open(f"/proc/{shell}/stat") as f:
        supervisor = int(f.read().rsplit(")", 1)[1].split()[1])
    assert os.readlink(f"/proc/{supervisor}/exe").endswith(" (deleted)")
    c.up()
    wait_for(lambda: f"job {jid}: run 1 (pid {shell}) goes on under its supervisor; adopted" in
             open(os.path.join(c.state_dir, "agent-node1.log")).read(), what="the adoption")
    open(gate, "w").close()
    done = c.wait_state(jid, ["COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL"])
    assert (done["JobState"], done["ExitCode"], done["Restarts"]) == ("COMPLETED", "0:0", "0")
    assert open(runs).read().split() == [str(shell)]
    # The new build's own supervisors run what comes next.
    other = c.sbatch("--wrap", "true")
    assert c.wait_state(other, ["COMPLETED", "FAILED"])["JobState"] == "COMPLETED"
