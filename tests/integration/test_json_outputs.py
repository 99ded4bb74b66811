"""--json on squeue, sinfo, sacct and scontrol show (data_parser v0.0.44): one document with the
envelope and the command's list, the text listing's filters and permissions, and entries that
say what the text output says and what the REST API says for the same jobs and nodes."""
import json
import os
import re
import urllib.request

import pytest

from conftest import ensure_user, requires_root

V = "v0.0.44"
ME = os.environ.get("USER") or "root"
OTHER = "drovertest"
# Fields that move between two looks at the same job (the scheduler touches pending jobs).
VOLATILE = {"last_sched_evaluation", "priority", "scheduled_nodes", "state_reason", "start_time"}


def doc_of(c, *args, user=None):
    """Runs a command with --json; returns its one parsed document."""
    p = c.run(*args, user=user)
    assert p.returncode == 0, f"{args}: {p.returncode}\n{p.stdout}\n{p.stderr}"
    return json.loads(p.stdout)  # the whole output is one document


def assert_envelope(doc, program, key):
    assert set(doc) >= {"meta", "errors", "warnings", key}, list(doc)
    meta = doc["meta"]
    assert meta["plugin"]["data_parser"] == "data_parser/" + V
    assert meta["plugin"]["type"] == ""  # a command, not slurmrestd's openapi plugin
    assert set(meta["client"]) == {"source", "user", "group"}
    assert meta["command"][0] == program and "--json" in meta["command"]
    assert meta["slurm"]["release"] == "25.11.0" and meta["slurm"]["cluster"] == "drover"
    assert doc["errors"] == [] and doc["warnings"] == []


def no_val(v):
    assert isinstance(v, dict) and set(v) == {"set", "infinite", "number"}, v
    return v["number"] if v["set"] else ("infinite" if v["infinite"] else None)


def rest(c, path):
    """GET on the controller's REST API as the caller, with a token from scontrol."""
    with open(os.path.join(c.state_dir, "env.sh")) as f:
        base = re.search(r"^export DROVER_API=(\S+)$", f.read(), re.M).group(1)
    tok = c.ok("scontrol", "token").strip().split("=", 1)[1]
    req = urllib.request.Request(base + path, headers={"X-SLURM-USER-NAME": ME,
                                                       "X-SLURM-USER-TOKEN": tok})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def text_rows(c, *args, user=None):
    return [line.split("|") for line in c.ok(*args, user=user).splitlines()]


@pytest.fixture
def cluster(make_cluster):
    c = make_cluster(nodes=2, cpus=2, mem=1000)
    running = c.sbatch("-J", "runs", "-n", "2", "--wrap", "sleep 60")
    held = c.sbatch("-J", "held", "-H", "--wrap", "true")
    c.wait_state(running, "RUNNING")
    return c, running, held


def test_squeue_json_says_what_text_and_rest_say(cluster):
    c, running, held = cluster
    doc = doc_of(c, "squeue", "--json")
    assert_envelope(doc, "squeue", "jobs")
    assert no_val(doc["last_update"]) and "last_backfill" in doc
    jobs = {j["job_id"]: j for j in doc["jobs"]}
    assert set(jobs) == {running, held}
    # The text listing of the same jobs.
    text = {int(r[0]): r for r in text_rows(c, "squeue", "-h", "-o", "%i|%j|%u|%T|%P|%D|%C|%N|%r|%l")}
    assert set(text) == set(jobs)
    for jid, row in text.items():
        j = jobs[jid]
        assert [j["name"], j["user_name"], j["job_state"][0], j["partition"]] == row[1:5]
        assert no_val(j["node_count"]) == int(row[5]) and no_val(j["cpus"]) == int(row[6])
        assert j["nodes"] == row[7] and j["state_reason"] == row[8]
        assert (no_val(j["time_limit"]) == "infinite") == (row[9] == "UNLIMITED")
    assert jobs[held]["hold"] is True and jobs[held]["state_reason"] == "JobHeldUser"
    assert jobs[running]["batch_host"] in ("node1", "node2")
    # The REST API gives the same entries: same keys, same values but for what moves.
    api = {j["job_id"]: j for j in rest(c, f"/slurm/{V}/jobs")["jobs"]}
    for jid, j in jobs.items():
        assert set(j) == set(api[jid]), set(j) ^ set(api[jid])
        for k in set(j) - VOLATILE:
            assert j[k] == api[jid][k], (jid, k, j[k], api[jid][k])

    # Filters as for text; formatting options are ignored.
    assert [j["job_id"] for j in doc_of(c, "squeue", "--json", "-t", "PD")["jobs"]] == [held]
    assert [j["job_id"] for j in doc_of(c, "squeue", "-j", str(running), "--json", "-o", "%Z")["jobs"]] == [running]
    assert [j["job_id"] for j in doc_of(c, "squeue", "--json", "-n", "held")["jobs"]] == [held]
    assert doc_of(c, "squeue", "--json", "-p", "nosuch")["jobs"] == []
    assert doc_of(c, "squeue", "--json=v0.0.44", "-u", ME)["jobs"] != []


