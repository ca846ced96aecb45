"""The Deployment controller: one ReplicaSet per pod template, rolled from old to new.

A sync claims the Deployment's ReplicaSets (adopting orphans its selector matches), finds the
one whose template equals the Deployment's (ignoring ``pod-template-hash``) or creates it as
``<deployment>-<pod-template-hash>`` with the hash label on its selector, template and so its
pods, and then, as upstream:
- scales proportionally when ``spec.replicas`` changed mid-rollout or the Deployment is paused;
- RollingUpdate: scales the new ReplicaSet up to at most ``replicas + maxSurge`` pods in all
  (maxSurge rounded up), then scales old ReplicaSets down, first their unhealthy replicas,
  then as far as ``replicas - maxUnavailable`` available pods allow (maxUnavailable rounded
  down; both 0 after rounding means maxUnavailable 1), oldest ReplicaSet first;
- Recreate: scales every old ReplicaSet to 0, waits until none of their pods runs, then
  creates or scales the new one to ``replicas``;
- once complete, deletes old ReplicaSets beyond ``revisionHistoryLimit``.

It changes ReplicaSets only; their pods follow from the ReplicaSet controller.
``step_deployment`` runs one Deployment sync and then one sync of each of its ReplicaSets: one
reconcile step of a rollout. Statuses (available replicas, updated replicas) come from the
pods at the start of the sync.

Terminating pods: the simulator deletes pods at once, so the terminating-replica accounting
of v1.35 (DeploymentReplicaSetTerminatingReplicas) has nothing to count.

Upstream: pkg/controller/deployment (deployment_controller.go, sync.go, rolling.go,
recreate.go, util/deployment_util.go, v1.35)
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import msgspec

from topospread.api.types import (
    Deployment,
    ObjectMeta,
    Pod,
    ReplicaSet,
    ReplicaSetSpec,
    RollingUpdateDeployment,
)
from topospread.labels.selector import label_selector_as_selector
from topospread.simulator.controllers.common import (
    POD_FAILED,
    POD_SUCCEEDED,
    PodActions,
    check_selector_matches_template,
    claim,
    compute_hash,
    equal_ignore_hash,
    is_controlled_by,
    is_pod_available,
    new_controller_ref,
    pod_phase,
    selector_with_label,
    stamp,
    with_label,
    workload_selector,
)
from topospread.simulator.controllers.deployment_util import (
    DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY,
    DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
    RECREATE,
    ROLLING_UPDATE,
    by_creation,
    by_revision,
    deployment_replicas,
    filter_active_replica_sets,
    find_active_or_latest,
    find_new_replica_set,
    int32_annotation,
    max_revision,
    max_surge,
    max_unavailable,
    new_rs_new_replicas,
    rolling_update,
    round_to_int32,
    rs_replicas,
    set_new_replica_set_annotations,
    set_replicas_annotations,
    sorted_by_size,
    with_replicas,
)
from topospread.simulator.controllers.replicaset import ClaimMemos, PodClaims, sync_replica_set


def set_defaults_deployment(d: Deployment) -> Deployment:
    """replicas 1, strategy RollingUpdate with maxUnavailable and maxSurge 25%,
    revisionHistoryLimit 10, progressDeadlineSeconds 600.

    Upstream: SetDefaults_Deployment (pkg/apis/apps/v1/defaults.go, v1.35)
    """
    spec = d.spec
    strategy = spec.strategy
    if not strategy.type:
        strategy = msgspec.structs.replace(strategy, type=ROLLING_UPDATE)
    if strategy.type == ROLLING_UPDATE:
        ru = strategy.rolling_update or RollingUpdateDeployment()
        ru = msgspec.structs.replace(
            ru,
            max_unavailable="25%" if ru.max_unavailable is None else ru.max_unavailable,
            max_surge="25%" if ru.max_surge is None else ru.max_surge,
        )
        strategy = msgspec.structs.replace(strategy, rolling_update=ru)
    new_spec = msgspec.structs.replace(
        spec,
        replicas=1 if spec.replicas is None else spec.replicas,
        strategy=strategy,
        revision_history_limit=(
            10 if spec.revision_history_limit is None else spec.revision_history_limit
        ),
        progress_deadline_seconds=(
            600 if spec.progress_deadline_seconds is None else spec.progress_deadline_seconds
        ),
    )
    return d if new_spec == spec else msgspec.structs.replace(d, spec=new_spec)


# ---------------------------------------------------------------------------------------------
# Results


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


@dataclass(frozen=True, slots=True)
class DeploymentStep:
    """One reconcile step: the Deployment's sync, then one sync of each of its ReplicaSets."""

    sync: DeploymentSync
    pods: PodActions

    def __bool__(self) -> bool:
        return bool(self.sync) or bool(self.pods)


