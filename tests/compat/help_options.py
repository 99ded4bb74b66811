#!/usr/bin/env python3
"""The long options a command's --help lists in its option column (not those its descriptions
mention), one per line, sorted: the set drover's --help must list too.

    help_options.py < HELP_TEXT            # print the set
    help_options.py --capture DIR           # write DIR/<command>.options from real Slurm

The same rule as drover's listed_long_options() (src/cli/help.cpp): a line indented less than
16 columns whose first word starts with '-'; its leading option words ("-p,", "--part=X",
"or", "<arg>") name the options. --capture runs the Debian slurm-wlm 22.05 commands with a
minimal slurm.conf (no daemon is contacted for --help) and reads sacct's set, which sacct only
prints after reaching slurmdbd, from its man page (slurm-wlm-doc)."""
import os
import re
import subprocess
import sys
import tempfile

COMMANDS = ["sbatch", "srun", "salloc", "squeue", "sinfo", "scancel", "scontrol", "sprio",
            "sshare", "sacctmgr", "sreport"]


def option_word(w):
    if w == "or" or w[:1] in ("<", "["):
        return True
    return len(w) >= 2 and w[0] == "-" and (w[1].isalnum() or w[1] == "-")


def listed_long_options(text):
    names = set()
    for line in text.expandtabs(8).split("\n"):
        body = line.lstrip(" ")
        if not body.startswith("-") or len(line) - len(body) >= 16:
            continue
        for w in body.split():
            if not option_word(w):
                break
            names.update(re.findall(r"--([A-Za-z0-9_][A-Za-z0-9_-]*)", w))
    return sorted(names)


def sacct_from_man():
    page = subprocess.run(["man", "sacct"], capture_output=True, text=True,
                          env={**os.environ, "MANWIDTH": "200"}).stdout
    names = set()
    for line in page.split("\n"):
        # Option entries are indented 7 columns in the OPTIONS section.
        if not re.match(r"^ {7}-", line):
            continue
        for w in line.split()[:4]:
            if not option_word(w) and not w.startswith("--"):
                break
            names.update(re.findall(r"--([A-Za-z0-9_][A-Za-z0-9_-]*)", w))
    return sorted(names)


def capture(outdir):
    os.makedirs(outdir, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        conf = os.path.join(d, "slurm.conf")
        with open(conf, "w") as f:
            f.write("ClusterName=x\nSlurmctldHost=localhost\nNodeName=localhost CPUs=1\n"
                    "PartitionName=p Nodes=localhost\n"
                    "AccountingStorageType=accounting_storage/slurmdbd\n")
        env = {**os.environ, "SLURM_CONF": conf}
        sets = {}
        for cmd in COMMANDS:
            p = subprocess.run(["/usr/bin/" + cmd, "--help"], capture_output=True, text=True,
                               env=env, timeout=10)
            sets[cmd] = listed_long_options(p.stdout)
        sets["sacct"] = sacct_from_man()
    for cmd, names in sets.items():
        with open(os.path.join(outdir, cmd + ".options"), "w") as f:
            f.write("".join(n + "\n" for n in names))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--capture":
        capture(sys.argv[2])
    else:
        print("\n".join(listed_long_options(sys.stdin.read())))
