"""A pod's generic ephemeral volume gets its claim as the ephemeral volume controller creates it
(pkg/controller/volume/ephemeral, handleVolume, v1.35): ``<pod>-<volume>`` in the pod's
namespace, the template's labels, annotations and spec, the pod its controlling owner; and the
pod binds with the claim provisioned on its node."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import msgspec

from topospread.simulator.controllers.claims import ephemeral_claims
from topospread.simulator.run import schedule
from topospread.simulator.scenario import load_scenario

SCENARIO: Final = """\
nodes:
- metadata: {name: a1, labels: {topology.kubernetes.io/zone: a, kubernetes.io/hostname: a1}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
objects:
- apiVersion: storage.k8s.io/v1
  kind: StorageClass
  metadata: {name: zonal, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
  provisioner: ebs.csi.aws.com
  volumeBindingMode: WaitForFirstConsumer
queue:
- metadata: {name: db-0, uid: u-0}
  spec:
    containers: [{name: c, image: x}]
    volumes:
    - name: scratch
      ephemeral:
        volumeClaimTemplate:
          metadata: {labels: {app: db}, annotations: {note: scratch}, creationTimestamp: null}
          spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""

OWNER: Final = {
    "apiVersion": "v1",
    "kind": "Pod",
    "name": "db-0",
    "uid": "u-0",
    "controller": True,
    "blockOwnerDeletion": True,
}


def _scenario(tmp_path: Path) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO)
    return path


def test_the_claim_is_made_from_the_typed_template(tmp_path: Path) -> None:
    (pod,) = load_scenario(_scenario(tmp_path)).queue
    (claim,) = ephemeral_claims(pod)
    assert json.loads(msgspec.json.encode(claim)) == {
        "metadata": {
            "name": "db-0-scratch",
            "namespace": "default",
            "labels": {"app": "db"},
            "annotations": {"note": "scratch"},
            "ownerReferences": [OWNER],
        },
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }


def test_a_pod_with_an_ephemeral_volume_binds_with_its_claim_provisioned(tmp_path: Path) -> None:
    run = schedule(load_scenario(_scenario(tmp_path)))
    assert [(o.pod.metadata.name, o.node) for o in run.bound] == [("db-0", "a1")]
    assert run.pending == []
    storage = run.cluster.storage()
    claim = storage.persistent_volume_claim("default", "db-0-scratch")
    assert claim is not None
    # The API server gives the created claim a uid; the provisioned volume is pvc-<uid>.
    uid = claim.metadata.uid
    assert len(uid) == 36
    assert json.loads(msgspec.json.encode(claim)) == {
        "metadata": {
            "name": "db-0-scratch",
            "namespace": "default",
            "uid": uid,
            "labels": {"app": "db"},
            "annotations": {
                "note": "scratch",
                "volume.kubernetes.io/selected-node": "a1",
                "pv.kubernetes.io/bind-completed": "yes",
            },
            "ownerReferences": [OWNER],
        },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "volumeName": f"pvc-{uid}",
            "storageClassName": "zonal",
        },
        "status": {"phase": "Bound"},
    }
    pv = storage.persistent_volume(f"pvc-{uid}")
    assert pv is not None and pv.spec.claim_ref is not None
    assert (pv.spec.claim_ref.name, pv.status.phase) == ("db-0-scratch", "Bound")
