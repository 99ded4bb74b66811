"""PyTorch distributed all-reduce (gloo, CPU) across srun's tasks: the process group comes from
SLURM_PROCID, SLURM_NTASKS and the first host of SLURM_JOB_NODELIST, as training scripts do."""
import os
import re
import socket
import subprocess
import sys

import torch
import torch.distributed as dist


def first_host(nodelist):
    m = re.match(r"([^\[,]+)(?:\[([0-9]+))?", nodelist)
    return m.group(1) + (m.group(2) or "")


rank = int(os.environ["SLURM_PROCID"])
world = int(os.environ["SLURM_NTASKS"])
master = first_host(os.environ["SLURM_JOB_NODELIST"])
try:
    socket.gethostbyname(master)
except OSError:  # agents sharing loopback (no network namespaces): node names do not resolve
    master = "127.0.0.1"
port = 20000 + int(os.environ["SLURM_JOB_ID"]) % 20000
# Every emulated node shares the machine's host name: gloo is told which device reaches the
# first host (the one the kernel routes to it by).
probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
probe.connect((master, port))
local_ip = probe.getsockname()[0]
probe.close()
for line in subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True,
                           text=True).stdout.splitlines():
    fields = line.split()
    if len(fields) > 3 and fields[3].split("/")[0] == local_ip:
        os.environ.setdefault("GLOO_SOCKET_IFNAME", fields[1])
dist.init_process_group("gloo", init_method=f"tcp://{master}:{port}", rank=rank, world_size=world)
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
want = world * (world + 1) / 2
print(f"rank {rank} of {world} on {os.environ['SLURMD_NODENAME']} sum {t.item():g}", flush=True)
dist.destroy_process_group()
sys.exit(0 if t.item() == want else 1)
