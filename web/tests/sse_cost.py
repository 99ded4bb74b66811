#!/usr/bin/env python3
"""The controller's cost of open dashboards: CPU seconds and memory of droverctld over the
same workload (jobs submitted, started and ended at a steady rate) with no event stream open,
then with N streams open (GET /ui/api/events, each read by a thread as a browser would).
Prints one line per phase; docs/benchmarks.md has the figures. Run as root from the repo:
`python3 web/tests/sse_cost.py [--streams 50] [--seconds 30] [--rate 5]`."""
import argparse
import http.client
import os
import re
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "integration"))
from conftest import Cluster  # noqa: E402


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"^VmRSS:\s+(\d+)", f.read(), re.M).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", type=int, default=50)
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--rate", type=float, default=5.0, help="jobs submitted per second")
    args = ap.parse_args()
    c = Cluster(tempfile.mkdtemp(prefix="drover-sse-"), tempfile.mkdtemp(prefix="drover-sse-work-"))
    os.chmod(c.work, 0o1777)
    c.up("--nodes", "4", "--cpus", "4", "--timeout", "60")
    try:
        with open(os.path.join(c.state_dir, "env.sh")) as f:
            api = re.search(r"^export DROVER_API=http://([^:]+):(\d+)$", f.read(), re.M)
        host, port = api.group(1), int(api.group(2))
        tok = re.fullmatch(r"SLURM_JWT=(\S+)\n", c.ok("scontrol", "token", "lifespan=3600")).group(1)
        pid = c.pid("ctld.pid")
        stop = threading.Event()
        received = [0] * args.streams

        def workload():
            n = 0
            t0 = time.time()
            while not stop.is_set():
                c.run("sbatch", "-o", "/dev/null", "--wrap", "sleep 1")
                n += 1
                delay = t0 + n / args.rate - time.time()
                if delay > 0:
                    time.sleep(delay)

        def reader(i):
            conn = http.client.HTTPConnection(host, port, timeout=60)
            conn.request("GET", "/ui/api/events", headers={"X-SLURM-USER-TOKEN": tok})
            r = conn.getresponse()
            assert r.status == 200, r.status
            while not stop.is_set():
                line = r.fp.readline()
                if not line:
                    break
                if line.startswith(b"event:"):
                    received[i] += 1
            conn.close()

        def phase(name, seconds):
            cpu0, t0 = proc_cpu(pid), time.time()
            time.sleep(seconds)
            cpu, wall = proc_cpu(pid) - cpu0, time.time() - t0
            print(f"{name}: controller CPU {cpu:.2f} s in {wall:.0f} s ({100 * cpu / wall:.1f}% of a core), "
                  f"VmRSS {proc_rss_kb(pid) / 1024:.1f} MiB", flush=True)
            return cpu / wall

        w = threading.Thread(target=workload, daemon=True)
        w.start()
        time.sleep(3)
        base = phase("0 streams", args.seconds)
        readers = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(args.streams)]
        for t in readers:
            t.start()
        time.sleep(3)
        with_streams = phase(f"{args.streams} streams", args.seconds)
        print(f"events received per stream: min {min(received)}, max {max(received)}; "
              f"added CPU {100 * (with_streams - base):.1f}% of a core")
        stop.set()
    finally:
        c.down()


if __name__ == "__main__":
    main()
