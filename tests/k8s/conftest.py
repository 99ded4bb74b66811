"""Fixtures for the pytest files here, run by CTest through run-smoke (which starts
tests/k8s/env and exports DROVER_K8S_SERVER, _TOKEN and _CA). Without those variables the
tests are skipped unless DROVER_K8S_REQUIRED=1."""
import os
import pathlib
import time

import pytest
import requests
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
CRD_FILE = ROOT / "deploy" / "crds" / "drover.io_nodesets.yaml"
NS_URL = "/apis/drover.io/v1alpha1/namespaces/default/nodesets"


@pytest.fixture(scope="session")
def api():
    """call(method, path, body=None, content_type=..., headers=None) -> requests.Response, with
    the NodeSet CRD applied and established."""
    server = os.environ.get("DROVER_K8S_SERVER")
    if not server:
        if os.environ.get("DROVER_K8S_REQUIRED") == "1":
            pytest.fail("DROVER_K8S_SERVER is not set")
        pytest.skip("no Kubernetes API server (tests/k8s/env/up)")
    s = requests.Session()
    ca = os.environ["DROVER_K8S_CA"]
    s.headers["Authorization"] = "Bearer " + os.environ["DROVER_K8S_TOKEN"]

    def call(method, path, body=None, content_type="application/json", headers=None):
        h = {"Content-Type": content_type}
        h.update(headers or {})
        # verify per request: REQUESTS_CA_BUNDLE in the environment would override Session.verify.
        return s.request(method, server + path, json=body, headers=h, timeout=30, verify=ca)

    crd = yaml.safe_load(CRD_FILE.read_text())
    r = call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert r.status_code in (201, 409), r.text
    deadline = time.time() + 30
    while True:
        r = call("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodesets.drover.io")
        conds = {c["type"]: c["status"] for c in (r.json().get("status") or {}).get("conditions") or []}
        if conds.get("Established") == "True" and call("GET", NS_URL).status_code == 200:
            break
        assert time.time() < deadline, f"CRD not established: {conds}"
        time.sleep(0.2)
    # Left over from an earlier run against the same server (no operator holds finalizers here).
    call("DELETE", NS_URL)
    return call


def wait_for(what, check, timeout=30):
    deadline = time.time() + timeout
    while True:
        v = check()
        if v:
            return v
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
