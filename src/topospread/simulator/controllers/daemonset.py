"""The DaemonSet controller: one pod on every node the DaemonSet's pod should run on.

Whether a node should run the pod is the controller's own check, not the scheduler's: the
template's ``nodeName`` (when set), its nodeSelector and required node affinity, and the node's
NoSchedule and NoExecute taints against the template's tolerations plus the ones every daemon
pod gets (not-ready and unreachable NoExecute; disk, memory and PID pressure, unschedulable,
and for host-network pods network-unavailable NoSchedule). A node whose untolerated taints are
all NoSchedule keeps a pod already there but gets no new one. Resources, ports and pod
(anti-)affinity are left to the scheduler.

Each pod is pinned to its node with required node affinity on ``matchFields metadata.name``,
which replaces the template's required node selector terms (the controller has already
checked them); the scheduler then places it like any other pod. Pods are named
``<daemonset>-<5 characters>`` and carry ``controller-revision-hash: <hash>`` (the template's
hash, computed as for a Deployment's ``pod-template-hash``) and, when the DaemonSet has the
``deprecated.daemonset.template.generation`` annotation the API server keeps, the
``pod-template-generation`` label.

RollingUpdate without maxSurge replaces out-of-date pods at most maxUnavailable (rounded up,
against the number of nodes that should run the pod) at a time, after the sync's own creates
and deletes have happened; RollingUpdate with maxSurge is not modelled (old pods stay).

Upstream: pkg/controller/daemon (daemon_controller.go, update.go, util/daemonset_util.go, v1.35)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Final

import msgspec

from topospread.api.types import (
    Affinity,
    DaemonSet,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodSpec,
    PodTemplateSpec,
    RollingUpdateDaemonSet,
    Taint,
    Toleration,
)
from topospread.nodeaffinity import get_required_node_affinity
from topospread.simulator.controllers.active_pods import (
    POD_FAILED,
    POD_SUCCEEDED,
    is_pod_available,
    is_pod_ready,
    pod_phase,
)
from topospread.simulator.controllers.common import (
    PodActions,
    check_selector_matches_template,
    claim_pods,
    compute_hash,
    create_pod,
    creation_time,
    describe,
    get_pod_from_template,
    get_scaled_value_from_int_or_percent,
    new_controller_ref,
    with_label,
    workload_selector,
)
from topospread.taints import find_matching_untolerated_taint

BURST_REPLICAS: Final = 250
"""At most this many pods are created or deleted in one sync (upstream's BurstReplicas)."""

ROLLING_UPDATE: Final = "RollingUpdate"
ON_DELETE: Final = "OnDelete"
DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY: Final = "controller-revision-hash"
DAEMON_SET_TEMPLATE_GENERATION_KEY: Final = "pod-template-generation"
DEPRECATED_TEMPLATE_GENERATION: Final = "deprecated.daemonset.template.generation"
OBJECT_NAME_FIELD: Final = "metadata.name"

# k8s.io/api/core/v1 well_known_taints.go
TAINT_NODE_NOT_READY: Final = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE: Final = "node.kubernetes.io/unreachable"
TAINT_NODE_UNSCHEDULABLE: Final = "node.kubernetes.io/unschedulable"
TAINT_NODE_MEMORY_PRESSURE: Final = "node.kubernetes.io/memory-pressure"
TAINT_NODE_DISK_PRESSURE: Final = "node.kubernetes.io/disk-pressure"
TAINT_NODE_NETWORK_UNAVAILABLE: Final = "node.kubernetes.io/network-unavailable"
TAINT_NODE_PID_PRESSURE: Final = "node.kubernetes.io/pid-pressure"


def set_defaults_daemon_set(ds: DaemonSet) -> DaemonSet:
    """updateStrategy RollingUpdate with maxUnavailable 1 and maxSurge 0,
    revisionHistoryLimit 10.

    Upstream: SetDefaults_DaemonSet (pkg/apis/apps/v1/defaults.go, v1.35)
    """
    spec = ds.spec
    strategy = spec.update_strategy
    if not strategy.type:
        strategy = msgspec.structs.replace(strategy, type=ROLLING_UPDATE)
    if strategy.type == ROLLING_UPDATE:
        ru = strategy.rolling_update or RollingUpdateDaemonSet()
        ru = msgspec.structs.replace(
            ru,
            max_unavailable=1 if ru.max_unavailable is None else ru.max_unavailable,
            max_surge=0 if ru.max_surge is None else ru.max_surge,
        )
        strategy = msgspec.structs.replace(strategy, rolling_update=ru)
    new_spec = msgspec.structs.replace(
        spec,
        update_strategy=strategy,
        revision_history_limit=(
            10 if spec.revision_history_limit is None else spec.revision_history_limit
        ),
    )
    return ds if new_spec == spec else msgspec.structs.replace(ds, spec=new_spec)


# ---------------------------------------------------------------------------------------------
# util/daemonset_util.go


def _match_toleration(a: Toleration, b: Toleration) -> bool:
    # Toleration.MatchToleration: same key, operator, value and effect.
    return (a.key, a.operator, a.value, a.effect) == (b.key, b.operator, b.value, b.effect)


def add_or_update_toleration_in_pod_spec(spec: PodSpec, toleration: Toleration) -> PodSpec:
    """Add ``toleration``, or replace one with the same key, operator, value and effect (e.g.
    a user's toleration with tolerationSeconds becomes the unlimited one).

    Upstream: AddOrUpdateTolerationInPodSpec (pkg/apis/core/v1/helper/helpers.go, v1.35)
    """
    out: list[Toleration] = []
    updated = False
    for existing in spec.tolerations:
        if _match_toleration(toleration, existing):
            if toleration == existing:
                return spec
            out.append(toleration)
            updated = True
            continue
        out.append(existing)
    if not updated:
        out.append(toleration)
    return msgspec.structs.replace(spec, tolerations=out)


_DAEMON_TOLERATIONS: Final = (
    Toleration(key=TAINT_NODE_NOT_READY, operator="Exists", effect="NoExecute"),
    Toleration(key=TAINT_NODE_UNREACHABLE, operator="Exists", effect="NoExecute"),
    Toleration(key=TAINT_NODE_DISK_PRESSURE, operator="Exists", effect="NoSchedule"),
    Toleration(key=TAINT_NODE_MEMORY_PRESSURE, operator="Exists", effect="NoSchedule"),
    Toleration(key=TAINT_NODE_PID_PRESSURE, operator="Exists", effect="NoSchedule"),
    Toleration(key=TAINT_NODE_UNSCHEDULABLE, operator="Exists", effect="NoSchedule"),
)
_HOST_NETWORK_TOLERATION: Final = Toleration(
    key=TAINT_NODE_NETWORK_UNAVAILABLE, operator="Exists", effect="NoSchedule"
)


def add_or_update_daemon_pod_tolerations(spec: PodSpec) -> PodSpec:
    """The tolerations every daemon pod gets, in upstream's order.

    Upstream: AddOrUpdateDaemonPodTolerations (daemon/util/daemonset_util.go, v1.35)
    """
    for toleration in _DAEMON_TOLERATIONS:
        spec = add_or_update_toleration_in_pod_spec(spec, toleration)
    if spec.host_network:
        spec = add_or_update_toleration_in_pod_spec(spec, _HOST_NETWORK_TOLERATION)
    return spec


def replace_daemon_set_pod_node_name_node_affinity(
    affinity: Affinity | None, node_name: str
) -> Affinity:
    """Pin to ``node_name``: required node affinity with one term, ``matchFields
    metadata.name In [node_name]``, replacing any required terms; preferred terms and pod
    (anti-)affinity stay.

    Upstream: ReplaceDaemonSetPodNodeNameNodeAffinity (daemon/util/daemonset_util.go, v1.35)
    """
    term = NodeSelectorTerm(
        match_fields=[
            NodeSelectorRequirement(key=OBJECT_NAME_FIELD, operator="In", values=[node_name])
        ]
    )
    selector = NodeSelector(node_selector_terms=[term])
    if affinity is None:
        return Affinity(
            node_affinity=NodeAffinity(required_during_scheduling_ignored_during_execution=selector)
        )
    node_affinity = affinity.node_affinity or NodeAffinity()
    required = node_affinity.required_during_scheduling_ignored_during_execution
    if required is None:
        required = selector
    else:
        required = msgspec.structs.replace(required, node_selector_terms=[term])
    node_affinity = msgspec.structs.replace(
        node_affinity, required_during_scheduling_ignored_during_execution=required
    )
    return msgspec.structs.replace(affinity, node_affinity=node_affinity)


def get_target_node_name(pod: Pod) -> str | None:
    """The node a daemon pod is for: its nodeName, else its matchFields metadata.name pin.

    Upstream: GetTargetNodeName (daemon/util/daemonset_util.go, v1.35)
    """
    if pod.spec.node_name:
        return pod.spec.node_name
    affinity = pod.spec.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    required = affinity.node_affinity.required_during_scheduling_ignored_during_execution
    if required is None:
        return None
    for term in required.node_selector_terms:
        for expr in term.match_fields:
            if expr.key == OBJECT_NAME_FIELD and expr.operator == "In":
                return expr.values[0] if len(expr.values) == 1 else None
    return None


def template_generation(ds: DaemonSet) -> int | None:
    """The deprecated template-generation annotation; None when absent or unreadable.

    Upstream: GetTemplateGeneration (daemon/util/daemonset_util.go, v1.35)
    """
    text = ds.metadata.annotations.get(DEPRECATED_TEMPLATE_GENERATION)
    if text is None:
        return None
    try:
        return int(text, 10)
    except ValueError:
        return None


def create_pod_template(
    template: PodTemplateSpec, generation: int | None, template_hash: str
) -> PodTemplateSpec:
    """The template with the daemon tolerations, the generation and the hash labels.

    Upstream: CreatePodTemplate (daemon/util/daemonset_util.go, v1.35)
    """
    spec = add_or_update_daemon_pod_tolerations(template.spec)
    template = msgspec.structs.replace(template, spec=spec)
    if generation is not None:
        template = with_label(template, DAEMON_SET_TEMPLATE_GENERATION_KEY, str(generation))
    if template_hash:
        template = with_label(template, DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY, template_hash)
    return template


def is_pod_updated(pod: Pod, template_hash: str, generation: int | None) -> bool:
    """Upstream: IsPodUpdated (daemon/util/daemonset_util.go, v1.35)"""
    labels = pod.metadata.labels
    template_matches = generation is not None and labels.get(
        DAEMON_SET_TEMPLATE_GENERATION_KEY
    ) == str(generation)
    hash_matches = bool(template_hash) and labels.get(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY) == (
        template_hash
    )
    return hash_matches or template_matches


# ---------------------------------------------------------------------------------------------
# daemon_controller.go


def new_pod(ds: DaemonSet, node_name: str) -> Pod:
    """The pod the controller checks a node with: the template, on the node, tolerating what
    every daemon pod tolerates.

    Upstream: NewPod (daemon_controller.go, v1.35)
    """
    template = ds.spec.template
    spec = add_or_update_daemon_pod_tolerations(
        msgspec.structs.replace(template.spec, node_name=node_name)
    )
    meta = msgspec.structs.replace(template.metadata, namespace=ds.metadata.namespace)
    return Pod(metadata=meta, spec=spec)


def _no_schedule_or_execute(taint: Taint) -> bool:
    return taint.effect in ("NoSchedule", "NoExecute")


def _no_execute(taint: Taint) -> bool:
    return taint.effect == "NoExecute"


def node_should_run_daemon_pod(node: Node, ds: DaemonSet) -> tuple[bool, bool]:
    """``(should_run, should_continue_running)``: whether a node without a daemon pod should
    get one, and whether a daemon pod already on it may stay.

    Upstream: NodeShouldRunDaemonPod / predicates (daemon_controller.go, v1.35)
    """
    pod = new_pod(ds, node.metadata.name)
    template_node = ds.spec.template.spec.node_name
    if template_node and template_node != node.metadata.name:
        return False, False
    if not get_required_node_affinity(pod).match(node):
        return False, False
    taints = node.spec.taints
    if find_matching_untolerated_taint(taints, pod.spec.tolerations, _no_schedule_or_execute):
        # Pods already there stay if they tolerate the NoExecute taints.
        untolerated = find_matching_untolerated_taint(taints, pod.spec.tolerations, _no_execute)
        return False, untolerated is None
    return True, True


# node_should_run_daemon_pod, or something that gives its answers (a memo of them).
ShouldRun = Callable[[Node, DaemonSet], tuple[bool, bool]]


class ShouldRunMemo:
    """node_should_run_daemon_pod's answers, kept per node and DaemonSet while the node and
    the template are the same objects (both immutable: a change stores a new one). It reads
    only those two, so a DaemonSet's sync after one node changed asks again of that node
    alone. Picklable (a simulation's snapshot carries it)."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str, str], tuple[Node, PodTemplateSpec, tuple[bool, bool]]]
        self._found = {}

    def __call__(self, node: Node, ds: DaemonSet) -> tuple[bool, bool]:
        key = (node.metadata.name, ds.metadata.namespace, ds.metadata.name)
        hit = self._found.get(key)
        template = ds.spec.template
        if hit is not None and hit[0] is node and hit[1] is template:
            return hit[2]
        answer = node_should_run_daemon_pod(node, ds)
        self._found[key] = (node, template, answer)
        return answer


def _by_creation_timestamp_and_phase_key(pod: Pod) -> tuple[int, int, str]:
    # podByCreationTimestampAndPhase: scheduled pods first, then older, then by name.
    t = creation_time(pod.metadata)
    return (0 if pod.spec.node_name else 1, -(2**63) if t is None else t, pod.metadata.name)


def _allows_surge(ds: DaemonSet) -> bool:
    """Upstream: AllowsSurge (daemon/util/daemonset_util.go, v1.35)"""
    ru = ds.spec.update_strategy.rolling_update
    if ds.spec.update_strategy.type != ROLLING_UPDATE or ru is None or ru.max_surge is None:
        return False
    where = f"{describe(ds)}: spec.updateStrategy.rollingUpdate.maxSurge"
    return get_scaled_value_from_int_or_percent(ru.max_surge, 1, True, where) != 0


def _pods_should_be_on_node(
    node: Node,
    node_to_pods: dict[str, list[Pod]],
    ds: DaemonSet,
    template_hash: str,
    now: int | None,
    should_run_on: ShouldRun = node_should_run_daemon_pod,
) -> tuple[bool, list[Pod]]:
    """Whether the node needs a pod, and which of its daemon pods to delete.

    Upstream: podsShouldBeOnNode (daemon_controller.go, v1.35)
    """
    should_run, should_continue = should_run_on(node, ds)
    name = node.metadata.name
    exists = name in node_to_pods
    pods = node_to_pods.get(name, [])
    if should_run and not exists:
        return True, []
    if should_continue:
        to_delete: list[Pod] = []
        running: list[Pod] = []
        for pod in pods:
            if pod.metadata.deletion_timestamp is not None:
                continue
            if pod_phase(pod) in (POD_FAILED, POD_SUCCEEDED):
                # Upstream backs off before deleting a pod that failed again; no clock here.
                to_delete.append(pod)
            else:
                running.append(pod)
        running.sort(key=_by_creation_timestamp_and_phase_key)
        if not _allows_surge(ds):
            # More than one running pod: keep the oldest.
            return False, to_delete + running[1:]
        if len(running) <= 1:
            return (not running and should_run), to_delete
        oldest_new: Pod | None = None
        oldest_old: Pod | None = None
        for pod in running:
            if pod.metadata.labels.get(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY) == template_hash:
                if oldest_new is None:
                    oldest_new = pod
                    continue
            elif oldest_old is None:
                oldest_old = pod
                continue
            to_delete.append(pod)
        # Two pods: the old one goes once it is not ready or the new one is available.
        if (
            oldest_new is not None
            and oldest_old is not None
            and (
                not is_pod_ready(oldest_old)
                or is_pod_available(oldest_new, ds.spec.min_ready_seconds, now)
            )
        ):
            to_delete.append(oldest_old)
        return False, to_delete
    if exists:
        return False, [p for p in pods if p.metadata.deletion_timestamp is None]
    return False, []


def _rolling_update(
    ds: DaemonSet,
    nodes: Sequence[Node],
    node_to_pods: dict[str, list[Pod]],
    template_hash: str,
    now: int | None,
    should_run_on: ShouldRun = node_should_run_daemon_pod,
) -> list[Pod]:
    """The out-of-date pods to delete now (without surge): unavailable ones, plus available
    ones while fewer than maxUnavailable nodes lack an available up-to-date pod. Nodes are
    visited by name (upstream's order is a map's).

    Upstream: rollingUpdate / updatedDesiredNodeCounts / findUpdatedPodsOnNode (update.go)
    """
    ru = ds.spec.update_strategy.rolling_update or RollingUpdateDaemonSet()
    node_to_pods = {k: list(v) for k, v in node_to_pods.items()}
    desired = 0
    for node in nodes:
        if should_run_on(node, ds)[0]:
            desired += 1
            node_to_pods.setdefault(node.metadata.name, [])
    where = f"{describe(ds)}: spec.updateStrategy.rollingUpdate"
    max_unavailable = get_scaled_value_from_int_or_percent(
        1 if ru.max_unavailable is None else ru.max_unavailable,
        desired,
        True,
        f"{where}.maxUnavailable",
    )
    surge = get_scaled_value_from_int_or_percent(
        0 if ru.max_surge is None else ru.max_surge, desired, True, f"{where}.maxSurge"
    )
    if desired > 0 and max_unavailable == 0 and surge == 0:
        max_unavailable = 1
    if surge != 0:
        return []
    generation = template_generation(ds)
    unavailable = 0
    replacements: list[Pod] = []
    candidates: list[Pod] = []
    for name in sorted(node_to_pods):
        new: Pod | None = None
        old: Pod | None = None
        ok = True
        for pod in node_to_pods[name]:
            if pod.metadata.deletion_timestamp is not None:
                continue
            if is_pod_updated(pod, template_hash, generation):
                ok = ok and new is None
                new = pod
            else:
                ok = ok and old is None
                old = pod
        if not ok or (new is None) == (old is None):
            unavailable += 1
        elif new is not None:
            if not is_pod_available(new, ds.spec.min_ready_seconds, now):
                unavailable += 1
        elif old is not None:
            if not is_pod_available(old, ds.spec.min_ready_seconds, now):
                replacements.append(old)
            elif unavailable < max_unavailable:
                candidates.append(old)
    remaining = min(max(max_unavailable - unavailable, 0), len(candidates))
    return replacements + candidates[:remaining]


def sync_daemon_set(
    ds: DaemonSet,
    pods: Iterable[Pod],
    nodes: Sequence[Node],
    *,
    rng: random.Random,
    now: int | None = None,
    should_run_on: ShouldRun = node_should_run_daemon_pod,
) -> PodActions:
    """One sync of a DaemonSet over ``nodes`` (in the order given).

    ``pods``: the pods of its namespace; it claims those its selector matches.
    ``should_run_on``: node_should_run_daemon_pod or a ShouldRunMemo of it.

    Upstream: DaemonSetsController.syncDaemonSet / manage / syncNodes (daemon_controller.go)
    """
    ds = set_defaults_daemon_set(ds)
    selector = workload_selector(ds, ds.spec.selector)
    check_selector_matches_template(ds, selector, ds.spec.template)
    claim = claim_pods(ds, selector, pods)
    updates = PodActions(update=tuple(claim.updated))
    if ds.metadata.deletion_timestamp is not None:
        return updates
    template_hash = compute_hash(ds.spec.template, ds.status.collision_count)

    node_to_pods: dict[str, list[Pod]] = {}
    for pod in claim.owned:
        target = get_target_node_name(pod)
        if target is not None:
            node_to_pods.setdefault(target, []).append(pod)

    needing: list[str] = []
    to_delete: list[Pod] = []
    for node in nodes:
        needs, victims = _pods_should_be_on_node(
            node, node_to_pods, ds, template_hash, now, should_run_on
        )
        if needs:
            needing.append(node.metadata.name)
        to_delete.extend(victims)
    # Pending pods pinned to nodes that no longer exist would never be scheduled.
    known = {n.metadata.name for n in nodes}
    for name in sorted(node_to_pods):
        if name not in known:
            to_delete.extend(p for p in node_to_pods[name] if not p.spec.node_name)

    if needing or to_delete:
        return updates + _sync_nodes(ds, to_delete, needing, template_hash, rng, now)
    # Rolling updates wait until the sync's own creates and deletes have been observed.
    if ds.spec.update_strategy.type == ROLLING_UPDATE:
        old = _rolling_update(ds, nodes, node_to_pods, template_hash, now, should_run_on)
        return updates + _sync_nodes(ds, old, [], template_hash, rng, now)
    return updates


def _sync_nodes(
    ds: DaemonSet,
    to_delete: list[Pod],
    needing: list[str],
    template_hash: str,
    rng: random.Random,
    now: int | None,
) -> PodActions:
    """Create a pinned pod for each node that needs one and delete the others, at most
    BURST_REPLICAS of each.

    Upstream: syncNodes (daemon_controller.go, v1.35)
    """
    template = create_pod_template(ds.spec.template, template_generation(ds), template_hash)
    ref = new_controller_ref(ds)
    created: list[Pod] = []
    for node_name in needing[:BURST_REPLICAS]:
        pod = get_pod_from_template(template, ds.metadata.name, ref)
        affinity = replace_daemon_set_pod_node_name_node_affinity(pod.spec.affinity, node_name)
        pod = msgspec.structs.replace(
            pod, spec=msgspec.structs.replace(pod.spec, affinity=affinity)
        )
        created.append(create_pod(pod, ds.metadata.namespace, rng, now))
    return PodActions(create=tuple(created), delete=tuple(to_delete[:BURST_REPLICAS]))
