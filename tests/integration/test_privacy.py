"""Users cannot read each other's data (issue 17): the state directory and the agents' spool are
the cluster user's alone, jobs run with the submitter's umask (SLURM_UMASK), and control
characters in names never reach a terminal raw."""
import os
import stat
import subprocess

from conftest import SLURM_BIN, ensure_user, requires_root

SECRET = "hunter2-do-not-share"


def readable_by(user, paths):
    """The paths among `paths` that `user` can open for reading."""
    script = ("import sys\nfor p in sys.argv[1:]:\n"
              "    try:\n        open(p, 'rb').read(1); print(p)\n    except OSError:\n        pass\n")
    p = subprocess.run(["runuser", "-u", user, "--", "/usr/bin/python3", "-c", script, *paths],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return set(p.stdout.split())


def listable_by(user, path):
    return subprocess.run(["runuser", "-u", user, "--", "ls", path],
                          capture_output=True, timeout=30).returncode == 0


@requires_root
def test_state_dir_and_spool_are_private_but_the_socket_serves_everyone(make_cluster):
    ensure_user("drovertest")
    ensure_user("drovertest2")
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    env = dict(c.env, SECRET_TOKEN=SECRET)
    # A running job of drovertest (its script and environment hold the secret) and a finished
    # one (its record in accounting).
    script = c.write_script("secret.sh", f"#!/bin/sh\n# {SECRET}\necho done\nsleep 60\n")
    done = c.sbatch("--wrap", "true", user="drovertest")
    c.wait_state(done, "COMPLETED")
    p = subprocess.run(["runuser", "-u", "drovertest", "--", "env", f"SECRET_TOKEN={SECRET}",
                        f"DROVER_SOCKET={c.env['DROVER_SOCKET']}", os.path.join(SLURM_BIN, "sbatch"),
                        "--parsable", script], capture_output=True, text=True, env=env, cwd=c.work)
    assert p.returncode == 0, p.stderr
    running = int(p.stdout)
    c.wait_state(running, "RUNNING")

    files, dirs = [], []
    for root, ds, fs in os.walk(c.state_dir):
        dirs += [os.path.join(root, d) for d in ds]
        files += [os.path.join(root, f) for f in fs]
    names = {os.path.basename(f) for f in files}
    assert {"ctld-state.db", "accounting.db", "ctld.log", "slurm.conf", "cluster.key"} <= names
    assert any(n.endswith("-wal") for n in names), names  # SQLite's log holds the scripts
    # The secret is in there (as the defect showed), for the cluster's user only.
    assert any(SECRET.encode() in open(f, "rb").read() for f in files
               if stat.S_ISREG(os.lstat(f).st_mode))

    assert stat.S_IMODE(os.stat(c.state_dir).st_mode) == 0o711
    for f in files:
        st = os.lstat(f)
        if stat.S_ISSOCK(st.st_mode):
            if os.path.basename(os.path.dirname(f)) == "stepd":  # a job's supervisor: root's
                assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == 0, f
                assert stat.S_IMODE(os.stat(os.path.dirname(f)).st_mode) == 0o700
                continue
            assert os.path.basename(f) == "ctld.sock"
            continue
        if os.path.basename(f) == "env.sh":
            assert stat.S_IMODE(st.st_mode) == 0o644
            continue
        if st.st_uid == 0:  # the job's own script belongs to (and is readable by) its user
            assert stat.S_IMODE(st.st_mode) & 0o077 == 0, f"{f} is {oct(st.st_mode)}"
    for d in dirs:
        assert stat.S_IMODE(os.stat(d).st_mode) & 0o066 == 0, f"{d} is {oct(os.stat(d).st_mode)}"

    # Neither user can read anything of the cluster's (the owner of the job only its script),
    # nor list the directories.
    for user in ("drovertest", "drovertest2"):
        got = readable_by(user, [f for f in files if not f.endswith("ctld.sock")])
        allowed = {os.path.join(c.state_dir, "env.sh")}
        if user == "drovertest":
            allowed |= {f for f in files if os.stat(f).st_uid != 0}
        assert got <= allowed, f"{user} reads {sorted(got - allowed)}"
        assert not listable_by(user, c.state_dir)
        assert not listable_by(user, os.path.join(c.state_dir, "spool", "node1"))
    assert not readable_by("drovertest2", [f for f in files if os.stat(f).st_uid != 0])

    # The socket still serves them.
    assert str(running) in c.ok("squeue", "-h", "-o", "%i", user="drovertest2")
    other = c.sbatch("--wrap", "true", user="drovertest2")
    c.wait_state(other, "COMPLETED")
    c.ok("scancel", str(running), user="drovertest")


@requires_root
def test_state_dir_of_an_earlier_version_is_tightened(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500)
    c.down()
    # What earlier versions left: the directory 0755, its files 0644.
    os.chmod(c.state_dir, 0o755)
    for name in ("ctld-state.db", "accounting.db", "ctld.log", "slurm.conf"):
        os.chmod(os.path.join(c.state_dir, name), 0o644)
    os.chmod(os.path.join(c.state_dir, "spool"), 0o755)
    p = c.up()
    assert f"drover: {c.state_dir} was readable by other users: made" in p.stdout
    assert stat.S_IMODE(os.stat(c.state_dir).st_mode) == 0o711
    for name in ("ctld-state.db", "accounting.db", "ctld.log", "slurm.conf"):
        assert stat.S_IMODE(os.stat(os.path.join(c.state_dir, name)).st_mode) == 0o600, name
    assert stat.S_IMODE(os.stat(os.path.join(c.state_dir, "spool")).st_mode) == 0o711
    c.wait_state(c.sbatch("--wrap", "true"), "COMPLETED")
    # Said once: a second `drover up` finds nothing to tighten.
    assert "readable by other users" not in c.up().stdout


def sbatch_with_umask(c, mask, *args):
    p = subprocess.run(["sh", "-c", f'umask {mask}; exec "$0" "$@"', os.path.join(SLURM_BIN, "sbatch"),
                        "--parsable", *args], capture_output=True, text=True, env=c.env, cwd=c.work)
    assert p.returncode == 0, p.stderr
    return int(p.stdout)


def test_jobs_run_with_the_submitters_umask(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    body = ("umask; printenv SLURM_UMASK || echo unset; srun sh -c 'umask; printenv SLURM_UMASK'; "
            "srun -o step-%j.out true; srun -o task-%j-%t.out true; touch made-@")
    j77 = sbatch_with_umask(c, "077", "-o", "o77-%j.out", "-e", "e77-%j.err",
                            "--wrap", body.replace("@", "77"))
    j02 = sbatch_with_umask(c, "002", "-o", "o02-%j.out", "--wrap", body.replace("@", "02"))
    c.wait_state(j77, "COMPLETED")
    c.wait_state(j02, "COMPLETED")

    def mode(name):
        return stat.S_IMODE(os.stat(os.path.join(c.work, name)).st_mode)

    # As Slurm 22.05: the batch shell has the umask but not SLURM_UMASK; srun's tasks have both.
    assert open(os.path.join(c.work, f"o77-{j77}.out")).read().split() == ["0077", "unset", "0077", "0077"]
    assert open(os.path.join(c.work, f"o02-{j02}.out")).read().split() == ["0002", "unset", "0002", "0002"]
    assert mode(f"o77-{j77}.out") == 0o600
    assert mode(f"e77-{j77}.err") == 0o600
    assert mode(f"step-{j77}.out") == 0o600
    assert mode(f"task-{j77}-0.out") == 0o600  # opened by the agent, not srun
    assert mode("made-77") == 0o600
    assert mode(f"o02-{j02}.out") == 0o664
    assert mode(f"step-{j02}.out") == 0o664
    assert mode(f"task-{j02}-0.out") == 0o664
    assert mode("made-02") == 0o664


def test_control_characters_in_names_are_escaped_in_every_listing(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500)
    jid = c.sbatch("-J", "a\x1b[2Jb\tc\nd", "--comment", "x\x1b]0;owned\x07y", "--hold", "--wrap", "true")
    outputs = {
        "squeue": c.ok("squeue", "-o", "%i %j %k"),
        "squeue-default": c.ok("squeue"),
        "squeue-O": c.ok("squeue", "-O", "JobID,Name:40,Comment:40"),
        "scontrol": c.ok("scontrol", "show", "job", str(jid)),
        "scontrol-o": c.ok("scontrol", "-o", "show", "job", str(jid)),
    }
    c.ok("scancel", str(jid))
    c.wait_state(jid, "CANCELLED")
    outputs["sacct"] = c.ok("sacct", "-j", str(jid), "--parsable2", "-o", "JobID,JobName%30")
    outputs["sacct-table"] = c.ok("sacct", "-j", str(jid), "-o", "JobID,JobName%30")
    c.ok("scontrol", "update", "NodeName=node1", "State=DRAIN", "Reason=disk\x1b[31m\nbad")
    outputs["sinfo-R"] = c.ok("sinfo", "-R")
    outputs["scontrol-node"] = c.ok("scontrol", "show", "node", "node1")
    for name, out in outputs.items():
        assert "\x1b" not in out and "\x07" not in out, f"{name}: {out!r}"
    assert f"{jid} a\\x1b[2Jb\\tc\\nd x\\x1b]0;owned\\x07y\n" in outputs["squeue"]
    assert "JobId=%d JobName=a\\x1b[2Jb\\tc\\nd\n" % jid in outputs["scontrol"]
    assert len(outputs["scontrol-o"].splitlines()) == 1
    assert f"{jid}|a\\x1b[2Jb\\tc\\nd\n" in outputs["sacct"]
    assert "Reason=disk\\x1b[31m\\nbad [root@" in outputs["scontrol-node"]
    assert "disk\\x1b[31m\\nbad" in outputs["sinfo-R"]
