"""The dashboard in a real browser (headless Debian Chromium driven by puppeteer-core,
browser.mjs) against a real local cluster: log in with a token, a submitted job appears live
and is seen to start and end, a job is held, released and cancelled, another user does not see
its script or environment, an operator drains and resumes a node; a job's output tail and
accounting record, the history of ended jobs, the fair-share tree, usage (chart and CSV),
reservations, a too-long history period refused, and the Kubernetes view (hidden here, where no
operator runs; then shown with a canned operator state). With DROVER_UI_SCREENSHOTS=DIR
it also saves a screenshot of each view there (scripts/ui-screenshots)."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import it

HERE = os.path.dirname(os.path.abspath(__file__))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    it.requires_root,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium (scripts/install-deps installs it)"),
    pytest.mark.skipif(not os.path.isdir(os.path.join(HERE, "..", "node_modules", "puppeteer-core")),
                       reason="web/node_modules missing (the build runs npm ci)"),
]


def token(c, user):
    p = c.run("scontrol", "token", user=user)
    assert p.returncode == 0, p.stderr
    m = re.fullmatch(r"SLURM_JWT=(\S+)\n", p.stdout)
    assert m, p.stdout
    return m.group(1)


def api_base(c):
    with open(os.path.join(c.state_dir, "env.sh")) as f:
        m = re.search(r"^export DROVER_API=(\S+)$", f.read(), re.M)
    assert m
    return m.group(1)


def test_dashboard_in_chromium(make_cluster):
    alice = it.ensure_user("drwebalice")
    it.ensure_user("drwebbob")
    c = make_cluster(nodes=3, cpus=2, settings=["PriorityType=priority/multifactor",
                                                 "PriorityDecayHalfLife=1:00:00"])
    # A maintenance window tomorrow, for the reservations view (nothing runs into it).
    c.ok("scontrol", "create", "reservation", "ReservationName=webmaint", "StartTime=now+1day",
         "Duration=120", "Nodes=node3", "Users=root", "Flags=MAINT")
    base = api_base(c)
    # The built page is what the controller serves.
    env = dict(os.environ,
               DROVER_UI=base + "/ui/",
               CHROMIUM=CHROMIUM,
               WORKDIR=c.work,
               TOKEN_ALICE=token(c, "drwebalice"),
               TOKEN_BOB=token(c, "drwebbob"),
               TOKEN_ROOT=token(c, None),
               SCREENSHOTS=os.environ.get("DROVER_UI_SCREENSHOTS", ""))
    p = subprocess.run(["node", os.path.join(HERE, "browser.mjs")], env=env, capture_output=True,
                       text=True, timeout=240)
    print(p.stdout)
    print(p.stderr)
    assert p.returncode == 0, f"browser test failed:\n{p.stdout}\n{p.stderr}"
    # What the operator did in the browser is what the controller holds.
    assert "resumed node1" in p.stdout
    assert "pods of one NodeSet on a click" in p.stdout
    m = re.search(r"^jobs live=(\d+) cancel=(\d+)$", p.stdout, re.M)
    assert m, p.stdout
    live, cancelled = c.job(m.group(1)), c.job(m.group(2))
    assert live["JobState"] == "COMPLETED" and live["UserId"].startswith("drwebalice("), live
    assert cancelled["JobState"] == "CANCELLED", cancelled
    assert alice.pw_uid > 0
