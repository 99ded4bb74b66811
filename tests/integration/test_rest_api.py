"""The slurmrestd-shaped REST API (data_parser v0.0.44) on the controller's HTTP port: JWT
authentication with tokens from `scontrol token`, the shape of every endpoint, errors in the
envelope, and the same permissions as the CLI."""
import base64
import json
import os
import re
import time
import urllib.error
import urllib.request

import pytest

from conftest import ensure_user, requires_root

V = "v0.0.44"
SLURM_GET = ["ping", "diag", "jobs", "nodes", "partitions", "reservations", "shares"]
SLURMDB_GET = ["jobs", "accounts", "users", "associations", "qos"]
ME = os.environ.get("USER") or "root"


def api_base(c):
    with open(os.path.join(c.state_dir, "env.sh")) as f:
        text = f.read()
    m = re.search(r"^export DROVER_API=(\S+)$", text, re.M)
    assert m, "env.sh has no DROVER_API"
    metrics = re.search(r"^export DROVER_METRICS_URL=(\S+)$", text, re.M)
    assert metrics and metrics.group(1) == m.group(1) + "/metrics"
    return m.group(1)


def token(c, *args, user=None):
    p = c.run("scontrol", "token", *args, user=user)
    assert p.returncode == 0, p.stderr
    m = re.fullmatch(r"SLURM_JWT=(\S+)\n", p.stdout)
    assert m, p.stdout
    return m.group(1)


