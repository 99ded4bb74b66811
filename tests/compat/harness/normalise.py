"""Normalisation of scenario transcripts before Slurm's and drover's are diffed.

Every rule that rewrites a transcript is listed in RULES below, in the order applied, with
the reason it is legitimate. A rule must name exactly what differs between two runs of the
same scenario (time, process ids, ports, the temporary paths, the job ids a cluster happened
to hand out), never mask a whole line or field that could hide a behaviour difference.

Used by tests/compat/harness/run; `python3 normalise.py --help` normalises a file by hand.
"""
import argparse
import re

class Context:
    """What one side's transcript may contain that differs from the other side's."""

    def __init__(self, work_root, cluster_dir, hostname, known_ids=(), extra_paths=(), min_id=0):
        self.work_root = work_root.rstrip("/")      # e.g. /tmp/drover-compat-x/slurm/work
        self.cluster_dir = cluster_dir.rstrip("/")  # oracle DIR or drover state dir
        self.hostname = hostname
        self.known_ids = set(int(i) for i in known_ids)
        self.min_id = min_id  # every id this scenario made is above it (ids only grow)
        self.extra_paths = [(p.rstrip("/"), name) for p, name in extra_paths]


# ---- rules ------------------------------------------------------------------------------
# Each rule: (name, why it is legitimate, function(text, ctx) -> text).


def _paths(text, ctx):
    # Longest first so a path inside another is not cut in half.
    pairs = [(ctx.work_root, "WORK"), (ctx.cluster_dir, "CLUSTERDIR")] + ctx.extra_paths
    for path, name in sorted(pairs, key=lambda p: -len(p[0])):
        if path:
            text = text.replace(path, name)
    return text


_CLUSTER_SELECTION = re.compile(r"^  DROVER_(?:SOCKET|STATE_DIR)=.*\n", re.M)


def _cluster_selection(text, ctx):
    return _CLUSTER_SELECTION.sub("", text)


_TS = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\b")


def _timestamps(text, ctx):
    return _TS.sub("TIME", text)


_RUNTIME = re.compile(r"\bRunTime=\S+")


def _runtime(text, ctx):
    return _RUNTIME.sub("RunTime=ELAPSED", text)


def _hostname(text, ctx):
    if not ctx.hostname:
        return text
    return re.sub(r"(?<![A-Za-z0-9_.])" + re.escape(ctx.hostname) + r"(?![A-Za-z0-9_])", "HOST", text)


_PIDS = [
    (re.compile(r"\bSLURM_TASK_PID=\d+"), "SLURM_TASK_PID=PID"),
    (re.compile(r"\b(AllocNode:Sid=[^\s:]+):\d+"), r"\1:PID"),
    # srun's pid in `scontrol show step` (a batch step shows "(null):0", kept)
    (re.compile(r"\b(SrunHost:Pid=[^\s:]+):[1-9]\d*"), r"\1:PID"),
]


def _pids(text, ctx):
    for pattern, repl in _PIDS:
        text = pattern.sub(repl, text)
    return text


_WORKING_CLUSTER = re.compile(r"\b(SLURM_WORKING_CLUSTER=[^:\s]*:[^:\s]*:)\d+(?=:)")
# the port srun listens on for its tasks (one per srun, picked by the kernel)
_SRUN_PORTS = re.compile(r"\b((?:SLURM_SRUN_COMM_PORT|SLURM_STEP_LAUNCHER_PORT)=)\d+")


def _ports(text, ctx):
    text = _WORKING_CLUSTER.sub(r"\1PORT", text)
    return _SRUN_PORTS.sub(r"\1PORT", text)


