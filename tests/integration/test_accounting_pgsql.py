"""Job accounting on PostgreSQL (AccountingStorageType=accounting_storage/pgsql): sacct shows jobs
from a real server the test starts, across controller restarts, and a database that goes down
loses nothing (the controller keeps the records and writes them once it is back, even after a
restart in between). Skipped when PostgreSQL's server binaries are not installed."""
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import requires_root

FIELDS = ["-P", "-n", "-S", "now-1hours", "-o", "JobID,JobName,State,ExitCode"]
DATABASE = "drover_acct"
PASSWORD = "it-pg-secret"


def pg_bin():
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]))
    dirs = [d for d in dirs if os.path.exists(os.path.join(d, "initdb"))]
    return dirs[-1] if dirs else None


class PgServer:
    """A throwaway server: its own directory, run by the postgres (or nobody) user, on loopback."""

    def __init__(self, bindir):
        self.bin = bindir
        self.dir = tempfile.mkdtemp(prefix="drover-it-pg-")
        self.user = "postgres" if self._has_user("postgres") else "nobody"
        pw = pwd.getpwnam(self.user)
        os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        pwfile = os.path.join(self.dir, "initdb-pw")
        with open(pwfile, "w") as f:
            f.write(PASSWORD + "\n")
        os.chown(pwfile, pw.pw_uid, pw.pw_gid)
        self._as_user("initdb", "-D", self.data, "-U", "drover", f"--pwfile={pwfile}",
                      "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync")
        self.start()
        self.psql("postgres", f"CREATE DATABASE {DATABASE}")
        # The controller's password file: its user's alone.
        self.password_file = os.path.join(self.dir, "controller-pw")
        with open(self.password_file, "w") as f:
            f.write(PASSWORD + "\n")
        os.chmod(self.password_file, 0o600)

    @staticmethod
    def _has_user(name):
        try:
            pwd.getpwnam(name)
            return True
        except KeyError:
            return False

    @property
    def data(self):
        return os.path.join(self.dir, "data")

    def _as_user(self, tool, *args):
        p = subprocess.run(["runuser", "-u", self.user, "--", os.path.join(self.bin, tool), *args],
                           capture_output=True, text=True, cwd=self.dir, timeout=120)
        assert p.returncode == 0, f"{tool} failed:\n{p.stdout}\n{p.stderr}"
        return p.stdout

    def start(self):
        self._as_user("pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "server.log"), "-w",
                      "-o", f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} -c fsync=off",
                      "start")

    def stop(self):
        self._as_user("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")

    def psql(self, db, sql):
        """Runs SQL over the Unix socket (trusted locally); rows as lists of text."""
        out = self._as_user("psql", "-h", self.dir, "-p", str(self.port), "-U", "drover", "-d", db,
                            "-X", "-A", "-t", "-F", "|", "-v", "ON_ERROR_STOP=1", "-c", sql)
        return [line.split("|") for line in out.splitlines() if line]

    def settings(self):
        return [
            "AccountingStorageType=accounting_storage/pgsql",
            "AccountingStorageHost=127.0.0.1",
            f"AccountingStoragePort={self.port}",
            "AccountingStorageUser=drover",
            f"AccountingStorageLoc={DATABASE}",
            f"AccountingStoragePassFile={self.password_file}",
        ]

    def close(self):
        try:
            self.stop()
        except AssertionError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def pg():
    bindir = pg_bin()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin")
    server = PgServer(bindir)
    yield server
    server.close()


def sacct_rows(c, *args):
    out = c.ok("sacct", *FIELDS, *args)
    return [line.split("|") for line in out.splitlines()]


def restart_controller(c):
    os.kill(c.pid("ctld.pid"), signal.SIGKILL)
    time.sleep(0.5)
    c.up()


def wait_purged(c, jid, timeout=30):
    deadline = time.time() + timeout
    while c.job(jid) is not None:
        assert time.time() < deadline, f"job {jid} still in the controller after {timeout}s"
        time.sleep(0.2)


@requires_root
def test_sacct_on_postgresql_across_restarts_and_outages(make_cluster, pg):
    c = make_cluster(nodes=1, cpus=2, mem=1000, settings=pg.settings() + ["MinJobAge=2"])
    ok = c.sbatch("-J", "ok", "--wrap", "true")
    bad = c.sbatch("-J", "bad", "--wrap", "exit 3")
    c.wait_all_done([ok, bad])
    expected = [
        [str(ok), "ok", "COMPLETED", "0:0"],
        [f"{ok}.batch", "batch", "COMPLETED", "0:0"],
        [str(bad), "bad", "FAILED", "3:0"],
        [f"{bad}.batch", "batch", "FAILED", "3:0"],
    ]
    assert sacct_rows(c) == expected
    # The records are in PostgreSQL, and nothing went to SQLite.
    assert pg.psql(DATABASE, "SELECT job_id, name, state FROM acct_jobs ORDER BY job_id") == [
        [str(ok), "ok", "COMPLETED"], [str(bad), "bad", "FAILED"]]
    assert not os.path.exists(os.path.join(c.state_dir, "accounting.db"))

    restart_controller(c)
    assert sacct_rows(c) == expected

    # The database goes down: jobs still run; the controller keeps their records, and the
    # journal keeps those of jobs purged meanwhile (MinJobAge), across a controller restart.
    pg.stop()
    during = c.sbatch("-J", "during", "--wrap", "exit 5")
    c.wait_all_done([during])
    wait_purged(c, during)
    p = c.run("sacct", *FIELDS)
    assert p.returncode == 255
    assert "Problem talking to the database" in p.stderr and "PostgreSQL" in p.stderr, p.stderr
    restart_controller(c)  # the controller starts without its database
    pending = c.sbatch("-J", "pending", "--hold", "--wrap", "true")
    pg.start()
    expected += [
        [str(during), "during", "FAILED", "5:0"],
        [f"{during}.batch", "batch", "FAILED", "5:0"],
    ]
    # sacct writes what waits before it reads.
    assert sacct_rows(c) == expected
    assert c.ok("sacct", "-X", "-P", "-n", "-j", str(pending), "-o", "JobID,State") == f"{pending}|PENDING\n"
    # And without sacct the controller's retries get there too.
    c.ok("scancel", str(pending))
    deadline = time.time() + 30
    while pg.psql(DATABASE, f"SELECT state FROM acct_jobs WHERE job_id = {pending}") != [["CANCELLED"]]:
        assert time.time() < deadline, "the cancelled job's record never reached PostgreSQL"
        time.sleep(0.5)


