"""Time limits (TIMEOUT) and silent agents (node DOWN, jobs NODE_FAIL)."""
import os
import signal
import time


def test_time_limit_ends_job_with_timeout(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=500, settings=["KillWait=2"])
    jid = c.sbatch("-t", "1", "-c1", "--wrap", "sleep 300")
    # A step's own limit (srun -t inside a longer job) ends the step, not the job, in the
    # same minute.
    out = os.path.join(c.work, "step-limit.out")
    holder = c.sbatch("-t", "5", "-c1", "-o", out, "--wrap",
                      "srun -t 1 sleep 300; echo srun exit $?")
    c.wait_state(jid, "RUNNING")
    info = c.wait_state(jid, "TIMEOUT", timeout=90)
    assert info["Reason"] == "TimeLimit"
    assert info["TimeLimit"] == "00:01:00"
    c.wait_all_done([jid], timeout=30)
    info = c.job(jid)
    assert info["ExitCode"] == "0:15"
    c.wait_state(holder, "COMPLETED", timeout=60)
    text = open(out).read()
    assert f"*** STEP {holder}.0 ON node1 CANCELLED AT " in text and "DUE TO TIME LIMIT" in text
    assert "srun: error: node1: task 0: Terminated" in text, text
    assert text.rstrip().endswith("srun exit 143"), text


def test_silent_agent_marks_node_down_and_fails_its_job(make_cluster):
    c = make_cluster(nodes=2, cpus=1, mem=500, settings=["SlurmdTimeout=3"])
    # --no-requeue: the job fails with its node (the default, JobRequeue=1, requeues it).
    jid = c.sbatch("-J", "victim", "--no-requeue", "--wrap",
                   f"echo $(ps -o pgid= $$) > {c.work}/victim.pgid; sleep 300")
    info = c.wait_state(jid, "RUNNING")
    node = info["NodeList"]
    os.kill(c.pid(f"agent-{node}.pid"), signal.SIGKILL)
    info = c.wait_state(jid, "NODE_FAIL", timeout=30)
    out = c.ok("sinfo", "-h", "-o", "%N %t")
    assert f"{node} down*" in out.splitlines()
    # Other work still runs on the healthy node.
    other = c.sbatch("--wrap", "true")
    assert c.wait_state(other, "COMPLETED")["NodeList"] != node


def test_silent_agent_requeues_its_batch_job(make_cluster):
    c = make_cluster(nodes=2, cpus=1, mem=500, settings=["SlurmdTimeout=3"])
    jid = c.sbatch("-J", "again", "--wrap", "sleep 300")
    node = c.wait_state(jid, "RUNNING")["NodeList"]
    os.kill(c.pid(f"agent-{node}.pid"), signal.SIGKILL)
    # As Slurm: back to PENDING, held off for the launch credential's lifetime (BeginTime).
    deadline = time.time() + 30
    while time.time() < deadline:
        info = c.job(jid)
        if info["JobState"] == "PENDING":
            break
        time.sleep(0.5)
    assert info["JobState"] == "PENDING", info
    assert info["Reason"] == "BeginTime"
    assert info["Restarts"] == "1"