@requires_root
def test_squeue_and_sacct_json_filter_and_permissions_as_text(make_cluster):
    ensure_user(OTHER)
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    mine = c.sbatch("-J", "mine", "--wrap", "exit 3")
    theirs = c.sbatch("-J", "theirs", "--wrap", "true", user=OTHER)
    c.wait_all_done([mine, theirs])
    # squeue: finished jobs only with -t, as in text.
    assert doc_of(c, "squeue", "--json")["jobs"] == []
    alls = doc_of(c, "squeue", "--json", "-t", "all", "-u", OTHER)["jobs"]
    assert [(j["job_id"], j["user_name"], j["job_state"]) for j in alls] == \
        [(theirs, OTHER, ["COMPLETED"])]
    mine_json = doc_of(c, "squeue", "--json", "-t", "all", "-u", "root")["jobs"]
    assert [(j["job_id"], j["job_state"], j["exit_code"]["return_code"]["number"])
            for j in mine_json] == [(mine, ["FAILED"], 3)]

    # sacct: a user sees their own jobs, root everyone's, -a everyone's, like the text output.
    window = ["-S", "now-1hours"]
    def sacct_ids(*args, user=None):
        doc = doc_of(c, "sacct", "--json", *window, *args, user=user)
        assert_envelope(doc, "sacct", "jobs")
        ids = [j["job_id"] for j in doc["jobs"]]
        text = text_rows(c, "sacct", "-n", "-P", "-X", "-o", "JobID", *window, *args, user=user)
        assert ids == [int(r[0]) for r in text]
        return ids
    assert sacct_ids() == [mine, theirs]
    assert sacct_ids(user=OTHER) == [theirs]
    assert sacct_ids("-a", user=OTHER) == [mine, theirs]
    assert sacct_ids("-u", OTHER) == [theirs]

    doc = doc_of(c, "sacct", "--json", "-j", str(mine))
    job = doc["jobs"][0]
    row = text_rows(c, "sacct", "-n", "-P", "-j", str(mine), "-o", "JobID,JobName,State,ExitCode,NodeList,AllocCPUS")
    assert row[0][:5] == [str(mine), "mine", "FAILED", "3:0", "node1"]
    assert (job["name"], job["state"]["current"], job["exit_code"]["return_code"]["number"],
            job["nodes"]) == ("mine", ["FAILED"], 3, "node1")
    assert [s["step"]["id"] for s in job["steps"]] == [f"{mine}.batch"]
    assert job["steps"][0]["state"] == [row[1][2]]
    assert [t["count"] for t in job["tres"]["allocated"] if t["type"] == "cpu"] == [int(row[0][5])]
    assert doc_of(c, "sacct", "--json", "-X", "-j", str(mine))["jobs"][0]["steps"] == []
    # The slurmdb REST API's record of the same job.
    api = rest(c, f"/slurmdb/{V}/job/{mine}")["jobs"][0]
    assert set(api) == set(job)
    for k in job:
        assert job[k] == api[k], k


