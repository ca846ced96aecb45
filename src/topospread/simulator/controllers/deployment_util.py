"""The Deployment controller's helpers: the ReplicaSets' revisions, annotations and sizes,
which ReplicaSet is the new one, and the rolling update's fenceposts (maxSurge and
maxUnavailable resolved against the replicas).

Upstream: pkg/controller/deployment/util/deployment_util.go and the ReplicaSet helpers of
pkg/controller/controller_utils.go (v1.35)
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Final

import msgspec

from topospread.api.types import (
    Deployment,
    DeploymentStrategy,
    ReplicaSet,
    RollingUpdateDeployment,
)
from topospread.simulator.controllers.common import (
    creation_time,
    describe,
    equal_ignore_hash,
    get_scaled_value_from_int_or_percent,
)

DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY: Final = "pod-template-hash"
ROLLING_UPDATE: Final = "RollingUpdate"
RECREATE: Final = "Recreate"

REVISION_ANNOTATION: Final = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION: Final = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION: Final = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION: Final = "deployment.kubernetes.io/max-replicas"
_ANNOTATIONS_TO_SKIP: Final = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION_ANNOTATION,
        REVISION_HISTORY_ANNOTATION,
        DESIRED_REPLICAS_ANNOTATION,
        MAX_REPLICAS_ANNOTATION,
        "deprecated.deployment.rollback.to",
    }
)
_MAX_REV_HISTORY_LENGTH_IN_CHARS: Final = 2000
_ZERO_TIME: Final = -(2**63)


# ---------------------------------------------------------------------------------------------
# deployment_util.go


def rs_replicas(rs: ReplicaSet) -> int:
    return rs.spec.replicas if rs.spec.replicas is not None else 1


def deployment_replicas(d: Deployment) -> int:
    return d.spec.replicas if d.spec.replicas is not None else 1


def rolling_update(d: Deployment) -> RollingUpdateDeployment | None:
    strategy: DeploymentStrategy = d.spec.strategy
    if strategy.type != ROLLING_UPDATE:
        return None
    return strategy.rolling_update or RollingUpdateDeployment()


def resolve_fenceposts(
    max_surge: int | str | None, max_unavailable: int | str | None, desired: int, where: str
) -> tuple[int, int]:
    """maxSurge rounded up and maxUnavailable rounded down against ``desired``; when both come
    to 0, maxUnavailable is 1 (surge might be impossible, e.g. under a quota).

    Upstream: ResolveFenceposts (deployment/util/deployment_util.go, v1.35)
    """
    surge = get_scaled_value_from_int_or_percent(
        0 if max_surge is None else max_surge,
        desired,
        True,
        f"{where}: spec.strategy.rollingUpdate.maxSurge",
    )
    unavailable = get_scaled_value_from_int_or_percent(
        0 if max_unavailable is None else max_unavailable,
        desired,
        False,
        f"{where}: spec.strategy.rollingUpdate.maxUnavailable",
    )
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_unavailable(d: Deployment) -> int:
    """Upstream: MaxUnavailable (deployment/util/deployment_util.go, v1.35)"""
    ru = rolling_update(d)
    replicas = deployment_replicas(d)
    if ru is None or replicas == 0:
        return 0
    _, unavailable = resolve_fenceposts(ru.max_surge, ru.max_unavailable, replicas, describe(d))
    return min(unavailable, replicas)


def max_surge(d: Deployment) -> int:
    """Upstream: MaxSurge (deployment/util/deployment_util.go, v1.35)"""
    ru = rolling_update(d)
    if ru is None:
        return 0
    surge, _ = resolve_fenceposts(
        ru.max_surge, ru.max_unavailable, deployment_replicas(d), describe(d)
    )
    return surge


def new_rs_new_replicas(d: Deployment, all_rss: Sequence[ReplicaSet], new_rs: ReplicaSet) -> int:
    """How many replicas the new ReplicaSet may have now: RollingUpdate adds as many as keep
    every ReplicaSet's replicas within ``replicas + maxSurge`` (maxSurge read on its own,
    rounded up), never beyond ``replicas``; Recreate goes straight to ``replicas``.

    Upstream: NewRSNewReplicas (deployment/util/deployment_util.go, v1.35)
    """
    replicas = deployment_replicas(d)
    ru = rolling_update(d)
    if ru is None:
        return replicas
    surge = get_scaled_value_from_int_or_percent(
        0 if ru.max_surge is None else ru.max_surge,
        replicas,
        True,
        f"{describe(d)}: spec.strategy.rollingUpdate.maxSurge",
    )
    current = sum(rs_replicas(rs) for rs in all_rss)
    max_total = replicas + surge
    if current >= max_total:
        return rs_replicas(new_rs)
    scale_up = min(max_total - current, replicas - rs_replicas(new_rs))
    return rs_replicas(new_rs) + scale_up


def by_creation_key(rs: ReplicaSet) -> tuple[int, str]:
    # ReplicaSetsByCreationTimestamp: older first, then by name; the zero time is oldest.
    t = creation_time(rs.metadata)
    return (_ZERO_TIME if t is None else t, rs.metadata.name)


def by_creation(rss: Iterable[ReplicaSet]) -> list[ReplicaSet]:
    return sorted(rss, key=by_creation_key)


def revision_of(rs: ReplicaSet) -> int | None:
    """The revision annotation; 0 without one, None when it does not parse."""
    text = rs.metadata.annotations.get(REVISION_ANNOTATION)
    if text is None:
        return 0
    try:
        return int(text, 10)
    except ValueError:
        return None


def max_revision(rss: Iterable[ReplicaSet]) -> int:
    """Upstream: MaxRevision (deployment/util/deployment_util.go, v1.35)"""
    return max((r for r in map(revision_of, rss) if r is not None), default=0)


def by_revision(rss: Iterable[ReplicaSet]) -> list[ReplicaSet]:
    # ReplicaSetsByRevision: by revision, then as ReplicaSetsByCreationTimestamp.
    def cmp(a: ReplicaSet, b: ReplicaSet) -> int:
        ra, rb = revision_of(a), revision_of(b)
        if ra is None or rb is None or ra == rb:
            ka, kb = by_creation_key(a), by_creation_key(b)
            return -1 if ka < kb else (1 if kb < ka else 0)
        return -1 if ra < rb else 1

    return sorted(rss, key=functools.cmp_to_key(cmp))


def find_new_replica_set(d: Deployment, rss: Iterable[ReplicaSet]) -> ReplicaSet | None:
    """The oldest ReplicaSet whose template equals the Deployment's, ignoring the hash label.

    Upstream: FindNewReplicaSet (deployment/util/deployment_util.go, v1.35)
    """
    for rs in by_creation(rss):
        if equal_ignore_hash(
            rs.spec.template, d.spec.template, DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY
        ):
            return rs
    return None


def int32_annotation(rs: ReplicaSet, key: str) -> int | None:
    text = rs.metadata.annotations.get(key)
    if text is None:
        return None
    try:
        value = int(text, 10)
    except ValueError:
        return None
    return value if -(2**31) <= value < 2**31 else None


def with_annotations(rs: ReplicaSet, annotations: dict[str, str]) -> ReplicaSet:
    meta = msgspec.structs.replace(rs.metadata, annotations=annotations)
    return msgspec.structs.replace(rs, metadata=meta)


def with_replicas(rs: ReplicaSet, replicas: int) -> ReplicaSet:
    return msgspec.structs.replace(rs, spec=msgspec.structs.replace(rs.spec, replicas=replicas))


def round_to_int32(a: float) -> int:
    # integer.RoundToInt32: half away from zero.
    return int(a - 0.5) if a < 0 else int(a + 0.5)


def filter_active_replica_sets(rss: Iterable[ReplicaSet | None]) -> list[ReplicaSet]:
    """Upstream: FilterActiveReplicaSets (pkg/controller/controller_utils.go, v1.35)"""
    return [rs for rs in rss if rs is not None and rs_replicas(rs) > 0]


def find_active_or_latest(new: ReplicaSet | None, olds: list[ReplicaSet]) -> ReplicaSet | None:
    """Upstream: FindActiveOrLatest (deployment/util/deployment_util.go, v1.35)"""
    if new is None and not olds:
        return None
    olds = list(reversed(by_creation(olds)))
    active = filter_active_replica_sets([*olds, new])
    if not active:
        return new if new is not None else olds[0]
    if len(active) == 1:
        return active[0]
    return None


def sorted_by_size(rss: list[ReplicaSet], *, newer_first: bool) -> list[ReplicaSet]:
    """Larger first; equal sizes newer first (scaling up) or older first (scaling down).

    Upstream: ReplicaSetsBySizeNewer / ReplicaSetsBySizeOlder (controller_utils.go, v1.35)
    """
    by_age = by_creation(rss)
    if newer_first:
        by_age.reverse()
    return sorted(by_age, key=lambda rs: -rs_replicas(rs))


def set_replicas_annotations(rs: ReplicaSet, desired: int, most: int) -> ReplicaSet:
    """Upstream: SetReplicasAnnotations (deployment/util/deployment_util.go, v1.35)"""
    want = {DESIRED_REPLICAS_ANNOTATION: str(desired), MAX_REPLICAS_ANNOTATION: str(most)}
    have = rs.metadata.annotations
    if all(have.get(k) == v for k, v in want.items()):
        return rs
    return with_annotations(rs, {**have, **want})


def set_new_replica_set_annotations(
    d: Deployment, rs: ReplicaSet, new_revision: str, *, exists: bool
) -> tuple[ReplicaSet, bool]:
    """Copy the Deployment's annotations, raise the revision (keeping the one it replaces in
    the revision history, as after a rollback) and, for a new ReplicaSet, set the replicas
    annotations.

    Upstream: SetNewReplicaSetAnnotations (deployment/util/deployment_util.go, v1.35)
    """
    annotations = dict(rs.metadata.annotations)
    changed = False
    for k, v in sorted(d.metadata.annotations.items()):
        if k in _ANNOTATIONS_TO_SKIP or annotations.get(k) == v:
            continue
        annotations[k] = v
        changed = True
    old_revision = annotations.get(REVISION_ANNOTATION)
    try:
        old_int = int(old_revision, 10) if old_revision else 0
    except ValueError:
        return rs, False
    new_int = int(new_revision, 10)
    if old_int < new_int:
        annotations[REVISION_ANNOTATION] = new_revision
        changed = True
        if old_revision is not None:
            history = annotations.get(REVISION_HISTORY_ANNOTATION, "")
            revisions = history.split(",")
            if not revisions[0]:
                annotations[REVISION_HISTORY_ANNOTATION] = old_revision
            else:
                total = len(history) + len(old_revision) + 1
                start = 0
                while total > _MAX_REV_HISTORY_LENGTH_IN_CHARS and start < len(revisions):
                    total -= len(revisions[start]) + 1
                    start += 1
                if total <= _MAX_REV_HISTORY_LENGTH_IN_CHARS:
                    annotations[REVISION_HISTORY_ANNOTATION] = ",".join(
                        [*revisions[start:], old_revision]
                    )
    rs = with_annotations(rs, annotations)
    if not exists:
        replicas = deployment_replicas(d)
        annotated = set_replicas_annotations(rs, replicas, replicas + max_surge(d))
        changed = changed or annotated is not rs
        rs = annotated
    return rs, changed
