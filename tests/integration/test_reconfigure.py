"""scontrol reconfigure and SIGHUP: the controller reads slurm.conf again without a restart.
Partition and scheduling settings apply at once, running and pending jobs are untouched, a bad
file is refused with its line and the configuration in force stays, and only operators may."""
import os
import re
import signal
import time

from conftest import ensure_user, requires_root


def conf_path(c):
    return os.path.join(c.state_dir, "slurm.conf")


def edit_conf(c, change):
    with open(conf_path(c)) as f:
        text = f.read()
    new = change(text)
    assert new != text
    with open(conf_path(c), "w") as f:
        f.write(new)


def partition(c, name):
    out = c.ok("scontrol", "-o", "show", "partition", name)
    return dict(item.split("=", 1) for item in out.split() if "=" in item)


def config_value(c, key):
    for line in c.ok("scontrol", "show", "config").splitlines():
        k, _, v = line.partition("=")
        if k.strip() == key:
            return v.strip()
    return None


def test_reconfigure_applies_settings_and_keeps_jobs(make_cluster):
    c = make_cluster(nodes=2, cpus=1)
    running = [c.sbatch("--wrap", "sleep 120") for _ in range(2)]
    for j in running:
        c.wait_state(j, "RUNNING")
    pending = c.sbatch("-t", "10", "--wrap", "sleep 1")
    unlimited = c.sbatch("--wrap", "sleep 1")  # no -t: the partition's (unlimited) MaxTime
    before = {j: c.job(j) for j in running + [pending, unlimited]}
    assert before[pending]["JobState"] == "PENDING"
    # scontrol update's State=DOWN goes: slurm.conf's settings replace it (no ReconfigFlags).
    c.ok("scontrol", "update", "PartitionName=debug", "State=DOWN")

    edit_conf(c, lambda t: t.replace("MaxTime=INFINITE", "MaxTime=30")
              + "PartitionName=extra Nodes=node2 MaxTime=5\nSchedulerParameters=bf_interval=7\n")
    p = c.run("scontrol", "reconfigure")
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")

    debug = partition(c, "debug")
    assert debug["MaxTime"] == "00:30:00" and debug["State"] == "UP"
    assert partition(c, "extra")["Nodes"] == "node2"
    assert "bf_interval=7" in config_value(c, "SchedulerParameters")
    # Jobs as they were: running ones on their nodes, the pending one with its limit.
    for j in running:
        now = c.job(j)
        assert now["JobState"] == "RUNNING"
        assert (now["NodeList"], now["StartTime"]) == (before[j]["NodeList"], before[j]["StartTime"])
    assert c.job(pending)["TimeLimit"] == before[pending]["TimeLimit"]
    assert c.job(pending)["JobState"] == "PENDING"
    # New jobs get the new limits.
    assert c.job(c.sbatch("--hold", "--wrap", "true"))["TimeLimit"] == "00:30:00"
    assert c.job(c.sbatch("--hold", "-p", "extra", "--wrap", "true"))["TimeLimit"] == "00:05:00"
    assert c.job(unlimited)["TimeLimit"] == "UNLIMITED"
    c.ok("scancel", str(running[0]))
    c.wait_state(pending, "RUNNING")
    # The job whose limit is now beyond MaxTime waits for it, as in Slurm.
    assert c.job(unlimited)["Reason"] == "PartitionTimeLimit"


