"""Deleting a workload as ``kubectl delete`` does (background cascading deletion): the object
goes at once, then the garbage collector deletes every dependent whose owners are all gone —
a Deployment's ReplicaSets, a CronJob's Jobs, their pods, a StatefulSet's pods, and the claims
a StatefulSet owns when its ``persistentVolumeClaimRetentionPolicy.whenDeleted`` is Delete
(the StatefulSet controller made the set their owner: ``controllers/claims.py``); with Retain
(the default) the claims stay, their volumes bound, for a set created again to reuse.

A dependent names its owners by UID (the API server's rule); an owner reference without one —
hand-written manifests — names its owner by kind and name in the dependent's namespace. A
dependent that still has an owner left is kept (upstream removes the dangling reference).

Upstream: the garbage collector's attemptToDeleteItem with background propagation
(pkg/controller/garbagecollector/garbagecollector.go, v1.35), and the StatefulSet controller's
claim owner references (updateClaimOwnerRefForSetAndPod, stateful_set_utils.go).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from topospread.api.types import ObjectMeta, OwnerReference, StatefulSet
from topospread.simulator.controllers.claims import claim_templates, deletes_claims_when_deleted
from topospread.simulator.stores import Workload, WorkloadKey, workload_key

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
    for key, pod in sorted(sim.pods.items()):
        if gone.orphans(pod.metadata):
            sim.delete_pod(pod)
            gone.add(pod.metadata, "Pod")
            out.pods.append(key)
    storage = sim.cluster.storage_state
    for claim_key, claim in sorted(storage.pvcs.items()):
        if gone.orphans(claim.metadata):
            storage.delete_pvc(claim_key)
            out.claims.append(claim_key)
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


__all__ = ["Deleted", "delete_workload"]
