"""The simulated cluster: nodes, every pod (bound or not), the workloads, their controllers
and the one Scheduler that places pods, driven to a fixpoint after every change.

After the initial state and after every step, ``Simulation.settle`` runs the workload
controllers (simulator/controllers) and the scheduler to a fixpoint: every controller syncs once
per round, in a fixed order, and the scheduler then tries every pod in its active queue; the
loop ends in the first round in which no controller acted and no pod was bound, or after
MAX_ROUNDS rounds (the step's report then says it did not settle). Pods a controller creates
are admitted as the API server admits them (simulator/pod_admission.py's ``admit_pod``, plus the
DefaultTolerationSeconds admission), and a pod that binds is Running and Ready from then on
(controllers/active_pods.py), so a rolling update advances through its surge and unavailable
steps inside the loop.

A simulated clock (simulator/clock.py) counts from 0 at the timeline's start and moves only in
``wait`` steps; every other step takes no time. The taint manager (simulator/tainteviction.py)
evicts at once the pods that do not tolerate a node's NoExecute taints and schedules the
eviction of those that tolerate them for ``tolerationSeconds`` (DefaultTolerationSeconds gives
every pod 300 s for ``node.kubernetes.io/unreachable`` and ``not-ready``); a ``wait`` carries out
the evictions that fall due, each at its time, and removing the taints first cancels them.

The API, shared by ``simulate``, ``sweep`` and ``rebalance``:

- ``Simulation(scenario, seed=...)`` loads a timeline scenario's nodes and objects, and its
  ``autoscaler:`` section (or ``autoscaler=``, a parsed section) as ``sim.autoscaler``, which
  acts in ``wait`` steps (simulator/autoscaling.py); ``settle_with_autoscaler`` (in
  timeline_steps/waiting.py) runs the clock until nothing is Pending or starting;
- ``settle(where)`` runs controllers and scheduler to their fixpoint;
- ``step.run(sim)`` carries out one timeline step (simulator/timeline_steps/; then settle);
- ``snapshot()`` freezes the whole state, and ``Snapshot.restore()`` gives back an independent
  simulation equal to it, any number of times (simulator/checkpoint.py).

The class holds the state and is a facade over collaborators, each a concept of its own: the
stores of pods and workloads (simulator/stores.py), the API server that takes objects in
(simulator/api_server.py), the nodes (simulator/cluster_nodes.py), the taint manager
(simulator/taint_eviction_controller.py), the disruption controller
(simulator/disruption_controller.py) and the scheduler (simulator/scheduler.py). The workload
controllers' round (simulator/controller_manager.py) is a mixin of the class: it reads and
writes nearly all of the state, and tests swap its methods on ``Simulation``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import msgspec

from topospread.api.admission import add_default_toleration_seconds
from topospread.api.types import (
    Job,
    Node,
    Pod,
    PodDisruptionBudget,
    PodTemplateSpec,
    ReplicaSet,
)
from topospread.cluster.state import ClusterState
from topospread.errors import ManifestError, TopospreadError, ValidationError
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.runtime import Registry
from topospread.simulator import pending_runs
from topospread.simulator.api_server import ApiServer, LookupObject
from topospread.simulator.checkpoint import Snapshot
from topospread.simulator.cloud import CloudState
from topospread.simulator.cluster_nodes import ClusterNodes
from topospread.simulator.controller_manager import ControllerManager
from topospread.simulator.controllers.claims import admit_claim, ephemeral_claims
from topospread.simulator.controllers.common import get_controller_of
from topospread.simulator.controllers.kinds import LeftOut
from topospread.simulator.disruption_controller import DisruptionController
from topospread.simulator.eviction import Evictions
from topospread.simulator.garbage_collector import collect_claims_of
from topospread.simulator.node_groups import NodeGroup
from topospread.simulator.pod_admission import admit_pod
from topospread.simulator.scheduler import Decision, Scheduler, is_terminal
from topospread.simulator.stores import (
    PodStore,
    Workload,
    WorkloadKey,
    WorkloadStore,
    parent_reported,
)
from topospread.simulator.taint_eviction_controller import (
    TaintChanges,
    TaintEvictionController,
    clock_epoch,
)
from topospread.simulator.tainteviction import TaintEvictionQueue

if TYPE_CHECKING:
    from topospread.simulator.autoscaler_spec import AutoscalerSpec
    from topospread.simulator.autoscaling import AutoscalerController
    from topospread.simulator.timeline_format import TimelineScenario

MAX_ROUNDS: Final = 200


@dataclass(slots=True)
class Settled:
    """The controllers-and-scheduler loop after one step."""

    rounds: int
    settled: bool
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    placed: dict[str, str] = field(default_factory=dict)
    preempted: list[str] = field(default_factory=list)
    # Pods the taint manager evicted in the loop (a pod bound to a node whose NoExecute taint it
    # tolerates for 0 s).
    evicted: list[str] = field(default_factory=list)


class Simulation(ControllerManager):
    """The live cluster of a timeline: nodes, every pod (bound or not), the workloads and the
    one Scheduler that places pods across all steps (the module docstring gives the API)."""

    def __init__(
        self,
        scenario: TimelineScenario,
        *,
        registry: Registry | None = None,
        features: Features = DEFAULT_FEATURES,
        seed: int = 0,
        fast: bool = True,
        autoscaler: AutoscalerSpec | None = None,
    ) -> None:
        """``fast``: let the scheduler's vectorised path decide the attempts it supports;
        ``autoscaler``: an autoscaler to run in place of the scenario's own section."""
        if registry is None:
            from topospread.plugins.registry import IN_TREE

            registry = IN_TREE
        self.scenario = scenario
        self.features = features
        self.registry = registry
        self.autoscaler_spec = autoscaler if autoscaler is not None else scenario.autoscaler
        self.seed = seed
        # The clock (nanoseconds since the timeline's start) and the taint manager's timed
        # evictions. The clock's 0 is the latest time the input records (taints' timeAdded,
        # creationTimestamps, pods' startTime: a cluster read at that moment at the earliest),
        # so older taints count from before.
        self.now = 0
        self.epoch = clock_epoch(scenario)
        self.taint_evictions = TaintEvictionQueue()
        # Stock-outs and nodes starting up, on the same clock (the stockout and addNodes steps).
        self.cloud = CloudState()
        # Only evictions decided before the clock starts, reported with the initial state.
        self.start_events: list[str] = []
        self.started = False
        # Controllers draw names and UIDs from this source; the scheduler seeds its own
        # (host selection) from the same seed.
        self.rng = random.Random(seed)
        self.pods = PodStore()
        self.workloads = WorkloadStore()
        self.fast = fast
        ControllerManager.__init__(self, fast=fast)
        # Derived views that readers keep between steps (reports' per-node domains), by name;
        # snapshots carry them.
        self.memo: dict[str, Any] = {}
        self.lookups: list[LookupObject] = []
        # Objects read and not modelled, said once per kind in the scenario's warnings.
        self.left_out = LeftOut()
        # A StatefulSet mid-rollout: the template of its current revision, until every pod
        # runs the update revision (status.currentRevision).
        self.sts_current: dict[WorkloadKey, PodTemplateSpec] = {}
        self.group_counters: dict[tuple[str, str], int] = {}
        # The controllers-and-scheduler work a step did before its final settle (a drain
        # settles between its eviction passes), reported with the step.
        self._carried: Settled | None = None
        self.api_server = ApiServer(self)
        self.taint_manager = TaintEvictionController(self)
        self.disruption = DisruptionController(self)
        self.nodes = ClusterNodes(self)
        self.cluster = ClusterState()
        self.scheduler = Scheduler(
            self.cluster,
            scenario.config,
            registry,
            features,
            seed=seed,
            pod_disruption_budgets=[],
            fast=fast,
            # The report shows where pods went and why the Pending ones wait (a failed attempt
            # always runs the reference path, which words the message); the per-node scores
            # and reasons of successful attempts are never shown, and asking the reference
            # plugins for them recounts every pod on every node.
            detail=False,
        )
        for where, raw in scenario.nodes:
            self.add_node(raw, where)
        for group in scenario.groups.values():
            zones = group.zones or ("",)
            for zone in zones:
                n = group.per_zone.get(zone, 0) if zone else group.count
                self.add_group_nodes(group, zone, n, f"{scenario.source}: nodeGroups")
        storage = self.cluster.storage_state
        storage.informers_synced = False
        for where, obj in scenario.objects:
            self.apply(obj, where)
        storage.informers_synced = True
        storage.sync_claims()
        self.taint_manager.start()
        self.started = True
        # The autoscaler in the loop (simulator/autoscaling.py), acting at its ticks in waits.
        self.autoscaler: AutoscalerController | None = None
        if self.autoscaler_spec is not None:
            from topospread.simulator.autoscaling import build_autoscaler

            self.autoscaler = build_autoscaler(self.autoscaler_spec, self)

    # ------------------------------------------------------------------ copies

    def snapshot(self) -> Snapshot[Simulation]:
        """The whole state, frozen: ``restore()`` gives independent copies equal to it."""
        return Snapshot.of(self)

    # ------------------------------------------------------------------ objects

    def apply(self, obj: Any, where: str) -> str:
        """Create or replace one object, as ``kubectl apply`` would; returns what happened."""
        return self.api_server.apply(obj, where)

    def find_workload(self, ref: Any, where: str) -> Workload:
        """A workload named ``[namespace/]kind/name`` (kind as kubectl spells it)."""
        return self.api_server.find_workload(ref, where)

    # ------------------------------------------------------------------ nodes

    @property
    def node_version(self) -> int:
        """Bumped by every change to the nodes."""
        return self.nodes.version

    def add_node(self, raw: Node, where: str) -> None:
        """A new node joins the cluster (admitted as the API server admits it)."""
        self.nodes.add(raw, where)

    def update_node(self, node: Node) -> TaintChanges:
        """Store the node; if its NoExecute taints changed, the taint manager acts."""
        return self.nodes.update(node)

    def remove_node(self, name: str) -> list[str]:
        """Delete a node; the pod garbage collector deletes the pods bound to it."""
        return self.nodes.remove(name)

    def add_group_nodes(self, group: NodeGroup, zone: str, count: int, where: str) -> list[str]:
        """``count`` more nodes of ``group`` (in ``zone``), numbered after the existing ones."""
        return self.nodes.add_group(group, zone, count, where)

    def node(self, name: str, where: str) -> Node:
        """The node a step names (Not found: the step's error)."""
        return self.nodes.get(name, where)

    def zone_nodes(self, zone: str, zone_key: str, where: str) -> list[Node]:
        """The nodes of a zone a step names, by name (none: the step's error)."""
        return self.nodes.in_zone(zone, zone_key, where)

    def node_taints_changed(self, node: Node, at: int | None = None) -> TaintChanges:
        """The taint manager after the node's NoExecute taints changed (at ``at``, now by
        default; simulator/taint_eviction_controller.py)."""
        return self.taint_manager.node_taints_changed(node, at)

    def fire_due_evictions(
        self, until: int, where: str
    ) -> list[tuple[int, tuple[str, ...], list[str]]]:
        """Carry out the scheduled evictions due by ``until``, each at its time (the clock
        moves there, and the controllers and the scheduler settle before the next falls due);
        returns the evicted pods by time and by the taints tolerated for a while."""
        return self.taint_manager.fire_due_evictions(until, where)

    # ------------------------------------------------------------------ pods

    def create_pod(self, pod: Pod, where: str) -> Pod:
        label = f"{where} (Pod {pod.key})"
        admitted = add_default_toleration_seconds(
            admit_pod(pod, self.api_server.priorities(), label)
        )
        if is_terminal(admitted):
            # Finished (from a cluster or a saved file): controllers read it (a Job counts its
            # succeeded pods), kube-scheduler never sees it; it holds no node's resources. The
            # reports, which show what the scheduler sees, name it in a note.
            self.left_out.finished.append(admitted.key)
            self.left_out.update_warnings(self.scenario.warnings)
        elif admitted.spec.node_name:
            if admitted.spec.node_name not in self.cluster.infos:
                raise ValidationError(
                    f'{label}: spec.nodeName: Not found: "{admitted.spec.node_name}": no such node'
                )
            self.cluster.bind(admitted, admitted.spec.node_name)
            if self.started:
                self.taint_manager.pod_bound(admitted)
        else:
            self._create_ephemeral_claims(admitted)
            self.scheduler.add(admitted)
        self.pods[admitted.key] = admitted
        return admitted

    def _create_ephemeral_claims(self, pod: Pod) -> None:
        """The ephemeral volume controller: a missing claim for each generic ephemeral volume
        (deleted with the pod, its owner)."""
        storage = self.cluster.storage_state
        for claim in ephemeral_claims(pod):
            if claim.key not in storage.pvcs:
                storage.create_claim(admit_claim(claim, storage.classes.values()))

    def delete_pod(self, pod: Pod) -> None:
        """Delete a pod at once (no graceful termination): bound pods leave their node."""
        stored = self.pods.pop(pod.key, None)
        self.taint_evictions.cancel(pod.key)
        current = stored if stored is not None else pod
        if current.spec.node_name:
            self.scheduler.delete_assigned_pod(current)
        else:
            self.scheduler.delete_pending_pod(current.key)
        # The garbage collector and the PVC protection controller: the claims the pod owned
        # or held (simulator/garbage_collector.py).
        collect_claims_of(self, current)

    def finish_pod(self, key: str) -> None:
        """The pod's containers exit 0: it is Succeeded and leaves its node (a terminal pod
        takes no room and the scheduler no longer sees it); its controller reads it as a
        completion."""
        pod = self.pods[key]
        if pod.spec.node_name:
            self.scheduler.delete_assigned_pod(pod)
        else:
            self.scheduler.delete_pending_pod(key)
        self.taint_evictions.cancel(key)
        status = msgspec.structs.replace(pod.status, phase="Succeeded")
        self.pods[key] = msgspec.structs.replace(pod, status=status)

    def update_pod(self, pod: Pod) -> None:
        old = self.pods.get(pod.key)
        if old is None:
            return
        if old.spec.node_name:
            pod = msgspec.structs.replace(
                pod, spec=msgspec.structs.replace(pod.spec, node_name=old.spec.node_name)
            )
            self.cluster.unbind(old)
            self.cluster.bind(pod, old.spec.node_name)
        else:
            self.scheduler.update_pending_pod(pod)
        self.pods[pod.key] = pod

    def find_pod(self, name: str, where: str) -> Pod:
        if name in self.pods:
            return self.pods[name]
        matches = [p for p in self.pods.values() if p.metadata.name == name]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise ManifestError(f'{where}: pod "{name}" is ambiguous; use namespace/name')
        raise ManifestError(f'{where}: Not found: pod "{name}"')

    def owner_of(self, pod: Pod) -> WorkloadKey | None:
        """The workload that controls the pod: a Deployment for its ReplicaSets' pods."""
        ref = get_controller_of(pod.metadata)
        if ref is None:
            return None
        return self.owner_of_reference(pod.metadata.namespace, ref.kind, ref.name)

    def owner_of_reference(self, namespace: str, kind: str, name: str) -> WorkloadKey | None:
        """The workload that controls the pods whose controller is ``kind``/``name``: a
        Deployment for its ReplicaSets' pods, a CronJob for its Jobs'."""
        key = (kind, namespace, name)
        owner = self.workloads.get(key)
        if isinstance(owner, ReplicaSet | Job):
            parent = get_controller_of(owner.metadata)
            if parent is not None and parent_reported(owner, parent.kind):
                return (parent.kind, namespace, parent.name)
        return key if owner is not None else None

    def name_taken(self, namespace: str, name: str) -> bool:
        return f"{namespace}/{name}" in self.pods

    def sorted_pods(self) -> list[tuple[str, Pod]]:
        """Every pod by key, in key order (the list is shared: do not modify it)."""
        return self.pods.sorted_items()

    def _pods_in(self, namespace: str) -> list[Pod]:
        """The namespace's pods by key."""
        return self.pods.in_namespace(namespace)

    # ------------------------------------------------------------------ the loop

    def settle(self, where: str) -> Settled:
        """Controllers and scheduler until neither acts, at most MAX_ROUNDS rounds; what the
        step's earlier settles (``settle_within_step``) did is added in."""
        out, self._carried = self._carried, None
        if out is None:
            out = Settled(rounds=0, settled=True)
        settled = False
        try:
            for _ in range(MAX_ROUNDS):
                out.rounds += 1
                if not self.round(out):
                    settled = True
                    break
        except TopospreadError as err:
            raise type(err)(f"{where}: {err}") from err
        out.settled = out.settled and settled
        # The scheduler's last attempts may have deleted victims: the budgets catch up.
        self.sync_budgets()
        return out

    def settle_within_step(self, where: str) -> None:
        """Settle now, in the middle of a step (a drain waiting to retry its evictions); the
        work is reported with the step."""
        self._carried = self.settle(where)

    # ------------------------------------------------------------------ budgets

    def budgets(self) -> list[PodDisruptionBudget]:
        return self.disruption.budgets()

    def sync_budgets(self) -> None:
        """The disruption controller: every budget's status recomputed from the pods now."""
        self.disruption.sync()

    def evictions(self) -> Evictions:
        """The eviction subresource for one drain pass (``DisruptionController.evictions``)."""
        return self.disruption.evictions()

    def round(self, out: Settled) -> bool:
        """One round: every controller syncs once, then the scheduler empties its active
        queue. True when a controller acted or a pod was bound (the loop goes on)."""
        acted = self._sync_controllers(out)
        # Budget statuses are written for readers only: syncing them is not an action that
        # keeps the loop going.
        self.sync_budgets()
        bound = self._schedule(out)
        # Evictions due now: pods bound in this round to a node whose NoExecute taint they
        # tolerate for 0 s.
        fired = [w.pod for w in self.taint_evictions.pop_due(self.now) if w.pod in self.pods]
        for key in fired:
            self.delete_pod(self.pods[key])
        out.evicted += fired
        return acted or bound or bool(fired)

    def _schedule(self, out: Settled) -> bool:
        bound = False

        def record(decision: Decision) -> None:
            nonlocal bound
            if decision.node is not None and decision.key in self.pods:
                self.pods[decision.key] = decision.pod
                out.placed[decision.key] = decision.node
                bound = True
                self.taint_manager.pod_bound(decision.pod)
            for victim in decision.preempted:
                gone = self.pods.pop(victim, None)
                if gone is not None:
                    out.preempted.append(victim)
                    out.placed.pop(victim, None)
                    collect_claims_of(self, gone)
            if decision.preempted:
                # The victims' budgets lost healthy pods before the next scheduling cycle.
                self.sync_budgets()

        # Runs of pending pods (simulator/pending_runs.py): only bindings and preemptions are
        # recorded here, and a failure that repeats another's records nothing.
        self.scheduler.run(record, runs=pending_runs.ENABLED)
        return bound

    def pending_message(self, pod: Pod) -> str:
        """The FailedScheduling text of the pod's last attempt, or why it was not tried."""
        key = pod.key
        why = self.scheduler.pending_of(key)
        if isinstance(why, tuple):
            return why[1]
        if why is not None and why.message:
            return why.message
        last = self.scheduler.last.get(key)
        if last is not None and last.message:
            return last.message
        return "not yet attempted"


__all__ = [
    "MAX_ROUNDS",
    "Settled",
    "Simulation",
]
