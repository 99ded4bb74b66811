"""Input that Slurm refuses or bounds is refused or bounded, with Slurm 22.05's words and exit
statuses (each taken from real Slurm, tests/compat/oracle), and nothing is lost or taken whole."""
import os
import signal
import time

from conftest import ensure_user, requires_root

SUBMIT_FAILED = "sbatch: error: Batch job submission failed: "


def test_dependency_on_a_huge_job_id_is_taken_as_slurm_takes_it(make_cluster):
    # Slurm 22.05 reads the id as 4294967295 (a job that does not exist), accepts the job and
    # shows the dependency; without a hold the job runs, as for any unknown job id.
    c = make_cluster(nodes=1, cpus=2)
    held = c.sbatch("-H", "--dependency=afterok:999999999999999999999", "--wrap", "true")
    assert c.ok("squeue", "-h", "-j", str(held), "-o", "%E").strip() == "afterok:4294967295(unfulfilled)"
    p = c.run("sbatch", "--dependency=afterok:abc", "--wrap", "true")
    assert (p.returncode, p.stderr) == (1, SUBMIT_FAILED + "Job dependency problem\n")


def test_task_count_beyond_the_cluster(make_cluster):
    # Slurm's default (EnforcePartLimits=NO) queues the job and says why it cannot run.
    c = make_cluster(nodes=2, cpus=2)
    jid = c.sbatch("-n", "999999999", "--wrap", "true")
    time.sleep(1)
    assert c.ok("squeue", "-h", "-j", str(jid), "-o", "%T %r").strip() == "PENDING PartitionConfig"
    # With EnforcePartLimits it is refused at submit.
    c = make_cluster(nodes=2, cpus=2, settings=["EnforcePartLimits=ALL"])
    p = c.run("sbatch", "-n", "999999999", "--wrap", "true")
    assert (p.returncode, p.stdout) == (1, "")
    assert p.stderr == SUBMIT_FAILED + "More processors requested than permitted\n"
    p = c.run("sbatch", "-N", "3", "--wrap", "true")
    assert p.stderr == SUBMIT_FAILED + "Node count specification invalid\n"
    assert c.ok("squeue", "-h") == ""


def test_script_size_is_bounded(make_cluster):
    c = make_cluster(nodes=1, cpus=2)
    head = "#!/bin/sh\n"
    limit = 4194304  # Slurm's default max_script_size
    big = c.write_script("big.sh", head + "#" * (limit - len(head)) + "\n")  # one byte over
    journal = os.path.join(c.state_dir, "ctld-state.db-wal")
    before = os.path.getsize(journal) if os.path.exists(journal) else 0
    p = c.run("sbatch", big)
    assert (p.returncode, p.stdout) == (1, "")
    assert p.stderr == SUBMIT_FAILED + "Pathname of a file, directory or other parameter too long\n"
    after = os.path.getsize(journal) if os.path.exists(journal) else 0
    assert after - before < 1_000_000, f"the journal grew by {after - before} bytes"
    exact = c.write_script("exact.sh", head + "#" * (limit - len(head) - 1) + "\n")
    c.sbatch("-H", exact)
    # SchedulerParameters=max_script_size= sets it.
    c = make_cluster(nodes=1, cpus=2, settings=["SchedulerParameters=max_script_size=100"])
    p = c.run("sbatch", "--wrap", "x" * 200)
    assert p.stderr == SUBMIT_FAILED + "Pathname of a file, directory or other parameter too long\n"


def test_text_fields_are_bounded(make_cluster):
    # Slurm 22.05 refuses a job name, comment or mail user over 1024 bytes.
    c = make_cluster(nodes=1, cpus=2)
    for opt in ("-J", "--comment", "--mail-user"):
        p = c.run("sbatch", "-H", f"{opt}={'a' * 1025}", "--wrap", "true")
        assert (p.returncode, p.stderr) == (
            1, SUBMIT_FAILED + "Pathname of a file, directory or other parameter too long\n"), opt
    jid = c.sbatch("-H", "-J", "a" * 1024, "--wrap", "true")
    p = c.run("scontrol", "update", f"JobId={jid}", "JobName=" + "b" * 1025)
    assert (p.returncode, p.stderr) == (
        1, f"Pathname of a file, directory or other parameter too long for job {jid}\n")
    assert c.job(jid)["JobName"] == "a" * 1024


