"""Commands from a host that is not the controller's (docs/security.md): a login host in a network
namespace of its own, with only its own key, runs `droverd --login`; an ordinary user there
submits, lists, cancels and runs jobs over TCP with credentials the login host vouches for. Forged,
expired, replayed and other hosts' credentials are refused; a node's key neither registers another
node nor mints a token."""
import base64
import hashlib
import hmac
import json
import os
import secrets
import signal
import socket
import struct
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from conftest import BIN, SLURM_BIN, ensure_user
from test_netns import IP, needs_netns, plan, up_netns

USER = "droverlogin"


def frame(payload):
    return struct.pack(">I", len(payload)) + payload


def read_frame(s):
    head = b""
    while len(head) < 4:
        chunk = s.recv(4 - len(head))
        if not chunk:
            return None
        head += chunk
    (n,) = struct.unpack(">I", head)
    body = b""
    while len(body) < n:
        chunk = s.recv(n - len(body))
        if not chunk:
            return None
        body += chunk
    return body


def mac(key, direction, seq, payload):
    return hmac.new(key, direction + struct.pack(">Q", seq) + payload, hashlib.sha256).digest()


def sign(key_hex, text):
    return hmac.new(key_hex.encode(), b"user-cred|" + text.encode(), hashlib.sha256).hexdigest()


