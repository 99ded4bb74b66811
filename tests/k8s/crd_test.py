"""The NodeSet CRD (deploy/crds/drover.io_nodesets.yaml) on a real kube-apiserver.

Run by CTest (k8s_nodeset) through run-smoke; the `api` fixture is in conftest.py.
"""
import json

import pytest

from conftest import NS_URL, ROOT


def nodeset(name="gpu", **spec):
    body = {
        "apiVersion": "drover.io/v1alpha1",
        "kind": "NodeSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": 2,
            "partitions": ["batch"],
            "template": {
                "metadata": {"labels": {"app": "drover-agent"}},
                "spec": {
                    "containers": [
                        {
                            "name": "droverd",
                            "image": "drover/agent:0.1",
                            "resources": {"requests": {"cpu": "4", "nvidia.com/gpu": "2"}},
                        }
                    ]
                },
            },
        },
    }
    body["spec"].update(spec)
    return body


def test_valid_nodeset_is_accepted_with_defaults(api):
    body = nodeset(
        "valid",
        features=["ib"],
        featuresFromNodeLabels=["nvidia.com/gpu.product"],
        drainOnNodeConditions=["GPUUnhealthy"],
        updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%"}},
        maxDrainTime="1h30m",
        drainTimeoutPolicy="Cancel",
    )
    r = api("POST", NS_URL, body)
    assert r.status_code == 201, r.text
    spec = r.json()["spec"]
    assert spec["registrationTimeout"] == "5m"
    assert spec["workloadProtection"] is True
    assert spec["updateStrategy"]["rollingUpdate"]["maxUnavailable"] == "25%"
    assert spec["drainOnNodeConditions"] == ["GPUUnhealthy"]
    assert "ToBeDeletedByClusterAutoscaler" in spec["disruptionTaints"]
    assert "aws-node-termination-handler/spot-itn" in spec["disruptionTaints"]
    # Unknown pod-template fields are kept as written.
    assert spec["template"]["spec"]["containers"][0]["image"] == "drover/agent:0.1"

    body = nodeset("elastic", replicas=0, cost=0.5, autoscaling={"maxReplicas": 16})
    r = api("POST", NS_URL, body)
    assert r.status_code == 201, r.text
    spec = r.json()["spec"]
    assert spec["cost"] == 0.5
    assert spec["autoscaling"] == {
        "minReplicas": 0, "maxReplicas": 16, "idleTimeout": "10m", "startupTime": "60s"}

    # Own disruption taints replace the defaults; an empty list turns them off.
    r = api("POST", NS_URL, nodeset("own-taints", disruptionTaints=["example.com/reclaim"]))
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["disruptionTaints"] == ["example.com/reclaim"]
    r = api("POST", NS_URL, nodeset("no-taints", disruptionTaints=[]))
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["disruptionTaints"] == []

    body = nodeset("defaults")
    del body["spec"]["replicas"]
    body["spec"]["updateStrategy"] = {}
    r = api("POST", NS_URL, body)
    assert r.status_code == 201, r.text
    spec = r.json()["spec"]
    assert spec["replicas"] == 1
    assert spec["drainTimeoutPolicy"] == "Requeue"
    assert spec["updateStrategy"]["type"] == "RollingUpdate"


@pytest.mark.parametrize(
    "name,spec,message",
    [
        ("mu-zero", {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0}}},
         "maxUnavailable must be an integer >= 1 or a percentage from 1% to 100%"),
        ("mu-pct", {"updateStrategy": {"rollingUpdate": {"maxUnavailable": "150%"}}},
         "maxUnavailable must be an integer >= 1 or a percentage from 1% to 100%"),
        ("ondelete", {"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"maxUnavailable": 1}}},
         "rollingUpdate may only be set with type RollingUpdate"),
        ("part", {"partitions": ["batch", ""]},
         "partition names must be non-empty"),
        ("drain", {"maxDrainTime": "10 minutes"},
         "maxDrainTime must be a positive duration such as 30m or 1h30m"),
        ("reg", {"registrationTimeout": "1s"},
         "registrationTimeout must be a duration of at least 10s"),
        ("policy", {"drainTimeoutPolicy": "Kill"}, "supported values: \"Requeue\", \"Cancel\", \"Wait\""),
        ("replicas", {"replicas": -1}, "should be greater than or equal to 0"),
        ("as-minmax", {"autoscaling": {"minReplicas": 5, "maxReplicas": 4}},
         "autoscaling.minReplicas must not exceed autoscaling.maxReplicas"),
        ("as-nomax", {"autoscaling": {"minReplicas": 1}}, "maxReplicas: Required value"),
        ("as-idle", {"autoscaling": {"maxReplicas": 4, "idleTimeout": "soon"}},
         "idleTimeout must be a duration such as 90s or 10m"),
        ("cost", {"cost": -1}, "should be greater than or equal to 0"),
        ("taints", {"disruptionTaints": ["example.com/reclaim", "bad key"]},
         "taint keys are an optional DNS subdomain prefix and '/'"),
        ("nocontainers", {"template": {"spec": {"containers": []}}}, "should have at least 1 items"),
        ("Bad.Name", {}, "a NodeSet name must be a DNS label of at most 52 characters"),
        ("n" * 53, {}, "a NodeSet name must be a DNS label of at most 52 characters"),
    ],
)
def test_invalid_nodesets_get_422_with_the_reason(api, name, spec, message):
    r = api("POST", NS_URL, nodeset(name, **spec))
    assert r.status_code == 422, r.text
    assert message in r.json()["message"], r.json()["message"]


