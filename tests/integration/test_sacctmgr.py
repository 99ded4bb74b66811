"""sacctmgr and sreport against a real cluster: accounts, users and limits made with sacctmgr
take effect in the running controller at once and survive its restart; accounts.cfg seeds them;
sreport reports the jobs' usage from the accounting store."""
import os
import signal
import time

from conftest import ensure_user, requires_root


def restart_controller(c):
    """Stops the controller alone (its agents and their jobs go on) and starts it again."""
    pid = c.pid("ctld.pid")
    os.kill(pid, signal.SIGTERM)
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    c.up()


def wait_reason(c, jid, reason, timeout=30):
    deadline = time.time() + timeout
    info = None
    while time.time() < deadline:
        info = c.job(jid)
        if info and info.get("Reason") == reason:
            return info
        time.sleep(0.2)
    raise AssertionError(f"job {jid} not waiting for {reason}: {info}")


@requires_root
def test_sacctmgr_accounts_limits_restart_and_sreport(make_cluster):
    ensure_user("drovertest")
    c = make_cluster(nodes=2, cpus=2, mem=1000,
                     settings=["AccountingStorageEnforce=associations,limits"])
    # Enforcement and no accounts yet: a new cluster's (root only), so drovertest is refused.
    p = c.run("sbatch", "--wrap", "true", user="drovertest")
    assert p.returncode == 1 and "Invalid account or account/partition combination" in p.stderr, p.stderr
    assert c.ok("sacctmgr", "-n", "-P", "show", "assoc", "format=account,user") == "root|\nroot|root\n"

    out = c.ok("sacctmgr", "-i", "add", "account", "physics", "Description=Physics Dept")
    assert out.startswith(" Adding Account(s)\n  physics\n Settings\n  Description     = physics dept\n")
    c.ok("sacctmgr", "-i", "add", "user", "drovertest", "account=physics")
    # Only root, SlurmUser and AdminLevel operators change things; anyone may look.
    p = c.run("sacctmgr", "-i", "modify", "user", "drovertest", "set", "MaxJobs=5", user="drovertest")
    assert p.returncode == 1 and "Access/permission denied" in p.stderr, p.stderr
    assert "physics|drovertest" in c.ok("sacctmgr", "-P", "show", "assoc", "format=account,user",
                                        user="drovertest")
    # At the prompt, "n" leaves things as they were.
    p = c.run("sacctmgr", "modify", "user", "drovertest", "set", "MaxJobs=1", input="n\n")
    assert p.returncode == 0 and p.stdout.endswith("(N/y): \n Changes Discarded\n"), p.stdout

    first = c.sbatch("--wrap", "sleep 300", user="drovertest")
    assert c.wait_state(first, "RUNNING")["Account"] == "physics"
    p = c.run("sacctmgr", "modify", "user", "drovertest", "set", "MaxJobs=1", input="y\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout == (" Modified user associations...\n"
                        "  C = drover     A = physics              U = drovertes\n"
                        "Would you like to commit changes? (You have 30 seconds to decide)\n"
                        "(N/y): \n"), p.stdout
    # The running controller holds the next job back at once.
    second = c.sbatch("--wrap", "sleep 300", user="drovertest")
    wait_reason(c, second, "AssocMaxJobsLimit")

    # A restart keeps it all: the data, the limit, the job held back.
    restart_controller(c)
    assert "physics|physics dept|physics" in c.ok("sacctmgr", "-n", "-P", "show", "account")
    assert "physics|drovertest|1" in c.ok("sacctmgr", "-n", "-P", "show", "assoc",
                                          "format=account,user,maxjobs")
    wait_reason(c, second, "AssocMaxJobsLimit")
    c.ok("sacctmgr", "-i", "modify", "user", "drovertest", "set", "MaxJobs=-1")
    c.wait_state(second, "RUNNING")

    # An account whose jobs still run stays.
    p = c.run("sacctmgr", "-i", "delete", "account", "physics")
    assert p.returncode == 1, p.stdout
    assert p.stderr.startswith(" Error with request: Job(s) active, cancel job(s) before remove\n"
                               f"  JobID = {first:<10} C = drover     A = physics    U = drovertes"), p.stderr
    time.sleep(2)
    c.ok("scancel", str(first), str(second))
    c.wait_all_done([first, second])

    # sreport: what the jobs used, from the accounting store (this hour and the next).
    report = c.ok("sreport", "-n", "-P", "-t", "seconds", "cluster", "AccountUtilizationByUser",
                  "start=now-1hours", "end=now+1hours")
    rows = [line.split("|") for line in report.splitlines()]
    assert [r[:3] for r in rows] == [["drover", "root", ""], ["drover", "physics", ""],
                                     ["drover", "physics", "drovertest"]], report
    used = int(rows[2][4])
    assert used >= 4 and rows[0][4] == rows[1][4] == str(used), report
    top = c.ok("sreport", "-n", "-P", "-t", "seconds", "user", "topusage",
               "start=now-1hours", "end=now+1hours")
    assert top.startswith(f"drover|drovertest||physics|{used}|0\n"), top
    util = c.ok("sreport", "-n", "-P", "-t", "seconds", "cluster", "utilization",
                "start=now-1hours", "end=now+1hours", "format=cluster,allocated,reported")
    name, allocated, reported = util.strip().split("|")
    assert name == "drover" and int(allocated) == used and int(reported) >= used, util

    # Now the account can go, and with it drovertest's association.
    out = c.ok("sacctmgr", "-i", "delete", "account", "physics")
    assert out == " Deleting accounts...\n  physics\n"
    p = c.run("sbatch", "--wrap", "true", user="drovertest")
    assert p.returncode == 1 and "Invalid account" in p.stderr