def test_bad_file_is_refused_and_the_configuration_stays(make_cluster):
    c = make_cluster(nodes=1, cpus=1)
    job = c.sbatch("--wrap", "sleep 120")
    c.wait_state(job, "RUNNING")
    with open(conf_path(c)) as f:
        good = f.read()
    lines = good.count("\n")
    edit_conf(c, lambda t: t.replace("MaxTime=INFINITE", "MaxTime=30")
              + "PartitionName=broken Nodes=nosuch\n")
    p = c.run("scontrol", "reconfigure")
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.startswith("slurm_reconfigure error: "), p.stderr
    assert f"slurm.conf:{lines + 1}:" in p.stderr, p.stderr
    assert "nosuch" in p.stderr
    assert partition(c, "debug")["MaxTime"] == "UNLIMITED"
    assert c.run("scontrol", "show", "partition", "broken").returncode == 1
    # What needs a restart is refused too, saying so.
    with open(conf_path(c), "w") as f:
        f.write(good.replace("ClusterName=drover", "ClusterName=renamed"))
    p = c.run("scontrol", "reconfigure")
    assert p.returncode == 1
    assert p.stderr == ("slurm_reconfigure error: ClusterName changed: a restart of droverctld "
                        "is needed for it\n")
    assert config_value(c, "ClusterName") == "drover"
    assert c.job(job)["JobState"] == "RUNNING"
    # A good file again: taken.
    with open(conf_path(c), "w") as f:
        f.write(good.replace("MaxTime=INFINITE", "MaxTime=45"))
    c.ok("scontrol", "reconfig")
    assert partition(c, "debug")["MaxTime"] == "00:45:00"


def test_sighup_reconfigures(make_cluster):
    c = make_cluster(nodes=1, cpus=1)
    edit_conf(c, lambda t: t.replace("MaxTime=INFINITE", "MaxTime=20"))
    os.kill(c.pid("ctld.pid"), signal.SIGHUP)
    deadline = time.time() + 10
    while partition(c, "debug")["MaxTime"] != "00:20:00":
        assert time.time() < deadline, "SIGHUP did not reconfigure"
        time.sleep(0.1)
    with open(os.path.join(c.state_dir, "ctld.log")) as f:
        log = f.read()
    assert re.search(r"SIGHUP: reconfiguring from .*slurm\.conf", log)
    assert "is now the configuration in force" in log
    # A bad file on SIGHUP: logged with its line, and the controller goes on as it was.
    edit_conf(c, lambda t: t + "KillWait=soon\n")
    os.kill(c.pid("ctld.pid"), signal.SIGHUP)
    deadline = time.time() + 10
    while "reconfigure refused" not in open(os.path.join(c.state_dir, "ctld.log")).read():
        assert time.time() < deadline, "SIGHUP with a bad file was not refused"
        time.sleep(0.1)
    with open(conf_path(c)) as f:
        line = f.read().count("\n")
    with open(os.path.join(c.state_dir, "ctld.log")) as f:
        assert f"slurm.conf:{line}: KillWait=soon is not a number" in f.read()
    c.ok("scontrol", "ping")
    assert partition(c, "debug")["MaxTime"] == "00:20:00"
    assert config_value(c, "KillWait") == "30 sec"


@requires_root
def test_only_operators_reconfigure(make_cluster):
    user = ensure_user("drovertest").pw_name
    c = make_cluster(nodes=1, cpus=1)
    edit_conf(c, lambda t: t.replace("MaxTime=INFINITE", "MaxTime=30"))
    p = c.run("scontrol", "reconfigure", user=user)
    assert (p.returncode, p.stderr) == (1, "slurm_reconfigure error: Invalid user id\n")
    assert partition(c, "debug")["MaxTime"] == "UNLIMITED"
    # Words after it are ignored, as by Slurm's scontrol.
    p = c.run("scontrol", "reconfigure", "now")
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")
    assert partition(c, "debug")["MaxTime"] == "00:30:00"


def test_reset_partition_change_stays_reset_after_a_restart(make_cluster):
    c = make_cluster(nodes=1, cpus=1)
    c.ok("scontrol", "update", "PartitionName=debug", "State=DOWN")
    c.ok("scontrol", "reconfigure")
    assert partition(c, "debug")["State"] == "UP"
    # The journaled State=DOWN went with it: a restart does not bring it back.
    c.down()
    c.up()
    assert partition(c, "debug")["State"] == "UP"