# Contexts in which a number is a job id even if the cluster no longer lists it (purged, or
# never made, like sbatch --test-only's "Job N to start at").
_ID_CONTEXTS = [
    re.compile(r"Submitted batch job (\d+)"),
    re.compile(r"\b(?:JobId|ArrayJobId|HetJobId|SLURM_JOB_ID|SLURM_JOBID|SLURM_ARRAY_JOB_ID|StepId)=(\d+)"),
    re.compile(r"\b[Jj]ob(?: id)? (\d+)\b"),
    re.compile(r"\bJOB (\d+) ON\b"),
    re.compile(r"^\$ .*\bsbatch\b.*\n\| (\d+)(?:;\S+)?$", re.M),
]
# Keys whose numeric value is a job id. A number right after any other "Key=" (NumCPUs=,
# SLURM_MEM_PER_NODE=, RealMemory=, ...) is never taken for a job id.
_ID_KEYS = {k.lower() for k in ("JobId", "ArrayJobId", "HetJobId", "SLURM_JOB_ID", "SLURM_JOBID",
                                 "SLURM_ARRAY_JOB_ID", "SLURM_HET_JOB_ID", "SLURM_DEPENDENCY",
                                 "HetJobIdSet", "StepId")}
# Spans whose numbers are never job ids: user/group ids in parentheses ("root(0)"), the
# whole of SLURM_WORKING_CLUSTER (port, protocol version, plugin id), big priorities, the
# transcript's own "[exit N]" lines (srun exits 128+signal: 137, 143, ... are ids too).
_NOT_ID_SPANS = re.compile(r"\(\d+\)|\bSLURM_WORKING_CLUSTER=\S+|\bPriority=\d+|^\[exit \d+\]$",
                           re.M)
_DIGITS = re.compile(r"(?<![0-9])\d+(?![0-9])")
_KEY_BEFORE = re.compile(r"([A-Za-z_][A-Za-z0-9_:/]*)=$")


def _job_ids(text, ctx):
    known = set(ctx.known_ids)
    # Ids named by context count only near the ids the cluster handed out (--test-only's
    # "Job N" is the next id; a made-up id such as 99999999 in "for job 99999999" is not).
    lo = ctx.min_id + 1
    hi = max(known) + 100 if known else ctx.min_id + 1000
    for pattern in _ID_CONTEXTS:
        known.update(i for i in (int(m.group(1)) for m in pattern.finditer(text)) if lo <= i <= hi)
    protected = [m.span() for m in _NOT_ID_SPANS.finditer(text)]

    def is_id(m):
        run, start, end = m.group(0), m.start(), m.end()
        if int(run) not in known:
            return False
        # a unit or word right after the digits (200M, 2G): a size, not an id
        if end < len(text) and text[end].isalpha():
            return False
        key = _KEY_BEFORE.search(text, max(0, start - 40), start)
        if key and key.group(1).lower() not in _ID_KEYS:
            return False
        return not any(a <= start < b for a, b in protected)

    # Names in numeric order of the ids that appear: J1 is the lowest. (By order of first
    # appearance, a mere difference in listing order -- scontrol lists array tasks newest
    # first -- would rename every id after it.)
    appearing = sorted({int(m.group(0)) for m in _DIGITS.finditer(text) if is_id(m)})
    names = {n: f"J{i + 1}" for i, n in enumerate(appearing)}

    def repl(m):
        if not is_id(m):
            return m.group(0)
        run = m.group(0)
        name = names[int(run)]
        if run.startswith("0") and len(run) > 1:
            return f"{name}(zero-padded to {len(run)})"
        return name
    return _DIGITS.sub(repl, text)


# salloc's "Relinquishing" (it gives the allocation back itself) races the controller's
# job-complete message; when the latter arrives first salloc also prints "has been revoked."
_SALLOC_REVOKED_RACE = re.compile(
    r"^(! salloc: Relinquishing job allocation (\d+)\n)! salloc: Job allocation \2 has been revoked\.\n",
    re.M)


def _salloc_race(text, ctx):
    return _SALLOC_REVOKED_RACE.sub(r"\1", text)


# srun killed by SIGTERM (or SIGHUP/SIGQUIT) aborts its step; the first node's stepd then
# writes "*** STEP N.S ON node CANCELLED AT ... ***" to srun's I/O channel, which srun may
# already have shut. Within the output of a command that aborted a step, that line goes.
_STEP_ABORTED = "! srun: Job step aborted: Waiting up to"
_STEP_CANCEL_NOTICE = re.compile(
    r"^! slurmstepd-\S+: error: \*\*\* STEP \S+ ON \S+ CANCELLED AT .* \*\*\*\n", re.M)


