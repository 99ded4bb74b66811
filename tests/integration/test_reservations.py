"""Advance reservations end to end: scontrol create/update/show/delete with Slurm's output and
errors, sbatch --reservation, squeue reasons, sinfo states, and reservations surviving a
controller restart."""
import re
import time

from conftest import ensure_user, requires_root


def show(c, name=""):
    return c.run("scontrol", "show", "reservation", *([name] if name else []))


def test_create_show_update_delete(make_cluster):
    c = make_cluster(nodes=3, cpus=2, mem=1000)
    p = c.run("scontrol", "show", "res")
    assert p.returncode == 0 and p.stdout == "No reservations in the system\n"

    out = c.ok("scontrol", "create", "reservation", "starttime=now+1hour", "duration=30",
               "nodecnt=2", "users=root", "flags=maint,ignore_jobs", "reservationname=mnt")
    assert out == "Reservation created: mnt\n"
    text = show(c, "mnt").stdout
    lines = text.split("\n")
    assert re.fullmatch(r"ReservationName=mnt StartTime=\S+ EndTime=\S+ Duration=00:30:00", lines[0])
    assert lines[1] == ("   Nodes=node[1-2] NodeCnt=2 CoreCnt=4 Features=(null) PartitionName=debug "
                        "Flags=MAINT,IGNORE_JOBS")
    assert lines[2] == "   TRES=cpu=4"
    assert lines[3] == ("   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE "
                        "BurstBuffer=(null) Watts=n/a")
    assert lines[4] == "   MaxStartDelay=(null)"
    assert text.endswith("\n\n")

    # Unnamed: the first user and the reservation counter.
    assert c.ok("scontrol", "create", "res", "starttime=now", "duration=60", "nodes=node3",
                "users=root") == "Reservation created: root_2\n"
    one = c.ok("scontrol", "-o", "show", "res", "root_2")
    assert "Flags=SPEC_NODES TRES=cpu=2 Users=root" in one and "State=ACTIVE" in one
    assert one.count("\n") == 1

    p = c.run("scontrol", "create", "reservation", "starttime=now", "duration=60", "nodes=node3",
              "users=root")
    assert p.returncode == 1
    assert p.stderr == "Error creating the reservation: Requested reservation overlaps with another reservation\n"
    p = c.run("scontrol", "create", "reservation", "starttime=now", "nodes=node3", "users=root")
    assert p.returncode == 1
    assert p.stderr == "scontrol: error: An end time or duration must be given.  No reservation created.\n"
    p = c.run("scontrol", "create", "reservation", "starttime=now", "duration=bogus", "nodes=node3",
              "users=root")
    assert p.stderr == "scontrol: error: Invalid duration duration=bogus.  No reservation created.\n"

    assert c.ok("scontrol", "update", "reservationname=mnt", "duration=45",
                "flags-=ignore_jobs") == "Reservation updated.\n"
    assert "Duration=00:45:00" in show(c, "mnt").stdout
    assert "Flags=MAINT\n" in show(c, "mnt").stdout
    p = c.run("scontrol", "update", "reservationname=nosuch", "duration=5")
    assert p.returncode == 1
    assert p.stderr == ("Error updating the reservation: Requested reservation is invalid\n"
                        "slurm_update error: Requested reservation is invalid\n")

    p = show(c, "nosuch")
    assert p.returncode == 1 and p.stdout == "Reservation nosuch not found\n"
    p = c.run("scontrol", "delete", "reservation", "nosuch")
    assert p.returncode == 1
    assert p.stderr == "delete_reservation reservation: Requested reservation is invalid\n"
    c.ok("scontrol", "delete", "reservation", "mnt")
    c.ok("scontrol", "delete", "reservationname=root_2")
    assert show(c).stdout == "No reservations in the system\n"


@requires_root
def test_jobs_in_and_around_a_reservation(make_cluster):
    ensure_user("drovertest")
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    c.ok("scontrol", "create", "reservation", "starttime=now", "duration=60", "nodes=node1",
         "users=root", "reservationname=r")
    # sinfo shows the reserved idle node as resv.
    states = [line.split()[-2:] for line in c.ok("sinfo", "-h").splitlines()]
    assert ["resv", "node1"] in states and ["idle", "node2"] in states

    p = c.run("sbatch", "--reservation=r", "--wrap", "true", user="drovertest")
    assert p.returncode == 1
    assert "Access denied to requested reservation" in p.stderr
    p = c.run("sbatch", "--reservation=nosuch", "--wrap", "true")
    assert p.returncode == 1
    assert "Requested reservation is invalid" in p.stderr

    member = c.sbatch("--reservation=r", "-t", "5", "--wrap", "sleep 30")
    info = c.wait_state(member, "RUNNING")
    assert info["NodeList"] == "node1"
    assert c.job(member)["Reservation"] == "r"
    # A job asking for the reserved node by name waits with Slurm's reason.
    other = c.sbatch("-w", "node1", "-t", "5", "--wrap", "true")
    deadline = time.time() + 20
    reason = ""
    while time.time() < deadline:
        reason = c.ok("squeue", "-h", "-j", str(other), "-o", "%r").strip()
        if reason.startswith("ReqNodeNotAvail"):
            break
        time.sleep(0.2)
    assert reason == "ReqNodeNotAvail, May be reserved for other job"
    p = c.run("scontrol", "delete", "reservation", "r")
    assert p.returncode == 1 and "Requested reservation is in use" in p.stderr
    c.ok("scancel", str(member), str(other))


def test_reservations_survive_a_restart(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    c.ok("scontrol", "create", "reservation", "starttime=now+1day", "duration=60", "nodes=node1",
         "users=root", "flags=daily")
    before = show(c).stdout
    c.down()
    c.up()
    assert show(c).stdout == before
    # The counter survives too: the next unnamed reservation is root_2.
    assert c.ok("scontrol", "create", "reservation", "starttime=now+2days", "duration=10",
                "nodes=node1", "users=root") == "Reservation created: root_2\n"
