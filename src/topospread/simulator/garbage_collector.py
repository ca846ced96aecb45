"""Deleting a workload as ``kubectl delete`` does (background cascading deletion): the object
goes at once, then the garbage collector deletes every dependent whose owners are all gone —
a Deployment's ReplicaSets, a CronJob's Jobs, their pods, a StatefulSet's pods, and the claims
a StatefulSet owns when its ``persistentVolumeClaimRetentionPolicy.whenDeleted`` is Delete
(the StatefulSet controller made the set their owner: ``controllers/claim_retention.py``);
with Retain (the default) the claims stay, their volumes bound, for a set created again to
reuse. A pod's deletion, too, takes the claims it owns (a generic ephemeral volume's, a
StatefulSet's condemned ordinal's under whenScaled: Delete) once their other owners are gone.

A claim the collector deletes is protected (the ``kubernetes.io/pvc-protection`` finalizer):
while a pod bound to a node uses it, it stays, Terminating (its deletionTimestamp set), and
goes when the last such pod does; then the PV controller releases its volume and reclaims it
(cluster/volume_sync.py).

A dependent names its owners by UID (the API server's rule); an owner reference without one —
hand-written manifests — names its owner by kind and name in the dependent's namespace. A
dependent that still has an owner left is kept (upstream removes the dangling reference).

NOTE: the claims a pod's deletion looks at are those its volumes name (the only claims a
controller makes a pod the owner of); a claim owned by an object of a kind not modelled is
never deleted.

Upstream: the garbage collector's attemptToDeleteItem with background propagation
(pkg/controller/garbagecollector/garbagecollector.go, v1.35), the StatefulSet controller's
claim owner references (updateClaimOwnerRefForSetAndPod, stateful_set_utils.go), and the PVC
protection controller (processPVC, podUsesPVC, pkg/controller/volume/pvcprotection/
pvc_protection_controller.go).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import msgspec

from topospread.api.storage import PersistentVolumeClaim
from topospread.api.types import ObjectMeta, OwnerReference, Pod, StatefulSet
from topospread.plugins.helper.storage import ephemeral_claim_name, ephemeral_volume_is_for_pod
from topospread.simulator.controllers.claims import claim_templates, deletes_claims_when_deleted
from topospread.simulator.controllers.common import format_time
from topospread.simulator.stores import KIND_ORDER, Workload, WorkloadKey, workload_key

if TYPE_CHECKING:
    from topospread.simulator.simulation import Simulation


@dataclass(slots=True)
class Deleted:
    """What one workload's deletion took with it."""

    workloads: list[WorkloadKey] = field(default_factory=list)  # the workload first
    pods: list[str] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)
    # Claims of a deleted StatefulSet left in place (whenDeleted: Retain).
    retained: list[str] = field(default_factory=list)


class _Gone:
    """The deleted owners, by UID and by (namespace, kind, name)."""

    def __init__(self) -> None:
        self.uids: set[str] = set()
        self.names: set[tuple[str, str, str]] = set()

    def add(self, meta: ObjectMeta, kind: str) -> None:
        if meta.uid:
            self.uids.add(meta.uid)
        self.names.add((meta.namespace, kind, meta.name))

    def owns(self, namespace: str, ref: OwnerReference) -> bool:
        if ref.uid:
            return ref.uid in self.uids
        return (namespace, ref.kind, ref.name) in self.names

    def orphans(self, meta: ObjectMeta) -> bool:
        """Whether every owner of the object is gone (an object with none is nobody's)."""
        refs: Sequence[OwnerReference] = meta.owner_references
        return bool(refs) and all(self.owns(meta.namespace, r) for r in refs)


def delete_workload(sim: Simulation, obj: Workload) -> Deleted:
    """Delete ``obj`` and, as the garbage collector would, what it alone owns."""
    out = Deleted()
    gone = _Gone()
    doomed: list[Workload] = [obj]
    while doomed:
        current = doomed.pop()
        workload = workload_key(current)
        if sim.workloads.pop(workload, None) is None:
            continue
        sim.sts_current.pop(workload, None)
        out.workloads.append(workload)
        gone.add(current.metadata, current.kind)
        doomed += [w for w in sim.workloads.values() if gone.orphans(w.metadata)]
    storage = sim.cluster.storage_state
    # The claims the deleted workloads alone owned: a pod deleted below may take some of them
    # with it (its owners then all gone), the rest go after.
    out.claims = [k for k, c in sorted(storage.pvcs.items()) if gone.orphans(c.metadata)]
    for key, pod in sorted(sim.pods.items()):
        if gone.orphans(pod.metadata):
            sim.delete_pod(pod)
            gone.add(pod.metadata, "Pod")
            out.pods.append(key)
    for claim_key in out.claims:
        claim = storage.pvcs.get(claim_key)
        if claim is not None and claim.metadata.deletion_timestamp is None:
            delete_claim(sim, claim_key)
    if isinstance(obj, StatefulSet) and not deletes_claims_when_deleted(obj):
        out.retained = _retained_claims(sim, obj, out.claims)
    sim.api_server.refresh_objects()
    return out


