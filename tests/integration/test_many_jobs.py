"""200 jobs of mixed sizes on three agents: all finish, right outputs and exit codes, and at no
moment do the jobs on a node use more CPUs or memory than it has."""
import collections
import os
import random
import re
import threading
import time


def expand_nodes(expr):
    """node2 / node[1-3] / node[1,3] -> names (enough of Slurm's hostlist for node<N>)."""
    m = re.fullmatch(r"(\w+?)\[([\d,-]+)\]", expr)
    if not m:
        return expr.split(",")
    out = []
    for part in m.group(2).split(","):
        lo, _, hi = part.partition("-")
        out += [f"{m.group(1)}{i}" for i in range(int(lo), int(hi or lo) + 1)]
    return out


def expand_counts(expr):
    """Slurm's 2(x3),1 -> [2, 2, 2, 1]."""
    out = []
    for part in expr.split(","):
        m = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", part)
        out += [int(m.group(1))] * int(m.group(2) or 1)
    return out


def test_200_mixed_jobs_finish_without_overallocation(make_cluster):
    c = make_cluster(nodes=3, cpus=2, mem=1000)
    script = c.write_script("work.sh", """#!/bin/sh
start=$(date +%s.%N)
sleep 0.$((RANDOM_MS))
echo "job=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST cpus=$SLURM_JOB_CPUS_PER_NODE tasks=$SLURM_NTASKS arg=$1"
echo "span $start $(date +%s.%N)"
exit $2
""".replace("$((RANDOM_MS))", "${3:-1}"))
    rng = random.Random(7)
    expected = {}
    for i in range(200):
        ntasks = rng.choice([1, 1, 1, 2])
        cpt = rng.choice([1, 1, 2]) if ntasks == 1 else 1
        mem = rng.choice([100, 200, 400])
        code = rng.choice([0, 0, 0, 1, 7])
        jid = c.sbatch("-n", str(ntasks), "-c", str(cpt), "--mem", str(mem), "-J", f"mix{i}",
                       script, f"a{i}", str(code), str(rng.randint(1, 3)))
        expected[jid] = (ntasks, cpt, mem, code, f"a{i}")

    # Watch the controller's view of every node while the jobs run.
    violations = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            out = c.run("scontrol", "-o", "show", "node").stdout
            for line in out.splitlines():
                f = dict(x.split("=", 1) for x in line.split() if "=" in x)
                if int(f["CPUAlloc"]) > int(f["CPUTot"]) or int(f["AllocMem"]) > int(f["RealMemory"]):
                    violations.append(line)
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        c.wait_all_done(expected, timeout=300)
    finally:
        stop.set()
        watcher.join()
    assert not violations, violations[:3]

    spans = collections.defaultdict(list)
    for jid, (ntasks, cpt, mem, code, arg) in expected.items():
        info = c.job(jid)
        want_state = "COMPLETED" if code == 0 else "FAILED"
        assert info["JobState"] == want_state, (jid, info)
        assert info["ExitCode"] == f"{code}:0"
        lines = open(os.path.join(c.work, f"slurm-{jid}.out")).read().splitlines()
        fields = dict(x.split("=") for x in lines[0].split())
        assert fields["job"] == str(jid) and fields["arg"] == arg
        nodes, cpus = expand_nodes(fields["nodes"]), expand_counts(fields["cpus"])
        assert len(nodes) == len(cpus) and sum(cpus) == ntasks * cpt, fields
        _, t0, t1 = lines[1].split()
        # The script's run lies inside the allocation, on every node of it (--mem is per node).
        for node, n in zip(nodes, cpus):
            spans[node].append((float(t0), float(t1), n, mem))

    # Independent check from the jobs' own clocks: running scripts never exceed a node.
    for node, items in spans.items():
        events = []
        for t0, t1, cpus, mem in items:
            events.append((t0, 1, cpus, mem))
            events.append((t1, -1, cpus, mem))
        events.sort(key=lambda e: (e[0], e[1]))
        used_cpus = used_mem = 0
        for _, kind, cpus, mem in events:
            used_cpus += kind * cpus
            used_mem += kind * mem
            assert used_cpus <= 2 and used_mem <= 1000, node
    assert len(spans) == 3  # every agent ran work