class LoginHost:
    """A network namespace on the cluster's bridge, its vouching daemon, and how to run commands
    there as a user."""

    def __init__(self, c, name="login1"):
        self.c = c
        self.name = name
        tag, subnet, _ = plan(c)
        self.bridge_ip = subnet.replace(".0/24", ".1")
        self.ip = subnet.replace(".0/24", ".200")
        # Named as the cluster's own, so `drover down` removes them even after a crash.
        self.ns = f"drv-{tag}-{name}"
        self.veth = f"drv{tag}h200"
        for cmd in (["netns", "add", self.ns],
                    ["link", "add", "name", self.veth, "type", "veth", "peer", "name", "eth0",
                     "netns", self.ns],
                    ["link", "set", "dev", self.veth, "master", f"drv-{tag}-br", "up"],
                    ["-n", self.ns, "addr", "add", self.ip + "/24", "dev", "eth0"],
                    ["-n", self.ns, "link", "set", "dev", "eth0", "up"],
                    ["-n", self.ns, "link", "set", "dev", "lo", "up"]):
            subprocess.run([IP, *cmd], check=True, capture_output=True)
        self.key_file = os.path.join(c.state_dir, f"{name}.key")
        p = c.drover("node-key", name, "--state-dir", c.state_dir, "--out", self.key_file)
        assert name in p.stdout
        assert os.stat(self.key_file).st_mode & 0o077 == 0
        self.key = open(self.key_file).read().strip()
        self.sock = os.path.join(c.work, f"auth-{name}.sock")
        self.log = open(os.path.join(c.state_dir, f"login-{name}.log"), "w")
        self.daemon = subprocess.Popen(
            [IP, "netns", "exec", self.ns, os.path.join(BIN, "droverd"), "--login", "--node", name,
             "--key-file", self.key_file, "--auth-socket", self.sock],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while not os.path.exists(self.sock) and time.time() < deadline:
            time.sleep(0.05)
        assert os.path.exists(self.sock), open(self.log.name).read()
        port = None
        for line in open(os.path.join(c.state_dir, "slurm.conf")):
            if line.startswith("SlurmctldPort="):
                port = int(line.split("=", 1)[1])
        self.port = port
        self.controller = f"{self.bridge_ip}:{port}"

    def run(self, *args, user=USER, env=None, timeout=90):
        """A Slurm command on the login host: no state dir, no controller socket, only the
        controller's address and the vouching socket."""
        e = {"PATH": SLURM_BIN + ":/usr/bin:/bin", "DROVER_CONTROLLER": self.controller,
             "DROVER_AUTH_SOCKET": self.sock, "HOME": "/tmp", "DROVER_SUBMIT_RETRY_S": "5"}
        e.update(env or {})
        cmd = [IP, "netns", "exec", self.ns]
        if user:
            cmd += ["runuser", "-u", user, "--"]
        cmd += ["env", "-i", *[f"{k}={v}" for k, v in e.items()], *args]
        return subprocess.run(cmd, capture_output=True, text=True, cwd=self.c.work, timeout=timeout)

    def ok(self, *args, **kw):
        p = self.run(*args, **kw)
        assert p.returncode == 0, f"{args} exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
        return p.stdout

    def credential(self, user=USER):
        """A real credential, as a user's command gets it from the vouching socket."""
        code = ("import socket,struct,sys\n"
                f"s=socket.socket(socket.AF_UNIX); s.connect({self.sock!r})\n"
                "p=b'{\"op\":\"credential\"}'; s.sendall(struct.pack('>I',len(p))+p)\n"
                "n=struct.unpack('>I',s.recv(4))[0]; b=b''\n"
                "while len(b)<n: b+=s.recv(n-len(b))\n"
                "sys.stdout.write(b.decode())\n")
        out = self.ok("python3", "-c", code, user=user)
        return json.loads(out)

    def stop(self):
        self.daemon.terminate()
        self.daemon.wait(timeout=10)
        subprocess.run([IP, "link", "del", "dev", self.veth], capture_output=True)
        subprocess.run([IP, "netns", "del", self.ns], capture_output=True)


def command(h, cred_text, sig, request, session_key=None, version=1):
    """One command over TCP with a crafted credential; returns the reply (or the refusal)."""
    with socket.create_connection((h.bridge_ip, h.port), timeout=10) as s:
        hello = json.loads(read_frame(s))
        assert hello["type"] == "hello" and hello["version"] == 1
        s.sendall(frame(json.dumps({"type": "command", "version": version, "cred": cred_text,
                                    "sig": sig}).encode()))
        answer = read_frame(s)
        assert answer is not None
        key = session_key or b"\0" * 32
        if answer[:32] != mac(key, b"d", 0, answer[32:]):
            return json.loads(answer)  # a refusal comes in the clear
        assert json.loads(answer[32:]) == {"type": "accepted"}
        body = json.dumps(request).encode()
        s.sendall(frame(mac(key, b"u", 0, body) + body))
        reply = read_frame(s)
        assert reply[:32] == mac(key, b"d", 1, reply[32:]), "reply not under the session key"
        return json.loads(reply[32:])


@pytest.fixture
def login(make_cluster):
    c = up_netns(make_cluster)
    u = ensure_user(USER)
    h = LoginHost(c)
    yield c, h, u
    h.stop()


@needs_netns
def test_user_on_a_login_host_submits_lists_cancels_and_runs(login):
    c, h, u = login
    # The user cannot read the login host's key, or the controller's secret.
    assert h.run("cat", h.key_file).returncode != 0
    assert h.run("cat", os.path.join(c.state_dir, "cluster.key")).returncode != 0

    script = c.write_script("who.sh", "#!/bin/bash\nid -un\nid -u\nhostname\n")
    out = h.ok("sbatch", "--parsable", "-N1", "-o", "who.out", script)
    jid = int(out.strip())
    info = c.wait_state(jid, ("COMPLETED", "FAILED"))
    assert info["JobState"] == "COMPLETED", info
    assert info["UserId"].startswith(f"{USER}(")
    text = open(os.path.join(c.work, "who.out")).read().split()
    assert text[:2] == [USER, str(u.pw_uid)] and text[2] in ("node1", "node2"), text
    assert os.stat(os.path.join(c.work, "who.out")).st_uid == u.pw_uid

    # squeue and scancel, as the user, over TCP.
    jid = int(h.ok("sbatch", "--parsable", "-N1", "-o", "/dev/null", "--wrap", "sleep 300").strip())
    c.wait_state(jid, "RUNNING")
    listed = h.ok("squeue", "-h", "-o", "%i %u %T")
    assert f"{jid} {USER} RUNNING" in listed, listed
    h.ok("scancel", str(jid))
    assert c.wait_state(jid, "CANCELLED")["JobState"] == "CANCELLED"
    # Another user's job is not the login user's to cancel.
    other = c.sbatch("-o", "/dev/null", "--wrap", "sleep 300")
    c.wait_state(other, "RUNNING")
    p = h.run("scancel", str(other))
    assert p.returncode != 0 and "Access/permission denied" in p.stderr, p.stderr
    assert c.job(other)["JobState"] == "RUNNING"
    c.ok("scancel", str(other))

    # srun: a step on both nodes, its links straight from the login host to the agents.
    out = h.ok("srun", "-N2", "-n2", "-l", "bash", "-c", "echo $(id -un) $(hostname)")
    lines = sorted(out.split("\n")[:-1])
    assert lines == [f"0: {USER} node1", f"1: {USER} node2"], out

    # A token for oneself, not for another user (root on the login host included).
    tok = h.ok("scontrol", "token")
    assert tok.startswith("SLURM_JWT=")
    p = h.run("scontrol", "token", f"username={USER}", user=None)
    assert p.returncode != 0 and "Invalid user id" in p.stderr, (p.stdout, p.stderr)
    assert c.ok("scontrol", "token", f"username={USER}").startswith("SLURM_JWT=")


@needs_netns
def test_forged_expired_replayed_and_other_hosts_credentials_are_refused(login):
    c, h, u = login
    now = int(time.time())
    ping = {"op": "query", "what": "ping"}

    def cred(host=h.name, uid=u.pw_uid, expires=None):
        return json.dumps({"v": 1, "uid": uid, "gid": u.pw_gid, "host": host,
                           "nonce": secrets.token_hex(16), "expires": expires or now + 60},
                          separators=(",", ":"))

    def session(sig):
        return hmac.new(h.key.encode(), b"user-session|" + sig.encode(), hashlib.sha256).digest()

    # A well-made credential (signed here with the login host's key, as its daemon signs)
    # works once; the control that the refusals below are refusals of the credential.
    text = cred()
    sig = sign(h.key, text)
    r = command(h, text, sig, ping, session(sig))
    assert r.get("ok") is True, r
    r = command(h, text, sig, ping, session(sig))
    # The refusal carries Slurm's number (ESLURM_AUTH_CRED_INVALID) beside its text.
    assert r == {"type": "error", "error": "Authentication failure: credential replayed",
                 "errno": 6000}, r

    # One the daemon issued, used by its user once (sinfo), then replayed.
    real = h.credential()
    assert json.loads(real["cred"])["uid"] == u.pw_uid
    r = command(h, real["cred"], real["sig"], ping, bytes.fromhex(real["session_key"]))
    assert r.get("ok") is True, r
    r = command(h, real["cred"], real["sig"], ping, bytes.fromhex(real["session_key"]))
    assert r["error"] == "Authentication failure: credential replayed", r

    # The user's credential made out for root instead: the signature no longer matches.
    real = h.credential()
    forged = json.loads(real["cred"])
    forged["uid"] = 0
    r = command(h, json.dumps(forged, separators=(",", ":")), real["sig"], ping)
    assert r["error"] == "Authentication failure: invalid credential signature", r

    # A key of our own making, or the login host's key claiming another host.
    text = cred()
    r = command(h, text, sign(secrets.token_hex(32), text), ping)
    assert r["error"] == "Authentication failure: invalid credential signature", r
    text = cred(host="node1")
    r = command(h, text, sign(h.key, text), ping)
    assert r["error"] == "Authentication failure: invalid credential signature", r

    # Expired, and far too long-lived.
    text = cred(expires=now - 600)
    r = command(h, text, sign(h.key, text), ping)
    assert r["error"] == "Authentication failure: credential expired", r
    text = cred(expires=now + 86400)
    r = command(h, text, sign(h.key, text), ping)
    assert r["error"] == "Authentication failure: credential lifetime too long", r

    # A protocol version the controller does not speak.
    text = cred()
    r = command(h, text, sign(h.key, text), ping, version=7)
    assert r["type"] == "error" and "protocol version 7 is not supported" in r["error"], r

    # One uid holds at most 128 command connections; a slot comes back when one closes.
    def open_link():
        text = cred(expires=int(time.time()) + 60)
        s = socket.create_connection((h.bridge_ip, h.port), timeout=10)
        read_frame(s)
        s.sendall(frame(json.dumps({"type": "command", "version": 1, "cred": text,
                                    "sig": sign(h.key, text)}).encode()))
        answer = read_frame(s)
        return s, answer
    links = []
    try:
        for _ in range(128):
            s, answer = open_link()
            links.append(s)
            assert not answer.startswith(b'{"type":"error"'), answer
        s, answer = open_link()
        s.close()
        assert json.loads(answer)["error"] == f"too many connections from uid {u.pw_uid}", answer
        links.pop().close()
        time.sleep(0.2)
        s, answer = open_link()
        links.append(s)
        assert not answer.startswith(b'{"type":"error"'), answer
    finally:
        for s in links:
            s.close()

    # The commands say why, and exit non-zero.
    p = h.run("squeue", env={"DROVER_AUTH_SOCKET": os.path.join(c.work, "nothing.sock")})
    assert p.returncode != 0 and "Authentication failure" in p.stderr, p.stderr


@needs_netns
def test_a_nodes_key_neither_registers_another_node_nor_mints_tokens(login):
    c, h, u = login
    key1 = open(os.path.join(c.state_dir, "node-node1.key")).read().strip()
    key2 = open(os.path.join(c.state_dir, "node-node2.key")).read().strip()
    assert key1 != key2 and len(key1) == 64

    def register(node, key):
        with socket.create_connection((h.bridge_ip, h.port), timeout=10) as s:
            hello = json.loads(read_frame(s))
            nonce_a = secrets.token_hex(16)
            proof = hmac.new(key.encode(), f"agent|{hello['nonce']}|{nonce_a}|{node}|".encode(),
                             hashlib.sha256).hexdigest()
            s.sendall(frame(json.dumps({"type": "register", "node": node, "version": 1,
                                        "nonce": nonce_a, "mac": proof, "cpus": 1,
                                        "real_memory": 500, "running": [],
                                        "finished": []}).encode()))
            return json.loads(read_frame(s))

    # node1's key claiming node2 is refused; node2 stays registered with its own agent.
    r = register("node2", key1)
    assert r == {"type": "error", "error": "authentication failed", "errno": 1007}, r
    # Without a version (an agent from before per-node keys): refused, saying why.
    with socket.create_connection((h.bridge_ip, h.port), timeout=10) as s:
        read_frame(s)
        s.sendall(frame(b'{"type":"register","node":"node2","nonce":"0123456789abcdef","mac":""}'))
        r = json.loads(read_frame(s))
    assert "protocol version 0 is not supported" in r["error"], r
    assert c.ok("sinfo", "-h", "-o", "%D %t").split() == ["2", "idle"]

    # Nor does it sign a step credential another node's agent takes (as the shared key once
    # did): node2's agent wants the controller's signature.
    log = open(os.path.join(c.state_dir, "agent-node2.log")).read()
    addr = log.split("listening for srun on ", 1)[1].split()[0]
    host, port = addr.rsplit(":", 1)
    text = json.dumps({"job_id": 1, "step_id": 0, "run": 1, "uid": 0, "gid": 0, "user": "root",
                       "ntasks": 1, "nodelist": "node2", "nodes": {"node2": {"tasks": [0]}},
                       "expires": int(time.time()) + 60})
    for sig in (hmac.new(key1.encode(), b"step-cred|" + text.encode(), hashlib.sha256).hexdigest(),
                secrets.token_hex(64)):
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(frame(json.dumps({"type": "hello", "cred": text, "sig": sig,
                                        "nonce": secrets.token_hex(16)}).encode()))
            r = json.loads(read_frame(s))
        assert r == {"type": "error", "error": "Invalid job credential"}, r

    # The controller's secret signs tokens; a node's key does not, however it is used.
    env = open(os.path.join(c.state_dir, "env.sh")).read()
    base = [l.split("=", 1)[1] for l in env.splitlines() if l.startswith("export DROVER_API=")][0]

    def b64(raw):
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    def jwt(key):
        head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        body = b64(json.dumps({"sun": "root", "iat": int(time.time()),
                               "exp": int(time.time()) + 600}).encode())
        sig = b64(hmac.new(key, f"{head}.{body}".encode(), hashlib.sha256).digest())
        return f"{head}.{body}.{sig}"

    def get(tok):
        req = urllib.request.Request(base + "/slurm/v0.0.44/ping", headers={
            "X-SLURM-USER-TOKEN": tok, "X-SLURM-USER-NAME": "root"})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status
        except urllib.error.HTTPError as e:
            return e.code

    token_key = lambda k: hmac.new(k, b"drover-jwt-hs256|", hashlib.sha256).digest()
    for key in (key1.encode(), token_key(key1.encode()), h.key.encode(), token_key(h.key.encode())):
        assert get(jwt(key)) == 401
    # The real one (scontrol token on the controller's host) is taken: the refusals above
    # were of the key.
    real = c.ok("scontrol", "token").strip().split("=", 1)[1]
    assert get(real) == 200


@needs_netns
def test_a_nodes_agent_vouches_for_its_users(login):
    """droverd --auth-socket: the agent itself serves the vouching socket (its tasks are forked
    beside the socket's thread), and commands on that node reach the controller over TCP."""
    c, h, u = login
    tag = plan(c)[0]
    pid_file = os.path.join(c.state_dir, "agent-node1.pid")
    old = c.pid("agent-node1.pid")
    argv = open(f"/proc/{old}/cmdline").read().split("\0")[:-1]
    os.kill(old, signal.SIGTERM)
    deadline = time.time() + 30
    while os.path.exists(f"/proc/{old}") and time.time() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{old}"), "the agent did not stop"
    sock = os.path.join(c.work, "auth-node1.sock")
    log_path = os.path.join(c.state_dir, "agent-node1.log")
    registered = open(log_path).read().count("registered with controller as node1")
    with open(log_path, "a") as log:
        agent = subprocess.Popen([IP, "netns", "exec", f"drv-{tag}-node1", *argv,
                                  "--auth-socket", sock], stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True)
    with open(pid_file, "w") as f:  # `ip netns exec` execs droverd: drover down stops it
        f.write(f"{agent.pid}\n")
    deadline = time.time() + 60
    while (time.time() < deadline and
           open(log_path).read().count("registered with controller as node1") == registered):
        time.sleep(0.1)
    text = open(log_path).read()
    assert text.count("registered with controller as node1") > registered, (
        text[-3000:] + open(os.path.join(c.state_dir, "ctld.log")).read()[-3000:])
    assert os.path.exists(sock)

    node1 = LoginHost.__new__(LoginHost)
    node1.__dict__.update(h.__dict__)
    node1.ns, node1.sock = f"drv-{tag}-node1", sock
    real = node1.credential()
    assert json.loads(real["cred"])["host"] == "node1"
    jid = int(node1.ok("sbatch", "--parsable", "-w", "node1", "-o", "n1.out", "--wrap",
                       "id -un").strip())
    assert c.wait_state(jid, ("COMPLETED", "FAILED"))["JobState"] == "COMPLETED"
    assert open(os.path.join(c.work, "n1.out")).read() == f"{USER}\n"
    out = node1.ok("srun", "-w", "node1", "id", "-un")
    assert out == f"{USER}\n", out

    # A job submitted on the controller's host exports that host's DROVER_SOCKET (sbatch sends
    # the caller's environment). On a node whose agent vouches for its users the agent gives
    # the job the node's own way to the controller instead, as slurmd gives its SLURM_CONF: its
    # address and its vouching socket, no DROVER_SOCKET. srun in the job goes that way, as the
    # job's user, and its tasks are told the same; so are those of a step srun starts from here.
    controller = argv[argv.index("--controller") + 1]
    want = f"none {controller} {sock}"
    show = "echo ${DROVER_SOCKET-none} $DROVER_CONTROLLER $DROVER_AUTH_SOCKET"
    out_path = os.path.join(c.work, "conn.out")
    jid = c.sbatch("-w", "node1", "-o", out_path, "--wrap", f"{show}; srun -w node1 sh -c '{show}'",
                   user=USER)
    info = c.wait_state(jid, ("COMPLETED", "FAILED"))
    text = open(out_path).read() if os.path.exists(out_path) else ""
    assert info["JobState"] == "COMPLETED", (info, text)
    assert text.splitlines() == [want, want], text
    assert c.ok("srun", "-w", "node1", "sh", "-c", show) == want + "\n"
    # node2's agent serves no vouching socket: its jobs keep the socket they were given.
    out = c.ok("srun", "-w", "node2", "sh", "-c", show)
    assert out.split()[0] == c.env["DROVER_SOCKET"], out
