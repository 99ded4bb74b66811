"""Exactly once through crashes: parallel sbatch loops while the controller is killed with
SIGKILL at random moments (and restarted with `drover up`), and agents killed and restarted.
Afterwards, with the cluster calm:

- every acknowledged job exists, ended COMPLETED, and ran exactly once: a job's supervisor
  outlives its agent, so killing the agent neither cuts a run short nor loses its exit;
- no two runs of a job ever overlapped;
- every sbatch that failed either left no job or left one that running sbatch again with its
  request id (DROVER_REQUEST_ID) finds, and no job exists that no submission accounts for;
- no daemon aborted: logs free of crash reports, and a daemon's pid changes only when the test
  killed it.

DROVER_CHAOS_SEED fixes the random choices, DROVER_CHAOS_SUBMISSIONS the number of submissions
(default 5000) and DROVER_CHAOS_SECONDS the longest the submitting phase may take (default 75).
The figures are printed, also when pytest captures output.
"""
import os
import random
import signal
import subprocess
import threading
import time

from conftest import SLURM_BIN

SBATCH = os.path.join(SLURM_BIN, "sbatch")
SEED = int(os.environ.get("DROVER_CHAOS_SEED", "17"))
SUBMISSIONS = int(os.environ.get("DROVER_CHAOS_SUBMISSIONS", "5000"))
SECONDS = float(os.environ.get("DROVER_CHAOS_SECONDS", "75"))
AGENT_KILLS = os.environ.get("DROVER_CHAOS_AGENT_KILLS", "1") != "0"
SUBMITTERS = 4
CRASH_MARKERS = ("double free", "terminate called", "Aborted", "AddressSanitizer",
                 "UndefinedBehaviorSanitizer", "runtime error:", "Segmentation fault",
                 "free(): ", "malloc(): ", "corrupted")


def pids(c):
    out = {}
    for name in os.listdir(c.state_dir):
        if name == "ctld.pid" or (name.startswith("agent-") and name.endswith(".pid")):
            try:
                out[name] = c.pid(name)
            except (OSError, ValueError):
                pass
    return out


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def all_jobs(c):
    """Every job the controller knows (MinJobAge keeps finished ones): id -> fields."""
    p = c.run("scontrol", "-o", "show", "job", timeout=120)
    assert p.returncode == 0, p.stderr
    jobs = {}
    for line in p.stdout.splitlines():
        fields = dict(item.split("=", 1) for item in line.split() if "=" in item)
        if "JobId" in fields:
            jobs[int(fields["JobId"])] = fields
    return jobs


def read_runs(path):
    """A job's runs from its record file: [{pid, node, start, end or None}] in start order."""
    runs = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 4:
                continue
            what, pid, node, t = parts
            run = runs.setdefault(pid, {"pid": pid, "node": node, "start": None, "end": None})
            run["start" if what == "start" else "end"] = float(t)
    return sorted(runs.values(), key=lambda r: r["start"] or 0)


