"""drover's command output against real Slurm 22.05's, captured in tests/compat/golden from a
cluster of the same shape (2 nodes x 2 CPUs x 1000 MB, partition debug). Values that depend on
the moment or the machine (times, ids, paths, load) are masked on both sides."""
import os
import re

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "compat", "golden")


def golden(name):
    with open(os.path.join(GOLDEN, name, "stdout")) as f:
        return f.read()


def mask(text, work):
    text = text.replace(work, "WORK").replace("/tmp/drover-oracle-work", "WORK")
    rules = [
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", "TS"), (r"JobId=\d+", "JobId=N"), (r"Priority=\d+", "Priority=P"),
        (r"RunTime=[\d:-]+", "RunTime=T"), (r"slurm-\d+", "slurm-N"), (r"Sid=\S+", "Sid=X"),
        (r"CPULoad=[\d.]+", "CPULoad=L"), (r"FreeMem=\d+", "FreeMem=F"), (r"OS=.*", "OS=X"),
        (r"UserId=\S+ GroupId=\S+", "UserId=U GroupId=G"), (r"NodeAddr=\S+", "NodeAddr=A"),
    ]
    for pattern, repl in rules:
        text = re.sub(pattern, repl, text)
    return text


def test_idle_cluster_views_match_slurm(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    assert c.ok("squeue") == golden("squeue_empty")
    assert c.ok("sinfo") == golden("sinfo_idle")
    assert c.ok("scontrol", "show", "partition") == golden("scontrol_show_partition_idle")
    assert mask(c.ok("scontrol", "show", "node", "node1"), c.work) == \
        mask(golden("scontrol_show_node_node1_idle"), c.work)
    assert c.ok("scontrol", "show", "job") == golden("scontrol_show_job_none")


def test_running_job_views_match_slurm(make_cluster):
    # Slurm's capture had no DefMemPerCPU: a job without --mem holds the whole node's memory.
    c = make_cluster(nodes=2, cpus=2, mem=1000, settings=["DefMemPerCPU=0"])
    jid = c.sbatch("-J", "sleeper", "--wrap", "sleep 600")
    c.wait_state(jid, "RUNNING")
    assert mask(c.ok("scontrol", "show", "job", str(jid)), c.work) == \
        mask(golden("scontrol_show_job_running"), c.work)
    assert mask(c.ok("scontrol", "-o", "show", "job", str(jid)), c.work) == \
        mask(golden("scontrol_show_job_running_oneliner"), c.work)
    node = c.job(jid)["NodeList"]
    if node == "node1":
        assert mask(c.ok("scontrol", "show", "node", "node1"), c.work) == \
            mask(golden("scontrol_show_node_node1_mixed"), c.work)
    c.ok("scancel", str(jid))


def test_finished_job_views_match_slurm(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    script = c.write_script("exit3.sh", "#!/bin/sh\nexit 3\n")
    jid = c.sbatch("--mem", "100", script)
    c.wait_state(jid, "FAILED")
    c.wait_all_done([jid])
    assert mask(c.ok("scontrol", "show", "job", str(jid)), c.work) == \
        mask(golden("scontrol_show_job_exit3"), c.work)
