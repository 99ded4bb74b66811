"""Exactly once. sbatch through a controller restart: it retries with the same request id, so
a submission whose reply was lost is made once; when the time is up it says whether anything
reached the controller. An agent that dies leaves its node not responding at once, scancel of
a job there leaves it COMPLETING until the node is declared down, and a restarted agent's node
never runs a job beside the copy its previous agent left, nor runs again a job whose exit its
previous agent had recorded but the controller never heard of."""
import os
import signal
import socket
import subprocess
import threading
import time

from conftest import SLURM_BIN

SBATCH = os.path.join(SLURM_BIN, "sbatch")


def sbatch_alone(sock_path, retry_s, request_id=None):
    env = dict(os.environ, DROVER_SOCKET=sock_path, DROVER_SUBMIT_RETRY_S=str(retry_s))
    if request_id:
        env["DROVER_REQUEST_ID"] = request_id
    start = time.time()
    p = subprocess.run([SBATCH, "--wrap", "true"], capture_output=True, text=True, env=env,
                       timeout=60, cwd="/tmp")
    return p, time.time() - start


def test_no_controller_is_a_connect_failure_after_retrying(tmp_path):
    p, took = sbatch_alone(str(tmp_path / "nothing.sock"), 1.5)
    assert p.returncode == 1
    assert p.stderr == ("sbatch: error: Batch job submission failed: Unable to contact slurm "
                        "controller (connect failure)\n")
    assert took >= 1.0  # it kept trying


