"""Accepted work is durable: a controller killed with SIGKILL right after sbatch returned loses
no job, and every job runs exactly once. A cluster brought down and up keeps its queue."""
import os
import signal
import time


def run_marker_script(c):
    runs = os.path.join(c.work, "runs")
    os.makedirs(runs, exist_ok=True)
    return c.write_script("once.sh", f"#!/bin/sh\necho run >> {runs}/$SLURM_JOB_ID\nsleep 0.2\n"), runs


def job_story(c, jid):
    """What the daemons' logs say about a job (and any warnings), to explain a failure."""
    lines = []
    for name in sorted(os.listdir(c.state_dir)):
        if name.endswith(".log"):
            with open(os.path.join(c.state_dir, name)) as f:
                for line in f:
                    if f"job {jid} " in line or f"job {jid}:" in line or "[warning]" in line or "[error]" in line:
                        lines.append(f"{name}: {line.rstrip()}")
    return "\n".join(lines)


def test_controller_crash_loses_no_acknowledged_job(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    script, runs = run_marker_script(c)
    acked = [c.sbatch(script) for _ in range(30)]
    # The crash comes immediately after the last acknowledgement.
    acked.append(c.sbatch(script))
    os.kill(c.pid("ctld.pid"), signal.SIGKILL)
    time.sleep(0.5)
    c.up()  # the same state dir: same cluster, same jobs
    acked += [c.sbatch(script) for _ in range(5)]
    assert len(set(acked)) == len(acked)
    assert acked == sorted(acked)  # ids are monotonic across the restart
    c.wait_all_done(acked, timeout=120)
    for jid in acked:
        info = c.job(jid)
        assert info is not None, f"job {jid} was lost"
        assert info["JobState"] == "COMPLETED", info
        with open(os.path.join(runs, str(jid))) as f:
            assert f.read() == "run\n", f"job {jid} did not run exactly once:\n{job_story(c, jid)}"


def test_crash_while_jobs_run_reports_them_after_restart(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    jid = c.sbatch("--wrap", "sleep 2; exit 4")
    c.wait_state(jid, "RUNNING")
    os.kill(c.pid("ctld.pid"), signal.SIGKILL)
    time.sleep(3)  # the job ends while the controller is gone
    c.up()
    info = c.wait_state(jid, "FAILED", timeout=30)
    assert info["ExitCode"] == "4:0"


def test_down_and_up_keeps_queue_and_ids(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500)
    running = c.sbatch("--wrap", "sleep 300")
    c.wait_state(running, "RUNNING")
    queued = c.sbatch("--wrap", "echo later")
    c.down()
    assert not os.path.exists(os.path.join(c.state_dir, "ctld.pid"))
    c.up()
    # The queued job is still there and runs; ids continue after the highest one.
    c.ok("scancel", str(running))
    c.wait_state(queued, "COMPLETED", timeout=60)
    assert c.sbatch("--wrap", "true") == queued + 1


def test_ids_not_reused_after_the_newest_jobs_are_purged(make_cluster):
    # The journal writes the id counter with purges, not with each submission (the newest
    # job's own row says it): with every job gone, a crash must still not reuse an id.
    c = make_cluster(nodes=1, cpus=2, mem=1000, settings=["MinJobAge=2"])
    ids = [c.sbatch("--wrap", "true") for _ in range(3)]
    c.wait_all_done(ids)
    deadline = time.time() + 60
    while any(c.job(j) is not None for j in ids):
        assert time.time() < deadline, "jobs were not purged"
        time.sleep(0.5)
    os.kill(c.pid("ctld.pid"), signal.SIGKILL)
    time.sleep(0.5)
    c.up()
    assert c.sbatch("--wrap", "true") == ids[-1] + 1
