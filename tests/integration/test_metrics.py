"""The controller's GET /metrics (DroverHttpPort): the URL from env.sh, valid OpenMetrics text,
and values that follow the jobs and nodes."""
import math
import os
import pwd
import re
import time
import urllib.error
import urllib.request

from conftest import ensure_user, requires_root

OPENMETRICS_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(rf"({NAME})(\{{(?:{LABEL}(?:,{LABEL})*)?\}})? (\S+)")
TYPES = {"gauge", "counter", "unknown", "info", "stateset", "histogram", "gaugehistogram", "summary"}


def parse_openmetrics(text):
    """A strict checker for the parts of OpenMetrics 1.0 drover emits. Returns
    {family: {"type", "help", "unit", "samples": {(name, labels): value}}}."""
    assert text.endswith("# EOF\n"), "must end with # EOF"
    lines = text[: -len("# EOF\n")].split("\n")
    assert lines[-1] == "", "last line before # EOF must end with a newline"
    families = {}
    current = None
    done = set()
    for line in lines[:-1]:
        assert line, "no blank lines in OpenMetrics"
        if line.startswith("#"):
            m = re.fullmatch(rf"# (HELP|TYPE|UNIT) ({NAME}) (.*)", line)
            assert m, f"bad metadata line: {line!r}"
            kind, name, rest = m.groups()
            if current is None or current != name:
                assert name not in done and name not in families, f"family {name} split or repeated"
                if current:
                    done.add(current)
                current = name
                families[name] = {"type": "unknown", "help": None, "unit": None, "samples": {}}
            fam = families[name]
            assert not fam["samples"], f"metadata after samples in {name}"
            if kind == "TYPE":
                assert rest in TYPES, line
                fam["type"] = rest
            elif kind == "HELP":
                fam["help"] = rest
            else:
                assert name.endswith("_" + rest), f"UNIT {rest} but name {name}"
                fam["unit"] = rest
            continue
        m = SAMPLE.fullmatch(line)
        assert m, f"bad sample line: {line!r}"
        name, labels, value = m.groups()
        assert current, f"sample before any family: {line}"
        fam = families[current]
        allowed = {current} if fam["type"] in ("gauge", "unknown") else {current + "_total", current + "_created"}
        assert name in allowed, f"sample {name} in family {current} ({fam['type']})"
        v = float(value)
        assert not math.isnan(v)
        if fam["type"] == "counter":
            assert v >= 0
        key = (name, labels or "")
        assert key not in fam["samples"], f"duplicate sample {line}"
        fam["samples"][key] = v
    return families


def scrape(url, accept=None):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.headers.get("Content-Type"), r.read().decode()


def value(fams, family, labels="", sample=None):
    return fams[family]["samples"][(sample or family, labels)]


def metrics_url(c):
    with open(os.path.join(c.state_dir, "env.sh")) as f:
        m = re.search(r"^export DROVER_METRICS_URL=(\S+)$", f.read(), re.M)
    assert m, "env.sh has no DROVER_METRICS_URL"
    return m.group(1)