def claims(tok):
    payload = tok.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def call(base, method, path, tok=None, user=ME, body=None, headers=None):
    """Returns (status, parsed JSON body)."""
    h = {"Content-Type": "application/json"}
    if tok is not None:
        h["X-SLURM-USER-TOKEN"] = tok
    if user is not None:
        h["X-SLURM-USER-NAME"] = user
    h.update(headers or {})
    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    req = urllib.request.Request(base + path, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def assert_envelope(body, plugin):
    assert set(body) >= {"meta", "errors", "warnings"}, body
    meta = body["meta"]
    assert meta["plugin"]["type"] == plugin
    assert meta["plugin"]["data_parser"] == "data_parser/" + V
    assert set(meta["plugin"]) == {"type", "name", "data_parser", "accounting_storage"}
    assert set(meta["client"]) == {"source", "user", "group"}
    assert set(meta["slurm"]) == {"version", "release", "cluster"}
    assert set(meta["slurm"]["version"]) == {"major", "minor", "micro"}
    assert meta["slurm"]["cluster"] == "drover"
    assert isinstance(body["errors"], list) and isinstance(body["warnings"], list)


def is_no_val(v):
    return isinstance(v, dict) and set(v) == {"set", "infinite", "number"}


def submit_body(name="rest", script="#!/bin/sh\nsleep 30\n", **job):
    desc = {"name": name, "tasks": 1, "current_working_directory": "/tmp",
            "environment": ["PATH=/bin:/usr/bin"], "standard_output": "/dev/null"}
    desc.update(job)
    return {"script": script, "job": desc}


@pytest.fixture
def api(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    return c, api_base(c)


def test_scontrol_token_prints_slurm_jwt(api):
    c, base = api
    tok = token(c)
    cl = claims(tok)
    assert cl["sun"] == ME
    assert cl["exp"] - cl["iat"] == 1800  # Slurm's default lifespan
    assert abs(cl["iat"] - time.time()) < 60
    assert claims(token(c, "lifespan=60"))["exp"] - cl["iat"] in range(60, 120)
    p = c.run("scontrol", "token", "bogus=1")
    assert p.returncode == 1 and p.stderr == "Invalid option: `bogus=1`\n"


def test_requests_without_a_valid_token_get_401_and_change_nothing(api):
    c, base = api
    good = token(c)
    expiring = token(c, "lifespan=1")
    forged = good[: good.rindex(".") + 1] + base64.urlsafe_b64encode(b"x" * 32).decode().rstrip("=")
    other = json.dumps({"exp": int(time.time()) + 600, "iat": 0, "sun": "root"}).encode()
    spliced = ".".join([good.split(".")[0], base64.urlsafe_b64encode(other).decode().rstrip("="),
                        good.split(".")[2]])
    time.sleep(2.1)  # `expiring` is past its exp now
    cases = {"missing": None, "garbage": "abc", "forged": forged, "spliced": spliced,
             "expired": expiring}
    paths = [f"/slurm/{V}/{p}" for p in SLURM_GET] + [f"/slurmdb/{V}/{p}" for p in SLURMDB_GET]
    for why, tok in cases.items():
        for path in paths:
            status, body = call(base, "GET", path, tok)
            assert status == 401, (why, path, body)
            assert_envelope(body, "openapi/slurmdbd" if "/slurmdb/" in path else "openapi/slurmctld")
            assert body["errors"][0]["error_number"] == 9008
            assert body["errors"][0]["error"] == "Authentication failure"
        status, body = call(base, "POST", f"/slurm/{V}/job/submit", tok, body=submit_body())
        assert status == 401, (why, body)
    # A valid token for someone else than the named user.
    status, body = call(base, "GET", f"/slurm/{V}/jobs", good, user="nobody")
    assert status == 401
    assert c.ok("squeue", "-h") == ""  # nothing was submitted
    assert call(base, "GET", f"/slurm/{V}/jobs", good)[0] == 200


def test_every_endpoint_has_the_v0044_shape(api):
    c, base = api
    tok = token(c)
    jid = c.sbatch("--wrap", "sleep 30", "-J", "shape")
    c.wait_state(jid, "RUNNING")
    expect = {
        "ping": "pings", "diag": "statistics", "jobs": "jobs", "nodes": "nodes",
        "partitions": "partitions", "reservations": "reservations", "shares": "shares",
    }
    bodies = {}
    for path, key in expect.items():
        status, body = call(base, "GET", f"/slurm/{V}/{path}", tok)
        assert status == 200, (path, body)
        assert_envelope(body, "openapi/slurmctld")
        assert key in body, (path, list(body))
        bodies[path] = body
    assert set(bodies["jobs"]) >= {"jobs", "last_backfill", "last_update"}
    job = next(j for j in bodies["jobs"]["jobs"] if j["job_id"] == jid)
    for k in ["account", "name", "user_id", "user_name", "partition", "qos", "job_state",
              "state_reason", "nodes", "node_count", "cpus", "tasks", "priority", "submit_time",
              "start_time", "end_time", "time_limit", "array_job_id", "array_task_id",
              "exit_code", "standard_output", "stdout_expanded", "batch_host", "job_resources",
              "current_working_directory", "flags", "tres_req_str", "tres_alloc_str"]:
        assert k in job, k
    assert job["job_state"] == ["RUNNING"] and job["name"] == "shape" and job["user_name"] == ME
    for k in ["node_count", "cpus", "tasks", "priority", "submit_time", "start_time", "time_limit"]:
        assert is_no_val(job[k]), (k, job[k])
    assert set(job["exit_code"]) == {"status", "return_code", "signal"}
    assert job["job_resources"]["nodes"]["count"] == 1

    nodes = bodies["nodes"]["nodes"]
    assert [n["name"] for n in nodes] == ["node1", "node2"]
    for k in ["name", "hostname", "address", "cpus", "sockets", "cores", "threads", "real_memory",
              "alloc_cpus", "alloc_memory", "free_mem", "state", "reason", "features",
              "active_features", "gres", "gres_used", "partitions", "tres", "tres_used", "weight",
              "version"]:
        assert k in nodes[0], k
    assert isinstance(nodes[0]["state"], list) and nodes[0]["partitions"] == ["debug"]
    assert any(n["state"][0] in ("MIXED", "ALLOCATED") for n in nodes)

    part = bodies["partitions"]["partitions"][0]
    assert part["name"] == "debug" and part["partition"]["state"] == ["UP"]
    assert part["nodes"]["configured"] == "node[1-2]" and part["nodes"]["total"] == 2
    assert part["cpus"]["total"] == 4 and is_no_val(part["maximums"]["time"])
    assert bodies["reservations"]["reservations"] == []
    assert set(bodies["shares"]["shares"]) == {"shares", "total_shares"}
    ping = bodies["ping"]["pings"][0]
    assert ping["responding"] is True and ping["primary"] is True
    stats = bodies["diag"]["statistics"]
    assert stats["jobs_running"] == 1 and stats["jobs_submitted"] >= 1
    assert is_no_val(stats["req_time"])

    # One of each kind by name.
    status, body = call(base, "GET", f"/slurm/{V}/node/node2", tok)
    assert status == 200 and [n["name"] for n in body["nodes"]] == ["node2"]
    status, body = call(base, "GET", f"/slurm/{V}/partition/debug", tok)
    assert status == 200 and body["partitions"][0]["name"] == "debug"
    status, body = call(base, "GET", f"/slurm/{V}/job/{jid}", tok)
    assert status == 200 and [j["job_id"] for j in body["jobs"]] == [jid]

    for path, key in [("jobs", "jobs"), ("accounts", "accounts"), ("users", "users"),
                      ("associations", "associations"), ("qos", "qos")]:
        status, body = call(base, "GET", f"/slurmdb/{V}/{path}", tok)
        assert status == 200, (path, body)
        assert_envelope(body, "openapi/slurmdbd")
        assert isinstance(body[key], list), (path, body)
    status, body = call(base, "GET", f"/slurmdb/{V}/job/{jid}", tok)
    assert status == 200, body
    rec = body["jobs"][0]
    assert rec["job_id"] == jid and rec["name"] == "shape" and rec["user"] == ME
    assert rec["state"]["current"] == ["RUNNING"]
    assert set(rec["time"]) >= {"elapsed", "eligible", "end", "start", "submission", "limit"}
    assert [q["name"] for q in call(base, "GET", f"/slurmdb/{V}/qos", tok)[1]["qos"]] == ["normal"]


def test_submit_get_delete_round_trip(api):
    c, base = api
    tok = token(c)
    status, body = call(base, "POST", f"/slurm/{V}/job/submit", tok,
                        body=submit_body("roundtrip", tasks=2,
                                         time_limit={"set": True, "infinite": False, "number": 5}))
    assert status == 200, body
    assert_envelope(body, "openapi/slurmctld")
    assert body["step_id"] == "batch" and body["job_submit_user_msg"] == ""
    jid = body["job_id"]
    info = c.wait_state(jid, "RUNNING")
    assert info["JobName"] == "roundtrip" and info["NumTasks"] == "2" and info["TimeLimit"] == "00:05:00"
    status, body = call(base, "GET", f"/slurm/{V}/job/{jid}", tok)
    assert status == 200 and body["jobs"][0]["job_state"] == ["RUNNING"]
    assert body["jobs"][0]["tasks"]["number"] == 2
    assert body["jobs"][0]["time_limit"]["number"] == 5
    # Nothing changed since the last update: no jobs, a warning.
    since = body["last_update"]["number"]
    status, body = call(base, "GET", f"/slurm/{V}/jobs?update_time={since + 3600}", tok)
    assert status == 200 and body["jobs"] == [] and body["warnings"]

    status, body = call(base, "DELETE", f"/slurm/{V}/job/{jid}", tok)
    assert status == 200, body
    assert body["status"] == [] and body["errors"] == []
    c.wait_state(jid, "CANCELLED")
    status, body = call(base, "GET", f"/slurm/{V}/job/{jid}", tok)
    assert body["jobs"][0]["job_state"][0] == "CANCELLED"
    status, body = call(base, "GET", f"/slurmdb/{V}/job/{jid}", tok)
    assert status == 200 and body["jobs"][0]["state"]["current"] == ["CANCELLED"]


def test_delete_with_signal_reaches_the_job(api):
    c, base = api
    tok = token(c)
    script = "#!/bin/sh\ntrap 'echo got USR1; exit 3' USR1\nwhile :; do sleep 0.1; done\n"
    status, body = call(base, "POST", f"/slurm/{V}/job/submit", tok,
                        body=submit_body("sig", script=script, standard_output=c.work + "/sig.out"))
    jid = body["job_id"]
    c.wait_state(jid, "RUNNING")
    time.sleep(0.5)
    status, body = call(base, "DELETE", f"/slurm/{V}/job/{jid}?signal=USR1", tok)
    assert status == 200, body
    c.wait_state(jid, "FAILED")
    assert "got USR1\n" in open(os.path.join(c.work, "sig.out")).read()


def test_errors_come_in_the_envelope(api):
    c, base = api
    tok = token(c)
    cases = [
        ("GET", f"/slurm/{V}/job/999999", None, 404, 2017),
        ("DELETE", f"/slurm/{V}/job/999999", None, 404, 2017),
        ("GET", f"/slurm/{V}/job/abc", None, 400, 2017),
        ("GET", f"/slurm/{V}/node/nope", None, 404, 2018),
        ("GET", f"/slurm/{V}/partition/nope", None, 404, 2000),
        ("GET", f"/slurm/{V}/nothing", None, 404, 11008),
        ("GET", "/slurm/v0.0.40/jobs", None, 404, 11008),
        ("POST", f"/slurm/{V}/jobs", b"{}", 405, 9007),
        ("GET", f"/slurmdb/{V}/job/999999", None, 404, 2017),
        ("POST", f"/slurm/{V}/job/submit", b"{not json", 400, 9001),
        ("POST", f"/slurm/{V}/job/submit", submit_body(script=""), 400, 2009),
        ("POST", f"/slurm/{V}/job/submit", submit_body(environment=[]), 400, 2127),
        ("POST", f"/slurm/{V}/job/submit", submit_body(partition="nope"), 400, 2000),
    ]
    for method, path, body, want, errno in cases:
        status, got = call(base, method, path, tok, body=body)
        assert status == want, (method, path, got)
        assert_envelope(got, "openapi/slurmdbd" if "/slurmdb/" in path else "openapi/slurmctld")
        assert got["errors"] and got["errors"][0]["error_number"] == errno, (path, got)
        assert set(got["errors"][0]) == {"description", "error_number", "error", "source"}
    assert c.ok("squeue", "-h") == ""


@requires_root
def test_identity_is_the_tokens_user_and_others_cannot_delete(api):
    c, base = api
    owner = ensure_user("drovertest")
    ensure_user("drovertest2")
    mine = token(c, user="drovertest")
    assert claims(mine)["sun"] == "drovertest"
    theirs = token(c, user="drovertest2")
    # Users may not ask for others' tokens; root (an operator) may.
    p = c.run("scontrol", "token", "username=root", user="drovertest")
    assert p.returncode == 1
    assert p.stderr == "scontrol: error: slurm_fetch_token: error with request: Invalid user id\n"
    assert claims(token(c, "username=drovertest"))["sun"] == "drovertest"

    # The job is the token's user's, whatever the request says.
    status, body = call(base, "POST", f"/slurm/{V}/job/submit", mine, user="drovertest",
                        body=submit_body("owned", user_id=0, current_working_directory=c.work))
    assert status == 200, body
    jid = body["job_id"]
    info = c.wait_state(jid, "RUNNING")
    assert info["UserId"] == f"drovertest({owner.pw_uid})"

    status, body = call(base, "DELETE", f"/slurm/{V}/job/{jid}", theirs, user="drovertest2")
    assert status == 403, body
    assert body["errors"][0]["error"] == "Access/permission denied"
    assert body["status"][0]["error"]["code"] == 2002
    assert c.job(jid)["JobState"] == "RUNNING"
    # A token names one user: presenting it under another name is refused.
    assert call(base, "DELETE", f"/slurm/{V}/job/{jid}", theirs, user="drovertest")[0] == 401
    assert c.job(jid)["JobState"] == "RUNNING"

    status, body = call(base, "DELETE", f"/slurm/{V}/job/{jid}", mine, user="drovertest")
    assert status == 200, body
    c.wait_state(jid, "CANCELLED")
    # root may cancel anyone's job.
    status, body = call(base, "POST", f"/slurm/{V}/job/submit", mine, user="drovertest",
                        body=submit_body("owned2", current_working_directory=c.work))
    jid2 = body["job_id"]
    status, body = call(base, "DELETE", f"/slurm/{V}/job/{jid2}", token(c), user="root")
    assert status == 200, body
    c.wait_state(jid2, "CANCELLED")