class _Requeue(Exception):
    """The sync stops here (upstream returns an error and requeues the Deployment)."""


@dataclass(slots=True)
class _Status:
    replicas: int
    available: int


class _Sync:
    """One sync's working state: the ReplicaSets as they stand after each change."""

    def __init__(
        self,
        d: Deployment,
        owned: list[ReplicaSet],
        namespace_rss: list[ReplicaSet],
        pods: list[Pod],
        rng: random.Random,
        now: int | None,
        claims: PodClaims | None = None,
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
            raise _Requeue
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

    # -- rolling.go

    def rollout_rolling(self) -> None:
        """Upstream: rolloutRolling (rolling.go, v1.35)"""
        new, olds = self.get_all_replica_sets_and_sync_revision(create=True)
        assert new is not None
        if self.reconcile_new_replica_set(new):
            return
        olds = [self.rs(o.metadata.name) for o in olds]
        new = self.rs(new.metadata.name)
        if self.reconcile_old_replica_sets(filter_active_replica_sets(olds), new):
            return
        if self.deployment_complete():
            self.cleanup_deployment([self.rs(o.metadata.name) for o in olds])

    def reconcile_new_replica_set(self, new: ReplicaSet) -> bool:
        """Upstream: reconcileNewReplicaSet (rolling.go, v1.35)"""
        replicas = deployment_replicas(self.d)
        if rs_replicas(new) == replicas:
            return False
        if rs_replicas(new) > replicas:
            return self.scale_replica_set_and_record_event(new, replicas)
        count = new_rs_new_replicas(self.d, self.all(), new)
        return self.scale_replica_set_and_record_event(new, count)

    def reconcile_old_replica_sets(self, olds: list[ReplicaSet], new: ReplicaSet) -> bool:
        """Upstream: reconcileOldReplicaSets (rolling.go, v1.35)"""
        if sum(rs_replicas(rs) for rs in olds) == 0:
            return False
        all_count = sum(rs_replicas(rs) for rs in self.all())
        min_available = deployment_replicas(self.d) - max_unavailable(self.d)
        new_unavailable = rs_replicas(new) - self.available(new)
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        try:
            olds, cleaned = self.cleanup_unhealthy_replicas(olds, max_scaled_down)
            scaled = self.scale_down_old_replica_sets_for_rolling_update([*olds, new], olds)
        except _InvalidScale:
            return False
        return cleaned + scaled > 0

    def cleanup_unhealthy_replicas(
        self, olds: list[ReplicaSet], max_cleanup: int
    ) -> tuple[list[ReplicaSet], int]:
        """Scale old ReplicaSets down by their unavailable replicas, oldest first.

        Upstream: cleanupUnhealthyReplicas (rolling.go, v1.35)
        """
        olds = by_creation(olds)
        total = 0
        for i, rs in enumerate(olds):
            if total >= max_cleanup:
                break
            if rs_replicas(rs) == 0 or rs_replicas(rs) == self.available(rs):
                continue
            count = min(max_cleanup - total, rs_replicas(rs) - self.available(rs))
            if count < 0:
                # More available pods than replicas: upstream refuses to "scale down" upwards.
                raise _InvalidScale
            self.scale_replica_set_and_record_event(rs, rs_replicas(rs) - count)
            olds[i] = self.rs(rs.metadata.name)
            total += count
        return olds, total

    def scale_down_old_replica_sets_for_rolling_update(
        self, all_rss: list[ReplicaSet], olds: list[ReplicaSet]
    ) -> int:
        """Scale old ReplicaSets down as far as ``replicas - maxUnavailable`` available pods
        allow, oldest first.

        Upstream: scaleDownOldReplicaSetsForRollingUpdate (rolling.go, v1.35)
        """
        min_available = deployment_replicas(self.d) - max_unavailable(self.d)
        available = sum(self.available(rs) for rs in all_rss)
        if available <= min_available:
            return 0
        total = 0
        to_scale = available - min_available
        for rs in by_creation(olds):
            if total >= to_scale:
                break
            rs = self.rs(rs.metadata.name)
            if rs_replicas(rs) == 0:
                continue
            count = min(rs_replicas(rs), to_scale - total)
            self.scale_replica_set_and_record_event(rs, rs_replicas(rs) - count)
            total += count
        return total

    # -- recreate.go

    def rollout_recreate(self) -> None:
        """Upstream: rolloutRecreate (recreate.go, v1.35)"""
        new, olds = self.get_all_replica_sets_and_sync_revision(create=False)
        scaled = False
        for rs in filter_active_replica_sets([self.rs(o.metadata.name) for o in olds]):
            scaled = self.scale_replica_set_and_record_event(rs, 0) or scaled
        if scaled:
            return
        if self.old_pods_running(new, olds):
            return
        if new is None:
            new, olds = self.get_all_replica_sets_and_sync_revision(create=True)
            assert new is not None
        self.scale_replica_set_and_record_event(
            self.rs(new.metadata.name), deployment_replicas(self.d)
        )
        if self.deployment_complete():
            self.cleanup_deployment([self.rs(o.metadata.name) for o in olds])

    def old_pods_running(self, new: ReplicaSet | None, olds: list[ReplicaSet]) -> bool:
        """Upstream: oldPodsRunning (recreate.go, v1.35)"""
        if sum(self.actual(rs) for rs in olds) > 0:
            return True
        for rs in olds:
            if new is not None and rs.metadata.name == new.metadata.name:
                continue
            for pod in self.pods:
                if is_controlled_by(pod.metadata, rs) and pod_phase(pod) not in (
                    POD_FAILED,
                    POD_SUCCEEDED,
                ):
                    return True
        return False

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


class _InvalidScale(Exception):
    """An invalid scale request: upstream logs it and stops reconciling old ReplicaSets."""


def _rs_status(rs: ReplicaSet, claims: PodClaims, now: int | None) -> _Status:
    """A ReplicaSet's status.replicas and status.availableReplicas, from its active pods."""
    selector = label_selector_as_selector(rs.spec.selector)
    owned = claims.claim(rs, selector).owned
    available = sum(1 for p in owned if is_pod_available(p, rs.spec.min_ready_seconds, now))
    return _Status(len(owned), available)


# ---------------------------------------------------------------------------------------------
# Entry points


def sync_deployment(
    d: Deployment,
    replica_sets: Iterable[ReplicaSet],
    pods: Iterable[Pod],
    *,
    rng: random.Random,
    now: int | None = None,
    claims: PodClaims | None = None,
) -> DeploymentSync:
    """One sync of a Deployment.

    ``replica_sets``: the ReplicaSets of its namespace (it claims its own and adopts orphans
    its selector matches); ``pods``: the pods of its namespace (for the ReplicaSets' statuses);
    ``claims``: the ReplicaSets' claims of those same pods, kept for their syncs.

    Upstream: DeploymentController.syncDeployment (deployment_controller.go, v1.35)
    """
    d = set_defaults_deployment(d)
    selector = workload_selector(d, d.spec.selector)
    check_selector_matches_template(d, selector, d.spec.template)
    namespace_rss = [rs for rs in replica_sets if rs.metadata.namespace == d.metadata.namespace]
    claimed = claim(d, selector, namespace_rss)
    adopted = {rs.metadata.name for rs in claimed.owned} & {
        rs.metadata.name for rs in claimed.updated
    }
    released = [rs for rs in claimed.updated if rs.metadata.name not in adopted]
    work = _Sync(d, claimed.owned, namespace_rss, list(pods), rng, now, claims)
    for rs in claimed.updated:
        if rs.metadata.name in adopted:
            work.changes[rs.metadata.name] = rs
    if d.metadata.deletion_timestamp is None:
        try:
            if d.spec.paused or work.is_scaling_event():
                work.sync()
            elif d.spec.strategy.type == RECREATE:
                work.rollout_recreate()
            else:
                work.rollout_rolling()
        except _Requeue:
            pass
    return work.result(released)


def step_deployment(
    d: Deployment,
    replica_sets: Iterable[ReplicaSet],
    pods: Iterable[Pod],
    *,
    rng: random.Random,
    now: int | None = None,
    claim_memos: ClaimMemos | None = None,
) -> DeploymentStep:
    """One reconcile step: ``sync_deployment``, then ``sync_replica_set`` for each of the
    Deployment's ReplicaSets (oldest first), ranking scale-down victims against the pods of
    all of them, as the ReplicaSet controller does for a Deployment's ReplicaSets.
    ``claim_memos``: the claims' verdicts per pod, kept by the caller from step to step.
    """
    pods = list(pods)
    claims = PodClaims(pods, claim_memos)  # the ReplicaSets' claims, shared by both passes
    result = sync_deployment(d, replica_sets, pods, rng=rng, now=now, claims=claims)
    selectors = [label_selector_as_selector(rs.spec.selector) for rs in result.replica_sets]
    selected: dict[tuple[tuple[str, str], ...], bool] = {}  # by label set: replicas share one

    def related_pod(labels: Mapping[str, str]) -> bool:
        key = tuple(labels.items())
        found = selected.get(key)
        if found is None:
            found = selected[key] = any(s.matches(labels) for s in selectors)
        return found

    related = [p for p in pods if related_pod(p.metadata.labels)]
    actions = PodActions()
    for rs in result.replica_sets:
        actions = actions + sync_replica_set(
            rs, pods, rng=rng, now=now, related_pods=related, claims=claims
        )
    return DeploymentStep(result, actions)
