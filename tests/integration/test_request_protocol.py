"""The commands' requests (src/proto/request.hpp) as the controller reads them: the JSON the
previous release's commands sent, byte for byte, still works (a rolling upgrade has commands of
both), and a request of the wrong shape is refused with an error that carries its number."""
import json
import socket

from test_hostile_input import exchange


def call(c, payload):
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(c.env["DROVER_SOCKET"])
        reply = exchange(s, payload)
    assert reply is not None, payload
    return json.loads(reply)


def test_previous_release_requests_still_work(make_cluster, tmp_path):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    # sbatch's submission as the previous release wrote it (keys in nlohmann's order).
    spec = {"name": "old", "script": "#!/bin/sh\nsleep 300\n", "workdir": str(tmp_path)}
    submit = json.dumps(
        {"op": "submit", "request_id": "old-1", "spec": spec, "test_only": False},
        separators=(",", ":"),
        sort_keys=True,
    ).encode()
    r = call(c, submit)
    assert r["ok"] is True, r
    job = r["job_id"]
    # The same bytes again are a retry: the same job.
    assert call(c, submit)["job_id"] == job
    c.wait_state(str(job), "RUNNING", timeout=60)

    r = call(c, b'{"active_only":true,"detail":false,"op":"query","what":"jobs"}')
    assert [j["id"] for j in r["jobs"]] == [job], r
    r = call(c, ('{"detail":false,"job_id":%d,"op":"query","what":"jobs"}' % job).encode())
    assert r["jobs"][0]["spec"]["name"] == "old"
    r = call(c, ('{"action":"requeuehold","jobs":["%d"],"op":"control"}' % job).encode())
    assert r["ok"] is True, r
    r = call(c, ('{"jobs":["%d"],"op":"update","set":{"Comment":"x"}}' % job).encode())
    assert r["ok"] is True, r
    r = call(c, b'{"op":"query","what":"ping"}')
    assert r["ok"] is True, r
    # A job named by its number, as the previous release's REST-side requests did.
    r = call(c, ('{"jobs":[%d],"op":"cancel"}' % job).encode())
    assert r["ok"] is True, r
    c.wait_state(str(job), "CANCELLED", timeout=60)


def test_ill_typed_requests_are_refused_with_a_number(make_cluster):
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    for payload, message in [
        (b'{"jobs":"1","op":"cancel"}', 'Invalid request: field "jobs" is not an array'),
        (b'{"op":"query","what":"jobs","job_id":"7"}',
         'Invalid request: field "job_id" is not an unsigned integer'),
        (b'{"op":"node_update","nodes":["n1"]}', 'Invalid request: field "nodes" is not a string'),
        (b'{"op":"format_disk"}', "Unknown request"),
        (b'{"op":"submit","spec":{"ntasks":"four"}}', "Invalid job request"),
    ]:
        r = call(c, payload)
        assert r == {"ok": False, "error": message, "errno": -1}, (payload, r)
    # Refused where it is decoded: nothing reached the state machine.
    assert call(c, b'{"op":"query","what":"jobs"}')["jobs"] == []


def raw(c, payload):
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(c.env["DROVER_SOCKET"])
        reply = exchange(s, payload)
    assert reply is not None, payload
    return reply.decode()


def test_replies_are_the_previous_release_bytes(make_cluster, tmp_path):
    """The controller's replies (src/proto/reply.hpp) byte for byte as the previous release
    wrote them, so its commands read this controller's replies (a rolling upgrade)."""
    c = make_cluster(nodes=1, cpus=2, mem=1000)
    spec = {"name": "r", "script": "#!/bin/sh\nsleep 300\n", "workdir": str(tmp_path)}
    submit = json.dumps({"op": "submit", "request_id": "rep-1", "spec": spec}).encode()
    r = raw(c, submit)
    job = json.loads(r)["job_id"]
    assert r == '{"job_id":%d,"ok":true}' % job
    assert raw(c, submit) == '{"job_id":%d,"ok":true,"retried":true}' % job
    bad = dict(spec, partitions=["nope"])
    assert raw(c, json.dumps({"op": "submit", "spec": bad}).encode()) == (
        '{"bad_partition":"nope","errno":2000,"error":"Invalid partition name specified",'
        '"ok":false}')
    assert raw(c, ('{"action":"hold","jobs":["%d"],"op":"control"}' % job).encode()) == (
        '{"errors":[],"ok":true}')
    assert raw(c, ('{"jobs":["%d"],"op":"update","set":{"Comment":"x"}}' % job).encode()) == (
        '{"errors":[],"ok":true}')
    assert raw(c, ('{"jobs":["%d"],"op":"update","set":{"Foo":"1"}}' % job).encode()) == (
        '{"errors":[{"errno":-1,"error":"Update of this parameter is not supported: Foo=1",'
        '"job":"%d"}],"ok":false}' % job)
    assert raw(c, b'{"nodes":"nosuch","op":"node_update","state":"RESUME"}') == (
        '{"errno":2018,"error":"Invalid node name specified","ok":false}')
    assert raw(c, b'{"name":"debug","op":"partition_update","set":{"hidden":false}}') == (
        '{"ok":true}')
    assert raw(c, ('{"jobs":["%d"],"op":"cancel"}' % job).encode()) == (
        '{"errors":[],"matched":1,"ok":true}')
    assert raw(c, b'{"jobs":["999999"],"op":"cancel"}') == (
        '{"errors":[{"errno":2017,"error":"Invalid job id specified","job":"999999"}],'
        '"matched":0,"ok":false}')