def _step_abort_race(text, ctx):
    blocks = re.split(r"(?m)^(?=\$ )", text)
    return "".join(_STEP_CANCEL_NOTICE.sub("", b) if _STEP_ABORTED in b else b for b in blocks)


RULES = [
    ("paths",
     "The work directory, the cluster directory (oracle DIR, drover state dir), the directory "
     "of the client commands first on PATH (CLIENTBIN) and the helpers' scratch directory are "
     "different temporary directories on the two sides; the files under them are the same.",
     _paths),
    ("cluster-selection",
     "The harness exports DROVER_SOCKET and DROVER_STATE_DIR to reach the drover cluster (as it "
     "exports SLURM_CONF for Slurm), and jobs inherit them; their lines in job environment "
     "dumps are dropped.",
     _cluster_selection),
    ("timestamps",
     "Wall-clock times (SubmitTime, StartTime, EndTime, 'CANCELLED AT', --test-only start times) "
     "depend on when the scenario ran. Relative times are checked with time_gap instead.",
     _timestamps),
    ("runtime",
     "RunTime= is elapsed wall time and depends on scheduling latency (Slurm schedules about once "
     "a second, drover at once).",
     _runtime),
    ("hostname",
     "The machine's host name (SLURM_SUBMIT_HOST, AllocNode, %N in file names) is the same on "
     "both sides but differs between machines; named so transcripts read the same everywhere.",
     _hostname),
    ("pids",
     "Process ids: SLURM_TASK_PID, the session id in AllocNode:Sid and srun's pid in "
     "SrunHost:Pid (scontrol show step).",
     _pids),
    ("ports",
     "SLURM_WORKING_CLUSTER carries the controller's TCP port, picked free at random per cluster; "
     "SLURM_SRUN_COMM_PORT and SLURM_STEP_LAUNCHER_PORT the port each srun listens on.",
     _ports),
    ("salloc-revoked-race",
     "After its own 'salloc: Relinquishing job allocation N' Slurm's salloc prints 'salloc: Job "
     "allocation N has been revoked.' only when the controller's job-complete message beats its "
     "release (seen in about half the runs); that line is dropped there, and only there.",
     _salloc_race),
    ("step-abort-race",
     "When srun aborts its step after SIGTERM ('srun: Job step aborted: Waiting up to ...'), "
     "Slurm's 'slurmstepd-node1: error: *** STEP N.S ON node1 CANCELLED AT ... ***' reaches srun "
     "only when the stepd writes it before srun has closed the step's I/O (seen in some runs, "
     "missing in others); in the output of such a command that line is dropped.",
     _step_abort_race),
    ("job-ids",
     "Job ids are handed out by each cluster; every id the cluster created during the scenario "
     "(or that the transcript names as a job id) is renamed J1, J2, ... in numeric order of the "
     "ids that appear (J1 the lowest), wherever it appears (slurm-J1.out, J1_3, afterok:J1, JobId=J1, ...). Not "
     "renamed: a number after a Key= that is not a job-id key, a number followed by a letter "
     "(200M), uids in parentheses, SLURM_WORKING_CLUSTER and Priority values, the exit status in "
     "'[exit N]'. A step id keeps its "
     "step part: J1.0, J1.batch, StepId=J1.0.",
     _job_ids),
]


def normalise(text, ctx):
    for _name, _why, fn in RULES:
        text = fn(text, ctx)
    return text


def describe():
    return "\n".join(f"{name}: {why}" for name, why, _ in RULES)


def main():
    ap = argparse.ArgumentParser(description=__doc__ + "\nRules:\n" + describe(),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--work-root", default="")
    ap.add_argument("--cluster-dir", default="")
    ap.add_argument("--hostname", default="")
    ap.add_argument("--ids", default="", help="comma-separated job ids known to be jobs")
    a = ap.parse_args()
    ids = [int(x) for x in a.ids.split(",") if x]
    with open(a.file) as f:
        print(normalise(f.read(), Context(a.work_root, a.cluster_dir, a.hostname, ids)), end="")


if __name__ == "__main__":
    main()
