"""The StatefulSet controller: pods with stable names ``<statefulset>-<ordinal>``.

Ordinals run from ``spec.ordinals.start`` (0 by default) for ``spec.replicas`` pods; pods with
a higher (or lower) ordinal are condemned. With ``podManagementPolicy: OrderedReady`` a sync
creates one missing pod at a time, in ordinal order, and only once every lower ordinal is
Running and Ready; it deletes one condemned pod at a time, the highest ordinal first, once the
others are healthy. ``Parallel`` creates and deletes them all at once. A template change rolls
pods (RollingUpdate) from the highest ordinal down to the partition, at most maxUnavailable
unavailable at a time (MaxUnavailableStatefulSet is beta, on, in v1.35); OnDelete leaves them.

Pods carry ``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index`` and
``controller-revision-hash: <statefulset>-<hash>``, with ``hostname`` the pod's name and
``subdomain`` the serviceName. Upstream's revision hash is FNV-1 over the JSON patch of the
template as the API server stores it (every field defaulted); here it is the same algorithm
over topospread's canonical JSON of the template, so it is stable but not equal to upstream's.
Each pod's volumes use its ordinal's claims of the volumeClaimTemplates
(``claims.py``; the simulation creates the claims before the pod).

Upstream: pkg/controller/statefulset (stateful_set_control.go, stateful_set_utils.go, v1.35)
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable
from typing import Final, Protocol

import msgspec

from topospread.api.types import (
    Pod,
    PodTemplateSpec,
    RollingUpdateStatefulSetStrategy,
    StatefulSet,
    StatefulSetUpdateStrategy,
)
from topospread.simulator.controllers.active_pods import (
    POD_FAILED,
    POD_PENDING,
    POD_RUNNING,
    POD_SUCCEEDED,
    is_pod_available,
    is_pod_ready,
    is_pod_terminating,
    pod_phase,
)
from topospread.simulator.controllers.claims import update_storage
from topospread.simulator.controllers.common import (
    PodActions,
    check_selector_matches_template,
    claim_pods,
    create_pod,
    describe,
    get_pod_from_template,
    get_scaled_value_from_int_or_percent,
    hash_controller_revision,
    new_controller_ref,
    template_patch,
    workload_selector,
)

ORDERED_READY: Final = "OrderedReady"
PARALLEL: Final = "Parallel"
ROLLING_UPDATE: Final = "RollingUpdate"
ON_DELETE: Final = "OnDelete"

STATEFULSET_POD_NAME_LABEL: Final = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL: Final = "apps.kubernetes.io/pod-index"
CONTROLLER_REVISION_HASH_LABEL: Final = "controller-revision-hash"

_STATEFUL_POD: Final = re.compile(r"(.*)-([0-9]+)")


def set_defaults_stateful_set(sts: StatefulSet) -> StatefulSet:
    """replicas 1, podManagementPolicy OrderedReady, updateStrategy RollingUpdate with
    partition 0 and (MaxUnavailableStatefulSet) maxUnavailable 1, revisionHistoryLimit 10.

    Note upstream's quirk: ``type: RollingUpdate`` written without ``rollingUpdate`` stays
    without it (no partition); only a defaulted type gets the block.

    Upstream: SetDefaults_StatefulSet (pkg/apis/apps/v1/defaults.go, v1.35)
    """
    spec = sts.spec
    strategy = spec.update_strategy
    if not strategy.type:
        # Only a defaulted type gets a rollingUpdate block; an explicit RollingUpdate without
        # one keeps none (and then pods are versioned by status.currentReplicas).
        strategy = StatefulSetUpdateStrategy(
            type=ROLLING_UPDATE,
            rolling_update=strategy.rolling_update or RollingUpdateStatefulSetStrategy(),
        )
    ru = strategy.rolling_update
    if strategy.type == ROLLING_UPDATE and ru is not None:
        ru = msgspec.structs.replace(
            ru,
            partition=0 if ru.partition is None else ru.partition,
            max_unavailable=1 if ru.max_unavailable is None else ru.max_unavailable,
        )
        strategy = msgspec.structs.replace(strategy, rolling_update=ru)
    new_spec = msgspec.structs.replace(
        spec,
        replicas=1 if spec.replicas is None else spec.replicas,
        pod_management_policy=spec.pod_management_policy or ORDERED_READY,
        update_strategy=strategy,
        revision_history_limit=(
            10 if spec.revision_history_limit is None else spec.revision_history_limit
        ),
    )
    return sts if new_spec == spec else msgspec.structs.replace(sts, spec=new_spec)


# ---------------------------------------------------------------------------------------------
# stateful_set_utils.go


def get_parent_name_and_ordinal(pod: Pod) -> tuple[str, int]:
    """``(name, ordinal)`` from ``<name>-<ordinal>``; ``("", -1)`` for any other name.

    Upstream: getParentNameAndOrdinal (stateful_set_utils.go, v1.35)
    """
    m = _STATEFUL_POD.fullmatch(pod.metadata.name)
    if m is None:
        return "", -1
    ordinal = int(m.group(2))
    return m.group(1), ordinal if ordinal < 2**31 else -1


def get_ordinal(pod: Pod) -> int:
    """Upstream: getOrdinal (stateful_set_utils.go, v1.35)"""
    return get_parent_name_and_ordinal(pod)[1]


def get_pod_name(sts: StatefulSet, ordinal: int) -> str:
    """Upstream: getPodName (stateful_set_utils.go, v1.35)"""
    return f"{sts.metadata.name}-{ordinal}"


def get_start_ordinal(sts: StatefulSet) -> int:
    """Upstream: getStartOrdinal (stateful_set_utils.go, v1.35)"""
    return sts.spec.ordinals.start if sts.spec.ordinals is not None else 0


def get_pod_revision(pod: Pod) -> str:
    """Upstream: getPodRevision (stateful_set_utils.go, v1.35)"""
    return pod.metadata.labels.get(CONTROLLER_REVISION_HASH_LABEL, "")


def revision_name(sts: StatefulSet, template: PodTemplateSpec) -> str:
    """The name of the ControllerRevision of ``template``: ``<statefulset>-<hash>``.

    Upstream: newRevision / NewControllerRevision / ControllerRevisionName (v1.35)
    """
    probe = sts.status.collision_count or 0
    return f"{sts.metadata.name[:223]}-{hash_controller_revision(template_patch(template), probe)}"


def is_running_and_ready(pod: Pod) -> bool:
    """Upstream: isRunningAndReady (stateful_set_utils.go, v1.35)"""
    return pod_phase(pod) == POD_RUNNING and is_pod_ready(pod)


def is_running_and_available(pod: Pod, min_ready_seconds: int, now: int | None) -> bool:
    """Upstream: isRunningAndAvailable (stateful_set_utils.go, v1.35)"""
    return is_running_and_ready(pod) and is_pod_available(pod, min_ready_seconds, now)


def is_healthy(pod: Pod) -> bool:
    """Upstream: isHealthy (stateful_set_utils.go, v1.35)"""
    return is_running_and_ready(pod) and not is_pod_terminating(pod)


def _identity_labels(sts: StatefulSet, name: str, ordinal: int) -> dict[str, str]:
    return {STATEFULSET_POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal)}


def identity_matches(sts: StatefulSet, pod: Pod) -> bool:
    """Upstream: identityMatches (stateful_set_utils.go, v1.35)"""
    parent, ordinal = get_parent_name_and_ordinal(pod)
    return (
        ordinal >= 0
        and parent == sts.metadata.name
        and pod.metadata.name == get_pod_name(sts, ordinal)
        and pod.metadata.namespace == sts.metadata.namespace
        and pod.metadata.labels.get(STATEFULSET_POD_NAME_LABEL) == pod.metadata.name
    )


def update_identity(sts: StatefulSet, pod: Pod) -> Pod:
    """Upstream: updateIdentity (stateful_set_utils.go, v1.35)"""
    ordinal = get_ordinal(pod)
    name = get_pod_name(sts, ordinal)
    labels = {**pod.metadata.labels, **_identity_labels(sts, name, ordinal)}
    meta = msgspec.structs.replace(
        pod.metadata, name=name, namespace=sts.metadata.namespace, labels=labels
    )
    return msgspec.structs.replace(pod, metadata=meta)


def new_stateful_set_pod(
    sts: StatefulSet, template: PodTemplateSpec, ordinal: int, revision: str
) -> Pod:
    """The pod for ``ordinal`` (not yet created): the template, the identity labels, the
    revision label, hostname and subdomain.

    Upstream: newStatefulSetPod / initIdentity / updateStorage / setPodRevision
    (stateful_set_utils.go, v1.35)
    """
    pod = get_pod_from_template(template, sts.metadata.name, new_controller_ref(sts))
    name = get_pod_name(sts, ordinal)
    labels = {
        **pod.metadata.labels,
        **_identity_labels(sts, name, ordinal),
        CONTROLLER_REVISION_HASH_LABEL: revision,
    }
    meta = msgspec.structs.replace(
        pod.metadata, name=name, namespace=sts.metadata.namespace, labels=labels
    )
    spec = msgspec.structs.replace(pod.spec, hostname=name, subdomain=sts.spec.service_name)
    return update_storage(sts, msgspec.structs.replace(pod, metadata=meta, spec=spec), ordinal)


def get_stateful_set_max_unavailable(value: int | str | None, replicas: int, where: str) -> int:
    """maxUnavailable (default 1) against ``replicas``, rounded down, at least 1.

    Upstream: getStatefulSetMaxUnavailable (stateful_set_utils.go, v1.35)
    """
    scaled = get_scaled_value_from_int_or_percent(
        1 if value is None else value, replicas, False, where
    )
    return max(scaled, 1)


# ---------------------------------------------------------------------------------------------
# stateful_set_control.go


class StatefulClaims(Protocol):
    """What a sync does to its pods' claims (the cluster's storage, through the API server):
    the calls of upstream's StatefulPodControl on claims."""

    def is_stale(self, pod: Pod) -> bool:
        """A claim of the pod's ordinal refers to an earlier pod (PodClaimIsStale)."""
        ...

    def create_claims(self, pod: Pod) -> bool:
        """The pod's missing claims created; False when one is being deleted, which fails
        the sync (createPersistentVolumeClaims: ``pvc <name> is being deleted``)."""
        ...

    def match_policy(self, pod: Pod) -> None:
        """The pod's claims' owner references brought to the retention policy
        (ClaimsMatchRetentionPolicy, UpdatePodClaimForRetentionPolicy)."""
        ...