def test_chaos_exactly_once(make_cluster, capsys):
    rng = random.Random(SEED)
    c = make_cluster(nodes=2, cpus=4, mem=4000, settings=["MinJobAge=3600"])
    runs_dir = os.path.join(c.work, "runs")
    os.makedirs(runs_dir)
    os.chmod(runs_dir, 0o1777)
    script = c.write_script(
        "record.sh",
        "#!/bin/sh\n"
        f"f={runs_dir}/$SLURM_JOB_ID\n"
        'echo "start $$ $SLURMD_NODENAME $(date +%s.%N)" >> $f\n'
        'echo "end $$ $SLURMD_NODENAME $(date +%s.%N)" >> $f\n')

    lock = threading.Lock()
    acked = {}      # request id -> job id
    failed = {}     # request id -> stderr
    attempts = [0]
    stop = threading.Event()
    deadline = time.time() + SECONDS

    def submitter(n):
        # One loop gives up fast, so failed submissions (and what they leave) are checked too.
        env = dict(c.env, DROVER_SUBMIT_RETRY_S="0.3" if n == 0 else "20")
        k = 0
        while not stop.is_set() and time.time() < deadline:
            with lock:
                if attempts[0] >= SUBMISSIONS:
                    return
                attempts[0] += 1
            rid = f"chaos-{SEED}-{n}-{k}"
            k += 1
            p = subprocess.run([SBATCH, "--parsable", "-o", "/dev/null", script],
                               capture_output=True, text=True, cwd=c.work, timeout=90,
                               env=dict(env, DROVER_REQUEST_ID=rid))
            with lock:
                if p.returncode == 0:
                    acked[rid] = int(p.stdout.strip())
                else:
                    failed[rid] = p.stderr

    threads = [threading.Thread(target=submitter, args=(n,)) for n in range(SUBMITTERS)]
    for t in threads:
        t.start()

    # The killer: the controller most often, sometimes an agent; `drover up` restarts what is
    # missing. Every pid that changes must be one killed here.
    ctld_kills, agent_kills = 0, []  # agent kills: (node, time)
    known = pids(c)
    unexpected = []
    nodes = ["node1", "node2"]
    while any(t.is_alive() for t in threads):
        time.sleep(rng.uniform(0.3, 2.0))
        if not any(t.is_alive() for t in threads):
            break
        if AGENT_KILLS and rng.random() < 0.25:
            node = rng.choice(nodes)
            name = f"agent-{node}.pid"
            victim = known[name]
            agent_kills.append((node, time.time()))
        else:
            name = "ctld.pid"
            victim = known[name]
            ctld_kills += 1
        os.kill(victim, signal.SIGKILL)
        while alive(victim):
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.5))
        c.up()
        now = pids(c)
        for other, pid in now.items():
            if other != name and known.get(other) != pid:
                unexpected.append(f"{other}: {known.get(other)} -> {pid}")
        known = now
    stop.set()
    for t in threads:
        t.join()
    submit_end = time.time()

    # Calm: everything acknowledged ends.
    c.wait_all_done(list(acked.values()), timeout=180)
    before_retries = all_jobs(c)

    # Each failed submission again, with its request id: the job it left, or a new one.
    found, new = {}, {}
    for rid in failed:
        p = subprocess.run([SBATCH, "--parsable", "-o", "/dev/null", script],
                           capture_output=True, text=True, cwd=c.work, timeout=90,
                           env=dict(c.env, DROVER_REQUEST_ID=rid))
        assert p.returncode == 0, p.stderr
        jid = int(p.stdout.strip())
        (found if jid in before_retries else new)[rid] = jid
    c.wait_all_done(list(found.values()) + list(new.values()), timeout=120)
    jobs = all_jobs(c)

    # Figures, for the docs.
    duplicates = []
    after_kill = 0
    def report(line):  # shown even when pytest captures output (ctest -V has them)
        with capsys.disabled():
            print(line, flush=True)

    report(f"\nchaos seed {SEED}: {attempts[0]} submissions in {submit_end - deadline + SECONDS:.0f} s "
          f"by {SUBMITTERS} loops, {len(acked)} acknowledged, {len(failed)} failed "
          f"({len(found)} had left a job, found by their request id), {ctld_kills} controller "
          f"kills, {len(agent_kills)} agent kills")

    unsent = [rid for rid, err in failed.items() if "(connect failure)" in err]
    report(f"chaos: of the failed, {len(unsent)} never reached the controller (connect failure), "
          f"{len(failed) - len(unsent)} had no reply")
    assert not unexpected, f"daemons restarted that the test did not kill: {unexpected}"
    # "connect failure" promises that nothing was submitted.
    wrong = [rid for rid in unsent if rid in found]
    assert not wrong, f"'connect failure' but a job was made: {[(r, found[r]) for r in wrong]}"
    ids = list(acked.values())
    assert len(set(ids)) == len(ids), "two acknowledged submissions got the same job"
    # Nothing a submission does not account for.
    accounted = set(ids) | set(found.values()) | set(new.values())
    orphans = sorted(set(jobs) - accounted)
    assert not orphans, f"jobs no submission accounts for: {orphans[:20]}"

    def killed_between(node, start, later):
        # The kill's time is taken just before the signal: a run may start in between.
        return any(n == node and start - 0.5 <= t <= later for n, t in agent_kills)

    problems = []
    for jid in sorted(accounted):
        info = jobs.get(jid)
        if info is None:
            problems.append(f"job {jid} lost")
            continue
        if info["JobState"] != "COMPLETED":
            problems.append(f"job {jid} {info['JobState']}")
        path = os.path.join(runs_dir, str(jid))
        runs = read_runs(path) if os.path.exists(path) else []
        complete = [r for r in runs if r["start"] is not None and r["end"] is not None]
        if not complete:
            problems.append(f"job {jid} never ran to completion: {runs}")
        # One run: an agent killed while it runs leaves it to its supervisor.
        for a, b in zip(runs, runs[1:]):
            if a["end"] is not None and a["end"] > b["start"]:
                problems.append(f"job {jid}: runs overlap: {a} {b}")
            if killed_between(a["node"], a["start"], b["start"]):
                after_kill += 1
            duplicates.append(jid)
            problems.append(f"job {jid} ran {len(runs)} times: {runs}")
            break
    report(f"chaos: {len(accounted)} jobs checked, {len(duplicates)} ran more than once "
          f"({after_kill} of them after a kill of their agent)")

    for name in sorted(os.listdir(c.state_dir)):
        if name.endswith(".log"):
            with open(os.path.join(c.state_dir, name), errors="replace") as f:
                for line in f:
                    if any(m in line for m in CRASH_MARKERS):
                        problems.append(f"{name}: {line.rstrip()}")
    assert not problems, "\n".join(problems[:40])
    # Thousands, unless the machine cannot (the figures above say how many).
    assert len(acked) >= min(SUBMISSIONS, 2000) // 2
