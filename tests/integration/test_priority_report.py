"""sprio and sshare against a real controller under priority/multifactor (and priority/basic)."""
import re
import time

from conftest import ensure_user, requires_root

MULTIFACTOR = ["PriorityType=priority/multifactor", "PriorityWeightAge=1000",
               "PriorityWeightFairshare=10000", "PriorityWeightJobSize=100",
               "PriorityWeightPartition=500", "PriorityDecayHalfLife=1:00:00"]

SPRIO_HEADER = ("          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  "
                "PARTITION\n")
SSHARE_HEADER = ("Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  "
                 "FairShare \n"
                 "-------------------- ---------- ---------- ----------- ----------- ------------- "
                 "---------- \n")


def squeue_priorities(c):
    out = c.ok("squeue", "-h", "-t", "PD", "-o", "%i %Q")
    return {int(i): int(p) for i, p in (line.split() for line in out.splitlines())}


@requires_root
def test_sprio_and_sshare_under_multifactor(make_cluster):
    ensure_user("drovertest")
    c = make_cluster(nodes=2, cpus=2, mem=1000, settings=MULTIFACTOR)

    # Root uses the cluster for a few seconds, so its association has usage.
    used = c.sbatch("-n", "4", "--wrap", "sleep 3")
    c.wait_state(used, "COMPLETED")

    # Fill the cluster, then queue: root 1 CPU, drovertest 2 CPUs, a held and a dependent job.
    filler = c.sbatch("-n", "4", "-t", "10", "--wrap", "sleep 300")
    c.wait_state(filler, "RUNNING")
    small = c.sbatch("-n", "1", "--wrap", "true")
    other = int(c.ok("sbatch", "--parsable", "-n", "2", "--wrap", "true", user="drovertest"))
    held = c.sbatch("-H", "--wrap", "true")
    dep = c.sbatch("-d", f"afterok:{filler}", "--wrap", "true")

    out = c.ok("sprio")
    lines = out.splitlines(keepends=True)
    assert lines[0] == SPRIO_HEADER
    rows = [l.split() for l in lines[1:]]
    assert [int(r[0]) for r in rows] == [small, other], out  # not held, not dependent
    by_id = {int(r[0]): r for r in rows}
    # JOBID PARTITION PRIORITY SITE AGE FAIRSHARE JOBSIZE PARTITION
    assert by_id[small][1] == "debug" and by_id[small][3] == "0"
    assert by_id[small][6] == "38"       # 100 * (1/2 node + 1/4 CPUs) / 2
    assert by_id[other][6] == "50"       # 100 * (1/2 + 2/4) / 2
    assert by_id[small][7] == "500"      # the only partition: factor 1
    # drovertest has used nothing, root has: a higher fair-share factor for drovertest.
    assert int(by_id[other][5]) > int(by_id[small][5])
    # sprio computes the factors when asked; the controller recomputes the jobs' priorities
    # before its next full scheduling pass (drovertest's arrival changed root's fair-share
    # rank). Then sprio's total is the job's priority, up to the age gained since.
    deadline = time.time() + 45
    while True:
        prio = squeue_priorities(c)
        now_rows = {int(l.split()[0]): int(l.split()[1])
                    for l in c.ok("sprio", "-h", "-o", "%i %Y").splitlines()}
        if all(abs(now_rows[j] - prio[j]) <= 1 for j in (small, other)):
            break
        assert time.time() < deadline, (now_rows, prio)
        time.sleep(0.5)
    assert prio[held] == 0

    # Columns widths and the other views.
    long = c.ok("sprio", "-l")
    assert long.splitlines()[0] == (
        "          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  "
        "FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES")
    assert re.search(rf"^ +{other} debug     droverte ", long, re.M), long
    norm = c.ok("sprio", "-n", "-j", str(small))
    assert norm.splitlines()[1].split()[5:] == ["0.3750000", "1.0000000"], norm
    assert c.ok("sprio", "-w") == SPRIO_HEADER + (
        "        Weights                               1       1000      10000        100        "
        "500\n")
    assert c.ok("sprio", "-h", "-o", "%i|%u|%r", "-u", "drovertest") == f"{other}|drovertest|debug\n"
    assert c.ok("sprio", "-j", str(filler)) == "Unable to find jobs matching user/id(s) specified\n"
    assert c.ok("sprio", "-h", "-o", "%i", "-S", "-F") == f"{other}\n{small}\n"

    # sshare: every association with -a; usage decays (half life an hour), so RawUsage > 0 but
    # the exact value moves.
    out = c.ok("sshare", "-a")
    assert out.startswith(SSHARE_HEADER), out
    rows = out[len(SSHARE_HEADER):].splitlines()
    assert rows[0].startswith("root                 ") and rows[0].split()[0] == "root", out
    users = {r.split()[1]: r for r in rows[1:]}
    assert set(users) == {"root", "drovertest"}, out
    root_usage = int(users["root"].split()[4])
    assert 8 <= root_usage <= 24, out      # 4 CPUs for about 3 s
    assert users["root"].startswith(" root ")  # one level under the root account
    assert users["drovertest"].split()[4] == "0"
    # Fair Tree: drovertest (no usage) ranks first.
    assert float(users["drovertest"].split()[-1]) > float(users["root"].split()[-1])
    # Default: the caller's own association (and the accounts).
    mine = c.ok("sshare", user="drovertest")[len(SSHARE_HEADER):].splitlines()
    assert len(mine) == 2 and mine[0].split()[0] == "root", mine
    assert mine[1].split()[:2] == ["root", "drovertest"], mine
    parsable = c.ok("sshare", "-P", "-U", "-u", "drovertest", "-o", "User,RawUsage,LevelFS")
    assert parsable == "User|RawUsage|LevelFS\ndrovertest|0|inf\n"
    long = c.ok("sshare", "-l", "-a", "-n")
    assert "cpu=" in long and long.splitlines()[0].rstrip().endswith("+")  # TRESRunMins cut

    # Usage read at query time decays: a later sshare never shows more for root.
    time.sleep(1)
    later = c.ok("sshare", "-a", "-n", "-P", "-o", "User,RawUsage")
    later_usage = {l.split("|")[0]: int(l.split("|")[1]) for l in later.splitlines()}
    assert later_usage["root"] <= root_usage


def test_sprio_under_priority_basic(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    c.sbatch("--wrap", "true")
    p = c.run("sprio")
    assert p.returncode == 1
    assert p.stdout == ""
    assert p.stderr == ("You are not running a supported priority plugin\n(priority/basic).\n"
                        "Only 'priority/multifactor' is supported.\n")
    # sshare: no associations to show, as Slurm without an accounting database.
    assert c.ok("sshare") == SSHARE_HEADER
    p = c.run("sprio", "-o", "%i", "-l")
    assert p.returncode == 1 and "mutually exclusive" in p.stderr