def test_metrics_follow_jobs_and_parse_as_openmetrics(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    url = metrics_url(c)
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/metrics", url), url
    user = pwd.getpwuid(os.geteuid()).pw_name

    ctype, text = scrape(url)
    assert ctype == OPENMETRICS_TYPE
    fams = parse_openmetrics(text)
    assert value(fams, "slurm_nodes") == 2
    assert value(fams, "slurm_nodes_idle") == 2
    assert value(fams, "slurm_jobs_running") == 0
    assert value(fams, "drover_cpus") == 4
    assert value(fams, "drover_cpus_idle") == 4
    assert value(fams, "slurm_partition_cpus", '{partition="debug"}') == 4
    assert fams["drover_jobs_submitted"]["type"] == "counter"
    submitted0 = value(fams, "drover_jobs_submitted", sample="drover_jobs_submitted_total")
    cycles0 = value(fams, "drover_sched_cycles", sample="drover_sched_cycles_total")
    assert fams["drover_sched_cycle_last_seconds"]["unit"] == "seconds"

    script = c.write_script("sleeper.sh", "#!/bin/sh\nsleep 60\n")
    ids = [c.sbatch("-c", "2", script) for _ in range(3)]
    for jid in ids[:2]:
        c.wait_state(jid, "RUNNING")

    fams = parse_openmetrics(scrape(url)[1])
    part = '{partition="debug"}'
    assert value(fams, "slurm_jobs_running") == 2
    assert value(fams, "slurm_jobs_pending") == 1
    assert value(fams, "slurm_partition_jobs_pending", part) == 1
    assert value(fams, "slurm_partition_jobs_running", part) == 2
    assert value(fams, "slurm_partition_nodes_cpus_alloc", part) == 4
    assert value(fams, "slurm_nodes_alloc") == 2
    assert value(fams, "drover_cpus_alloc") == 4
    assert value(fams, "slurm_jobs_cpus_alloc") == 4
    assert value(fams, "slurm_user_jobs_running", f'{{user="{user}"}}') == 2
    assert value(fams, "slurm_user_jobs_pending", f'{{user="{user}"}}') == 1
    assert value(fams, "drover_jobs_submitted", sample="drover_jobs_submitted_total") == submitted0 + 3
    assert value(fams, "drover_jobs_started", sample="drover_jobs_started_total") >= 2
    assert value(fams, "drover_sched_cycles", sample="drover_sched_cycles_total") > cycles0
    assert value(fams, "drover_sched_cycle_max_seconds") >= value(fams, "drover_sched_cycle_last_seconds")

    c.ok("scancel", *map(str, ids))
    c.wait_all_done(ids)
    deadline = time.time() + 30
    while True:
        fams = parse_openmetrics(scrape(url)[1])
        if value(fams, "drover_cpus_alloc") == 0 or time.time() > deadline:
            break
        time.sleep(0.2)
    assert value(fams, "slurm_jobs_running") == 0
    assert value(fams, "slurm_jobs_pending") == 0
    assert value(fams, "slurm_jobs_cancelled") == 3
    assert value(fams, "drover_cpus_alloc") == 0
    assert value(fams, "slurm_nodes_idle") == 2


def test_metrics_formats_paths_and_errors(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    url = metrics_url(c)
    base = url[: -len("/metrics")]

    ctype, text = scrape(url, accept="text/plain")
    assert ctype == "text/plain; version=0.0.4; charset=utf-8"
    assert "# EOF" not in text and "# UNIT" not in text
    assert "# TYPE drover_jobs_submitted_total counter\n" in text
    assert re.search(r"^slurm_nodes 1$", text, re.M)

    # What Prometheus sends prefers OpenMetrics.
    ctype, _ = scrape(url, accept="application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
    assert ctype == OPENMETRICS_TYPE

    # Slurm 25.11's per-group paths.
    for path, family, absent in [("nodes", "slurm_nodes", "slurm_jobs"),
                                 ("jobs", "slurm_jobs", "slurm_nodes"),
                                 ("partitions", "slurm_partition_jobs_pending", "slurm_jobs"),
                                 ("jobs-users-accts", "slurm_user_jobs", "slurm_nodes"),
                                 ("scheduler", "drover_sched_cycles", "slurm_jobs")]:
        fams = parse_openmetrics(scrape(f"{base}/metrics/{path}")[1])
        assert family in fams, path
        assert absent not in fams, path

    try:
        scrape(f"{base}/nope")
        raise AssertionError("expected 404")
    except urllib.error.HTTPError as e:
        assert e.code == 404
    try:
        urllib.request.urlopen(urllib.request.Request(url, data=b"x", method="POST"), timeout=10)
        raise AssertionError("expected 405")
    except urllib.error.HTTPError as e:
        assert e.code == 405
        assert e.headers.get("Allow") == "GET"


def scrape_as(url, token=None):
    """(status, headers, body) of GET url, with `Authorization: Bearer token` when given."""
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def user_labels(text):
    return set(re.findall(r'^slurm_user_jobs\{user="([^"]*)"\}', text, re.M))


def jwt(c, user=None):
    out = c.ok("scontrol", "token", user=user)
    return out.strip().split("=", 1)[1]


@requires_root
def test_private_data_hides_other_users_series_unless_token_allows(make_cluster, tmp_path):
    """PrivateData=jobs,users: an anonymous scrape names no user; a user's JWT shows that user's
    series only; root's JWT and the operator's token file show everyone's; a bad token is 401."""
    ensure_user("drovertest")
    token_file = tmp_path / "metrics.token"
    token_file.write_text("s3cret-operator-token\n")
    os.chmod(token_file, 0o600)
    c = make_cluster(nodes=1, cpus=2, mem=1000,
                     settings=["PrivateData=jobs,usage,users,accounts",
                               f"DroverMetricsTokenFile={token_file}"])
    url = metrics_url(c)
    me = pwd.getpwuid(os.geteuid()).pw_name
    c.sbatch("--hold", "--wrap", "true")
    c.sbatch("--hold", "--wrap", "true", user="drovertest")

    status, _, text = scrape_as(url)
    assert status == 200
    parse_openmetrics(text)
    assert user_labels(text) == set()
    assert 'user="' not in text and 'account="' not in text
    assert re.search(r"^slurm_jobs_pending 2$", text, re.M)  # counts without names stay

    status, _, text = scrape_as(url, jwt(c, user="drovertest"))
    assert status == 200
    assert user_labels(text) == {"drovertest"}

    for token in (jwt(c), "s3cret-operator-token"):
        status, _, text = scrape_as(url, token)
        assert status == 200
        assert user_labels(text) == {me, "drovertest"}

    status, headers, body = scrape_as(url, "not-a-token")
    assert status == 401
    assert headers.get("WWW-Authenticate") == "Bearer"
    assert "user=" not in body


def test_listener_beyond_loopback_needs_a_token(make_cluster):
    c = make_cluster(nodes=1, cpus=1, mem=500, settings=["DroverHttpAddress=0.0.0.0"])
    url = metrics_url(c)
    status, headers, _ = scrape_as(url)
    assert status == 401
    assert headers.get("WWW-Authenticate") == "Bearer"
    status, _, text = scrape_as(url, jwt(c))
    assert status == 200
    assert value(parse_openmetrics(text), "slurm_nodes") == 1
