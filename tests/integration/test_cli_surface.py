"""The commands' everyday surface without a controller: --help, --usage, -V, getopt_long's
option forms (unique prefixes, --opt=value, ambiguity) and its error lines, as Slurm 22.05's
commands answer them (the forms were checked on real Slurm; see tests/compat for the diffs
that need a cluster)."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD, SLURM_BIN

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "compat"))
from help_options import listed_long_options  # noqa: E402  (the rule the goldens were made by)

GOLDEN_HELP = os.path.join(os.path.dirname(__file__), "..", "compat", "golden", "help")
MAN_DIR = os.path.abspath(os.path.join(BUILD, "man"))
COMMANDS = ["sbatch", "srun", "salloc", "squeue", "sinfo", "scancel", "scontrol", "sprio",
            "sshare", "sacct", "sacctmgr", "sreport"]
# Options drover's --help lists that Slurm 22.05's takes but its --help leaves out.
LISTED_BEYOND_SLURM = {"squeue": {"me"}, "scontrol": {"json"}}

# A socket nobody listens on, tried once: a command that got past its options says at once that
# it cannot reach the controller.
NO_CONTROLLER = {**os.environ, "DROVER_SOCKET": "/nonexistent/ctld.sock",
                 "DROVER_SUBMIT_RETRY_S": "0"}


def run(*args):
    return subprocess.run([os.path.join(SLURM_BIN, args[0]), *args[1:]], capture_output=True,
                          text=True, timeout=30, env=NO_CONTROLLER, stdin=subprocess.DEVNULL)


def golden_options(cmd):
    with open(os.path.join(GOLDEN_HELP, cmd + ".options")) as f:
        return set(f.read().split())


@pytest.mark.parametrize("cmd", COMMANDS)
def test_help_lists_slurms_options(cmd):
    """--help lists the same long options as real Slurm 22.05's --help (captured by
    tests/compat/help_options.py), so a missing one fails here."""
    p = run(cmd, "--help")
    assert p.returncode == 0, p.stderr
    listed = set(listed_long_options(p.stdout))
    assert listed - LISTED_BEYOND_SLURM.get(cmd, set()) == golden_options(cmd)


@pytest.mark.parametrize("cmd", COMMANDS)
def test_every_listed_option_is_parsed(cmd):
    """Each option --help lists is one the parser knows (it may say "not supported by drover",
    never "unrecognized option"), with the argument kind the help gives it."""
    for name in listed_long_options(run(cmd, "--help").stdout):
        p = run(cmd, "--" + name, "--usage")
        if "requires an argument" in p.stderr:
            p = run(cmd, f"--{name}=1", "--usage")
        for bad in ("unrecognized option", "is ambiguous", "doesn't allow an argument"):
            assert bad not in p.stderr, (cmd, name, p.stderr)


@pytest.mark.parametrize("cmd", COMMANDS)
def test_man_page_renders_and_lists_every_option(cmd):
    page = os.path.join(MAN_DIR, "man1", cmd + ".1")
    assert os.path.exists(page), page
    if shutil.which("groff"):
        g = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", page], capture_output=True,
                           text=True, timeout=30)
        assert g.returncode == 0 and g.stderr == "", g.stderr
    if not shutil.which("man"):
        pytest.skip("no man command")
    m = subprocess.run(["man", "-l", page], capture_output=True, text=True, timeout=30,
                       env={**os.environ, "MANWIDTH": "200", "MAN_KEEP_FORMATTING": "",
                            "PAGER": "cat"})
    assert m.returncode == 0, m.stderr
    text = m.stdout
    assert "DROVER NOTES" in text and "SYNOPSIS" in text
    for name in listed_long_options(run(cmd, "--help").stdout):
        assert "--" + name in text, (cmd, name)


def test_help_and_usage_of_the_run_commands():
    for cmd, first in (("sbatch", "Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0)"),
                       ("srun", "Usage: srun [OPTIONS(0)... [executable(0) [args(0)...]]]"),
                       ("salloc", "Usage: salloc [OPTIONS(0)...] [ : [OPTIONS(N)]] [command(0)")):
        for flag in ("--help", "-h", "--hel"):
            p = run(cmd, flag)
            assert p.returncode == 0 and p.stdout.startswith(first), (cmd, flag, p.stdout)
            assert "\nHelp options:\n" in p.stdout and "\nOther options:\n" in p.stdout
        p = run(cmd, "--usage")
        assert p.returncode == 0 and p.stdout.startswith(f"Usage: {cmd} [-N "), p.stdout
    for cmd in ("sacctmgr", "sreport", "sacct"):
        p = run(cmd, "--help")
        assert p.returncode == 0 and p.stdout.startswith(cmd + " [<OPTION>]"), p.stdout
    assert run("sacctmgr", "help").stdout == run("sacctmgr", "--usage").stdout


def test_srun_refuses_what_it_would_not_do_and_takes_prefixes():
    for args, option in ((["-Z", "-w", "node1"], "-Z/--no-allocate"),
                         (["--no-alloc"], "-Z/--no-allocate"),
                         (["--bcast=/tmp/x"], "--bcast"),
                         (["-r", "1"], "-r/--relative"),
                         (["--licenses=x"], "-L/--licenses")):
        p = run("srun", *args, "hostname")
        assert p.returncode == 1, (args, p.stderr)
        assert p.stderr == f"srun: error: {option} is not supported by drover\n", p.stderr
    p = run("salloc", "-K")
    assert p.stderr == "salloc: error: -K/--kill-command is not supported by drover\n"
    # As glibc's getopt_long: --ntasks-per names five options (Slurm lists them in this order).
    p = run("srun", "--ntasks-per=2", "hostname")
    assert p.returncode == 255
    assert p.stderr == ("srun: option '--ntasks-per=2' is ambiguous; possibilities: "
                        "'--ntasks-per-core' '--ntasks-per-gpu' '--ntasks-per-node' "
                        "'--ntasks-per-socket' '--ntasks-per-tres'\n"
                        "Try \"srun --help\" for more information\n")
    # Unique prefixes are the options: these get as far as the (absent) controller.
    for cmd in ("srun", "salloc"):
        p = run(cmd, "--nodel=node1", "--part", "debug", "--ntasks-per-n=1", "--threads-per=1",
                "hostname")
        assert "Unable to contact slurm controller" in p.stderr, (cmd, p.stderr)
    p = run("srun", "-M", "other", "hostname")
    assert p.returncode == 1
    assert p.stderr.startswith("srun: error: Problem talking to database\n"
                               "srun: error: 'other' can't be reached now")


@pytest.mark.parametrize("cmd", ["squeue", "sinfo", "scancel", "scontrol", "sacct", "sbatch",
                                 "srun", "salloc", "sacctmgr", "sreport", "sprio", "sshare"])
def test_version_is_slurms_release_line(cmd):
    for flag in ("-V", "--version"):
        p = run(cmd, flag)
        assert p.returncode == 0, (cmd, flag, p.stderr)
        assert p.stdout.split()[:2] == ["slurm", "22.05.8"], (cmd, flag, p.stdout)


def test_sacct_option_table_is_slurms():
    """sacct needs slurmdbd, so tests/compat cannot diff it: "--=x" (an empty name, a prefix of
    every long option) lists its getopt table, compared with the line real Slurm 22.05 printed."""
    with open(os.path.join(GOLDEN_HELP, "sacct.table")) as f:
        assert run("sacct", "--=x").stderr.splitlines()[0] == f.read().rstrip("\n")


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


def test_man_finds_the_pages_after_sourcing_env_sh(make_cluster):
    if not shutil.which("man"):
        pytest.skip("no man command")
    c = make_cluster(nodes=1, cpus=1, mem=300)
    p = subprocess.run(["bash", "-c", f"source {c.state_dir}/env.sh && man -w sbatch && "
                                      "man -w ls"],
                       capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")})
    assert p.returncode == 0, p.stderr
    ours, system = p.stdout.splitlines()
    assert ours == os.path.join(MAN_DIR, "man1", "sbatch.1")
    assert not system.startswith(MAN_DIR)  # the system's pages are still found
