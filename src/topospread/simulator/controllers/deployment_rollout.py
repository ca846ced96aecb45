"""The Deployment's two rollouts, each driving one sync (deployment_sync.py): RollingUpdate
scales the new ReplicaSet up within maxSurge, then old ones down, their unhealthy replicas
first, within maxUnavailable, oldest first; Recreate scales every old ReplicaSet to 0, waits
until none of their pods runs, then scales the new one up.

Upstream: pkg/controller/deployment/rolling.go and recreate.go (v1.35)
"""

from __future__ import annotations

from topospread.api.types import ReplicaSet
from topospread.simulator.controllers.active_pods import POD_FAILED, POD_SUCCEEDED, pod_phase
from topospread.simulator.controllers.common import is_controlled_by
from topospread.simulator.controllers.deployment_sync import SyncState
from topospread.simulator.controllers.deployment_util import (
    by_creation,
    deployment_replicas,
    filter_active_replica_sets,
    max_unavailable,
    new_rs_new_replicas,
    rs_replicas,
)


class _InvalidScale(Exception):
    """An invalid scale request: upstream logs it and stops reconciling old ReplicaSets."""


# ---------------------------------------------------------------------------------------------
# rolling.go


def rollout_rolling(s: SyncState) -> None:
    """Upstream: rolloutRolling (rolling.go, v1.35)"""
    new, olds = s.get_all_replica_sets_and_sync_revision(create=True)
    assert new is not None
    if reconcile_new_replica_set(s, new):
        return
    olds = [s.rs(o.metadata.name) for o in olds]
    new = s.rs(new.metadata.name)
    if reconcile_old_replica_sets(s, filter_active_replica_sets(olds), new):
        return
    if s.deployment_complete():
        s.cleanup_deployment([s.rs(o.metadata.name) for o in olds])


def reconcile_new_replica_set(s: SyncState, new: ReplicaSet) -> bool:
    """Upstream: reconcileNewReplicaSet (rolling.go, v1.35)"""
    replicas = deployment_replicas(s.d)
    if rs_replicas(new) == replicas:
        return False
    if rs_replicas(new) > replicas:
        return s.scale_replica_set_and_record_event(new, replicas)
    count = new_rs_new_replicas(s.d, s.all(), new)
    return s.scale_replica_set_and_record_event(new, count)


def reconcile_old_replica_sets(s: SyncState, olds: list[ReplicaSet], new: ReplicaSet) -> bool:
    """Upstream: reconcileOldReplicaSets (rolling.go, v1.35)"""
    if sum(rs_replicas(rs) for rs in olds) == 0:
        return False
    all_count = sum(rs_replicas(rs) for rs in s.all())
    min_available = deployment_replicas(s.d) - max_unavailable(s.d)
    new_unavailable = rs_replicas(new) - s.available(new)
    max_scaled_down = all_count - min_available - new_unavailable
    if max_scaled_down <= 0:
        return False
    try:
        olds, cleaned = cleanup_unhealthy_replicas(s, olds, max_scaled_down)
        scaled = scale_down_old_replica_sets_for_rolling_update(s, [*olds, new], olds)
    except _InvalidScale:
        return False
    return cleaned + scaled > 0


def cleanup_unhealthy_replicas(
    s: SyncState, olds: list[ReplicaSet], max_cleanup: int
) -> tuple[list[ReplicaSet], int]:
    """Scale old ReplicaSets down by their unavailable replicas, oldest first.

    Upstream: cleanupUnhealthyReplicas (rolling.go, v1.35)
    """
    olds = by_creation(olds)
    total = 0
    for i, rs in enumerate(olds):
        if total >= max_cleanup:
            break
        if rs_replicas(rs) == 0 or rs_replicas(rs) == s.available(rs):
            continue
        count = min(max_cleanup - total, rs_replicas(rs) - s.available(rs))
        if count < 0:
            # More available pods than replicas: upstream refuses to "scale down" upwards.
            raise _InvalidScale
        s.scale_replica_set_and_record_event(rs, rs_replicas(rs) - count)
        olds[i] = s.rs(rs.metadata.name)
        total += count
    return olds, total


def scale_down_old_replica_sets_for_rolling_update(
    s: SyncState, all_rss: list[ReplicaSet], olds: list[ReplicaSet]
) -> int:
    """Scale old ReplicaSets down as far as ``replicas - maxUnavailable`` available pods
    allow, oldest first.

    Upstream: scaleDownOldReplicaSetsForRollingUpdate (rolling.go, v1.35)
    """
    min_available = deployment_replicas(s.d) - max_unavailable(s.d)
    available = sum(s.available(rs) for rs in all_rss)
    if available <= min_available:
        return 0
    total = 0
    to_scale = available - min_available
    for rs in by_creation(olds):
        if total >= to_scale:
            break
        rs = s.rs(rs.metadata.name)
        if rs_replicas(rs) == 0:
            continue
        count = min(rs_replicas(rs), to_scale - total)
        s.scale_replica_set_and_record_event(rs, rs_replicas(rs) - count)
        total += count
    return total


# ---------------------------------------------------------------------------------------------
# recreate.go


def rollout_recreate(s: SyncState) -> None:
    """Upstream: rolloutRecreate (recreate.go, v1.35)"""
    new, olds = s.get_all_replica_sets_and_sync_revision(create=False)
    scaled = False
    for rs in filter_active_replica_sets([s.rs(o.metadata.name) for o in olds]):
        scaled = s.scale_replica_set_and_record_event(rs, 0) or scaled
    if scaled:
        return
    if old_pods_running(s, new, olds):
        return
    if new is None:
        new, olds = s.get_all_replica_sets_and_sync_revision(create=True)
        assert new is not None
    s.scale_replica_set_and_record_event(s.rs(new.metadata.name), deployment_replicas(s.d))
    if s.deployment_complete():
        s.cleanup_deployment([s.rs(o.metadata.name) for o in olds])


def old_pods_running(s: SyncState, new: ReplicaSet | None, olds: list[ReplicaSet]) -> bool:
    """Upstream: oldPodsRunning (recreate.go, v1.35)"""
    if sum(s.actual(rs) for rs in olds) > 0:
        return True
    for rs in olds:
        if new is not None and rs.metadata.name == new.metadata.name:
            continue
        for pod in s.pods:
            if is_controlled_by(pod.metadata, rs) and pod_phase(pod) not in (
                POD_FAILED,
                POD_SUCCEEDED,
            ):
                return True
    return False
