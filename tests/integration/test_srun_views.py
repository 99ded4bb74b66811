"""srun's steps as squeue -s, scontrol show step and sacct show them (Slurm 22.05's layouts, as
a real slurmctld printed them for the same jobs: tests/compat/oracle)."""
import time

STEP_HEADER = "         STEPID     NAME PARTITION     USER      TIME NODELIST"


def wait_for_step(c, step_id, timeout=30):
    deadline = time.time() + timeout
    out = ""
    while time.time() < deadline:
        out = c.ok("squeue", "-s")
        if any(line.split()[0] == step_id for line in out.splitlines()[1:]):
            return out
        time.sleep(0.2)
    raise AssertionError(f"step {step_id} not listed after {timeout}s:\n{out}")


def sacct_rows(c, *args):
    out = c.ok("sacct", "-n", "-P", *args)
    return [line.split("|") for line in out.splitlines()]


def test_batch_job_steps_in_squeue_scontrol_and_sacct(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    jid = c.sbatch("-N2", "-n2", "-o", "/dev/null", "--wrap", "srun sleep 20")
    out = wait_for_step(c, f"{jid}.0")
    lines = out.splitlines()
    assert lines[0] == STEP_HEADER
    rows = [line.split() for line in lines[1:]]
    # As Slurm lists them: the srun step, then the batch shell's step (no N.extern).
    assert [r[0] for r in rows] == [f"{jid}.0", f"{jid}.batch"]
    assert rows[0][1:3] == ["sleep", "debug"] and rows[0][5] == "node[1-2]"
    assert rows[1][1:3] == ["batch", "debug"] and rows[1][5] in ("node1", "node2")
    assert c.ok("squeue", "-s", "-h", "-j", str(jid), "-o", "%i %A %l").splitlines() == [
        f"{jid}.0 2 UNLIMITED", f"{jid}.batch 1 UNLIMITED"]
    assert c.ok("squeue", f"--steps={jid}.0", "-h", "-o", "%i").split() == [f"{jid}.0"]

    text = c.ok("scontrol", "show", "step", f"{jid}.0")
    lines = text.split("\n")
    assert lines[0].startswith(f"StepId={jid}.0 UserId={c.job(jid)['UserId'].split('(')[1][:-1]} ")
    assert lines[0].endswith(" TimeLimit=UNLIMITED")
    assert lines[1:6] == [
        "   State=RUNNING Partition=debug NodeList=node[1-2]",
        "   Nodes=2 CPUs=2 Tasks=2 Name=sleep Network=(null)",
        "   TRES=cpu=2,mem=1000M,node=2",
        "   ResvPorts=(null)",
        "   CPUFreqReq=Default Dist=Cyclic",
    ]
    assert lines[6].startswith("   SrunHost:Pid=") and lines[7:] == ["", ""]
    one = c.ok("scontrol", "-o", "show", "step", str(jid)).splitlines()
    assert [l.split()[0] for l in one] == [f"StepId={jid}.batch", f"StepId={jid}.0"]
    assert "TRES=(null)" in one[0] and "SrunHost:Pid=(null):0" in one[0]
    p = c.run("scontrol", "show", "step", f"{jid}.7")
    assert p.returncode == 1 and p.stdout == f"Job step {jid}.7 not found\n"

    c.wait_state(jid, "COMPLETED", timeout=60)
    rows = sacct_rows(c, "-j", str(jid), "-o", "JobID,JobName,State,ExitCode,NNodes,NodeList,NTasks")
    assert [r[0] for r in rows] == [str(jid), f"{jid}.batch", f"{jid}.0"]
    assert rows[0][1:6] == ["wrap", "COMPLETED", "0:0", "2", "node[1-2]"]
    assert rows[1][1:5] == ["batch", "COMPLETED", "0:0", "1"]
    assert rows[2][1:] == ["sleep", "COMPLETED", "0:0", "2", "node[1-2]", "2"]
    assert c.ok("squeue", "-s", "-h") == ""


def test_srun_allocation_records_its_step_and_no_batch_step(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    p = c.run("srun", "-N2", "-J", "exits", "sh", "-c", "exit $((SLURM_PROCID + 2))")
    assert p.returncode == 3, p.stderr
    rows = sacct_rows(c, "--name", "exits", "-o", "JobID,JobName,State,ExitCode,NNodes")
    assert len(rows) == 2, rows
    jid = rows[0][0]
    # The job ends with the step's result: FAILED with the largest exit code; no N.batch.
    assert rows[0][1:] == ["exits", "FAILED", "3:0", "2"]
    assert rows[1] == [f"{jid}.0", "exits", "FAILED", "3:0", "2"]
    assert c.ok("sacct", "-n", "-P", "-j", f"{jid}.0", "-o", "JobID") == f"{jid}.0\n"