def _retained_claims(sim: Simulation, sts: StatefulSet, deleted: Sequence[str]) -> list[str]:
    """The claims of the set's templates left behind (those of its ordinals that exist)."""
    storage = sim.cluster.storage_state
    prefixes = [
        f"{sts.metadata.namespace}/{t.metadata.name}-{sts.metadata.name}-"
        for t in claim_templates(sts)
    ]
    return [
        key
        for key in sorted(storage.pvcs)
        if key not in deleted
        and any(key.startswith(p) and key[len(p) :].isdigit() for p in prefixes)
    ]


def collect_claims_of(sim: Simulation, pod: Pod) -> None:
    """After ``pod`` is gone: each claim its volumes name that it held Terminating goes if no
    other pod uses it, and each claim whose owners (the pod among them) are all gone is
    deleted.

    Upstream: attemptToDeleteItem (garbagecollector.go) and processPVC (pvc_protection_
    controller.go), v1.35
    """
    storage = sim.cluster.storage_state
    if not storage.pvcs:
        return
    namespace = pod.metadata.namespace
    for volume in pod.spec.volumes:
        if volume.persistent_volume_claim is not None:
            name = volume.persistent_volume_claim.claim_name
        elif volume.ephemeral is not None:
            name = ephemeral_claim_name(pod, volume)
        else:
            continue
        key = f"{namespace}/{name}"
        claim = storage.pvcs.get(key)
        if claim is None:
            continue
        if claim.metadata.deletion_timestamp is not None:
            if not _in_use(sim, claim):
                storage.delete_pvc(key)
        elif _owners_gone(sim, claim):
            delete_claim(sim, key)


def delete_claim(sim: Simulation, key: str) -> bool:
    """Delete a claim: gone at once (True) unless a pod bound to a node uses it, when it stays
    Terminating until that pod is gone.

    Upstream: the kubernetes.io/pvc-protection finalizer and processPVC
    (pvc_protection_controller.go, v1.35)
    """
    storage = sim.cluster.storage_state
    claim = storage.pvcs[key]
    if not _in_use(sim, claim):
        storage.delete_pvc(key)
        return True
    when = format_time(sim.epoch + sim.now)
    meta = msgspec.structs.replace(claim.metadata, deletion_timestamp=when)
    storage.update_pvc(msgspec.structs.replace(claim, metadata=meta))
    return False


def _in_use(sim: Simulation, claim: PersistentVolumeClaim) -> bool:
    """A pod of the claim's namespace bound to a node names it in a volume (a generic
    ephemeral volume's claim only while the pod is not shut down and controls it).

    Upstream: podUsesPVC (pvc_protection_controller.go, v1.35)
    """
    name, namespace = claim.metadata.name, claim.metadata.namespace
    # NOTE: any order will do (a yes or no), so the store is read as it is, not sorted by
    # namespace (a view rebuilt after every pod's deletion).
    for pod in sim.pods.values():
        if not pod.spec.node_name or pod.metadata.namespace != namespace:
            continue
        for volume in pod.spec.volumes:
            source = volume.persistent_volume_claim
            if source is not None and source.claim_name == name:
                return True
            # NOTE: upstream leaves out a shut-down pod's ephemeral claims (deleted with a
            # zero grace period); pods here go at once, never shut down and still listed.
            if (
                volume.ephemeral is not None
                and ephemeral_claim_name(pod, volume) == name
                and ephemeral_volume_is_for_pod(pod, claim) is None
            ):
                return True
    return False


def _owners_gone(sim: Simulation, claim: PersistentVolumeClaim) -> bool:
    """Every owner of the claim is gone (one without owners is nobody's dependent): a pod or
    workload of its name in the claim's namespace does not exist, or has another uid. An
    owner of a kind not modelled counts as present."""
    refs = claim.metadata.owner_references
    if not refs:
        return False
    namespace = claim.metadata.namespace
    for ref in refs:
        found: Any
        if (ref.api_version, ref.kind) == ("v1", "Pod"):
            found = sim.pods.get(f"{namespace}/{ref.name}")
        elif ref.kind in _WORKLOAD_KINDS:
            found = sim.workloads.get((ref.kind, namespace, ref.name))
        else:
            return False
        if found is not None and (not ref.uid or found.metadata.uid == ref.uid):
            return False
    return True


_WORKLOAD_KINDS: Final = frozenset(KIND_ORDER)

__all__ = ["Deleted", "collect_claims_of", "delete_claim", "delete_workload"]
