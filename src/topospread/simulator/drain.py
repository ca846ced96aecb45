"""``kubectl drain NODE --ignore-daemonsets`` (v1.35) for the timeline's ``drain`` step.

kubectl first sorts the node's pods through its filters: DaemonSet pods are left alone (with
a warning), mirror pods skipped, pods with emptyDir volumes and pods without a controller
refused unless ``--delete-emptydir-data`` or ``--force`` says otherwise. Any refusal is an
error for the node and kubectl then evicts nothing there (the node stays cordoned).

It then evicts the rest through the Eviction API (simulator/eviction.py), each pod in its own
loop: a 429 (a PodDisruptionBudget allows no disruption now) is retried every 5 s without a
time limit, any other error ends that pod's loop. Here a drain runs in passes: evict what the
budgets allow, let the controllers and the scheduler settle (replacements bind elsewhere and
restore the budgets' health), and pass again; a pass that evicts nothing ends the drain, the
pods still on the node reported as blocked — where kubectl would wait for ever, or until its
``--timeout``, and then go on with the next node. ``disableEviction`` deletes the pods instead,
as ``--disable-eviction`` does, and budgets are not consulted.

Finished pods are not on the node in the simulator (they hold no node's resources), so a drain
leaves them be; kubectl would delete them too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from topospread.api.types import Pod
from topospread.cluster.state import ClusterState
from topospread.simulator.controllers.common import get_controller_of
from topospread.simulator.decision import is_terminal
from topospread.simulator.eviction import (
    REASON_TOO_MANY_REQUESTS,
    Evictions,
    Refusal,
)

MIRROR_POD_ANNOTATION: Final = "kubernetes.io/config.mirror"

# kubectl's filter messages, byte for byte (staging/src/k8s.io/kubectl/pkg/drain/filters.go).
DAEMON_SET_WARNING: Final = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL: Final = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING: Final = "deleting Pods with local storage"
UNMANAGED_FATAL: Final = "cannot delete Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING: Final = "deleting Pods that declare no controller"

# The step's options and the kubectl flags they stand for.
OPTION_FLAGS: Final[Mapping[str, str]] = {
    "force": "--force",
    "disableEviction": "--disable-eviction",
    "deleteEmptyDirData": "--delete-emptydir-data",
}


@dataclass(frozen=True, slots=True)
class DrainOptions:
    force: bool = False
    disable_eviction: bool = False
    delete_emptydir_data: bool = False


@dataclass(frozen=True, slots=True)
class _Status:
    """A filter's verdict: delete or not, and an "Okay", "Skip", "Warning" or "Error"."""

    delete: bool
    reason: str = "Okay"
    message: str = ""


_OKAY: Final = _Status(True)


def _daemon_set_filter(
    pod: Pod, options: DrainOptions, daemon_set_exists: Callable[[str, str], bool]
) -> _Status:
    ref = get_controller_of(pod.metadata)
    if ref is None or ref.kind != "DaemonSet" or is_terminal(pod):
        return _OKAY
    if not daemon_set_exists(pod.metadata.namespace, ref.name):
        # An orphan: the Get's NotFound error is the message; --force deletes it.
        message = f'daemonsets.apps "{ref.name}" not found'
        return (
            _Status(True, "Warning", message) if options.force else _Status(False, "Error", message)
        )
    # The step always drains as with --ignore-daemonsets.
    return _Status(False, "Warning", DAEMON_SET_WARNING)


def _mirror_pod_filter(pod: Pod) -> _Status:
    # A static pod's mirror: the kubelet owns it, the API cannot evict it.
    if MIRROR_POD_ANNOTATION in pod.metadata.annotations:
        return _Status(False, "Skip")
    return _OKAY


def _local_storage_filter(pod: Pod, options: DrainOptions) -> _Status:
    if not any(v.empty_dir is not None for v in pod.spec.volumes) or is_terminal(pod):
        return _OKAY
    if not options.delete_emptydir_data:
        return _Status(False, "Error", LOCAL_STORAGE_FATAL)
    return _Status(True, "Warning", LOCAL_STORAGE_WARNING)


def _unreplicated_filter(pod: Pod, options: DrainOptions) -> _Status:
    if is_terminal(pod) or get_controller_of(pod.metadata) is not None:
        return _OKAY
    if options.force:
        return _Status(True, "Warning", UNMANAGED_WARNING)
    return _Status(False, "Error", UNMANAGED_FATAL)


@dataclass(slots=True)
class PodsForDeletion:
    pods: list[Pod]
    warnings: list[str]
    errors: list[str]


