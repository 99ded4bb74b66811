"""A job goes sbatch -> controller -> agent -> runs -> squeue/scontrol show it -> it ends."""
import os
import re
import time

from conftest import requires_root

def wait_for_file(path, timeout=30):
    deadline = time.time() + timeout
    while not os.path.exists(path) and time.time() < deadline:
        time.sleep(0.05)
    assert os.path.exists(path), f"{path} never appeared"


SQUEUE_HEADER = "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"


def test_batch_job_runs_with_environment_and_output(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    script = c.write_script("envtest.sh", "#!/bin/sh\n#SBATCH -J envtest\n#SBATCH -n 2\n"
                            "echo out-line\necho err-line >&2\nenv | grep -E '^SLURM' | sort\npwd\n")
    out = c.ok("sbatch", script)
    m = re.fullmatch(r"Submitted batch job (\d+)\n", out)
    assert m, out
    jid = int(m.group(1))
    info = c.wait_state(jid, "COMPLETED")
    assert info["ExitCode"] == "0:0"
    assert info["JobName"] == "envtest"
    assert info["NumTasks"] == "2"
    assert info["StdOut"] == os.path.join(c.work, f"slurm-{jid}.out")
    text = open(info["StdOut"]).read()
    assert "out-line" in text and "err-line" in text
    env = dict(l.split("=", 1) for l in text.splitlines() if l.startswith("SLURM"))
    assert env["SLURM_JOB_ID"] == str(jid)
    assert env["SLURM_JOB_NAME"] == "envtest"
    assert env["SLURM_NTASKS"] == "2"
    assert env["SLURM_CPUS_ON_NODE"] == "2"
    assert env["SLURM_JOB_NODELIST"] in ("node1", "node2")
    assert env["SLURM_SUBMIT_DIR"] == c.work
    assert env["SLURM_JOB_PARTITION"] == "debug"
    assert int(env["SLURM_TASK_PID"]) > 1
    assert text.splitlines()[-1] == c.work


def test_options_output_files_workdir_and_wrap(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    sub = os.path.join(c.work, "sub")
    os.mkdir(sub)
    jid = c.sbatch("-J", "named", "-o", "o-%j-%x.txt", "-e", "e-%j.txt", "-D", sub, "-t", "5",
                   "--mem", "100", "-c", "2", "--wrap", "echo hi; echo oops >&2; exit 3")
    info = c.wait_state(jid, "FAILED")
    assert info["ExitCode"] == "3:0"
    assert info["Reason"] == "NonZeroExitCode"
    assert info["TimeLimit"] == "00:05:00"
    assert info["MinMemoryNode"] == "100M"
    assert info["CPUs/Task"] == "2"
    assert info["Command"] == "(null)"
    assert open(os.path.join(sub, f"o-{jid}-named.txt")).read() == "hi\n"
    assert open(os.path.join(sub, f"e-{jid}.txt")).read() == "oops\n"


def test_script_from_stdin_and_signal_exit(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500)
    jid = c.sbatch(input="#!/bin/sh\nkill -9 $$\n")
    info = c.wait_state(jid, "FAILED")
    assert info["ExitCode"] == "0:9"
    assert info["JobName"] == "sbatch"


def test_squeue_sinfo_scontrol_formats(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    assert c.ok("squeue") == SQUEUE_HEADER
    assert c.ok("sinfo") == ("PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
                             "debug*       up   infinite      2   idle node[1-2]\n")
    long_running = c.sbatch("-J", "sleeper", "-c", "2", "--wrap", "sleep 30")
    c.wait_state(long_running, "RUNNING")
    blocked = c.sbatch("-J", "twonode", "-N", "2", "--wrap", "true")
    waiting = c.sbatch("-J", "waiting", "--wrap", "true")
    lines = c.ok("squeue").splitlines()
    assert lines[0] + "\n" == SQUEUE_HEADER
    user = os.environ.get("USER") or "root"
    assert re.fullmatch(rf" +{blocked} +debug +twonode +{user[:8]} +PD +0:00 +2 \(Resources\)", lines[1]), lines
    assert re.fullmatch(rf" +{waiting} +debug +waiting +{user[:8]} +PD +0:00 +1 \(Priority\)", lines[2]), lines
    assert re.fullmatch(rf" +{long_running} +debug +sleeper +{user[:8]} +R +0:\d\d +1 node[12]", lines[3]), lines
    sinfo = c.ok("sinfo").splitlines()
    assert sinfo[1].split()[-2:] in (["alloc", "node1"], ["alloc", "node2"])
    assert sinfo[2].split()[-2] == "idle"
    node = c.ok("scontrol", "show", "node", "node1")
    assert node.startswith("NodeName=node1 Arch=")
    assert "CPUTot=2" in node and "RealMemory=1000" in node
    part = c.ok("scontrol", "show", "partition")
    assert part.startswith("PartitionName=debug\n   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n")
    assert "   Nodes=node[1-2]\n" in part and "TotalCPUs=4 TotalNodes=2" in part
    assert c.ok("scontrol", "ping").endswith(" is UP\n")
    # The configuration the controller runs with, in Slurm's layout ("show c" abbreviates it).
    config = c.ok("scontrol", "show", "c")
    assert config.startswith("Configuration data as of ")
    assert "\nClusterName             = " in config
    assert f"\nSLURM_CONF              = {c.state_dir}/slurm.conf\n" in config
    assert f"\nStateSaveLocation       = {c.state_dir}\n" in config
    assert "\nSchedulerType           = sched/backfill\n" in config
    assert "\nMaxNodeCount            = 2\n" in config
    assert config.endswith(" is UP\n")
    assert c.run("scontrol", "show", "config", "a", "b").stderr == "too many arguments for keyword:show\n"
    job = c.ok("scontrol", "show", "job", str(long_running))
    assert job.startswith(f"JobId={long_running} JobName=sleeper\n   UserId=")
    assert "   JobState=RUNNING Reason=None Dependency=(null)\n" in job
    assert job.endswith("   Power=\n   \n\n")
    c.ok("scancel", str(long_running))


def test_bad_input_is_refused_and_changes_nothing(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    first = c.sbatch("--wrap", "true")
    script = c.write_script("job.sh", "#!/bin/sh\ntrue\n")
    noshebang = c.write_script("plain.sh", "echo hi\n")
    cases = [
        (["sbatch", "--bogus-option", script], 255,
         "sbatch: unrecognized option '--bogus-option'\nTry \"sbatch --help\" for more information\n"),
        (["sbatch", "-t", "bogus", script], 255, "sbatch: error: Invalid --time specification\n"),
        (["sbatch", "-p", "nosuch", script], 1,
         "sbatch: error: invalid partition specified: nosuch\n"
         "sbatch: error: Batch job submission failed: Invalid partition name specified\n"),
        (["sbatch", "missing.sh"], 1, "sbatch: error: Unable to open file missing.sh\n"),
        (["sbatch", noshebang], 1,
         "sbatch: error: This does not look like a batch script.  The first\n"
         "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
         "sbatch: error: For instance: #!/bin/sh\n"),
        (["sbatch", "--mem", "2000", script], 1,
         "sbatch: error: Memory specification can not be satisfied\n"
         "sbatch: error: Batch job submission failed: Requested node configuration is not available\n"),
        (["sbatch", "--wrap", "sleep 1", script], 1,
         "sbatch: error: Script arguments not permitted with --wrap option\n"),
        (["scancel", "abc"], 1, "scancel: error: Invalid job id abc\n"),
        (["scontrol", "show", "job", "99999"], 1, "slurm_load_jobs error: Invalid job id specified\n"),
        (["squeue", "-j", "99999"], 1, "slurm_load_jobs error: Invalid job id specified\n"),
    ]
    for args, rc, err in cases:
        p = c.run(*args)
        assert (p.returncode, p.stderr, p.stdout) == (rc, err, ""), args
    p = c.run("scontrol", "show", "node", "nosuch")
    assert (p.returncode, p.stdout) == (1, "Node nosuch not found\n")
    # Nothing was created by the refused requests: the next id follows the first.
    assert c.sbatch("--wrap", "true") == first + 1


def test_scancel_pending_and_running(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500, settings=["KillWait=2"])
    marker = os.path.join(c.work, "got-term")
    ready = os.path.join(c.work, "ready")
    running = c.sbatch("--wrap",
                       f"trap 'echo term > {marker}; exit 0' TERM; touch {ready}; sleep 60 & wait")
    c.wait_state(running, "RUNNING")
    wait_for_file(ready)  # its trap is set (RUNNING comes before the shell's first line)
    pending = c.sbatch("--wrap", "true")
    assert c.job(pending)["JobState"] == "PENDING"
    p = c.run("scancel", str(pending), str(running))
    assert (p.returncode, p.stderr) == (0, "")
    assert c.job(pending)["JobState"] == "CANCELLED"
    info = c.wait_state(running, "CANCELLED")
    c.wait_all_done([running])
    assert open(marker).read() == "term\n"
    # A finished job is listed only when its state is asked for, as in Slurm.
    assert c.ok("squeue", "-j", str(running)) == SQUEUE_HEADER
    assert "CA" in c.ok("squeue", "-h", "-t", "all", "-j", str(running))
    # Already-finished and unknown ids are silent, as in Slurm; -v names them.
    assert c.run("scancel", str(running), "99999").returncode == 0
    p = c.run("scancel", "-v", str(running))
    assert "Job/step already completing or completed" in p.stderr
    assert info["JobState"] == "CANCELLED"


def test_scancel_by_user(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500)
    ids = [c.sbatch("--wrap", "sleep 30") for _ in range(3)]
    c.wait_state(ids[0], "RUNNING")
    user = os.environ.get("USER") or __import__("pwd").getpwuid(os.getuid()).pw_name
    c.ok("scancel", "-u", user)
    for j in ids:
        c.wait_state(j, "CANCELLED")
    c.wait_all_done(ids)


def test_kill_signal_ends_with_sigkill(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500, settings=["KillWait=1"])
    trapped = os.path.join(c.work, "trapped")
    jid = c.sbatch("--wrap", f"trap '' TERM; touch {trapped}; while true; do sleep 1; done")
    c.wait_state(jid, "RUNNING")
    wait_for_file(trapped)  # cancelled before its trap is set, the shell dies of SIGTERM
    c.ok("scancel", str(jid))
    c.wait_all_done([jid], timeout=30)
    assert c.job(jid)["ExitCode"] == "0:9"
