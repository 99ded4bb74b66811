"""The task environment slurm.conf shapes: TaskProlog/TaskEpilog around every srun task (with
srun's own --task-prolog after the configured one), and PropagateResourceLimitsExcept keeping
a limit of the submitting shell from the tasks."""
import os
import subprocess
import time


def shell(c, command):
    """Runs `command` in bash with the cluster's commands first on PATH."""
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=c.env,
                          cwd=c.work, timeout=60)


def test_task_prolog_epilog_and_propagation_from_slurm_conf(make_cluster):
    c = make_cluster(up=False)
    conf_prolog = os.path.join(c.work, "conf_prolog.sh")
    conf_epilog = os.path.join(c.work, "conf_epilog.sh")
    c.up("--nodes", "2", "--cpus", "2", "--mem", "1000", "--timeout", "60",
         "--set", f"TaskProlog={conf_prolog}", "--set", f"TaskEpilog={conf_epilog}",
         "--set", "PropagateResourceLimitsExcept=NOFILE")
    c.write_script("conf_prolog.sh", "#!/bin/bash\necho 'export FROM_CONF=yes'\n"
                   "echo \"print conf prolog $SLURM_PROCID\"\n")
    c.write_script("conf_epilog.sh", "#!/bin/bash\necho \"conf epilog $SLURM_PROCID\" >> "
                   f"{c.work}/epilogs.txt\n")
    user = c.write_script("user_prolog.sh", "#!/bin/bash\necho \"print user prolog $FROM_CONF\"\n"
                          "echo 'unset FROM_CONF'\necho 'export FROM_USER=1'\n")
    p = shell(c, f"srun -N2 -n2 -l --task-prolog={user} "
                 "bash -c 'echo task FROM_CONF=${FROM_CONF-unset} FROM_USER=$FROM_USER'")
    assert p.returncode == 0, p.stderr
    lines = sorted(p.stdout.splitlines())
    # Each task: the configured prolog's line, then the user's (which saw its export), then
    # the task with the user prolog's changes on top of the configured one's.
    for t in ("0", "1"):
        mine = [l.split(": ", 1)[1] for l in p.stdout.splitlines() if l.startswith(t + ": ")]
        assert mine == [f"conf prolog {t}", "user prolog yes", "task FROM_CONF=unset FROM_USER=1"], lines
    deadline = time.time() + 10
    path = os.path.join(c.work, "epilogs.txt")
    while time.time() < deadline and not (os.path.exists(path) and
                                          len(open(path).read().splitlines()) == 2):
        time.sleep(0.1)
    assert sorted(open(path).read().splitlines()) == ["conf epilog 0", "conf epilog 1"]

    # CORE goes as the shell has it; NOFILE is excepted (the node's own), unless --propagate
    # names it.
    p = shell(c, "ulimit -S -c 0; ulimit -S -n 300; srun bash -c 'ulimit -c; ulimit -n'")
    assert p.returncode == 0, p.stderr
    core, nofile = p.stdout.splitlines()[-2:]
    assert core == "0" and nofile != "300", p.stdout
    p = shell(c, "ulimit -S -n 300; srun --propagate=NOFILE bash -c 'ulimit -n'")
    assert p.stdout.splitlines()[-1] == "300", p.stdout + p.stderr
