"""Users cannot read each other's data (issue 17): the state directory and the agents' spool are
the cluster user's alone, jobs run with the submitter's umask (SLURM_UMASK), and control
characters in names never reach a terminal raw."""
import os
import stat
import subprocess

from conftest import SLURM_BIN, ensure_user, requires_root

SECRET = "hunter2-do-not-share"


def readable_by(user, paths):
    """The paths among `paths` that `user` can open for reading."""
    script = ("import sys\nfor p in sys.argv[1:]:\n"
              "    try:\n        open(p, 'rb').read(1); print(p)\n    except OSError:\n        pass\n")
    p = subprocess.run(["runuser", "-u", user, "--", "python3", "-c", script, *paths],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return set(p.stdout.split())


def listable_by(user, path):
    return subprocess.run(["runuser", "-u", user, "--", "ls", path],
                          capture_output=True, timeout=30).returncode == 0


def sbatch_with_umask(c, mask, *args):
    p = subprocess.run(["sh", "-c", f'umask {mask}; exec "$0" "$@"', os.path.join(SLURM_BIN, "sbatch"),
                        "--parsable", *args], capture_output=True, text=True, env=c.env, cwd=c.work)
    assert p.returncode == 0, p.stderr
    return int(p.stdout)


def test_jobs_run_with_the_submitters_umask(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    body = ("umask; printenv SLURM_UMASK || echo unset; srun sh -c 'umask; printenv SLURM_UMASK'; "
            "srun -o step-%j.out true; touch made-@")
    j77 = sbatch_with_umask(c, "077", "-o", "o77-%j.out", "-e", "e77-%j.err",
                            "--wrap", body.replace("@", "77"))
    j02 = sbatch_with_umask(c, "002", "-o", "o02-%j.out", "--wrap", body.replace("@", "02"))
    c.wait_state(j77, "COMPLETED")
    c.wait_state(j02, "COMPLETED")

    def mode(name):
        return stat.S_IMODE(os.stat(os.path.join(c.work, name)).st_mode)

    # As Slurm 22.05: the batch shell has the umask but not SLURM_UMASK; srun's tasks have both.
    assert open(os.path.join(c.work, f"o77-{j77}.out")).read().split() == ["0077", "unset", "0077", "0077"]
    assert open(os.path.join(c.work, f"o02-{j02}.out")).read().split() == ["0002", "unset", "0002", "0002"]
    assert mode(f"o77-{j77}.out") == 0o600
    assert mode(f"e77-{j77}.err") == 0o600
    assert mode(f"step-{j77}.out") == 0o600
    assert mode("made-77") == 0o600
    assert mode(f"o02-{j02}.out") == 0o664
    assert mode(f"step-{j02}.out") == 0o664
    assert mode("made-02") == 0o664


