"""Job accounting: sacct shows finished jobs with their states and exit codes, also after the
controller purged them (MinJobAge) and after a controller restart; users see only their own
jobs unless they ask for everyone's (-a)."""
import os
import signal
import time

from conftest import ensure_user, requires_root

FIELDS = ["-P", "-n", "-S", "now-1hours", "-o", "JobID,JobName,State,ExitCode"]


def sacct_rows(c, *args, user=None):
    out = c.ok("sacct", *FIELDS, *args, user=user)
    return [line.split("|") for line in out.splitlines()]


def wait_purged(c, jid, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if c.job(jid) is None:
            return
        time.sleep(0.2)
    raise AssertionError(f"job {jid} still in the controller after {timeout}s")


@requires_root
def test_sacct_states_exit_codes_purge_and_restart(make_cluster):
    owner = ensure_user("drovertest")
    ensure_user("droverdev")
    c = make_cluster(nodes=1, cpus=2, mem=1000, settings=["MinJobAge=2"])
    ok = c.sbatch("-J", "ok", "--wrap", "true")
    bad = c.sbatch("-J", "bad", "--wrap", "exit 3")
    long = c.sbatch("-J", "long", "--wrap", "sleep 60")
    c.wait_state(long, "RUNNING")
    c.ok("scancel", str(long))
    theirs = c.sbatch("-J", "theirs", "--wrap", "true", user="drovertest")
    c.wait_all_done([ok, bad, long, theirs])

    expected = [
        [str(ok), "ok", "COMPLETED", "0:0"],
        [f"{ok}.batch", "batch", "COMPLETED", "0:0"],
        [str(bad), "bad", "FAILED", "3:0"],
        [f"{bad}.batch", "batch", "FAILED", "3:0"],
        [str(long), "long", "CANCELLED by 0", "0:0"],
        [f"{long}.batch", "batch", "CANCELLED", "0:15"],
        [str(theirs), "theirs", "COMPLETED", "0:0"],
        [f"{theirs}.batch", "batch", "COMPLETED", "0:0"],
    ]
    assert sacct_rows(c) == expected

    # Purged from the controller (MinJobAge=2): accounting keeps them.
    for jid in (ok, bad, long, theirs):
        wait_purged(c, jid)
    assert sacct_rows(c) == expected
    assert sacct_rows(c, "-X", "-j", str(bad)) == [expected[2]]
    assert sacct_rows(c, "-X", "-s", "F", "-S", "now-1hours", "-E", "now") == [expected[2]]

    # A controller restart keeps the records.
    os.kill(c.pid("ctld.pid"), signal.SIGKILL)
    time.sleep(0.5)
    c.up()
    assert sacct_rows(c) == expected

    # Users see their own jobs; -a shows everyone's.
    assert sacct_rows(c, "-X", user="drovertest") == [expected[6]]
    assert sacct_rows(c, "-X", user="droverdev") == []
    assert len(sacct_rows(c, "-X", "-a", user="droverdev")) == 4
    assert sacct_rows(c, "-X", "-u", "drovertest") == [expected[6]]
    user_fields = c.ok("sacct", "-X", "-n", "-P", "-j", str(theirs), "-o", "User,UID,AllocCPUS,NNodes,NodeList")
    assert user_fields == f"drovertest|{owner.pw_uid}|1|1|node1\n"

    # The default layout and Slurm's errors.
    out = c.ok("sacct", "-j", str(ok))
    assert out.splitlines()[:2] == [
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode ",
        "------------ ---------- ---------- ---------- ---------- ---------- -------- ",
    ]
    assert out.splitlines()[2].startswith(f"{ok:<12} ")
    p = c.run("sacct", "-o", "nosuchfield")
    assert (p.returncode, p.stderr) == (1, 'sacct: error: Invalid field requested: "nosuchfield"\n')
    p = c.run("sacct", "-u", "no-such-user-here")
    assert (p.returncode, p.stderr) == (1, "sacct: error: Invalid user id: no-such-user-here\n")


def test_requeue_keeps_the_ended_run(make_cluster):
    """The run a requeue ends stays in accounting as Slurm keeps it: REQUEUED with its batch
    step CANCELLED 0:15, shown by -D beside the job's next run, which has only its own record."""
    c = make_cluster(nodes=1, cpus=1, mem=1000)
    jid = c.sbatch("-J", "rq", "--requeue", "--wrap", "sleep 30")
    c.wait_state(jid, "RUNNING")
    c.ok("scontrol", "requeue", str(jid))
    c.wait_state(jid, "PENDING")
    rows = sacct_rows(c, "-D", "-j", str(jid), "-E", "now+1hour")
    assert rows[:2] == [
        [str(jid), "rq", "REQUEUED", "0:0"],
        [f"{jid}.batch", "batch", "CANCELLED", "0:15"],
    ]
    assert rows[2:] == [[str(jid), "rq", "PENDING", "0:0"]]
    assert sacct_rows(c, "-j", str(jid), "-E", "now+1hour") == rows[2:]