@requires_root
def test_accounts_cfg_seeds_the_store_and_replaces_it_when_edited(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000, up=False)
    cfg = os.path.join(c.state_dir, "accounts.cfg")
    with open(cfg, "w") as f:
        f.write("Cluster - 'drover'\nParent - 'root'\nAccount - 'chem':MaxJobs=3\n"
                "Parent - 'chem'\nUser - 'root':DefaultAccount='chem'\n")
    c.up("--nodes", "1", "--cpus", "2", "--mem", "1000", "--timeout", "60")
    assert c.ok("sacctmgr", "-n", "-P", "show", "assoc", "format=account,user,maxjobs") == \
        "root||\nchem||3\nchem|root|3\n"
    # A change made with sacctmgr survives a restart while the file stays as it was...
    c.ok("sacctmgr", "-i", "modify", "account", "chem", "set", "MaxJobs=5")
    restart_controller(c)
    assert "chem||5" in c.ok("sacctmgr", "-n", "-P", "show", "assoc", "format=account,user,maxjobs")
    # ...and an edited file replaces what was stored.
    with open(cfg, "a") as f:
        f.write("Parent - 'root'\nAccount - 'bio'\n")
    restart_controller(c)
    listing = c.ok("sacctmgr", "-n", "-P", "show", "assoc", "format=account,user,maxjobs")
    assert "chem||3" in listing and "bio||" in listing, listing
    log = open(os.path.join(c.state_dir, "ctld.log")).read()
    assert "changed since it was last loaded" in log


def test_sreport_counts_the_time_nodes_were_down(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    c.ok("scontrol", "update", "NodeName=node2", "State=DOWN", "Reason=maintenance")
    time.sleep(4)
    c.ok("scontrol", "update", "NodeName=node2", "State=RESUME")
    time.sleep(2)  # the controller notices within a second
    out = c.ok("sreport", "-n", "-P", "-t", "seconds", "cluster", "utilization",
               "start=now-1hours", "end=now+1hours", "format=allocated,down,idle,reported")
    allocated, down, idle, reported = map(int, out.strip().split("|"))
    # node2's 2 CPUs for the 4 to 6 seconds it was down; the rest of the time idle.
    assert 2 * 3 <= down <= 2 * 7, out
    assert allocated == 0 and idle + down == reported, out
