"""squeue reads its common listings as typed rows (no json tree per job) and asks the
controller to leave out other users' (partitions', names', ...) jobs: the output is byte for
byte what the json-tree reader (DROVER_SQUEUE_TREE=1) prints, for every listing option, whether
the rows come in the job list's compact form (the default) or as objects (DROVER_SQUEUE_OBJECTS=1,
what a controller that predates the compact form sends)."""
import os
import subprocess
import time

from conftest import SLURM_BIN


def listings(c, args):
    """(typed rows, typed rows read from objects, json tree) results of one squeue command."""
    def with_env(**extra):
        return subprocess.run([os.path.join(SLURM_BIN, "squeue"), *args], capture_output=True,
                              text=True, env=dict(c.env, **extra), cwd=c.work, timeout=60)
    return (c.run("squeue", *args), with_env(DROVER_SQUEUE_OBJECTS="1"),
            with_env(DROVER_SQUEUE_TREE="1"))


def same_listing(c, args):
    # Running jobs' TIME can tick between the calls: a few tries.
    for _ in range(3):
        results = [(r.returncode, r.stdout, r.stderr) for r in listings(c, args)]
        if results[0] == results[1] == results[2]:
            return results[0][1]
        time.sleep(0.3)
    typed, objects, tree = results
    assert typed == tree, args
    assert objects == tree, args


def test_typed_rows_print_what_the_tree_prints(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    running = c.sbatch("-J", "runner", "-t", "10", "--wrap", "sleep 60")
    c.sbatch("-J", "wide", "-N", "2", "-n", "4", "-c", "1", "-t", "5", "--wrap", "sleep 60")
    held = c.sbatch("-H", "-J", "held-one-long", "-A", "acct1", "--wrap", "true")
    arr = c.sbatch("-J", "arr", "--array=0-9%2", "-t", "3", "--wrap", "sleep 60")
    c.sbatch("-H", "-J", "theirs", "--wrap", "true", user="drovertest")
    c.sbatch("-H", "-J", "big", "-n", "3", "-c", "2", "--priority", "5", "--wrap", "true")
    c.wait_state(running, "RUNNING")
    time.sleep(1)  # a pass for the array

    default = same_listing(c, [])
    assert "held-one-long" not in default and "held-one" in default
    assert "(JobHeldUser)" in default and f"{arr}_[" in default
    for args in (["-l"], ["--start"], ["-r"], ["-h"], ["-t", "all"], ["-t", "PD,R"],
                 ["-u", "drovertest"], ["-u", "root,drovertest"], ["--me"],
                 ["-p", "debug"], ["-n", "arr,big"], ["-A", "acct1"], ["-j", str(arr)],
                 ["-j", f"{arr}_4"], ["-j", f"{held},{running}"], ["-w", "node1"],
                 ["-S", "-p,i"], ["-S", "u,-D,j"], ["-S", "M"],
                 ["-o", "%i|%A|%F|%j|%u|%U|%t|%T|%r|%R|%C|%D|%P|%p|%Q|%q|%a|%l|%M|%S|%Y|%N"],
                 ["-o", "%.5i %20j %-10R %#u"],
                 ["-O", "JobID,Name:30,State,ReasonList,NumCPUs:.5,TimeLimit,UserName"],
                 ["-r", "-o", "%i %K %r"]):
        same_listing(c, args)

    # -u at the controller: other users' jobs are not sent at all.
    only = c.ok("squeue", "-h", "-u", "drovertest", "-o", "%j %u")
    assert only.split("\n")[0] == "theirs drovertest"
    assert c.ok("squeue", "-h", "-u", "nobody") == ""