def test_script_with_a_nul_byte_is_refused(make_cluster):
    c = make_cluster(nodes=1, cpus=2)
    path = os.path.join(c.work, "nul.sh")
    with open(path, "wb") as f:
        f.write(b"#!/bin/sh\necho a\0b\n")
    p = c.run("sbatch", path)
    assert (p.returncode, p.stdout) == (1, "")
    assert p.stderr == ("sbatch: error: The Slurm controller does not allow scripts that\n"
                        "sbatch: error: contain a NULL character '\\0'.\n")
    assert c.ok("squeue", "-h") == ""


def test_scontrol_update_numbers_do_not_wrap(make_cluster):
    c = make_cluster(nodes=1, cpus=2)
    jid = c.sbatch("-H", "--wrap", "true")
    before = c.job(jid)["Priority"]
    p = c.run("scontrol", "update", f"JobId={jid}", "Priority=99999999999999")
    assert (p.returncode, p.stderr) == (1, "scontrol: error: Invalid Priority value: 99999999999999\n")
    assert c.job(jid)["Priority"] == before
    p = c.run("scontrol", "update", f"JobId={jid}", "Nice=99999999999")
    assert (p.returncode, p.stderr) == (
        1, "scontrol: error: Nice value out of range (+/- 2147483645). Value ignored\n")
    p = c.run("scontrol", "update", f"JobId={jid}", "NumNodes=99999999999")
    # Slurm's words, and its exit status 0; nothing changes.
    assert (p.returncode, p.stderr) == (
        0, "scontrol: error: Numeric argument (99999999999) to big for requested node count.\n")
    assert c.job(jid)["NumNodes"] == "1"
    c.ok("scontrol", "update", f"JobId={jid}", "Priority=4294967293")
    assert c.job(jid)["Priority"] == "4294967293"


def test_job_name_that_is_not_utf8(make_cluster):
    # Slurm takes the bytes as they are; drover's JSON carries U+FFFD in their place.
    c = make_cluster(nodes=1, cpus=2)
    p = c.run("sbatch", "--parsable", "-J", "\udcff\udcfeab", "--wrap", "true")
    assert p.returncode == 0, p.stderr
    jid = int(p.stdout)
    c.wait_state(jid, "COMPLETED")
    assert c.job(jid)["JobName"] == "\ufffd\ufffdab"


def test_format_widths_are_bounded(make_cluster):
    # Real squeue crashes on -O Name:99999999999 and sinfo writes 1 GB for '%999999999N'.
    c = make_cluster(nodes=1, cpus=2)
    c.sbatch("-H", "--wrap", "true")
    for args in (["squeue", "-O", "Name:99999999999"], ["squeue", "-o", "%999999999j"],
                 ["sinfo", "-o", "%999999999N"], ["sinfo", "-O", "NodeList:99999999999"]):
        out = c.ok(*args)
        lines = out.splitlines()
        assert len(lines) == 2, args
        assert all(len(line) <= 4096 for line in lines), (args, [len(x) for x in lines])
    assert c.ok("squeue", "-h", "-o", "%.10j").rstrip("\n") == "      wrap"


def show_partition(c, name="debug"):
    fields = {}
    for item in c.ok("scontrol", "-o", "show", "partition", name).split():
        if "=" in item:
            k, v = item.split("=", 1)
            fields[k] = v
    return fields


