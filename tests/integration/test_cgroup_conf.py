"""Confinement as slurm.conf (TaskPlugin=task/cgroup, ProctrackType) and cgroup.conf beside it
configure it: CPUs bound to the job's (ConstrainCores), its memory limit AllowedRAMSpace percent
of what it holds (ConstrainRAMSpace), RAM+swap (ConstrainSwapSpace), no cgroups with
proctrack/pgid, and slurmd's errors for a bad cgroup.conf."""
import os

import pytest

from test_confinement import _cgroups_writable, sacct_steps

pytestmark = pytest.mark.skipif(not _cgroups_writable(),
                                reason="needs root and a writable cgroup hierarchy")

CPUSET = "/sys/fs/cgroup/cpuset/cpuset.cpus"
MEMORY = "/sys/fs/cgroup/memory/memory.limit_in_bytes"
needs_cpuset = pytest.mark.skipif(not os.path.exists(CPUSET), reason="no v1 cpuset controller")
needs_memory = pytest.mark.skipif(not os.path.exists(MEMORY), reason="no v1 memory controller")
MiB = 1 << 20

# What a job prints of its own memory cgroup (v1): limit, soft limit, RAM+swap limit.
SHOW_MEMORY = ("d=/sys/fs/cgroup/memory$(awk -F: '$2==\"memory\"{print $3}' /proc/self/cgroup); "
               "echo $(cat $d/memory.limit_in_bytes $d/memory.soft_limit_in_bytes "
               "$d/memory.memsw.limit_in_bytes 2>/dev/null)")


def cluster(make_cluster, cgroup_conf, settings=("TaskPlugin=task/cgroup",), gres_conf=None,
            node_conf=None):
    c = make_cluster(up=False)
    for name, text in (("cgroup.conf", cgroup_conf), ("gres.conf", gres_conf)):
        if text is not None:
            with open(os.path.join(c.state_dir, name), "w") as f:
                f.write(text)
    args = ["--nodes", "1", "--cpus", "2", "--mem", "1000", "--timeout", "60"]
    for s in settings:
        args += ["--set", s]
    if node_conf:
        args += ["--node-conf", "1", node_conf]
    c.up(*args)
    return c


def job_output(c, *args):
    out = os.path.join(c.work, f"out.{len(os.listdir(c.work))}")
    jid = c.sbatch("-o", out, *args)
    c.wait_state(jid, "COMPLETED", timeout=60)
    return open(out).read().strip()


def cpus_allowed(c, *args):
    return job_output(c, *args, "--wrap", "grep Cpus_allowed_list /proc/self/status").split()[-1]


@needs_cpuset
def test_constrain_cores_binds_tasks_to_the_jobs_cpus(make_cluster):
    c = cluster(make_cluster, "ConstrainCores=yes\n")
    assert cpus_allowed(c, "-c1") in ("0", "1")
    assert cpus_allowed(c, "-c2") == "0-1"
    # A step's tasks: the step's CPUs.
    out = c.ok("srun", "-c1", "grep", "Cpus_allowed_list", "/proc/self/status")
    assert out.split()[-1] in ("0", "1"), out
    # Two one-CPU jobs at once get one CPU each, not the same one.
    a = c.sbatch("-c1", "-o", os.path.join(c.work, "a"), "--wrap",
                 "grep Cpus_allowed_list /proc/self/status; sleep 2")
    b = c.sbatch("-c1", "-o", os.path.join(c.work, "b"), "--wrap",
                 "grep Cpus_allowed_list /proc/self/status; sleep 2")
    c.wait_state(a, "COMPLETED", timeout=60)
    c.wait_state(b, "COMPLETED", timeout=60)
    seen = {open(os.path.join(c.work, n)).read().split()[-1] for n in "ab"}
    assert seen == {"0", "1"}, seen


@needs_cpuset
def test_without_constrain_cores_a_job_may_use_every_cpu(make_cluster):
    c = cluster(make_cluster, "ConstrainRAMSpace=yes\n")
    assert cpus_allowed(c, "-c1") == open(CPUSET).read().strip()


@needs_memory
def test_allowed_ram_space_is_a_percent_of_the_jobs_memory(make_cluster):
    c = cluster(make_cluster, "ConstrainRAMSpace=yes\nAllowedRAMSpace=50\n")
    hard, soft = job_output(c, "--mem=200M", "--wrap", SHOW_MEMORY).split()[:2]
    assert int(hard) == 100 * MiB
    assert int(soft) == 100 * MiB  # never above the hard limit
    # A step that asks for memory: AllowedRAMSpace of the step's, in a cgroup of its own.
    with open(os.path.join(c.work, "show_memory.sh"), "w") as f:
        f.write(SHOW_MEMORY + "\n")
    out = job_output(c, "--mem=400M", "--wrap",
                     f"srun -n1 --mem=100M bash {c.work}/show_memory.sh; "
                     f"srun -n1 bash {c.work}/show_memory.sh")
    assert [int(line.split()[0]) for line in out.splitlines()] == [50 * MiB, 200 * MiB], out
    # Beyond it, the job ends OUT_OF_MEMORY although it holds 200M.
    jid = c.sbatch("--mem=200M", "-o", "/dev/null", "--wrap",
                   "python3 -c \"x = b'x' * (150 << 20)\"")
    c.wait_state(jid, "OUT_OF_MEMORY", timeout=90)
    assert sacct_steps(c, jid)[f"{jid}.batch"][1] == "OUT_OF_MEMORY"


