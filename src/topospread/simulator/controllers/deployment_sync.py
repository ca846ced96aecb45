"""One sync of a Deployment, as its working state: the ReplicaSets as they stand after each
change, finding or creating the new ReplicaSet, scaling (proportionally when the replicas
changed mid-rollout), cleaning up old ReplicaSets past revisionHistoryLimit, and the sync's
result. The rollouts that drive it are in deployment_rollout.py.

Upstream: pkg/controller/deployment/sync.go (v1.35)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from topospread.api.types import (
    Deployment,
    ObjectMeta,
    Pod,
    ReplicaSet,
    ReplicaSetSpec,
)
from topospread.labels.selector import label_selector_as_selector
from topospread.simulator.controllers.common import (
    compute_hash,
    equal_ignore_hash,
    is_controlled_by,
    new_controller_ref,
    selector_with_label,
    stamp,
    with_label,
)
from topospread.simulator.controllers.deployment_util import (
    DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY,
    DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
    by_creation,
    by_revision,
    deployment_replicas,
    filter_active_replica_sets,
    find_active_or_latest,
    find_new_replica_set,
    int32_annotation,
    max_revision,
    max_surge,
    new_rs_new_replicas,
    rolling_update,
    round_to_int32,
    rs_replicas,
    set_new_replica_set_annotations,
    set_replicas_annotations,
    sorted_by_size,
    with_replicas,
)
from topospread.simulator.controllers.replicaset import PodClaims, ReplicaSetClaims


@dataclass(frozen=True, slots=True)
class DeploymentSync:
    """What one sync of a Deployment does to ReplicaSets.

    ``replica_sets``: every ReplicaSet the Deployment owns afterwards, oldest first;
    ``created``, ``updated`` (scaled, annotated, adopted or released) and ``deleted``: the
    changes, in the order upstream makes them (an object appears once, in its final form);
    ``collision_count``: the Deployment's ``status.collisionCount`` afterwards (raised when the
    new ReplicaSet's name was taken by a ReplicaSet with another template).
    """

    replica_sets: tuple[ReplicaSet, ...]
    created: tuple[ReplicaSet, ...] = ()
    updated: tuple[ReplicaSet, ...] = ()
    deleted: tuple[ReplicaSet, ...] = ()
    collision_count: int | None = None

    def __bool__(self) -> bool:
        return bool(self.created or self.updated or self.deleted)


class Requeue(Exception):
    """The sync stops here (upstream returns an error and requeues the Deployment)."""


@dataclass(slots=True)
class _Status:
    replicas: int
    available: int


class SyncState:
    """One sync's working state: the ReplicaSets as they stand after each change."""

    def __init__(
        self,
        d: Deployment,
        owned: list[ReplicaSet],
        namespace_rss: list[ReplicaSet],
        pods: Sequence[Pod],
        rng: random.Random,
        now: int | None,
        claims: ReplicaSetClaims | None = None,
    ) -> None:
        self.d = d
        self.rng = rng
        self.now = now
        self.namespace_rss = namespace_rss
        self.current: dict[str, ReplicaSet] = {rs.metadata.name: rs for rs in owned}
        self.changes: dict[str, ReplicaSet] = {}
        self.created: list[str] = []
        self.deleted: list[ReplicaSet] = []
        self.collision_count = d.status.collision_count
        self.claims = claims if claims is not None else PodClaims(pods)
        self.status = {rs.metadata.name: _rs_status(rs, self.claims, now) for rs in owned}
        self.pods = pods

    # -- bookkeeping

    def rs(self, name: str) -> ReplicaSet:
        return self.current[name]

    def put(self, rs: ReplicaSet) -> None:
        self.current[rs.metadata.name] = rs
        self.changes[rs.metadata.name] = rs

    def available(self, rs: ReplicaSet) -> int:
        return self.status[rs.metadata.name].available

    def actual(self, rs: ReplicaSet) -> int:
        return self.status[rs.metadata.name].replicas

    def all(self) -> list[ReplicaSet]:
        return list(self.current.values())

    # -- sync.go

    def get_all_replica_sets_and_sync_revision(
        self, create: bool
    ) -> tuple[ReplicaSet | None, list[ReplicaSet]]:
        """Upstream: getAllReplicaSetsAndSyncRevision (sync.go, v1.35)"""
        new = find_new_replica_set(self.d, self.all())
        olds = [rs for rs in self.all() if new is None or rs.metadata.name != new.metadata.name]
        new = self.get_new_replica_set(new, olds, create)
        return new, olds

    def get_new_replica_set(
        self, existing: ReplicaSet | None, olds: list[ReplicaSet], create: bool
    ) -> ReplicaSet | None:
        """Upstream: getNewReplicaSet (sync.go, v1.35)"""
        d = self.d
        new_revision = str(max_revision(olds) + 1)
        if existing is not None:
            rs, changed = set_new_replica_set_annotations(d, existing, new_revision, exists=True)
            if changed or rs.spec.min_ready_seconds != d.spec.min_ready_seconds:
                rs = msgspec.structs.replace(
                    rs,
                    spec=msgspec.structs.replace(
                        rs.spec, min_ready_seconds=d.spec.min_ready_seconds
                    ),
                )
                self.put(rs)
            return rs
        if not create:
            return None
        template_hash = compute_hash(d.spec.template, self.collision_count)
        template = with_label(d.spec.template, DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, template_hash)
        name = f"{d.metadata.name}-{template_hash}"
        rs = ReplicaSet(
            metadata=ObjectMeta(
                name=name,
                namespace=d.metadata.namespace,
                owner_references=[new_controller_ref(d)],
                labels=dict(template.metadata.labels),
            ),
            spec=ReplicaSetSpec(
                replicas=0,
                min_ready_seconds=d.spec.min_ready_seconds,
                selector=selector_with_label(
                    d.spec.selector, DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, template_hash
                ),
                template=template,
            ),
        )
        rs = with_replicas(rs, new_rs_new_replicas(d, [*olds, rs], rs))
        rs, _ = set_new_replica_set_annotations(d, rs, new_revision, exists=False)
        taken = next(
            (x for x in self.namespace_rss if x.metadata.name == name),
            None,
        )
        if taken is not None:
            # AlreadyExists: ours with the same template is the new ReplicaSet; anything else
            # is a hash collision, resolved by a higher collisionCount on the next sync.
            if is_controlled_by(taken.metadata, d) and equal_ignore_hash(
                d.spec.template, taken.spec.template, DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY
            ):
                if name not in self.current:
                    self.current[name] = taken
                    self.status[name] = _rs_status(taken, self.claims, self.now)
                return self.current[name]
            self.collision_count = (self.collision_count or 0) + 1
            raise Requeue
        rs = msgspec.structs.replace(rs, metadata=stamp(rs.metadata, self.rng, self.now))
        self.current[name] = rs
        self.status[name] = _Status(0, 0)
        self.created.append(name)
        return rs

    def scale_replica_set_and_record_event(self, rs: ReplicaSet, new_scale: int) -> bool:
        """Upstream: scaleReplicaSetAndRecordEvent (sync.go, v1.35)"""
        if rs_replicas(rs) == new_scale:
            return False
        return self.scale_replica_set(rs, new_scale)

    def scale_replica_set(self, rs: ReplicaSet, new_scale: int) -> bool:
        """Set the size and the desired/max replicas annotations; True when the size changed.

        Upstream: scaleReplicaSet (sync.go, v1.35)
        """
        d = self.d
        desired, most = deployment_replicas(d), deployment_replicas(d) + max_surge(d)
        size_changed = rs_replicas(rs) != new_scale
        annotated = set_replicas_annotations(rs, desired, most)
        if size_changed or annotated is not rs:
            self.put(with_replicas(annotated, new_scale))
        return size_changed

    def scale(self, new: ReplicaSet | None, olds: list[ReplicaSet]) -> None:
        """Proportional scaling: a single active ReplicaSet (or, with none, the newest) gets
        ``replicas``; otherwise, during a rolling update, the difference to
        ``replicas + maxSurge`` is shared out in proportion to each ReplicaSet's size (its
        max-replicas annotation), larger ReplicaSets first, the leftover to the largest.

        Upstream: DeploymentController.scale (sync.go, v1.35)
        """
        d = self.d
        replicas = deployment_replicas(d)
        active_or_latest = find_active_or_latest(new, olds)
        if active_or_latest is not None:
            if rs_replicas(active_or_latest) != replicas:
                self.scale_replica_set_and_record_event(active_or_latest, replicas)
            return
        if new is not None and self.is_saturated(new):
            for old in filter_active_replica_sets(olds):
                self.scale_replica_set_and_record_event(old, 0)
            return
        if rolling_update(d) is None:
            return
        all_rss = filter_active_replica_sets([*olds, new])
        allowed = replicas + max_surge(d) if replicas > 0 else 0
        to_add = allowed - sum(rs_replicas(rs) for rs in all_rss)
        if to_add > 0:
            all_rss = sorted_by_size(all_rss, newer_first=True)
        elif to_add < 0:
            all_rss = sorted_by_size(all_rss, newer_first=False)
        added = 0
        sizes: dict[str, int] = {}
        for rs in all_rss:
            if to_add != 0:
                proportion = self.replica_set_proportion(rs, to_add, added)
                sizes[rs.metadata.name] = rs_replicas(rs) + proportion
                added += proportion
            else:
                sizes[rs.metadata.name] = rs_replicas(rs)
        for i, rs in enumerate(all_rss):
            name = rs.metadata.name
            if i == 0 and to_add != 0:
                sizes[name] = max(0, sizes[name] + to_add - added)
            self.scale_replica_set(self.rs(name), sizes[name])

    def is_saturated(self, rs: ReplicaSet) -> bool:
        """Upstream: IsSaturated (deployment/util/deployment_util.go, v1.35)"""
        desired = int32_annotation(rs, DESIRED_REPLICAS_ANNOTATION)
        replicas = deployment_replicas(self.d)
        return (
            desired is not None
            and rs_replicas(rs) == replicas
            and desired == replicas
            and self.available(rs) == replicas
        )

    def replica_set_proportion(self, rs: ReplicaSet, to_add: int, added: int) -> int:
        """Upstream: GetReplicaSetProportion / getReplicaSetFraction (deployment_util.go)"""
        if rs_replicas(rs) == 0 or to_add == 0 or to_add == added:
            return 0
        d = self.d
        replicas = deployment_replicas(d)
        if replicas == 0:
            fraction = -rs_replicas(rs)
        else:
            deployment_max = replicas + max_surge(d)
            before = int32_annotation(rs, MAX_REPLICAS_ANNOTATION)
            if before is None or before == 0:
                # Without the annotation (an adopted ReplicaSet), the Deployment's actual size.
                before = sum(self.actual(x) for x in self.all())
            if before == 0:
                fraction = 0
            else:
                new_size = float(rs_replicas(rs) * deployment_max) / float(before)
                fraction = round_to_int32(new_size) - rs_replicas(rs)
        allowed = to_add - added
        return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)

    def is_scaling_event(self) -> bool:
        """An active ReplicaSet's desired-replicas annotation differs from ``replicas``.

        Upstream: isScalingEvent (sync.go, v1.35)
        """
        new, olds = self.get_all_replica_sets_and_sync_revision(create=False)
        for rs in filter_active_replica_sets([*olds, new]):
            desired = int32_annotation(rs, DESIRED_REPLICAS_ANNOTATION)
            if desired is not None and desired != deployment_replicas(self.d):
                return True
        return False

    def sync(self) -> None:
        """Scale only (a scaling event, or a paused Deployment).

        Upstream: DeploymentController.sync (sync.go, v1.35)
        """
        new, olds = self.get_all_replica_sets_and_sync_revision(create=False)
        self.scale(new, [self.rs(o.metadata.name) for o in olds])
        if self.d.spec.paused:
            self.cleanup_deployment([self.rs(o.metadata.name) for o in olds])

    def deployment_complete(self) -> bool:
        """Every replica updated, available, and no more (the status before this sync).

        Upstream: DeploymentComplete (deployment/util/deployment_util.go, v1.35)
        """
        replicas = deployment_replicas(self.d)
        new = find_new_replica_set(self.d, self.all())
        updated = self.actual(new) if new is not None and new.metadata.name in self.status else 0
        total = sum(s.replicas for s in self.status.values())
        available = sum(s.available for s in self.status.values())
        return updated == replicas and total == replicas and available == replicas

    def cleanup_deployment(self, olds: list[ReplicaSet]) -> None:
        """Delete the oldest ReplicaSets, beyond revisionHistoryLimit, that have no replicas.

        Upstream: cleanupDeployment (sync.go, v1.35)
        """
        limit = self.d.spec.revision_history_limit
        if limit is None:
            return
        cleanable = [rs for rs in olds if rs.metadata.deletion_timestamp is None]
        diff = len(cleanable) - limit
        if diff <= 0:
            return
        for rs in by_revision(cleanable)[:diff]:
            if self.actual(rs) != 0 or rs_replicas(rs) != 0:
                continue
            del self.current[rs.metadata.name]
            self.changes.pop(rs.metadata.name, None)
            self.deleted.append(rs)

    # -- result

    def result(self, released: list[ReplicaSet]) -> DeploymentSync:
        created = [self.current[name] for name in self.created if name in self.current]
        updated = [rs for name, rs in self.changes.items() if name not in self.created]
        return DeploymentSync(
            replica_sets=tuple(by_creation(self.current.values())),
            created=tuple(created),
            updated=tuple([*released, *updated]),
            deleted=tuple(self.deleted),
            collision_count=self.collision_count,
        )


def _rs_status(rs: ReplicaSet, claims: ReplicaSetClaims, now: int | None) -> _Status:
    """A ReplicaSet's status.replicas and status.availableReplicas, from its active pods."""
    replicas, available = claims.status(rs, label_selector_as_selector(rs.spec.selector), now)
    return _Status(replicas, available)
