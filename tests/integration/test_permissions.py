"""Identity comes from the socket's peer credentials: one user cannot cancel another's job,
and batch scripts run as the user who submitted them."""
import os
import time

from conftest import ensure_user, requires_root


@requires_root
def test_jobs_run_as_submitter_and_others_cannot_cancel(make_cluster):
    owner = ensure_user("drovertest")
    other = ensure_user("drovertest2")
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    out = c.ok("sbatch", "--parsable", "--wrap", "id -u; id -g; sleep 30", user="drovertest")
    jid = int(out)
    info = c.wait_state(jid, "RUNNING")
    assert info["UserId"] == f"drovertest({owner.pw_uid})"
    # RUNNING comes before the script has printed anything; a cancel before then would leave
    # only the cancellation notice in the file.
    path = os.path.join(c.work, f"slurm-{jid}.out")
    deadline = time.time() + 30
    while time.time() < deadline:
        if os.path.exists(path) and len(open(path).read().split()) >= 2:
            break
        time.sleep(0.05)
    p = c.run("scancel", str(jid), user="drovertest2")
    assert p.returncode == 210
    assert p.stderr == f"scancel: error: Kill job error on job id {jid}: Access/permission denied\n"
    p = c.run("scancel", "-u", "drovertest", user="drovertest2")
    assert "Access/permission denied" in p.stderr
    assert c.job(jid)["JobState"] == "RUNNING"
    # The owner may; the output file belongs to the owner.
    c.ok("scancel", str(jid), user="drovertest")
    c.wait_all_done([jid])
    st = os.stat(path)
    assert st.st_uid == owner.pw_uid
    lines = open(path).read().split()
    assert lines[:2] == [str(owner.pw_uid), str(owner.pw_gid)]
    assert other.pw_uid != owner.pw_uid


@requires_root
def test_root_may_cancel_any_job(make_cluster):
    ensure_user("drovertest")
    c = make_cluster(nodes=1, cpus=1, mem=500)
    jid = int(c.ok("sbatch", "--parsable", "--wrap", "sleep 30", user="drovertest"))
    c.wait_state(jid, "RUNNING")
    c.ok("scancel", str(jid))
    assert c.wait_state(jid, "CANCELLED")["JobState"] == "CANCELLED"