@requires_root
def test_scontrol_update_partition(make_cluster):
    ensure_user("drovertest")
    c = make_cluster(nodes=2, cpus=2)
    p = c.run("scontrol", "update", "PartitionName=debug", "State=DOWN", user="drovertest")
    assert (p.returncode, p.stderr) == (1, "slurm_update error: Invalid user id\n")
    assert show_partition(c)["State"] == "UP"

    c.ok("scontrol", "update", "PartitionName=debug", "State=DOWN", "MaxTime=30", "Priority=5")
    part = show_partition(c)
    assert (part["State"], part["MaxTime"], part["PriorityTier"], part["PriorityJobFactor"]) == (
        "DOWN", "00:30:00", "5", "5")
    assert c.ok("sinfo", "-h", "-o", "%a").split() == ["down"]
    jid = c.sbatch("--wrap", "true")
    time.sleep(1.5)
    assert c.ok("squeue", "-h", "-j", str(jid), "-o", "%T %r").strip() == "PENDING PartitionDown"

    # A controller restart keeps what the operator set.
    os.kill(c.pid("ctld.pid"), signal.SIGKILL)
    time.sleep(0.5)
    c.up()
    part = show_partition(c)
    assert (part["State"], part["MaxTime"], part["PriorityTier"]) == ("DOWN", "00:30:00", "5")

    c.ok("scontrol", "update", "PartitionName=debug", "State=DRAIN")
    p = c.run("sbatch", "--wrap", "true")
    assert (p.returncode, p.stderr) == (
        1, SUBMIT_FAILED + "Required partition not available (inactive or drain)\n")
    c.wait_state(jid, "COMPLETED")  # DRAIN runs what is queued

    p = c.run("scontrol", "update", "PartitionName=debug", "State=BOGUS")
    assert (p.returncode, p.stderr) == (1, "scontrol: error: Invalid input: State=BOGUS\n"
                                           "scontrol: error: Acceptable State values are UP, DOWN, DRAIN and INACTIVE\n"
                                           "slurm_update error: No error\n")
    p = c.run("scontrol", "update", "PartitionName=debug", "Foo=bar")
    assert (p.returncode, p.stderr) == (1, "scontrol: error: Update of this parameter is not supported: Foo=bar\n\n"
                                           "scontrol: error: Request aborted\n"
                                           "slurm_update error: No error\n")
    p = c.run("scontrol", "update", "PartitionName=nosuch", "State=UP")
    assert (p.returncode, p.stderr) == (1, "slurm_update error: Invalid partition name specified\n")
    p = c.run("scontrol", "update", "PartitionName=debug", "Nodes=node9")
    assert (p.returncode, p.stderr) == (1, "slurm_update error: Invalid node name specified\n")

    c.ok("scontrol", "update", "PartitionName=debug", "State=UP", "Nodes=node2", "MaxTime=INFINITE")
    part = show_partition(c)
    assert (part["State"], part["Nodes"], part["MaxTime"]) == ("UP", "node2", "UNLIMITED")
    jid = c.sbatch("--wrap", "true")
    assert c.wait_state(jid, "COMPLETED")["NodeList"] == "node2"


def test_job_ids_too_large(make_cluster):
    c = make_cluster(nodes=1, cpus=2)
    # scancel: a job that does not exist, said only with -v, exit 0 (as Slurm's scancel).
    p = c.run("scancel", "999999999999999999999")
    assert (p.returncode, p.stderr) == (0, "")
    p = c.run("scancel", "-v", "999999999999999999999")
    assert p.stderr.endswith("scancel: error: Kill job error on job id 999999999999999999999: "
                             "Invalid job id specified\n"), p.stderr
    # A step of such a job: no abort (drover's scancel died of std::out_of_range).
    for ref in ("999999999999999999999.0", "1.999999999999999999999"):
        p = c.run("scancel", ref)
        assert p.returncode in (0, 1) and "terminate" not in p.stderr, (ref, p.returncode, p.stderr)
    p = c.run("scontrol", "show", "job", "999999999999999999999")
    assert (p.returncode, p.stderr) == (1, "slurm_load_jobs error: Invalid job id specified\n")
    p = c.run("scontrol", "show", "job", "abc")
    assert (p.returncode, p.stderr) == (1, "scontrol_print_job error: Invalid job id specified\n")


def test_nonexistent_working_directory_is_a_launch_failure(make_cluster):
    # Slurm 22.05 takes the job (the directory may exist on the node) and records why it failed.
    c = make_cluster(nodes=1, cpus=2)
    for args in (["-D", "/nonexistent"], ["-o", "/nonexistent/out"]):
        jid = c.sbatch(*args, "--wrap", "true")
        info = c.wait_state(jid, "FAILED")
        assert (info["Reason"], info["ExitCode"]) == ("JobLaunchFailure", "0:53"), args
    jid = c.sbatch("--wrap", "exit 3")
    info = c.wait_state(jid, "FAILED")
    assert (info["Reason"], info["ExitCode"]) == ("NonZeroExitCode", "3:0")