@requires_root
def test_a_wrong_password_file_stops_the_controller_with_a_clear_error(make_cluster, pg):
    os.chmod(pg.password_file, 0o644)
    c = make_cluster(nodes=1, settings=pg.settings(), up=False)
    p = c.drover("up", "--state-dir", c.state_dir, "--nodes", "1", *sum(
        (["--set", s] for s in pg.settings()), []), check=False)
    assert p.returncode != 0
    log = open(os.path.join(c.state_dir, "ctld.log")).read() if os.path.exists(
        os.path.join(c.state_dir, "ctld.log")) else ""
    assert "must not be accessible by group or others" in p.stdout + p.stderr + log


@requires_root
def test_sacctmgr_on_postgresql_and_while_it_is_down(make_cluster, pg):
    c = make_cluster(nodes=1, cpus=2, mem=1000, settings=pg.settings())
    c.ok("sacctmgr", "-i", "add", "account", "physics", "GrpJobs=4")
    c.ok("sacctmgr", "-i", "add", "user", "root", "account=physics", "MaxJobs=2")
    listing = ["sacctmgr", "-n", "-P", "show", "assoc", "format=account,user,grpjobs,maxjobs"]
    expected = "root|||\nroot|root||\nphysics||4|\nphysics|root||2\n"
    assert c.ok(*listing) == expected
    assert pg.psql(DATABASE, "SELECT account, user_name, settings FROM acct_assocs WHERE "
                             "account = 'physics' ORDER BY id") == [
        ["physics", "", "GrpJobs=4"], ["physics", "root", "MaxJobs=2"]]
    restart_controller(c)
    assert c.ok(*listing) == expected

    # The database goes down: changes fail and change nothing; the controller restarts from its
    # journal's copy.
    pg.stop()
    p = c.run("sacctmgr", "-i", "modify", "user", "root", "set", "MaxJobs=3")
    assert p.returncode == 1 and "Problem talking to the database" in p.stderr, p.stderr
    assert c.ok(*listing) == expected
    restart_controller(c)
    assert c.ok(*listing) == expected
    pg.start()
    c.ok("sacctmgr", "-i", "modify", "user", "where", "name=root", "account=physics", "set",
         "MaxJobs=3")
    assert c.ok(*listing) == expected.replace("physics|root||2", "physics|root||3")


def postgres_pids(pg):
    """The server's processes: the postmaster (first line of postmaster.pid) and its children."""
    with open(os.path.join(pg.data, "postmaster.pid")) as f:
        master = int(f.readline())
    children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(master)], capture_output=True,
                              text=True).stdout.split()
    return [master] + [int(p) for p in children]


@requires_root
def test_a_stalled_database_holds_up_neither_submissions_nor_scheduling(make_cluster, pg):
    """Accounting runs on its own thread: with every PostgreSQL process stopped (a stall, as
    in a failover), jobs are still submitted, scheduled, run and listed; their records reach
    the database once it answers again."""
    c = make_cluster(nodes=1, cpus=2, mem=1000, settings=pg.settings())
    first = c.sbatch("-J", "first", "--wrap", "true")
    c.wait_all_done([first])
    assert sacct_rows(c, "-j", str(first))[0][2] == "COMPLETED"  # the store's connection is up

    pids = postgres_pids(pg)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        latencies, ids = [], []
        for i in range(8):
            t0 = time.monotonic()
            ids.append(c.sbatch("-J", f"stall{i}", "--wrap", "true"))
            latencies.append(time.monotonic() - t0)
        # Scheduled, run and ended while the database is still stopped.
        c.wait_all_done(ids, timeout=60)
        assert all(open(f"/proc/{pid}/stat").read().split()[2] == "T" for pid in pids)
        assert c.ok("squeue", "-h", "-o", "%i").strip() == ""
        print(f"sbatch during the stall: max {max(latencies) * 1000:.0f} ms, "
              f"median {sorted(latencies)[len(latencies) // 2] * 1000:.0f} ms")
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    rows = sacct_rows(c, "-X")
    assert sorted(r[1] for r in rows) == sorted(["first"] + [f"stall{i}" for i in range(8)])
    assert all(r[2] == "COMPLETED" for r in rows)
