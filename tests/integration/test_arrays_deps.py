"""Job arrays, dependencies, holds and requeue end to end on a real local cluster."""
import os
import time


def read(path):
    with open(path) as f:
        return f.read()


def test_array_tasks_run_with_their_own_ids_and_files(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    jid = c.sbatch("--array=1-5%2", "--wrap",
                   "echo $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT $SLURM_JOB_ID")
    deadline = time.time() + 60
    while time.time() < deadline and c.ok("squeue", "-h", "-j", str(jid)).strip():
        time.sleep(0.2)
    ids = set()
    for task in range(1, 6):
        fields = read(os.path.join(c.work, f"slurm-{jid}_{task}.out")).split()
        assert fields[:3] == [str(jid), str(task), "5"]
        ids.add(int(fields[3]))
    # New ids for the first four tasks; the last one takes the array's own id, as in Slurm.
    assert ids == {jid, jid + 1, jid + 2, jid + 3, jid + 4}
    out = c.ok("squeue", "-h", "-t", "all", "-o", "%i %T", "-j", str(jid))
    assert sorted(out.split("\n")[:-1]) == [f"{jid}_{t} COMPLETED" for t in range(1, 6)]


def test_pending_array_is_one_line_and_tasks_cancel_alone(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=1000)
    out = c.run("sbatch", "--parsable", "-H", "--array=0-999", "--wrap", "true")
    assert out.returncode == 0, out.stderr
    jid = int(out.stdout)
    assert c.ok("squeue", "-h", "-o", "%i %r", "-j", str(jid)) == f"{jid}_[0-999] JobHeldUser\n"
    c.ok("scancel", f"{jid}_[10-19]")
    assert c.job(jid)["ArrayTaskId"] == "0-9,20-999"
    c.ok("scancel", str(jid))
    assert c.job(jid)["JobState"] == "CANCELLED"


def test_dependency_chain_and_never_satisfied(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    first = c.sbatch("--wrap", "sleep 1; exit 3")
    ok = c.sbatch("-d", f"afterok:{first}", "--wrap", "true")
    notok = c.sbatch("-d", f"afternotok:{first}", "--wrap", "true")
    assert c.job(ok)["Reason"] == "Dependency"
    assert c.job(ok)["Dependency"] == f"afterok:{first}(unfulfilled)"
    c.wait_state(notok, "COMPLETED", timeout=30)
    info = c.job(ok)
    assert info["JobState"] == "PENDING" and info["Reason"] == "DependencyNeverSatisfied"
    assert info["Dependency"] == f"afterok:{first}(failed)"


def test_hold_release_and_requeue(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=1000)
    jid = c.sbatch("-H", "--wrap", "echo run; sleep 30")
    info = c.job(jid)
    assert info["Priority"] == "0" and info["Reason"] == "JobHeldUser"
    c.ok("scontrol", "release", str(jid))
    c.wait_state(jid, "RUNNING")
    c.ok("scontrol", "requeue", str(jid))
    deadline = time.time() + 30
    while time.time() < deadline and c.job(jid)["JobState"] != "PENDING":
        time.sleep(0.2)
    info = c.job(jid)
    assert info["JobState"] == "PENDING" and info["Reason"] == "BeginTime"
    assert info["Restarts"] == "1"
    p = c.run("scontrol", "requeue", str(jid))
    assert p.returncode == 1 and p.stderr == f"Job is pending execution for job {jid}\n"