def test_a_lost_reply_says_the_job_may_exist_and_how_to_find_it(tmp_path):
    # A controller that takes the request and dies before answering.
    path = str(tmp_path / "ctld.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(16)
    seen = []

    def serve():
        srv.settimeout(10)
        try:
            while True:
                conn, _ = srv.accept()
                seen.append(conn.recv(1 << 20))
                conn.close()
        except OSError:
            pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    p, _ = sbatch_alone(path, 1, request_id="lost-1")
    srv.close()
    assert p.returncode == 1
    assert p.stderr == (
        "sbatch: error: Batch job submission failed: Unable to contact slurm controller (no "
        "reply: it may have been submitted, request id lost-1)\n"
        "sbatch: error: Run sbatch again with DROVER_REQUEST_ID=lost-1 to get its job id without "
        "submitting it twice\n")
    assert len(seen) >= 2  # retried
    assert all(b'"request_id":"lost-1"' in s for s in seen)


def test_sbatch_waits_out_a_controller_restart_and_submits_once(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500)
    first = c.sbatch("--wrap", "true")
    os.kill(c.pid("ctld.pid"), signal.SIGKILL)
    time.sleep(0.3)
    env = dict(c.env, DROVER_SUBMIT_RETRY_S="60")
    p = subprocess.Popen([SBATCH, "--parsable", "--wrap", "true"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, cwd=c.work)
    time.sleep(1.5)
    assert p.poll() is None  # still trying
    c.up()
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert int(out) == first + 1
    # The same request id again: the same job, not a second one.
    again = c.run("sbatch", "--parsable", "--wrap", "true")
    assert int(again.stdout) == first + 2
    env["DROVER_REQUEST_ID"] = "fixed"
    a = subprocess.run([SBATCH, "--parsable", "--wrap", "true"], capture_output=True, text=True,
                       env=env, cwd=c.work)
    b = subprocess.run([SBATCH, "--parsable", "--wrap", "true"], capture_output=True, text=True,
                       env=env, cwd=c.work)
    assert a.stdout == b.stdout == f"{first + 3}\n"
    # The id is not passed on to the job: an sbatch inside it makes a job of its own.
    outer = subprocess.run([SBATCH, "--parsable", "--wrap",
                            f"sbatch --parsable --wrap true > {c.work}/inner"],
                           capture_output=True, text=True, env=env | {"DROVER_REQUEST_ID": "o"},
                           cwd=c.work)
    outer_id = int(outer.stdout)
    c.wait_state(outer_id, "COMPLETED")
    assert int(open(f"{c.work}/inner").read()) == outer_id + 1


def test_killed_agent_marks_node_not_responding_and_scancel_leaves_it_completing(make_cluster):
    c = make_cluster(nodes=2, cpus=1, mem=500)
    jid = c.sbatch("-w", "node1", "--wrap",
                   f"echo $(ps -o pgid= $$) > {c.work}/victim.pgid; sleep 300")
    c.wait_state(jid, "RUNNING")
    os.kill(c.pid("agent-node1.pid"), signal.SIGKILL)
    deadline = time.time() + 10
    while time.time() < deadline:
        states = dict(line.split() for line in c.ok("sinfo", "-h", "-N", "-o", "%N %t").splitlines())
        if states.get("node1", "").endswith("*"):
            break
        time.sleep(0.1)
    assert states["node1"] == "alloc*", states  # at once, not after SlurmdTimeout (60 s)
    assert states["node2"] == "idle"
    # New work goes to the node that answers.
    other = c.sbatch("--wrap", "true")
    assert c.wait_state(other, "COMPLETED")["NodeList"] == "node2"
    # As Slurm 22.05: scancel says nothing and succeeds; the job is COMPLETING (CG) while its
    # node cannot confirm the processes are gone.
    p = c.run("scancel", str(jid))
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")
    time.sleep(1)
    assert c.job(jid)["JobState"] == "COMPLETING"
    assert c.ok("squeue", "-h", "-j", str(jid), "-o", "%t").strip() == "CG"


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def ppid(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def test_restarted_agent_never_runs_a_job_beside_its_old_copy(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500)
    runs = os.path.join(c.work, "runs")
    jid = c.sbatch("--wrap", f"echo $$ >> {runs}; sleep 300")
    c.wait_state(jid, "RUNNING")
    deadline = time.time() + 10
    while not os.path.exists(runs) and time.time() < deadline:
        time.sleep(0.05)
    first = int(open(runs).read().split()[0])
    # The agent and the job's supervisor both die (an adopted job would simply go on).
    supervisor = ppid(first)
    assert "--stepd" in open(f"/proc/{supervisor}/cmdline").read().split("\0")
    os.kill(c.pid("agent-node1.pid"), signal.SIGKILL)
    os.kill(supervisor, signal.SIGKILL)
    time.sleep(0.5)
    assert alive(first)  # the job's processes outlive both...
    c.up()  # ...until a new agent starts: it ends them before it registers
    deadline = time.time() + 30
    while time.time() < deadline and len(open(runs).read().split()) < 2:
        time.sleep(0.05)
    pids = [int(p) for p in open(runs).read().split()]
    assert len(pids) == 2, pids  # requeued (the new agent does not know it) and run again
    assert not alive(pids[0])
    info = c.wait_state(jid, "RUNNING")
    assert info["Restarts"] == "1"
    # One copy only: the CPU is the second run's.
    assert c.ok("squeue", "-h", "-o", "%i %t").split() == [str(jid), "R"]
    c.ok("scancel", str(jid))


def test_an_exit_the_controller_never_heard_of_survives_the_agent(make_cluster):
    # The window made wide: the controller stopped, so that no exit is acknowledged, the jobs'
    # shells end on the agent, and the agent is killed with SIGKILL before it can tell anyone.
    # The new agent reads the exits from its spool and registers with them: the jobs end as
    # they ended, once, and are not requeued.
    c = make_cluster(nodes=1, cpus=2, mem=500)
    runs = os.path.join(c.work, "runs")
    ok = c.sbatch("--wrap", f"sleep 1; echo ok >> {runs}; exit 0")
    bad = c.sbatch("--wrap", f"sleep 1; echo bad >> {runs}; exit 3")
    c.wait_state(ok, "RUNNING")
    c.wait_state(bad, "RUNNING")
    ctld = c.pid("ctld.pid")
    os.kill(ctld, signal.SIGSTOP)
    try:
        deadline = time.time() + 20
        while time.time() < deadline and (not os.path.exists(runs)
                                          or len(open(runs).read().split()) < 2):
            time.sleep(0.05)
        assert sorted(open(runs).read().split()) == ["bad", "ok"]
        time.sleep(1)  # the shells exit and are reaped; the exits go nowhere
        os.kill(c.pid("agent-node1.pid"), signal.SIGKILL)
    finally:
        os.kill(ctld, signal.SIGKILL)
    time.sleep(0.3)
    c.up()
    done = c.wait_state(ok, ["COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL"], timeout=30)
    failed = c.wait_state(bad, ["COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL"], timeout=30)
    time.sleep(1)  # a requeued copy would have started by now
    assert sorted(open(runs).read().split()) == ["bad", "ok"]  # each ran once
    assert (done["JobState"], done["ExitCode"], done["Restarts"]) == ("COMPLETED", "0:0", "0")
    assert (failed["JobState"], failed["ExitCode"], failed["Restarts"]) == ("FAILED", "3:0", "0")
    # Acknowledged, the records are gone from the spool.
    exits = os.path.join(c.state_dir, "spool", "node1", "exits")
    deadline = time.time() + 10
    while time.time() < deadline and os.path.isdir(exits) and os.listdir(exits):
        time.sleep(0.1)
    assert not os.path.isdir(exits) or not os.listdir(exits)
