"""Preemption end to end: a job in a higher PriorityTier partition preempts a running one,
which is requeued (REQUEUE) or ends PREEMPTED (CANCEL), sees SIGTERM with Slurm's notice in
its output, and the preemptor runs."""
import os
import time


def tiered_cluster(make_cluster, mode):
    return make_cluster(nodes=1, cpus=2, mem=1000,
                        settings=["PreemptType=preempt/partition_prio", f"PreemptMode={mode}",
                                  "PartitionName=high Nodes=node1 PriorityTier=2 GraceTime=2"])


def wait_for_text(path, text, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path) and text in open(path).read():
            return
        time.sleep(0.2)
    raise AssertionError(f"{text!r} not in {path}")


def test_requeue_mode(make_cluster):
    c = tiered_cluster(make_cluster, "REQUEUE")
    low = c.sbatch("-n2", "-o", "low-%j.out", "--wrap", "echo start; sleep 300")
    c.wait_state(low, "RUNNING")
    high = c.sbatch("-p", "high", "-n2", "-o", "high.out", "--wrap", "echo high ran")
    c.wait_state(high, "COMPLETED", timeout=60)
    assert open(os.path.join(c.work, "high.out")).read() == "high ran\n"
    info = c.job(low)
    assert info["Restarts"] == "1", info
    wait_for_text(os.path.join(c.work, f"low-{low}.out"), "DUE TO PREEMPTION")
    c.ok("scancel", str(low))


def test_cancel_mode(make_cluster):
    c = tiered_cluster(make_cluster, "CANCEL")
    low = c.sbatch("-n2", "-o", "low.out", "--wrap", "sleep 300")
    c.wait_state(low, "RUNNING")
    high = c.sbatch("-p", "high", "-n1", "--wrap", "true")
    info = c.wait_state(low, "PREEMPTED", timeout=30)
    assert info["JobState"] == "PREEMPTED"
    c.wait_state(high, "COMPLETED", timeout=60)
    wait_for_text(os.path.join(c.work, "low.out"), "DUE TO PREEMPTION")
