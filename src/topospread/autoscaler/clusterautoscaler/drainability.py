"""Which pods may be moved off a node being scaled down, and which block it.

The rules run in upstream's order; the first rule with an outcome decides. Mirror pods and pods
terminating for long are skipped (they do not move), DaemonSet pods, pods annotated
``safe-to-evict: "true"`` and terminal pods are drainable at once; then the blocking checks:
not replicated, kube-system without a PodDisruptionBudget, ``safe-to-evict: "false"``, local
storage, and a budget with no disruption left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum, IntEnum

from topospread.api.types import OwnerReference, Pod, PodDisruptionBudget
from topospread.cluster.snapshot import ObjectStore
from topospread.labels.selector import SelectorError, label_selector_as_selector

POD_SAFE_TO_EVICT_KEY = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES_KEY = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
DAEMONSET_POD_KEY = "cluster-autoscaler.kubernetes.io/daemonset-pod"
MIRROR_POD_KEY = "kubernetes.io/config.mirror"
CONFIG_SOURCE_KEY = "kubernetes.io/config.source"
API_SERVER_SOURCE = "api"
# Upstream: PodLongTerminatingExtraThreshold and DefaultTerminationGracePeriodSeconds.
LONG_TERMINATING_EXTRA = timedelta(seconds=30)
DEFAULT_TERMINATION_GRACE_PERIOD = 30
_REPLICATED_KINDS = frozenset({"ReplicationController", "Job", "ReplicaSet", "StatefulSet"})


class BlockingPodReason(IntEnum):
    """Upstream: drain.BlockingPodReason (utils/drain/drain.go), same names and order."""

    NoReason = 0
    ControllerNotFound = 1
    MinReplicasReached = 2
    NotReplicated = 3
    LocalStorageRequested = 4
    NotSafeToEvictAnnotation = 5
    UnmovableKubeSystemPod = 6
    NotEnoughPdb = 7
    UnexpectedError = 8


class Outcome(Enum):
    """Upstream: drainability.OutcomeType."""

    Undefined = "Undefined"
    Drain = "DrainOk"
    Block = "BlockDrain"
    Skip = "SkipDrain"


@dataclass(frozen=True, slots=True)
class DrainStatus:
    outcome: Outcome
    reason: BlockingPodReason = BlockingPodReason.NoReason
    message: str = ""


UNDEFINED = DrainStatus(Outcome.Undefined)
DRAINABLE = DrainStatus(Outcome.Drain)
SKIP = DrainStatus(Outcome.Skip)


def _blocked(reason: BlockingPodReason, message: str) -> DrainStatus:
    return DrainStatus(Outcome.Block, reason, message)


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def controller_ref(pod: Pod) -> OwnerReference | None:
    return next((r for r in pod.metadata.owner_references if r.controller), None)


def is_mirror_pod(pod: Pod) -> bool:
    return MIRROR_POD_KEY in pod.metadata.annotations


def is_static_pod(pod: Pod) -> bool:
    """A pod the kubelet runs from a file or URL (``kubernetes.io/config.source`` other than
    ``api``). Upstream: pod_util.IsStaticPod (utils/pod/pod.go)"""
    source = pod.metadata.annotations.get(CONFIG_SOURCE_KEY)
    return source is not None and source != API_SERVER_SOURCE


def is_daemonset_pod(pod: Pod) -> bool:
    """Upstream: pod_util.IsDaemonSetPod (controller kind DaemonSet, or the annotation)."""
    ref = controller_ref(pod)
    if ref is not None and ref.kind == "DaemonSet":
        return True
    return pod.metadata.annotations.get(DAEMONSET_POD_KEY) == "true"


def is_pod_long_terminating(pod: Pod, now: datetime) -> bool:
    """Deleted longer ago than its grace period plus 30 s. Upstream: drain.IsPodLongTerminating"""
    if pod.metadata.deletion_timestamp is None:
        return False
    grace = DEFAULT_TERMINATION_GRACE_PERIOD
    deadline = _parse_time(pod.metadata.deletion_timestamp) + timedelta(seconds=grace)
    return deadline + LONG_TERMINATING_EXTRA < now


def is_pod_terminal(pod: Pod) -> bool:
    """Upstream: drain.IsPodTerminal."""
    phase, policy = pod.status.phase, pod.spec.restart_policy
    if policy == "Never" and phase in ("Succeeded", "Failed"):
        return True
    if policy == "OnFailure" and phase == "Succeeded":
        return True
    return phase == "Failed"


def has_blocking_local_storage(pod: Pod) -> bool:
    """A hostPath or a non-memory emptyDir volume not listed in the safe-to-evict-local-volumes
    annotation. Upstream: drain.HasBlockingLocalStorage"""
    safe = {
        v.strip()
        for v in pod.metadata.annotations.get(SAFE_TO_EVICT_LOCAL_VOLUMES_KEY, "").split(",")
        if v.strip()
    }
    for volume in pod.spec.volumes:
        local = volume.host_path is not None or (
            volume.empty_dir is not None and volume.empty_dir.medium != "Memory"
        )
        if local and volume.name not in safe:
            return True
    return False


@dataclass(slots=True)
class RemainingPdbTracker:
    """PodDisruptionBudgets with the disruptions the simulated drains have used up.

    Upstream: pdb.BasicRemainingPdbTracker (core/scaledown/pdb)
    """

    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    remaining: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for pdb in self.pdbs:
            self.remaining.setdefault(_pdb_key(pdb), pdb.status.disruptions_allowed)

    def matching_pdbs(self, pod: Pod) -> list[PodDisruptionBudget]:
        out = []
        for pdb in self.pdbs:
            if pdb.metadata.namespace != pod.metadata.namespace:
                continue
            try:
                selector = label_selector_as_selector(pdb.spec.selector)
            except SelectorError:
                continue
            if pdb.spec.selector is not None and selector.matches(pod.metadata.labels):
                out.append(pdb)
        return out

    def disruptions_left(self, pdb: PodDisruptionBudget) -> int:
        return self.remaining.get(_pdb_key(pdb), pdb.status.disruptions_allowed)

    def can_remove_pods(self, pods: Sequence[Pod]) -> tuple[bool, bool, Pod | None]:
        """Whether ``pods`` may go (no budget of theirs is out of disruptions), whether all at
        once (no budget covers more of them than it allows), and the first pod that blocks
        either. Upstream: basicRemainingPdbTracker.CanRemovePods (core/scaledown/pdb/basic.go)
        """
        in_parallel, blocking = True, None
        for pdb in self.pdbs:
            left = self.disruptions_left(pdb)
            count = 0
            for pod in pods:
                if pdb not in self.matching_pdbs(pod):
                    continue
                count += 1
                if left < 1:
                    return False, False, pod
                if left < count:
                    in_parallel, blocking = False, pod
        return True, in_parallel, blocking

    def remove_pods(self, pods: Sequence[Pod]) -> None:
        for pod in pods:
            for pdb in self.matching_pdbs(pod):
                key = _pdb_key(pdb)
                self.remaining[key] = self.disruptions_left(pdb) - 1


def _pdb_key(pdb: PodDisruptionBudget) -> str:
    return f"{pdb.metadata.namespace}/{pdb.metadata.name}"


@dataclass(slots=True)
class DrainContext:
    """Upstream: drainability.DrainContext."""

    pdbs: RemainingPdbTracker
    # None: no listers (upstream's GetPodsToMove without them skips the replica count rule).
    objects: ObjectStore | None
    now: datetime


@dataclass(frozen=True, slots=True)
class DeleteOptions:
    """Upstream: options.NodeDeleteOptions (the drain rules' flags)."""

    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_local_storage: bool = True
    skip_nodes_with_custom_controller_pods: bool = True
    min_replica_count: int = 0
    bsp_disruption_timeout: timedelta = timedelta(hours=1)


def _controller_object_replicas(objects: ObjectStore, pod: Pod, ref: OwnerReference) -> int | None:
    ns = pod.metadata.namespace
    obj: object
    if ref.kind == "ReplicationController":
        obj = objects.replication_controller(ns, ref.name)
    elif ref.kind == "ReplicaSet":
        obj = objects.replica_set(ns, ref.name)
    elif ref.kind == "StatefulSet":
        obj = objects.stateful_set(ns, ref.name)
    else:
        return -1  # a kind the store does not hold (Job): taken to exist
    if obj is None:
        return None
    replicas = getattr(getattr(obj, "spec", None), "replicas", None)
    return 1 if replicas is None else int(replicas)


def replica_count_rule(pod: Pod, ctx: DrainContext, opts: DeleteOptions) -> DrainStatus:
    """The controller of a replicated kind exists and keeps min-replica-count replicas.

    Upstream: rules/replicacount
    """
    ref = controller_ref(pod)
    if ctx.objects is None or ref is None or ref.kind not in _REPLICATED_KINDS:
        return UNDEFINED
    replicas = _controller_object_replicas(ctx.objects, pod, ref)
    key = f"{pod.metadata.namespace}/{pod.metadata.name}"
    if replicas is None:
        message = f"replication controller for {key} is not available"
        return _blocked(BlockingPodReason.ControllerNotFound, message)
    if 0 <= replicas < opts.min_replica_count:
        message = (
            f"{ref.kind} for {key} has too few replicas spec: {replicas} "
            f"min: {opts.min_replica_count}"
        )
        return _blocked(BlockingPodReason.MinReplicasReached, message)
    return UNDEFINED


def mirror_rule(pod: Pod, ctx: DrainContext, opts: DeleteOptions) -> DrainStatus:
    """Upstream: rules/mirror (mirror pods are skipped)."""
    return SKIP if is_mirror_pod(pod) else UNDEFINED


def long_terminating_rule(pod: Pod, ctx: DrainContext, opts: DeleteOptions) -> DrainStatus:
    """Upstream: rules/longterminating (pods terminating for long are skipped)."""
    return SKIP if is_pod_long_terminating(pod, ctx.now) else UNDEFINED


def daemonset_rule(pod: Pod, ctx: DrainContext, opts: DeleteOptions) -> DrainStatus:
    """Upstream: rules/daemonset (DaemonSet pods are drainable)."""
    return DRAINABLE if is_daemonset_pod(pod) else UNDEFINED


def safe_to_evict_rule(pod: Pod, ctx: DrainContext, opts: DeleteOptions) -> DrainStatus:
    """Upstream: rules/safetoevict (``safe-to-evict: "true"`` is drainable)."""
    return DRAINABLE if pod.metadata.annotations.get(POD_SAFE_TO_EVICT_KEY) == "true" else UNDEFINED


def terminal_rule(pod: Pod, ctx: DrainContext, opts: DeleteOptions) -> DrainStatus:
    """Upstream: rules/terminal (terminal pods are drainable)."""
    return DRAINABLE if is_pod_terminal(pod) else UNDEFINED


def replicated_rule(pod: Pod, ctx: DrainContext, opts: DeleteOptions) -> DrainStatus:
    """Upstream: rules/replicated (a pod without a controller, or with one of a custom kind
    when skip-nodes-with-custom-controller-pods is on, blocks)."""
    ref = controller_ref(pod)
    replicated = ref is not None and (
        not opts.skip_nodes_with_custom_controller_pods or ref.kind in _REPLICATED_KINDS
    )
    if replicated:
        return UNDEFINED
    key = f"{pod.metadata.namespace}/{pod.metadata.name}"
    return _blocked(BlockingPodReason.NotReplicated, f"{key} is not replicated")


def _is_bsp_passed_disruption_timeout(pod: Pod, ctx: DrainContext, opts: DeleteOptions) -> bool:
    """Whether the pod was created longer than --blocking-system-pod-distruption-timeout before
    the drain (a pod with no creation time never is)."""
    stamp = pod.metadata.creation_timestamp
    if not stamp:
        return False
    try:
        created = _parse_time(stamp)
    except ValueError:
        return False
    return ctx.now > created + opts.bsp_disruption_timeout


def system_rule(pod: Pod, ctx: DrainContext, opts: DeleteOptions) -> DrainStatus:
    """Upstream: rules/system: a kube-system pod without a matching PDB blocks, unless it is
    older than --blocking-system-pod-distruption-timeout (then it is drainable)."""
    if pod.metadata.namespace == "kube-system" and not ctx.pdbs.matching_pdbs(pod):
        if _is_bsp_passed_disruption_timeout(pod, ctx, opts):
            return DRAINABLE
        message = (
            "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: "
            f"{pod.metadata.name}"
        )
        return _blocked(BlockingPodReason.UnmovableKubeSystemPod, message)
    return UNDEFINED


def not_safe_to_evict_rule(pod: Pod, ctx: DrainContext, opts: DeleteOptions) -> DrainStatus:
    """Upstream: rules/notsafetoevict (``safe-to-evict: "false"`` blocks)."""
    if pod.metadata.annotations.get(POD_SAFE_TO_EVICT_KEY) == "false":
        message = f"pod annotated as not safe to evict present: {pod.metadata.name}"
        return _blocked(BlockingPodReason.NotSafeToEvictAnnotation, message)
    return UNDEFINED


def local_storage_rule(pod: Pod, ctx: DrainContext, opts: DeleteOptions) -> DrainStatus:
    """Upstream: rules/localstorage (blocking local volumes block)."""
    if has_blocking_local_storage(pod):
        message = f"pod with local storage present: {pod.metadata.name}"
        return _blocked(BlockingPodReason.LocalStorageRequested, message)
    return UNDEFINED


def pdb_rule(pod: Pod, ctx: DrainContext, opts: DeleteOptions) -> DrainStatus:
    """Upstream: rules/pdb (a matching budget with no disruption left blocks)."""
    for pdb in ctx.pdbs.matching_pdbs(pod):
        if ctx.pdbs.disruptions_left(pdb) < 1:
            key = f"{pod.metadata.namespace}/{pod.metadata.name}"
            message = f"not enough pod disruption budget to move {key}"
            return _blocked(BlockingPodReason.NotEnoughPdb, message)
    return UNDEFINED


Rule = Callable[[Pod, DrainContext, DeleteOptions], DrainStatus]


def default_rules(opts: DeleteOptions) -> list[tuple[str, Rule]]:
    """The rules in upstream's order, those the options turn off left out.

    Upstream: rules.Default (simulator/drainability/rules/rules.go)
    """
    table: list[tuple[str, Rule, bool]] = [
        ("Mirror", mirror_rule, True),
        ("LongTerminating", long_terminating_rule, True),
        ("ReplicaCount", replica_count_rule, opts.skip_nodes_with_custom_controller_pods),
        # Interrupting checks.
        ("DaemonSet", daemonset_rule, True),
        ("SafeToEvict", safe_to_evict_rule, True),
        ("Terminal", terminal_rule, True),
        # Blocking checks.
        ("Replicated", replicated_rule, True),
        ("System", system_rule, opts.skip_nodes_with_system_pods),
        ("NotSafeToEvict", not_safe_to_evict_rule, True),
        ("LocalStorage", local_storage_rule, opts.skip_nodes_with_local_storage),
        ("PDB", pdb_rule, True),
    ]
    return [(name, rule) for name, rule, enabled in table if enabled]


def drainable(pod: Pod, ctx: DrainContext, opts: DeleteOptions) -> DrainStatus:
    """The first outcome of the default rules, in upstream's order.

    Upstream: Rules.Drainable (simulator/drainability/rules/rules.go)
    """
    for _, rule in default_rules(opts):
        status = rule(pod, ctx, opts)
        if status.outcome is not Outcome.Undefined:
            return status
    return UNDEFINED


@dataclass(frozen=True, slots=True)
class BlockingPod:
    """Upstream: drain.BlockingPod."""

    pod: Pod
    reason: BlockingPodReason
    message: str


def get_pods_to_move(
    pods: Sequence[Pod], ctx: DrainContext, opts: DeleteOptions
) -> tuple[list[Pod], list[Pod], BlockingPod | None]:
    """The pods to re-schedule, the DaemonSet pods, and the first pod that blocks the drain.

    Upstream: simulator.GetPodsToMove (simulator/drain.go)
    """
    to_move: list[Pod] = []
    daemonset: list[Pod] = []
    for pod in pods:
        status = drainable(pod, ctx, opts)
        if status.outcome is Outcome.Block:
            return [], [], BlockingPod(pod, status.reason, status.message)
        if status.outcome is Outcome.Skip:
            continue
        if is_daemonset_pod(pod):
            daemonset.append(pod)
        else:
            to_move.append(pod)
    return to_move, daemonset, None