def test_sinfo_json_lines_are_the_text_lines(cluster):
    c, running, held = cluster
    doc = doc_of(c, "sinfo", "--json")
    assert_envelope(doc, "sinfo", "sinfo")
    text = text_rows(c, "sinfo", "-h", "-o", "%P|%t|%D|%N|%C")
    assert len(doc["sinfo"]) == len(text)
    for entry, (part, state, count, nodes, cpus) in zip(doc["sinfo"], text):
        assert entry["partition"]["name"] + "*" == part  # debug is the default partition
        names = c.ok("scontrol", "show", "hostnames", nodes).split()
        assert entry["nodes"]["nodes"] == names and entry["nodes"]["total"] == int(count)
        assert entry["node"]["state"][0] == {"mix": "MIXED", "alloc": "ALLOCATED",
                                              "idle": "IDLE"}[state]
        c4 = entry["cpus"]
        assert f'{c4["allocated"]}/{c4["idle"]}/{c4["other"]}/{c4["total"]}' == cpus
    # A line per node with -N; -s one per partition.
    per_node = doc_of(c, "sinfo", "-N", "--json")["sinfo"]
    assert sorted(n for e in per_node for n in e["nodes"]["nodes"]) == ["node1", "node2"]
    summary = doc_of(c, "sinfo", "-s", "--json")["sinfo"]
    assert len(summary) == 1 and summary[0]["nodes"]["total"] == 2
    # The partition inside is the REST API's partition.
    api = rest(c, f"/slurm/{V}/partitions")["partitions"][0]
    assert summary[0]["partition"] == api


def test_scontrol_show_json(cluster):
    c, running, held = cluster
    doc = doc_of(c, "scontrol", "show", "job", str(running), "--json")
    assert_envelope(doc, "scontrol", "jobs")
    [job] = doc["jobs"]
    text = c.job(running)
    assert job["job_id"] == running and job["job_state"] == [text["JobState"]]
    assert job["nodes"] == text["NodeList"] and no_val(job["cpus"]) == int(text["NumCPUs"])
    assert job["partition"] == text["Partition"] and job["name"] == text["JobName"]
    assert job["standard_output"] == text["StdOut"]
    api = rest(c, f"/slurm/{V}/job/{running}")["jobs"][0]
    assert {k: v for k, v in job.items() if k not in VOLATILE} == \
        {k: v for k, v in api.items() if k not in VOLATILE}
    assert {j["job_id"] for j in doc_of(c, "scontrol", "--json", "show", "jobs")["jobs"]} == \
        {running, held}

    nodes = doc_of(c, "scontrol", "--json", "show", "nodes")
    assert_envelope(nodes, "scontrol", "nodes")
    api_nodes = rest(c, f"/slurm/{V}/nodes")["nodes"]
    assert [n["name"] for n in nodes["nodes"]] == [n["name"] for n in api_nodes]
    for mine, theirs in zip(nodes["nodes"], api_nodes):
        assert set(mine) == set(theirs)
        for k in ["state", "cpus", "alloc_cpus", "real_memory", "alloc_memory", "partitions", "tres"]:
            assert mine[k] == theirs[k], k
    node_text = c.ok("scontrol", "-o", "show", "node", "node1")
    one = doc_of(c, "scontrol", "show", "node", "node1", "--json")["nodes"]
    assert [n["name"] for n in one] == ["node1"]
    assert f"CPUAlloc={one[0]['alloc_cpus']} " in node_text
    assert f"State={'+'.join(one[0]['state'])} " in node_text

    parts = doc_of(c, "scontrol", "show", "partition", "--json")
    assert parts["partitions"] == rest(c, f"/slurm/{V}/partitions")["partitions"]

    # What does not exist: an error in the document, exit 1.
    for args, number in [(["show", "node", "nosuch"], 2018), (["show", "job", "999999"], 2017),
                         (["show", "partition", "nosuch"], 2000)]:
        p = c.run("scontrol", "--json", *args)
        assert p.returncode == 1, (args, p.stdout, p.stderr)
        bad = json.loads(p.stdout)
        assert [e["error_number"] for e in bad["errors"]] == [number]


def test_yaml_and_other_parsers_are_refused(cluster):
    c, running, held = cluster
    for cmd in (["squeue"], ["sinfo"], ["sacct"], ["scontrol", "show", "jobs"]):
        p = c.run(*cmd, "--yaml")
        assert p.returncode == 1 and p.stdout == "", (cmd, p.stdout)
        assert "--yaml is not supported" in p.stderr
        p = c.run(*cmd, "--json=v0.0.38")
        assert p.returncode == 1 and p.stdout == "" and "v0.0.38" in p.stderr, (cmd, p.stderr)
    p = c.run("squeue", "--json=list")
    assert p.returncode == 0 and p.stdout == "data_parser/v0.0.44\n"