def test_printer_columns(api):
    r = api("POST", NS_URL, nodeset("cols"))
    assert r.status_code == 201, r.text
    r = api("GET", NS_URL, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert r.status_code == 200, r.text
    names = [c["name"] for c in r.json()["columnDefinitions"] if c["priority"] == 0]
    assert names == ["Name", "Replicas", "Ready", "Idle", "Allocated", "Drained", "Age"]
    wide = [c["name"] for c in r.json()["columnDefinitions"] if c["priority"] == 1]
    assert {"Mixed", "Down", "Updated"} <= set(wide)


def test_status_subresource_and_scale(api):
    r = api("POST", NS_URL, nodeset("scaled"))
    assert r.status_code == 201, r.text
    obj = r.json()
    # Status written through the main resource is dropped; through /status it is kept.
    obj["status"] = {"replicas": 9}
    r = api("PUT", NS_URL + "/scaled", obj)
    assert r.status_code == 200, r.text
    assert "replicas" not in r.json().get("status", {})
    obj = r.json()
    obj["status"] = {
        "replicas": 2, "readyReplicas": 2, "idle": 1, "allocated": 1,
        "selector": "drover.io/nodeset=scaled",
        "conditions": [{"type": "Available", "status": "True", "reason": "MinimumNodesAvailable",
                        "message": "", "lastTransitionTime": "2026-11-28T10:00:00Z"}],
    }
    r = api("PUT", NS_URL + "/scaled/status", obj)
    assert r.status_code == 200, r.text
    assert r.json()["status"]["idle"] == 1

    r = api("GET", NS_URL + "/scaled/scale")
    assert r.status_code == 200, r.text
    scale = r.json()
    assert scale["kind"] == "Scale"
    assert scale["spec"]["replicas"] == 2
    assert scale["status"]["replicas"] == 2
    assert scale["status"]["selector"] == "drover.io/nodeset=scaled"
    # What HPA/KEDA do: patch the scale subresource.
    r = api("PATCH", NS_URL + "/scaled/scale", {"spec": {"replicas": 5}},
            content_type="application/merge-patch+json")
    assert r.status_code == 200, r.text
    assert api("GET", NS_URL + "/scaled").json()["spec"]["replicas"] == 5
    r = api("PATCH", NS_URL + "/scaled/scale", {"spec": {"replicas": -1}},
            content_type="application/merge-patch+json")
    assert r.status_code == 422, r.text


def test_the_reconcilers_status_is_kept_as_written(api):
    # data/nodeset_status.json has the shape the reconciler writes (its unit test checks that):
    # if the API server pruned or changed any of it, status updates would never settle.
    status = json.loads((ROOT / "tests" / "k8s" / "data" / "nodeset_status.json").read_text())
    r = api("POST", NS_URL, nodeset("roundtrip"))
    assert r.status_code == 201, r.text
    obj = r.json()
    obj["status"] = status
    r = api("PUT", NS_URL + "/roundtrip/status", obj)
    assert r.status_code == 200, r.text
    assert api("GET", NS_URL + "/roundtrip").json()["status"] == status


def test_bad_status_is_refused(api):
    r = api("POST", NS_URL, nodeset("badstatus"))
    assert r.status_code == 201, r.text
    obj = r.json()
    obj["status"] = {"conditions": [{"type": "Available", "status": "Maybe"}]}
    r = api("PUT", NS_URL + "/badstatus/status", obj)
    assert r.status_code == 422, r.text
