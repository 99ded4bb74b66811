"""The commands' everyday surface without a controller: --help, --usage, -V, getopt_long's
option forms (unique prefixes, --opt=value, ambiguity) and its error lines, as Slurm 22.05's
commands answer them (the forms were checked on real Slurm; see tests/compat for the diffs
that need a cluster)."""
import os
import subprocess

import pytest

from conftest import SLURM_BIN

# A socket nobody listens on: a command that got past its options would say it cannot reach
# the controller, which the tests below must never see.
NO_CONTROLLER = {**os.environ, "DROVER_SOCKET": "/nonexistent/ctld.sock"}


def run(*args):
    return subprocess.run([os.path.join(SLURM_BIN, args[0]), *args[1:]], capture_output=True,
                          text=True, timeout=30, env=NO_CONTROLLER)


@pytest.mark.parametrize("cmd", ["squeue", "sinfo", "scancel", "scontrol", "sacct", "sbatch",
                                 "srun", "salloc", "sacctmgr", "sreport", "sprio", "sshare"])
def test_version_is_slurms_release_line(cmd):
    for flag in ("-V", "--version"):
        p = run(cmd, flag)
        assert p.returncode == 0, (cmd, flag, p.stderr)
        assert p.stdout.split()[:2] == ["slurm", "22.05.8"], (cmd, flag, p.stdout)


@pytest.mark.parametrize("cmd,usage_start", [
    ("squeue", "Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid]\n"),
    ("sinfo", "Usage: sinfo [-abdelNRrsTv] [-i seconds] [-t states] [-p partition] [-n nodes]\n"),
    ("scancel", "Usage: scancel [-A account] [--batch] [--full] [--interactive] [-n job_name]\n"),
])
def test_help_and_usage(cmd, usage_start):
    p = run(cmd, "--usage")
    assert p.returncode == 0 and p.stdout.startswith(usage_start), p.stdout + p.stderr
    p = run(cmd, "--help")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"Usage: {cmd} [OPTIONS]")
    assert "Help options:\n" in p.stdout and "  --usage " in p.stdout
    # Every long option the help names is one the command takes.
    for word in p.stdout.split():
        if word.startswith("--") and len(word) > 2:
            name = word.split("=")[0].rstrip(",")
            q = run(cmd, name + "=x" if "=" in word else name, "--usage")
            assert "unrecognized option" not in q.stderr, (cmd, name, q.stderr)


def test_scontrol_help_forms():
    text = run("scontrol", "--help").stdout
    assert text.startswith("scontrol [<OPTION>] [<COMMAND>]\n")
    for args in (["-h"], ["help"], ["--usage"]):
        p = run("scontrol", *args)
        assert p.returncode == 0 and p.stdout == text, args
    assert run("scontrol", "version").stdout == "slurm 22.05.8\n"


@pytest.mark.parametrize("cmd", ["squeue", "sinfo", "scancel", "scontrol"])
def test_unknown_options_get_getopts_lines(cmd):
    p = run(cmd, "--bogus")
    assert p.returncode == 1
    assert p.stderr == (f"{cmd}: unrecognized option '--bogus'\n"
                        f"Try \"{cmd} --help\" for more information\n")
    p = run(cmd, "-Z")
    assert p.returncode == 1
    assert p.stderr == (f"{cmd}: invalid option -- 'Z'\n"
                        f"Try \"{cmd} --help\" for more information\n")


def test_unique_prefixes_and_ambiguity_as_getopt_long():
    # --sta is both --start and --states; --stat only --states (which wants a value).
    p = run("squeue", "--sta=RUNNING")
    assert p.returncode == 1
    assert p.stderr.startswith("squeue: option '--sta=RUNNING' is ambiguous; possibilities:")
    assert "'--start'" in p.stderr and "'--states'" in p.stderr
    p = run("squeue", "--stat")
    assert p.stderr.startswith("squeue: option '--states' requires an argument\n")
    # A unique prefix is the option: squeue --state=RUNNING gets to the controller.
    for args in (["squeue", "--state=RUNNING"], ["squeue", "--part", "debug", "--noh"],
                 ["sinfo", "--summ", "--nod=node1"], ["scancel", "--sig=USR1", "--use=root"]):
        p = run(*args)
        assert "unrecognized" not in p.stderr and "ambiguous" not in p.stderr, (args, p.stderr)
        assert "Unable to contact slurm controller" in p.stderr or p.returncode != 0, args


def test_squeue_operand_that_is_not_a_list():
    p = run("squeue", "foo")
    assert p.returncode == 1
    assert p.stderr == "squeue: error: Unrecognized option: foo\n"
    assert p.stdout.startswith("Usage: squeue ")


def test_scancel_checks_states_itself():
    p = run("scancel", "--state=bogus", "5")
    assert p.returncode == 1
    assert p.stderr == ("Invalid job state specified: bogus\n"
                        "Valid job states are PENDING, RUNNING, and SUSPENDED\n")
