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

This module holds the defaults and the entry points (deployment_controller.go); the sync's
working state is deployment_sync.py (sync.go), the rollouts deployment_rollout.py (rolling.go,
recreate.go), the helpers deployment_util.py (util/deployment_util.go).

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
    Pod,
    ReplicaSet,
    RollingUpdateDeployment,
)
from topospread.labels.selector import label_selector_as_selector
from topospread.simulator.controllers.common import (
    PodActions,
    check_selector_matches_template,
    claim,
    workload_selector,
)
from topospread.simulator.controllers.deployment_rollout import rollout_recreate, rollout_rolling
from topospread.simulator.controllers.deployment_sync import DeploymentSync, Requeue, SyncState
from topospread.simulator.controllers.deployment_util import (
    RECREATE,
    ROLLING_UPDATE,
)
from topospread.simulator.controllers.lazy_list import LazyList, as_sequence
from topospread.simulator.controllers.replicaset import (
    ClaimMemos,
    PodClaims,
    ReplicaSetClaims,
    sync_replica_set,
)


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
class DeploymentStep:
    """One reconcile step: the Deployment's sync, then one sync of each of its ReplicaSets."""

    sync: DeploymentSync
    pods: PodActions

    def __bool__(self) -> bool:
        return bool(self.sync) or bool(self.pods)


# ---------------------------------------------------------------------------------------------
# Entry points


def sync_deployment(
    d: Deployment,
    replica_sets: Iterable[ReplicaSet],
    pods: Iterable[Pod],
    *,
    rng: random.Random,
    now: int | None = None,
    claims: ReplicaSetClaims | None = None,
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
    work = SyncState(d, claimed.owned, namespace_rss, as_sequence(pods), rng, now, claims)
    for rs in claimed.updated:
        if rs.metadata.name in adopted:
            work.changes[rs.metadata.name] = rs
    if d.metadata.deletion_timestamp is None:
        try:
            if d.spec.paused or work.is_scaling_event():
                work.sync()
            elif d.spec.strategy.type == RECREATE:
                rollout_recreate(work)
            else:
                rollout_rolling(work)
        except Requeue:
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
    claims: ReplicaSetClaims | None = None,
) -> DeploymentStep:
    """One reconcile step: ``sync_deployment``, then ``sync_replica_set`` for each of the
    Deployment's ReplicaSets (oldest first), ranking scale-down victims against the pods of
    all of them, as the ReplicaSet controller does for a Deployment's ReplicaSets.
    ``claim_memos``: the claims' verdicts per pod, kept by the caller from step to step;
    ``claims``: the ReplicaSets' claims of the same pods made otherwise (the fast path's,
    claim_index.py), which then need not be listed unless read (a LazyList).
    """
    pods = as_sequence(pods)
    if claims is None:
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

    # Read only to rank scale-down victims.
    related = LazyList(lambda: [p for p in pods if related_pod(p.metadata.labels)])
    actions = PodActions()
    for rs in result.replica_sets:
        actions = actions + sync_replica_set(
            rs, pods, rng=rng, now=now, related_pods=related, claims=claims
        )
    return DeploymentStep(result, actions)