@needs_memory
def test_min_ram_space_and_a_job_without_memory(make_cluster):
    c = cluster(make_cluster, "ConstrainRAMSpace=yes\nAllowedRAMSpace=10\nMinRAMSpace=50\n",
                settings=("TaskPlugin=task/cgroup", "DefMemPerCPU=0"))
    assert int(job_output(c, "--mem=100M", "--wrap", SHOW_MEMORY).split()[0]) == 50 * MiB
    # Without --mem a job holds the node's memory (RealMemory=1000): 10% of it.
    assert int(job_output(c, "--wrap", SHOW_MEMORY).split()[0]) == 100 * MiB


@needs_memory
def test_constrain_swap_space(make_cluster):
    if not os.path.exists("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"):
        pytest.skip("the host does not account for swap")
    c = cluster(make_cluster, "ConstrainRAMSpace=yes\nConstrainSwapSpace=yes\nAllowedSwapSpace=50\n")
    hard, _, memsw = job_output(c, "--mem=200M", "--wrap", SHOW_MEMORY).split()
    assert (int(hard), int(memsw)) == (200 * MiB, 300 * MiB)


@needs_memory
def test_task_cgroup_without_constrain_ram_space_limits_nothing(make_cluster):
    c = cluster(make_cluster, "ConstrainCores=no\n")
    jid = c.sbatch("--mem=100M", "-o", "/dev/null", "--wrap",
                   "python3 -c \"x = b'x' * (200 << 20)\"")
    c.wait_state(jid, "COMPLETED", timeout=90)


@pytest.mark.skipif(not os.path.exists("/sys/fs/cgroup/devices/devices.deny"),
                    reason="no v1 devices controller")
def test_constrain_devices_leaves_only_the_jobs_gpus(make_cluster, tmp_path):
    # Fake GPUs: character devices with no driver behind them. Opening one the job may use
    # fails with ENXIO; one it may not, with EPERM.
    devdir = tmp_path / "dev"
    devdir.mkdir()
    for i in range(2):
        os.mknod(devdir / f"nvidia{i}", 0o666 | 0o020000, os.makedev(195, i))
    c = cluster(make_cluster, "ConstrainDevices=yes\n",
                settings=("TaskPlugin=task/cgroup", "GresTypes=gpu"),
                gres_conf=f"Name=gpu File={devdir}/nvidia[0-1]\n", node_conf="Gres=gpu:2")
    probe = (f"echo $CUDA_VISIBLE_DEVICES; for i in 0 1; do python3 -c \"import os,sys\n"
             f"try: os.open('{devdir}/nvidia'+sys.argv[1], os.O_RDWR)\n"
             f"except OSError as e: print(sys.argv[1], e.strerror)\" $i; done")
    lines = job_output(c, "--gres=gpu:1", "--wrap", probe).splitlines()
    held = int(lines[0])
    assert f"{held} No such device or address" in lines, lines
    assert f"{1 - held} Operation not permitted" in lines, lines
    # Both GPUs held: neither is denied.
    lines = job_output(c, "--gres=gpu:2", "--wrap", probe).splitlines()
    assert "0 No such device or address" in lines and "1 No such device or address" in lines


def test_proctrack_pgid_makes_no_cgroups(make_cluster):
    c = cluster(make_cluster, None, settings=("ProctrackType=proctrack/pgid",))
    out = job_output(c, "--wrap", "cat /proc/self/cgroup")
    assert "drover" not in out, out


def test_bad_cgroup_conf_is_refused_with_slurms_lines(make_cluster):
    c = make_cluster(up=False)
    with open(os.path.join(c.state_dir, "cgroup.conf"), "w") as f:
        f.write("ConstrainCores=yes\nAllowedRAMSpace=lots\n")
    p = c.drover("up", "--state-dir", c.state_dir, "--nodes", "1", "--set",
                 "TaskPlugin=task/cgroup", "--timeout", "20", check=False)
    assert p.returncode != 0
    text = p.stdout + p.stderr
    log = os.path.join(c.state_dir, "ctld.log")
    if os.path.exists(log):
        text += open(log).read()
    assert "AllowedRAMSpace value (lots) is not a valid number" in text, text
    assert "Could not open/read/parse cgroup.conf file" in text, text