class _SyncFailed(Exception):
    """An API call of the sync failed: upstream's sync returns the error and retries later."""


class _Control:
    """One sync's working state: which pods exist, and what was created and deleted."""

    def __init__(self, sts: StatefulSet, rng: random.Random, now: int | None) -> None:
        self.sts = sts
        self.rng = rng
        self.now = now
        self.created: list[Pod] = []
        self.deleted: list[Pod] = []
        self.updated: list[Pod] = []
        self.pending: set[int] = set()  # replica slots whose pod is not created yet

    def create(self, pod: Pod) -> Pod:
        stored = create_pod(pod, self.sts.metadata.namespace, self.rng, self.now)
        self.created.append(stored)
        return stored

    def delete(self, pod: Pod) -> None:
        if all(p is not pod for p in self.deleted):
            self.deleted.append(pod)


def sync_stateful_set(
    sts: StatefulSet,
    pods: Iterable[Pod],
    *,
    rng: random.Random,
    now: int | None = None,
    current_template: PodTemplateSpec | None = None,
    claims: StatefulClaims | None = None,
) -> PodActions:
    """One sync of a StatefulSet.

    ``pods``: the pods of its namespace; it claims those named ``<statefulset>-<n>`` that its
    selector matches. ``current_template``: the template of the revision the StatefulSet is
    rolling from (its status.currentRevision), which pods below the partition are created
    with; None when that is the current template. ``claims``: the volumeClaimTemplates'
    claims, created and kept to the retention policy as the sync goes (None: not modelled).

    Upstream: defaultStatefulSetControl.updateStatefulSet (stateful_set_control.go, v1.35)
    """
    sts = set_defaults_stateful_set(sts)
    selector = workload_selector(sts, sts.spec.selector)
    check_selector_matches_template(sts, selector, sts.spec.template)
    name = sts.metadata.name
    claim = claim_pods(
        sts, selector, pods, match=lambda p: get_parent_name_and_ordinal(p)[0] == name
    )
    update_revision = revision_name(sts, sts.spec.template)
    current = current_template if current_template is not None else sts.spec.template
    current_revision = revision_name(sts, current)
    control = _Control(sts, rng, now)

    replica_count = sts.spec.replicas if sts.spec.replicas is not None else 1
    start = get_start_ordinal(sts)
    end = start + replica_count - 1
    slots: list[Pod | None] = [None] * replica_count
    condemned: list[Pod] = []
    for pod in claim.owned:
        ordinal = get_ordinal(pod)
        if start <= ordinal <= end:
            slots[ordinal - start] = pod
        elif ordinal >= 0:
            condemned.append(pod)

    current_replicas = sum(1 for p in claim.owned if get_pod_revision(p) == current_revision)
    strategy = sts.spec.update_strategy
    ru = strategy.rolling_update
    replicas: list[Pod] = []
    for i, slot in enumerate(slots):
        if slot is not None:
            replicas.append(slot)
            continue
        ordinal = start + i
        # newVersionedStatefulSetPod, with upstream's operator precedence: (A && B) || C.
        use_current = (
            strategy.type == ROLLING_UPDATE and ru is None and ordinal < start + current_replicas
        ) or (ru is not None and ordinal < start + (ru.partition or 0))
        if use_current:
            pod = new_stateful_set_pod(sts, current, ordinal, current_revision)
        else:
            pod = new_stateful_set_pod(sts, sts.spec.template, ordinal, update_revision)
        control.pending.add(i)
        replicas.append(pod)
    condemned.sort(key=get_ordinal, reverse=True)

    first_unhealthy: Pod | None = None
    for pod in [*replicas, *reversed(condemned)]:
        if not is_healthy(pod) and first_unhealthy is None:
            first_unhealthy = pod

    updates = tuple(claim.updated)
    if sts.metadata.deletion_timestamp is not None:
        return PodActions(update=updates)

    monotonic = sts.spec.pod_management_policy != PARALLEL
    min_ready = sts.spec.min_ready_seconds

    def process_replica(i: int) -> bool:
        """Upstream: processReplica (stateful_set_control.go, v1.35)"""
        pod = replicas[i]
        created = i not in control.pending
        if created and pod_phase(pod) in (POD_FAILED, POD_SUCCEEDED):
            # Finished pods are deleted and recreated on a later sync.
            if not is_pod_terminating(pod):
                control.delete(pod)
            return True
        if not created:
            if claims is not None:
                if claims.is_stale(pod):
                    return True  # no pod until the garbage collector deletes the claim
                if not claims.create_claims(pod):
                    raise _SyncFailed
            replicas[i] = control.create(pod)
            control.pending.discard(i)
            return monotonic
        if claims is not None and pod_phase(pod) == POD_PENDING and not claims.create_claims(pod):
            raise _SyncFailed
        if is_pod_terminating(pod) and monotonic:
            return True
        if not is_running_and_ready(pod) and monotonic:
            return True
        if not is_running_and_available(pod, min_ready, now) and monotonic:
            return True
        if claims is not None:
            claims.match_policy(pod)
        if identity_matches(sts, pod):
            return False
        replicas[i] = update_identity(sts, pod)
        control.updated.append(replicas[i])
        return False

    def process_condemned(i: int) -> bool:
        """Upstream: processCondemned (stateful_set_control.go, v1.35)"""
        pod = condemned[i]
        if is_pod_terminating(pod):
            return monotonic
        if not is_running_and_ready(pod) and monotonic and pod is not first_unhealthy:
            return True
        if (
            not is_running_and_available(pod, min_ready, now)
            and monotonic
            and pod is not first_unhealthy
        ):
            return True
        control.delete(pod)
        return True

    def run_for_all(count: int, fn: Callable[[int], bool]) -> bool:
        """Upstream: runForAll (stateful_set_control.go, v1.35)"""
        if monotonic:
            return any(fn(i) for i in range(count))
        for i in range(count):
            fn(i)
        return False

    def result() -> PodActions:
        return PodActions(
            create=tuple(control.created),
            delete=tuple(control.deleted),
            update=updates + tuple(control.updated),
        )

    try:
        if run_for_all(len(replicas), process_replica):
            return result()
    except _SyncFailed:
        return result()
    if claims is not None:
        # The condemned pods' claims first (fixPodClaim): under whenScaled: Delete each pod
        # becomes its claims' owner before it is deleted.
        for pod in condemned:
            claims.match_policy(pod)
    if run_for_all(len(condemned), process_condemned):
        return result()
    if strategy.type == ON_DELETE:
        return result()

    # updateStatefulSetAfterInvariantEstablished (MaxUnavailableStatefulSet, beta in v1.35).
    update_min = 0
    max_unavailable = 1
    if ru is not None:
        update_min = ru.partition or 0
        max_unavailable = get_stateful_set_max_unavailable(
            ru.max_unavailable,
            replica_count,
            f"{describe(sts)}: spec.updateStrategy.rollingUpdate.maxUnavailable",
        )

    def unavailable(pod: Pod) -> bool:
        # A pod created by this sync has no status yet: not running, so unavailable.
        return (
            any(p is pod for p in control.created)
            or not is_running_and_available(pod, min_ready, now)
            or is_pod_terminating(pod)
            or any(p is pod for p in control.deleted)
        )

    unavailable_pods = sum(1 for pod in replicas if unavailable(pod))
    if unavailable_pods >= max_unavailable:
        return result()
    to_delete = max_unavailable - unavailable_pods
    deleted = 0
    target = len(replicas) - 1
    while target >= update_min and deleted < to_delete:
        pod = replicas[target]
        if get_pod_revision(pod) != update_revision and not is_pod_terminating(pod):
            control.delete(pod)
            deleted += 1
        target -= 1
    return result()
