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
import socket
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


def thread_cpu(pid):
    """{thread id: CPU seconds} of each of the process's threads."""
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{t}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out[t] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


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
        conns = []

        def workload():
            n = 0
            t0 = time.time()
            while not stop.is_set():
                c.run("sbatch", "-o", "/dev/null", "--wrap", "sleep 1")
                n += 1
                delay = t0 + n / args.rate - time.time()
                if delay > 0:
                    time.sleep(delay)

        def reader(i, r):
            while True:
                try:
                    line = r.fp.readline()
                except (OSError, ValueError):
                    break
                if not line:
                    break
                if line.startswith(b"event:"):
                    received[i] += 1

        def open_streams():
            # One after another, as dashboards open: the HTTP server admits 16 connections at
            # a time until each becomes a stream.
            for i in range(args.streams):
                conn = http.client.HTTPConnection(host, port, timeout=120)
                conn.request("GET", "/ui/api/events", headers={"X-SLURM-USER-TOKEN": tok})
                sock = conn.sock  # the response keeps it; the connection lets go of it
                r = conn.getresponse()
                assert r.status == 200, r.status
                conns.append(sock)
                threading.Thread(target=reader, args=(i, r), daemon=True).start()

        def close_streams():
            for sock in conns:
                sock.shutdown(socket.SHUT_RDWR)
            conns.clear()

        def phase(name, seconds):
            cpu0, threads0, t0 = proc_cpu(pid), thread_cpu(pid), time.time()
            time.sleep(seconds)
            cpu, wall = proc_cpu(pid) - cpu0, time.time() - t0
            threads = thread_cpu(pid)
            per = " ".join(f"{threads[t] - threads0.get(t, 0):.2f}" for t in sorted(threads, key=int))
            print(f"{name}: controller CPU {cpu:.2f} s in {wall:.0f} s ({100 * cpu / wall:.2f}% of a core; "
                  f"by thread {per}), VmRSS {proc_rss_kb(pid) / 1024:.1f} MiB", flush=True)
            return cpu / wall

        time.sleep(2)
        idle0 = phase("idle, 0 streams", args.seconds)
        open_streams()
        time.sleep(2)
        idle50 = phase(f"idle, {args.streams} streams", args.seconds)
        w = threading.Thread(target=workload, daemon=True)
        w.start()
        time.sleep(3)
        # Twice each, alternating: the machine's other load moves the figures more than the
        # streams do.
        busy = {0: [], args.streams: []}
        got = []
        for _ in range(2):
            busy[args.streams].append(phase(f"{args.rate:g} jobs/s, {args.streams} streams", args.seconds))
            got = list(received)
            close_streams()
            time.sleep(2)
            busy[0].append(phase(f"{args.rate:g} jobs/s, 0 streams", args.seconds))
            received[:] = [0] * args.streams
            open_streams()
            time.sleep(2)
        stop.set()
        b0 = sum(busy[0]) / len(busy[0])
        b50 = sum(busy[args.streams]) / len(busy[args.streams])
        print(f"events per stream in a busy phase: min {min(got)}, max {max(got)}; added CPU: idle "
              f"{100 * (idle50 - idle0):.2f}%, busy {100 * (b50 - b0):.2f}% of a core "
              f"(means of two phases each)")
    finally:
        c.down()


if __name__ == "__main__":
    main()