def get_pods_for_deletion(
    pods: Iterable[Pod], options: DrainOptions, daemon_set_exists: Callable[[str, str], bool]
) -> PodsForDeletion:
    """Run each pod through the filters in order until one keeps it; the last verdict counts
    (so only the last warning is kept). Messages group their pods, sorted.

    Upstream: GetPodsForDeletion, makeFilters, PodDeleteList.Warnings and errors
    (staging/src/k8s.io/kubectl/pkg/drain/drain.go and filters.go, v1.35)
    """
    filters: list[Callable[[Pod], _Status]] = [
        lambda p: _daemon_set_filter(p, options, daemon_set_exists),
        _mirror_pod_filter,
        lambda p: _local_storage_filter(p, options),
        lambda p: _unreplicated_filter(p, options),
    ]
    chosen: list[Pod] = []
    warned: dict[str, list[str]] = {}
    failed: dict[str, list[str]] = {}
    for pod in pods:
        status = _OKAY
        for check in filters:
            status = check(pod)
            if not status.delete:
                break
        if status.delete:
            chosen.append(pod)
        if status.reason == "Warning":
            warned.setdefault(status.message, []).append(pod.key)
        elif status.reason == "Error":
            failed.setdefault(status.message or "unexpected error", []).append(pod.key)
    warnings = [f"{m}: {', '.join(keys)}" for m, keys in sorted(warned.items())]
    errors = [
        f"{m if m.lower().startswith('cannot delete') else 'cannot delete ' + m}: {', '.join(keys)}"
        for m, keys in sorted(failed.items())
    ]
    return PodsForDeletion(chosen, warnings, errors)


@dataclass(frozen=True, slots=True)
class BlockedPod:
    """A pod the drain left on the node, and the eviction refusal that kept it there."""

    pod: str
    refusal: Refusal

    def to_json(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "reason": self.refusal.reason,
            "message": self.refusal.message,
            "cause": self.refusal.cause,
            "podDisruptionBudgets": list(self.refusal.pdbs),
        }


@dataclass(slots=True)
class DrainResult:
    """One node's drain: the pods evicted (or deleted), in how many passes, the pods left on
    the node by a budget (``blocked``) and kubectl's refusals (``errors``: nothing evicted)."""

    node: str
    deleted_directly: bool = False
    passes: int = 0
    evicted: list[str] = field(default_factory=list)
    blocked: list[BlockedPod] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.blocked and not self.errors

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "complete": self.complete,
            "evictionAPI": not self.deleted_directly,
            "passes": self.passes,
            "evicted": self.evicted,
            "blocked": [b.to_json() for b in self.blocked],
            "warnings": self.warnings,
            "errors": self.errors,
        }


class DrainTarget(Protocol):
    """What a drain reads and does of the simulated cluster (a Simulation)."""

    @property
    def cluster(self) -> ClusterState: ...
    @property
    def workloads(self) -> Mapping[tuple[str, str, str], Any]: ...
    @property
    def pods(self) -> Mapping[str, Pod]: ...
    def evictions(self) -> Evictions: ...
    def delete_pod(self, pod: Pod) -> None: ...
    def settle_within_step(self, where: str) -> None: ...


def drain_node(sim: DrainTarget, name: str, options: DrainOptions, where: str) -> DrainResult:
    """Drain one (cordoned) node; see the module docstring.

    Upstream: RunDrain's deleteOrEvictPodsSimple and Helper.DeleteOrEvictPods / evictPods
    (staging/src/k8s.io/kubectl/pkg/cmd/drain/drain.go, pkg/drain/drain.go, v1.35)
    """
    on_node = sorted(sim.cluster.infos[name].pods, key=lambda p: p.key)
    found = get_pods_for_deletion(
        on_node, options, lambda ns, ds: ("DaemonSet", ns, ds) in sim.workloads
    )
    result = DrainResult(name, options.disable_eviction, errors=found.errors)
    if found.errors:
        return result  # kubectl reports the errors alone (no warnings) and evicts nothing
    result.warnings = found.warnings
    if options.disable_eviction:
        result.passes = 1 if found.pods else 0
        for pod in found.pods:
            sim.delete_pod(pod)
            result.evicted.append(pod.key)
        return result
    pending = found.pods
    while pending:
        result.passes += 1
        evictions = sim.evictions()
        retry: list[tuple[Pod, Refusal]] = []
        evicted = 0
        for pod in pending:
            current = sim.pods.get(pod.key)
            if current is None or current.metadata.uid != pod.metadata.uid:
                continue  # gone already: a NotFound ends kubectl's loop for the pod
            refusal = evictions.evict(current)
            if refusal is None:
                sim.delete_pod(current)
                result.evicted.append(current.key)
                evicted += 1
            elif refusal.reason == REASON_TOO_MANY_REQUESTS:
                retry.append((current, refusal))
            else:
                result.blocked.append(BlockedPod(current.key, refusal))
        if retry and not evicted:
            result.blocked += [BlockedPod(p.key, r) for p, r in retry]
            break
        if retry:
            # kubectl retries 5 s later; meanwhile the controllers replace the evicted pods.
            sim.settle_within_step(where)
        pending = [p for p, _ in retry]
    result.blocked.sort(key=lambda b: b.pod)
    return result


__all__ = [
    "MIRROR_POD_ANNOTATION",
    "OPTION_FLAGS",
    "BlockedPod",
    "DrainOptions",
    "DrainResult",
    "DrainTarget",
    "PodsForDeletion",
    "drain_node",
    "get_pods_for_deletion",
]
