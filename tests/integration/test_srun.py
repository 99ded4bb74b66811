"""srun and salloc on a real local cluster: steps in batch jobs and in allocations of their own,
task placement and environment, output labels, stdin, exit codes, busy steps, cancellation."""
import os
import signal
import subprocess
import time

from conftest import SLURM_BIN, ensure_user


def task_env(text):
    """{task id: {var: value}} from `srun -l env` output."""
    out = {}
    for line in text.splitlines():
        task, _, item = line.partition(": ")
        if "=" in item:
            k, v = item.split("=", 1)
            out.setdefault(int(task), {})[k] = v
    return out


def test_standalone_srun_places_tasks_and_sets_their_environment(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    p = c.run("srun", "-N2", "-n3", "-l", "env")
    assert p.returncode == 0, p.stderr
    env = task_env(p.stdout)
    assert sorted(env) == [0, 1, 2]
    # Block distribution: tasks 0-1 on the first node, 2 on the second.
    assert [env[t]["SLURMD_NODENAME"] for t in range(3)] == ["node1", "node1", "node2"]
    assert [env[t]["SLURM_LOCALID"] for t in range(3)] == ["0", "1", "0"]
    assert [env[t]["SLURM_NODEID"] for t in range(3)] == ["0", "0", "1"]
    e = env[2]
    assert e["SLURM_PROCID"] == "2"
    assert e["SLURM_NTASKS"] == "3" and e["SLURM_NPROCS"] == "3"
    assert e["SLURM_STEP_ID"] == "0" and e["SLURM_STEPID"] == "0"
    assert e["SLURM_STEP_NODELIST"] == "node[1-2]"
    assert e["SLURM_STEP_TASKS_PER_NODE"] == "2,1"
    assert e["SLURM_JOB_NODELIST"] == "node[1-2]"
    assert e["SLURM_GTIDS"] == "2"
    assert env[0]["SLURM_GTIDS"] == "0,1"
    assert e["SLURM_JOB_ID"] == env[0]["SLURM_JOB_ID"]
    assert int(e["SLURM_TASK_PID"]) > 1
    jid = e["SLURM_JOB_ID"]
    # The allocation srun made is given back when the step ends.
    info = c.wait_state(jid, "COMPLETED")
    assert info["ExitCode"] == "0:0"


def test_cyclic_distribution_and_tasks_per_node(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    env = task_env(c.ok("srun", "-N2", "-n4", "-m", "cyclic", "-l", "env"))
    assert [env[t]["SLURMD_NODENAME"] for t in range(4)] == ["node1", "node2", "node1", "node2"]
    env = task_env(c.ok("srun", "-N2", "--ntasks-per-node=1", "-l", "env"))
    assert sorted(env) == [0, 1]
    assert env[1]["SLURMD_NODENAME"] == "node2"


def test_exit_codes_and_error_lines(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    p = c.run("srun", "-N2", "-n4", "sh", "-c", 'exit $((SLURM_PROCID == 3 ? 7 : 0))')
    assert p.returncode == 7
    assert "srun: error: node2: task 3: Exited with exit code 7" in p.stderr
    p = c.run("srun", "-n2", "sh", "-c", "kill -9 $$")
    assert p.returncode == 137, p.stderr
    assert "tasks 0-1: Killed" in p.stderr
    assert p.stderr.splitlines()[-1] == "srun: Force Terminated StepId=" + p.stderr.split("StepId=")[1].split()[0]
    p = c.run("srun", "-n1", "no-such-program-here")
    assert p.returncode == 2
    assert "slurmstepd-node1: error: execve(): no-such-program-here: No such file or directory" in p.stderr
    # An impossible step is refused, the allocation srun made goes away.
    p = c.run("srun", "-n1", "-c", "3", "true")
    assert p.returncode != 0
    assert "srun: error:" in p.stderr


def test_output_labels_stdin_and_files(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    p = c.run("srun", "-n2", "-l", "cat", input="hello\n")
    assert sorted(p.stdout.splitlines()) == ["0: hello", "1: hello"]
    p = c.run("srun", "-n2", "--input=none", "cat", input="hello\n")
    assert p.stdout == ""
    p = c.run("srun", "-n2", "-i", "1", "-l", "cat", input="only-one\n")
    assert p.stdout.splitlines() == ["1: only-one"]
    out = os.path.join(c.work, "task-%t.out")
    c.ok("srun", "-n2", "-o", out, "sh", "-c", "echo I am $SLURM_PROCID")
    assert open(os.path.join(c.work, "task-1.out")).read() == "I am 1\n"
    # One file for all tasks on two nodes: every line arrives whole (each node opens it once
    # and appends); with -l the nodes label the lines, as Slurm's stepd does, and end the last.
    shared = os.path.join(c.work, "shared.out")
    c.ok("srun", "-N2", "-n4", "-o", shared, "sh", "-c", "echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2")
    assert sorted(open(shared).read().splitlines()) == sorted(
        [f"{k} {t}" for k in ("out", "err") for t in range(4)])
    c.ok("srun", "-N2", "-n3", "-l", "-o", shared, "sh", "-c", "echo out $SLURM_PROCID; printf end")
    assert sorted(open(shared).read().splitlines()) == sorted(
        [f"{t}: out {t}" for t in range(3)] + [f"{t}: end" for t in range(3)])
    # A file that cannot be opened: Slurm's one line (per distinct reason), exit 1, the
    # task does not run; the same whether each task has it alone or a node's tasks share it.
    for args in (["-n1"], ["-N2", "-n3"], ["-N2", "-n3", "-l"]):
        p = c.run("srun", *args, "-o", "/nonexistent-dir/x", "touch", os.path.join(c.work, "ran"))
        assert p.returncode == 1, p
        assert p.stderr == "srun: error: Could not open stdout file: No such file or directory\n", p
        assert not os.path.exists(os.path.join(c.work, "ran"))
    p = c.run("srun", "-n1", "-e", "/nonexistent-dir/e", "true")
    assert (p.returncode, p.stderr) == (1, "srun: error: Could not open stderr file: No such file or directory\n"), p
    # A name per task is opened on the nodes: Slurm's launch failure per task, exit 0 (sic).
    p = c.run("srun", "-N2", "-n3", "-o", "/nonexistent-dir/o.%t", "touch", os.path.join(c.work, "ran"))
    assert p.returncode == 0, p
    assert sorted(p.stderr.splitlines()) == [
        f"srun: error: task {t} launch failed: Slurmd could not connect IO" for t in range(3)], p
    assert not os.path.exists(os.path.join(c.work, "ran"))
    if os.geteuid() != 0:
        return  # the rest switches users
    # The file is opened as the job's user: theirs, and only where they may write.
    user = ensure_user("drovertest")
    mine = os.path.join(c.work, "user-labelled.out")
    c.ok("srun", "-n2", "-l", "-o", mine, "true", user="drovertest")
    assert os.stat(mine).st_uid == user.pw_uid
    for label in (["-l"], []):
        p = c.run("srun", "-n1", *label, "-o", "/root/not-theirs.out", "true", user="drovertest")
        assert p.returncode == 1 and not os.path.exists("/root/not-theirs.out")
        assert p.stderr == "srun: error: Could not open stdout file: Permission denied\n", p
    # Output without a trailing newline still arrives.
    assert c.ok("srun", "-n1", "printf", "no-newline") == "no-newline"
    # Tasks' lines are whole (a partial line waits for its end; the tail at exit goes on as
    # it is), as Slurm's stepd buffers them; -u passes bytes on as they come.
    script = 'printf "a$SLURM_PROCID"; sleep 1; printf "b\\n"; printf tail'
    out = c.ok("srun", "-n2", "sh", "-c", script)
    assert sorted(out.replace("tail", "").splitlines()) == ["a0b", "a1b"], out
    assert out.count("tail") == 2
    out = c.ok("srun", "-u", "-n2", "sh", "-c", 'printf "a$SLURM_PROCID"; sleep 1; printf "b\\n"')
    assert out.startswith("a0a1") or out.startswith("a1a0"), out


def test_steps_inside_a_batch_job_and_multi_prog(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    conf = c.write_script("mp.conf", "# comment\n0 echo first %t\n1-3 echo rest %t %o\n", mode=0o644)
    script = c.write_script("steps.sh", "#!/bin/bash\n"
                            "srun -l hostname | sort\n"
                            "srun -n1 true\n"
                            f"srun --multi-prog {conf} | sort\n"
                            "srun sh -c 'exit 3'\n"
                            "echo srun-exit=$?\n")
    jid = c.sbatch("-N2", "-n4", "-o", os.path.join(c.work, "steps.out"), script)
    info = c.wait_state(jid, "COMPLETED", timeout=60)
    text = open(os.path.join(c.work, "steps.out")).read()
    host = os.uname().nodename
    assert [l for l in text.splitlines() if l.endswith(host)] == [f"{t}: {host}" for t in range(4)]
    assert "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1" in text
    assert "first 0" in text and "rest 3 2" in text
    assert "srun-exit=3" in text
    assert info["ExitCode"] == "0:0"


def test_a_step_waits_for_busy_cpus_and_overlap_shares_them(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    marker = os.path.join(c.work, "second-ran")
    script = c.write_script("busy.sh", "#!/bin/bash\n"
                            "srun -n2 sleep 3 &\n"
                            "sleep 1\n"
                            "srun --overlap -n1 true && echo overlap-ok\n"
                            f"srun -n1 touch {marker}\n"
                            "wait\n")
    jid = c.sbatch("-n2", "-o", os.path.join(c.work, "busy.out"), script)
    c.wait_state(jid, "COMPLETED", timeout=60)
    text = open(os.path.join(c.work, "busy.out")).read()
    assert "overlap-ok" in text
    assert f"srun: Job {jid} step creation temporarily disabled, retrying (Requested nodes are busy)" in text
    assert os.path.exists(marker)


def test_salloc_runs_a_command_in_its_allocation(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    p = c.run("salloc", "-N2", "sh", "-c", "srun -l hostname | wc -l; echo $SLURM_JOB_NODELIST; exit 4")
    assert p.returncode == 4, p.stderr
    assert p.stdout.split() == ["2", "node[1-2]"]
    lines = p.stderr.splitlines()
    assert lines[0].startswith("salloc: Granted job allocation ")
    jid = lines[0].split()[-1]
    assert lines[-1] == f"salloc: Relinquishing job allocation {jid}"
    info = c.wait_state(jid, "FAILED")
    assert info["ExitCode"] == "4:0"


def test_salloc_waits_for_resources_and_scancel_ends_a_running_srun(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    hog = c.sbatch("-n2", "--wrap", "sleep 4")
    c.wait_state(hog, "RUNNING")
    p = c.run("salloc", "-n1", "true", timeout=60)
    assert p.returncode == 0, p.stderr
    assert "queued and waiting for resources" in p.stderr
    assert "has been allocated resources" in p.stderr
    # A running srun whose allocation is cancelled ends with its tasks.
    proc = subprocess.Popen([os.path.join(SLURM_BIN, "srun"), "-n1", "sleep", "60"], env=c.env,
                            cwd=c.work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    jid = None
    while time.time() < deadline and jid is None:
        out = c.ok("squeue", "-h", "-o", "%i %j %T")
        for line in out.splitlines():
            i, name, state = line.split()
            if name == "sleep" and state == "RUNNING":
                jid = i
        time.sleep(0.2)
    assert jid, "srun's allocation never ran"
    time.sleep(1)
    c.ok("scancel", jid)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert c.wait_state(jid, "CANCELLED")


def test_ctrl_c_twice_ends_the_step(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    proc = subprocess.Popen([os.path.join(SLURM_BIN, "srun"), "-n1", "sleep", "60"], env=c.env,
                            cwd=c.work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert "srun: interrupt (one more within 1 sec to abort)" in err
    assert proc.returncode != 0


def test_others_cannot_run_steps_in_my_allocation(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    jid = c.sbatch("-n1", "--wrap", "sleep 20")
    c.wait_state(jid, "RUNNING")
    p = c.run("srun", f"--jobid={jid}", "true", user="drovertest")
    assert p.returncode != 0
    assert "Access/permission denied" in p.stderr
    c.ok("scancel", str(jid))


def test_signals_go_to_steps_or_the_batch_shell_as_scancel_and_signal_say(make_cluster):
    c = make_cluster(nodes=1, cpus=4, mem=1000)
    script = os.path.join(c.work, "traps.sh")
    with open(script, "w") as f:
        f.write("#!/bin/bash\n"
                "trap 'echo shell got USR1' USR1\n"
                "srun -n1 bash -c 'trap \"echo step got USR1\" USR1; "
                "for i in $(seq 40); do sleep 0.25; done' &\n"
                "until wait; do :; done\n"
                "echo end\n")

    def started(jid):
        deadline = time.time() + 30
        while time.time() < deadline:
            if f"{jid}.0" in c.ok("squeue", "-h", "-s", "-o", "%i"):
                return
            time.sleep(0.2)
        raise AssertionError(f"step {jid}.0 never ran")

    # As Slurm's scancel (checked on 22.05): -s goes to the steps only, -b to the batch shell
    # only, -f to both.
    outs = {}
    for mode in ("", "-b", "-f"):
        out = os.path.join(c.work, f"traps{mode}.out")
        jid = c.sbatch("-o", out, script)
        started(jid)
        time.sleep(0.5)
        c.ok("scancel", *([mode] if mode else []), "-s", "USR1", str(jid))
        outs[mode] = (jid, out)
    for mode, (jid, out) in outs.items():
        c.wait_state(jid, "COMPLETED", timeout=60)
        text = open(out).read()
        steps_got = text.count("step got USR1")
        if mode == "-f":
            # The step hears it twice, as under Slurm: from the controller, and from srun, which
            # is one of the batch shell's processes and passes USR1 on to its tasks. Two
            # deliveries close together merge into one pending signal, so once or twice.
            assert steps_got in (1, 2), (mode, text)
        else:
            assert steps_got == (0 if mode == "-b" else 1), (mode, text)
        assert text.count("shell got USR1") == (0 if mode == "" else 1), (mode, text)
        assert text.rstrip().endswith("end")
    # --signal without B: reaches the steps sig_time seconds before the end (here 5 s after the
    # start, time enough for the step's trap even on a loaded machine; the trap ends the step).
    warned = os.path.join(c.work, "warned.sh")
    with open(warned, "w") as f:
        f.write("#!/bin/bash\n"
                "trap 'echo shell got USR1' USR1\n"
                "srun -n1 bash -c 'trap \"echo step got USR1; exit 0\" USR1; "
                "for i in $(seq 120); do sleep 0.25; done' &\n"
                "until wait; do :; done\n"
                "echo end\n")
    out = os.path.join(c.work, "warned.out")
    jid = c.sbatch("-t", "1", "--signal=USR1@55", "-o", out, warned)
    c.wait_state(jid, "COMPLETED", timeout=60)
    text = open(out).read()
    assert text.count("step got USR1") == 1 and "shell got" not in text, text
    # srun's own allocation takes --signal too (not B:, there is no batch shell).
    p = c.run("srun", "-t", "1", "--signal=USR1@55", "bash", "-c",
              'trap "echo warned; exit 0" USR1; for i in $(seq 120); do sleep 0.25; done')
    assert p.returncode == 0 and p.stdout == "warned\n", p.stdout + p.stderr
    p = c.run("srun", "--signal=B:USR1", "true")
    assert p.returncode == 255 and "srun: error: Invalid --signal specification" in p.stderr
