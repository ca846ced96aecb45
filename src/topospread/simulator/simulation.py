"""The simulated cluster: nodes, every pod (bound or not), the workloads, their controllers
and the one Scheduler that places pods, driven to a fixpoint after every change.

After the initial state and after every step, ``Simulation.settle`` runs the workload
controllers (simulator/controllers) and the scheduler to a fixpoint: every controller syncs once
per round, in a fixed order, and the scheduler then tries every pod in its active queue; the
loop ends in the first round in which no controller acted and no pod was bound, or after
MAX_ROUNDS rounds (the step's report then says it did not settle). Pods a controller creates
are admitted as the API server admits them (simulator/scenario.py's ``admit_pod``, plus the
DefaultTolerationSeconds admission), and a pod that binds is Running and Ready from then on
(controllers/common.py), so a rolling update advances through its surge and unavailable
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
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import msgspec

from topospread.api.admission import (
    add_default_toleration_seconds,
)
from topospread.api.apps_validation import template_path
from topospread.api.loader import (
    UnknownObject,
)
from topospread.api.object_validation import describe_object, validate_object
from topospread.api.storage import (
    STORAGE_KINDS,
    CSIStorageCapacity,
    PersistentVolumeClaim,
    StorageObject,
)
from topospread.api.types import (
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    CronJob,
    DaemonSet,
    Deployment,
    Job,
    LabelSelector,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PodTemplateSpec,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    Taint,
)
from topospread.cluster.snapshot import ObjectStore
from topospread.cluster.state import ClusterState
from topospread.errors import ManifestError, TopospreadError, ValidationError
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.runtime import Registry
from topospread.labels.selector import Selector, SelectorError, label_selector_as_selector
from topospread.simulator.checkpoint import IndexedDict, Snapshot
from topospread.simulator.clock import format_duration
from topospread.simulator.cloud import CloudState
from topospread.simulator.controllers import (
    PodActions,
    step_deployment,
    sync_daemon_set,
    sync_job,
    sync_replica_set,
    sync_stateful_set,
)
from topospread.simulator.controllers.claims import (
    admit_claim,
    deletes_claims_when_scaled,
    ephemeral_claims,
    get_persistent_volume_claims,
    with_retention_owner,
)
from topospread.simulator.controllers.common import (
    GENERATE_NAME_CONFLICT,
    check_selector_matches_template,
    format_time,
    get_controller_of,
    get_pod_from_template,
    is_controlled_by,
    parse_time,
    retry_generate_name,
    stamp,
    workload_selector,
)
from topospread.simulator.controllers.cronjob import cron_job_schedule, sync_cron_job
from topospread.simulator.controllers.daemonset import (
    ShouldRun,
    ShouldRunMemo,
    node_should_run_daemon_pod,
)
from topospread.simulator.controllers.disruption import sync_budget
from topospread.simulator.controllers.kinds import LeftOut
from topospread.simulator.controllers.replicationcontroller import (
    as_replica_set,
    set_defaults_replication_controller,
    sync_replication_controller,
    validate_replication_controller_spec,
)
from topospread.simulator.controllers.statefulset import (
    get_ordinal,
    get_parent_name_and_ordinal,
    get_pod_revision,
    get_start_ordinal,
    revision_name,
)
from topospread.simulator.eviction import Evictions, validate_pdb
from topospread.simulator.node_groups import NodeGroup, region_of
from topospread.simulator.scenario import admit_node, admit_pod, priority_classes
from topospread.simulator.scheduler import Decision, Scheduler, is_terminal
from topospread.simulator.tainteviction import (
    ScheduledEviction,
    TaintEvictionQueue,
    get_no_execute_taints,
    process_pod_on_node,
)

if TYPE_CHECKING:
    from topospread.simulator.autoscaler_spec import AutoscalerSpec
    from topospread.simulator.autoscaling import AutoscalerController
    from topospread.simulator.timeline_format import TimelineScenario

MAX_ROUNDS: Final = 200
Workload: TypeAlias = (
    Deployment | ReplicaSet | ReplicationController | StatefulSet | DaemonSet | CronJob | Job
)
_WORKLOAD_TYPES: Final = (
    Deployment,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
    DaemonSet,
    CronJob,
    Job,
)
LookupObject: TypeAlias = Service | Namespace | PriorityClass | PodDisruptionBudget
_LOOKUP_TYPES: Final = (
    Service,
    Namespace,
    PriorityClass,
    PodDisruptionBudget,
)

# Workload kinds as a step names them (`deployment/web`), with kubectl's short names.
_KIND_NAMES: Final[Mapping[str, str]] = {
    "deployment": "Deployment",
    "deployments": "Deployment",
    "deploy": "Deployment",
    "replicaset": "ReplicaSet",
    "replicasets": "ReplicaSet",
    "rs": "ReplicaSet",
    "statefulset": "StatefulSet",
    "statefulsets": "StatefulSet",
    "sts": "StatefulSet",
    "daemonset": "DaemonSet",
    "daemonsets": "DaemonSet",
    "ds": "DaemonSet",
    "replicationcontroller": "ReplicationController",
    "replicationcontrollers": "ReplicationController",
    "rc": "ReplicationController",
    "job": "Job",
    "jobs": "Job",
    "cronjob": "CronJob",
    "cronjobs": "CronJob",
    "cj": "CronJob",
}
# Controllers sync in this order in every round (then each kind's objects by namespace/name);
# a CronJob before the Jobs it creates.
_KIND_ORDER: Final = (
    "Deployment",
    "ReplicaSet",
    "ReplicationController",
    "StatefulSet",
    "DaemonSet",
    "CronJob",
    "Job",
)

# The clock's 0 when no input taint carries a timeAdded (Unix time 0: timeAdded then reads as
# the time since the timeline's start).
DEFAULT_EPOCH: Final = 0

WorkloadKey: TypeAlias = tuple[str, str, str]  # (kind, namespace, name)


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


@dataclass(slots=True)
class TaintChanges:
    """What the taint manager did after a node's NoExecute taints changed."""

    evicted: list[str] = field(default_factory=list)
    scheduled: dict[int, list[str]] = field(default_factory=dict)  # firing time: pods
    cancelled: list[str] = field(default_factory=list)

    def text(self) -> list[str]:
        """Report fragments: evicted now, evictions scheduled (by time), evictions cancelled."""
        parts = [f"evicted {count_text(self.evicted)}"] if self.evicted else []
        for at, keys in sorted(self.scheduled.items()):
            parts.append(f"eviction of {count_text(keys)} due at {format_duration(at)}")
        if self.cancelled:
            parts.append(f"cancelled the scheduled eviction of {count_text(self.cancelled)}")
        return parts


def workload_key(obj: Workload) -> WorkloadKey:
    return (obj.kind, obj.metadata.namespace, obj.metadata.name)


def describe_workload(key: WorkloadKey) -> str:
    """``deployment default/web``, as reports name a workload."""
    return f"{key[0].lower()} {key[1]}/{key[2]}"


class _Pods(IndexedDict[str, Pod]):
    """The simulation's pods by key, counting every change (``version``) so that views of
    them (the pods of a namespace, sorted) are rebuilt only after one, and indexed by
    controller and by label so that a Deployment's sync reads its own pods, not every pod."""

    def __init__(self) -> None:
        super().__init__()
        self.version = 0
        # (namespace, kind, name) and uid of the controller -> pod keys; orphans by namespace;
        # (namespace, label key, label value) -> pod keys.
        self.by_owner: dict[tuple[str, str, str], set[str]] = {}
        self.by_owner_uid: dict[str, set[str]] = {}
        self.orphans: dict[str, set[str]] = {}
        self.by_label: dict[tuple[str, str, str], set[str]] = {}
        # Every pod stored or removed (before and after) since the last take_changed().
        self.changed: list[Pod] = []
        # The keys stored or removed since the last take_touched() (the reports' index).
        self.touched: set[str] = set()

    def take_changed(self) -> list[Pod]:
        changed, self.changed = self.changed, []
        return changed

    def take_touched(self) -> set[str]:
        touched, self.touched = self.touched, set()
        return touched

    def _index(self, key: str, pod: Pod, add: bool) -> None:
        meta = pod.metadata
        ns = meta.namespace
        buckets: list[tuple[dict[Any, set[str]], Any]] = [
            (self.by_label, (ns, k, v)) for k, v in meta.labels.items()
        ]
        ref = get_controller_of(meta)
        if ref is None:
            buckets.append((self.orphans, ns))
        else:
            buckets.append((self.by_owner, (ns, ref.kind, ref.name)))
            if ref.uid:
                buckets.append((self.by_owner_uid, ref.uid))
        for index, bucket in buckets:
            if add:
                index.setdefault(bucket, set()).add(key)
            else:
                keys = index.get(bucket)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[bucket]

    def __setitem__(self, key: str, pod: Pod) -> None:
        self.version += 1
        self.touched.add(key)
        old = self.get(key)
        if old is not None:
            self._index(key, old, False)
            self.changed.append(old)
        super().__setitem__(key, pod)
        self._index(key, pod, True)
        self.changed.append(pod)

    def __delitem__(self, key: str) -> None:
        self.version += 1
        self.touched.add(key)
        old = self[key]
        self._index(key, old, False)
        self.changed.append(old)
        super().__delitem__(key)

    def pop(self, key: str, *default: Any) -> Any:
        if key in self:
            pod = self[key]
            del self[key]
            return pod
        return super().pop(key, *default)

    def clear(self) -> None:
        self.version += 1
        self.changed += self.values()
        self.touched.update(self.keys())
        super().clear()
        for index in (self.by_owner, self.by_owner_uid, self.orphans, self.by_label):
            index.clear()

    def owned_by(self, namespace: str, owner: Any) -> set[str]:
        """Keys of the pods whose controller reference names ``owner`` (by kind and name, or
        by UID): a superset of those ``is_controlled_by`` accepts."""
        keys = set(self.by_owner.get((namespace, owner.kind, owner.metadata.name), ()))
        if owner.metadata.uid:
            keys |= self.by_owner_uid.get(owner.metadata.uid, set())
        return keys

    def selectable_by(self, namespace: str, selector: LabelSelector | None) -> set[str] | None:
        """Keys of a superset of the namespace's pods the selector matches: those carrying the
        rarest of its ``matchLabels`` (or of one ``In`` expression's values); None when it
        names no such label (then any pod may match)."""
        if selector is None:
            return None
        options: list[set[str]] = [
            self.by_label.get((namespace, k, v), set()) for k, v in selector.match_labels.items()
        ]
        for e in selector.match_expressions:
            if e.operator == "In":
                union: set[str] = set()
                for v in e.values:
                    union |= self.by_label.get((namespace, e.key, v), set())
                options.append(union)
        if not options:
            return None
        rarest = options[0]
        for keys in options[1:]:
            if len(keys) < len(rarest):
                rarest = keys
        return set(rarest)


class _Workloads(IndexedDict[WorkloadKey, Workload]):
    """The workloads by key, counting every change per namespace (``versions``): a
    controller's sync reads the workloads of its own namespace (a Deployment, its
    ReplicaSets), so a sync that did nothing need not run again until one changes."""

    def __init__(self) -> None:
        super().__init__()
        self.versions: dict[str, int] = {}

    def _bump(self, key: WorkloadKey) -> None:
        self.versions[key[1]] = self.versions.get(key[1], 0) + 1

    def __setitem__(self, key: WorkloadKey, obj: Workload) -> None:
        self._bump(key)
        super().__setitem__(key, obj)

    def __delitem__(self, key: WorkloadKey) -> None:
        self._bump(key)
        super().__delitem__(key)

    def pop(self, key: WorkloadKey, *default: Any) -> Any:
        if key in self:
            self._bump(key)
        return super().pop(key, *default)

    def clear(self) -> None:
        for key in self:
            self._bump(key)
        super().clear()


@dataclass(frozen=True, slots=True)
class _Quiet:
    """A workload whose last sync did nothing: the inputs that sync read (``inputs``), and
    what tells whether a pod is one it reads (its selectors, its owners' names)."""

    inputs: tuple[object, ...]
    selectors: tuple[Selector | None, ...]
    owners: frozenset[tuple[str, str]]
    sts_name: str


class Simulation:
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
        # evictions. The clock's 0 is the latest timeAdded of the input's NoExecute taints
        # (a cluster read at that moment at the earliest), so older taints count from before.
        self.now = 0
        self.epoch = _epoch(scenario)
        self.taint_evictions = TaintEvictionQueue()
        # Stock-outs and nodes starting up, on the same clock (the stockout and addNodes steps).
        self.cloud = CloudState()
        # Only evictions decided before the clock starts, reported with the initial state.
        self.start_events: list[str] = []
        self._started = False
        # Controllers draw names and UIDs from this source; the scheduler seeds its own
        # (host selection) from the same seed.
        self.rng = random.Random(seed)
        self.pods = _Pods()
        self._by_namespace: tuple[int, dict[str, list[Pod]]] = (-1, {})
        self._sorted: tuple[int, list[tuple[str, Pod]]] = (-1, [])
        self.workloads = _Workloads()
        # Only when ``fast``: workloads whose last sync did nothing, skipped until what their
        # sync reads changes (``_sync_controllers``); the reference path syncs every one.
        self.fast = fast
        # Derived views that readers keep between steps (reports' per-node domains), by name;
        # snapshots carry them.
        self.memo: dict[str, Any] = {}
        self._skip_quiet = fast
        # What each DaemonSet's controller decided of each node, while both stay the same.
        self._should_run: ShouldRun = ShouldRunMemo() if fast else node_should_run_daemon_pod
        self._quiet: dict[WorkloadKey, _Quiet] = {}
        self._node_version = 0
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
        self.cluster = ClusterState()
        self.cluster.storage_state.seed = seed
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
            self._add_node(raw, where)
        for group in scenario.groups.values():
            zones = group.zones or ("",)
            for zone in zones:
                n = group.per_zone.get(zone, 0) if zone else group.count
                self.add_group_nodes(group, zone, n, f"{scenario.source}: nodeGroups")
        for where, obj in scenario.objects:
            self.apply(obj, where)
        self._start_taint_manager()
        self._started = True
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

    def _priorities(self) -> dict[str, PriorityClass | int]:
        return priority_classes(o for o in self.lookups if isinstance(o, PriorityClass))

    def refresh_objects(self) -> None:
        """The scheduler's object lister (default spreading's owner lookups) follows the
        ReplicaSets, StatefulSets and Services of the simulation."""
        self.cluster.objects = ObjectStore(
            services=[o for o in self.lookups if isinstance(o, Service)],
            replication_controllers=[
                w for w in self.workloads.values() if isinstance(w, ReplicationController)
            ],
            replica_sets=[w for w in self.workloads.values() if isinstance(w, ReplicaSet)],
            stateful_sets=[w for w in self.workloads.values() if isinstance(w, StatefulSet)],
            namespaces=[o for o in self.lookups if isinstance(o, Namespace)],
        )
        self.cluster.priority_classes = {
            o.metadata.name: o for o in self.lookups if isinstance(o, PriorityClass)
        }

    def apply(self, obj: Any, where: str) -> str:
        """Create or replace one object, as ``kubectl apply`` would; returns what happened."""
        if isinstance(obj, Node):
            if obj.metadata.name in self.cluster.infos:
                return self._replace_node(obj, where)
            self._add_node(obj, where)
            return f"added node {obj.metadata.name}"
        if isinstance(obj, Pod):
            pod = self._namespaced(obj)
            generated = not pod.metadata.name and bool(pod.metadata.generate_name)
            if generated:
                taken = functools.partial(self._name_taken, pod.metadata.namespace)
                pod = retry_generate_name(pod, self.rng, taken)
            key = pod.key
            if key in self.pods and generated:
                raise ValidationError(
                    f"{where} (Pod {key}): "
                    + GENERATE_NAME_CONFLICT.format(resource="pods", name=pod.metadata.name)
                )
            if key in self.pods:
                raise ValidationError(
                    f'{where} (Pod {key}): metadata.name: Duplicate value: "{pod.metadata.name}"'
                )
            self._create_pod(pod, where)
            return f"created pod {key}"
        if isinstance(obj, _WORKLOAD_TYPES):
            return self._apply_workload(self._namespaced(obj), where)
        if isinstance(obj, STORAGE_KINDS):
            return self._apply_storage(obj, where)
        if isinstance(obj, _LOOKUP_TYPES):
            if not isinstance(obj, (Namespace, PriorityClass)):
                obj = self._namespaced(obj)
            errors = validate_object(obj)
            if errors:
                raise ValidationError(f"{where} ({describe_object(obj)}): {errors[0]}")
            if isinstance(obj, PodDisruptionBudget):
                validate_pdb(obj, where)
            kept = [o for o in self.lookups if not same_object(o, obj)]
            self.lookups = [*kept, obj]
            self._publish_budgets()
            self.refresh_objects()
            ns = obj.metadata.namespace
            return f"applied {obj.kind.lower()} {ns + '/' if ns else ''}{obj.metadata.name}"
        kind = obj.kind if isinstance(obj, UnknownObject) else type(obj).__name__
        self.left_out.add(obj)
        self.left_out.update_warnings(self.scenario.warnings)
        return f"left out a {kind}"

    def _apply_storage(self, obj: StorageObject, where: str) -> str:
        """A PV, claim, StorageClass, CSINode, CSIDriver or capacity joins the cluster's
        storage, which the volume plugins read (and volume binding writes)."""
        if isinstance(obj, (PersistentVolumeClaim, CSIStorageCapacity)):
            obj = self._namespaced(obj)
        errors = validate_object(obj)
        if errors:
            raise ValidationError(f"{where} ({describe_object(obj)}): {errors[0]}")
        self.cluster.storage_state.add(obj)
        if self._started:
            self.scheduler.on_storage_change(obj)
        ns = obj.metadata.namespace
        return f"applied {obj.kind.lower()} {ns + '/' if ns else ''}{obj.metadata.name}"

    def _namespaced(self, obj: Any) -> Any:
        if obj.metadata.namespace:
            return obj
        meta = msgspec.structs.replace(obj.metadata, namespace="default")
        return msgspec.structs.replace(obj, metadata=meta)

    def _apply_workload(self, obj: Workload, where: str) -> str:
        key = workload_key(obj)
        label = f"{where} ({obj.kind} {key[1]}/{key[2]})"
        errors = validate_object(obj)
        if errors:
            raise ValidationError(f"{label}: {errors[0]}")
        template: PodTemplateSpec
        try:
            if isinstance(obj, ReplicationController):
                # Stored as the API server stores it: selector and labels defaulted.
                obj = set_defaults_replication_controller(obj)
                validate_replication_controller_spec(obj)
                template = as_replica_set(obj).spec.template
            elif isinstance(obj, CronJob):
                cron_job_schedule(obj)
                template = obj.spec.job_template.spec.template
            else:
                template = obj.spec.template
                selector = workload_selector(obj, obj.spec.selector)
                if not isinstance(obj, Job) or obj.spec.selector is not None:
                    check_selector_matches_template(obj, selector, template)
        except ValidationError as err:
            raise ValidationError(f"{where}: {err}") from err
        # The template's pods must pass the API server's validation (checked once, here).
        probe = get_pod_from_template(template, obj.metadata.name, None)
        probe_meta = msgspec.structs.replace(
            probe.metadata, name=f"{obj.metadata.name}-0", namespace=key[1]
        )
        admit_pod(
            msgspec.structs.replace(probe, metadata=probe_meta),
            self._priorities(),
            label,
            template=template_path(obj),
        )
        old = self.workloads.get(key)
        if old is None:
            meta = stamp(obj.metadata, self.rng, None)
            self.workloads[key] = msgspec.structs.replace(obj, metadata=meta)
            self.refresh_objects()
            return f"created {describe_workload(key)}"
        meta = msgspec.structs.replace(obj.metadata, uid=old.metadata.uid)
        new = msgspec.structs.replace(obj, metadata=meta)
        if (
            isinstance(new, StatefulSet)
            and isinstance(old, StatefulSet)
            and old.spec.template != new.spec.template
            and key not in self.sts_current
        ):
            self.sts_current[key] = old.spec.template
        if hasattr(old, "status") and hasattr(new, "status"):
            new = msgspec.structs.replace(new, status=old.status)
        self.workloads[key] = new
        self.refresh_objects()
        return f"configured {describe_workload(key)}"

    def find_workload(self, ref: Any, where: str) -> Workload:
        """A workload named ``[namespace/]kind/name`` (kind as kubectl spells it)."""
        if not isinstance(ref, str):
            raise ManifestError(f"{where}: workload: expected [namespace/]kind/name")
        parts = ref.split("/")
        if len(parts) == 2:
            parts = ["default", *parts]
        if len(parts) != 3 or not all(parts):
            raise ManifestError(
                f'{where}: workload: Invalid value: "{ref}": expected [namespace/]kind/name, '
                "e.g. deployment/web"
            )
        namespace, kind_name, name = parts
        kind = _KIND_NAMES.get(kind_name.lower())
        if kind is None:
            raise ManifestError(
                f'{where}: workload: Invalid value: "{ref}": unknown kind "{kind_name}" '
                "(deployment, replicaset, replicationcontroller, statefulset, daemonset, "
                "cronjob, job)"
            )
        found = self.workloads.get((kind, namespace, name))
        if found is None:
            known = ", ".join(sorted(f"{k[0].lower()}/{k[2]}" for k in self.workloads)) or "none"
            raise ManifestError(
                f'{where}: workload: Not found: "{ref}": no such workload (known: {known})'
            )
        return found

    # ------------------------------------------------------------------ nodes

    @property
    def node_version(self) -> int:
        """Bumped by every change to the nodes."""
        return self._node_version

    def add_node(self, raw: Node, where: str) -> None:
        """A new node joins the cluster (admitted as the API server admits it)."""
        self._add_node(raw, where)

    def _add_node(self, raw: Node, where: str) -> None:
        node = admit_node(raw, where, self.cluster.infos)
        check_taint_times(node, where)
        self.cluster.add_node(node)
        self._node_version += 1
        self.scheduler.on_node_change(new=node)

    def _replace_node(self, node: Node, where: str) -> str:
        admitted = admit_node(node, where)
        check_taint_times(admitted, where)
        changes = self.update_node(admitted)
        return "; ".join([f"configured node {node.metadata.name}", *changes.text()])

    def update_node(self, node: Node) -> TaintChanges:
        """Store the node; if its NoExecute taints changed, the taint manager acts."""
        # Read before the update: the NodeInfo is updated in place.
        old = self.cluster.infos[node.metadata.name].node
        self.cluster.update_node(node)
        self._node_version += 1
        self.scheduler.on_node_change(old, node)
        if get_no_execute_taints(old.spec.taints) == get_no_execute_taints(node.spec.taints):
            return TaintChanges()
        return self.node_taints_changed(node)

    def node_taints_changed(self, node: Node, at: int | None = None) -> TaintChanges:
        """The taint manager after the node's NoExecute taints changed (at ``at``, now by
        default): evict the pods that do not tolerate them, schedule or keep the eviction of
        those that tolerate them for a while, cancel it for the others (all of them when the
        node has no NoExecute taint left).

        Upstream: handleNodeUpdate (pkg/controller/tainteviction/taint_eviction.go, v1.35)
        """
        now = self.now if at is None else at
        taints = get_no_execute_taints(node.spec.taints)
        pods = sorted(self.cluster.infos[node.metadata.name].pods, key=lambda p: p.key)
        out = TaintChanges()
        for pod in pods:
            was_scheduled = pod.key in self.taint_evictions.work
            if not taints:
                outcome = "forever"
                self.taint_evictions.cancel(pod.key)
            else:
                outcome = self._process(pod, taints, now)
            if outcome == "evict":
                out.evicted.append(pod.key)
                self.delete_pod(pod)
            elif outcome == "scheduled":
                fire_at = self.taint_evictions.work[pod.key].fire_at
                out.scheduled.setdefault(fire_at, []).append(pod.key)
            elif outcome == "forever" and was_scheduled:
                out.cancelled.append(pod.key)
        return out

    def _process(self, pod: Pod, taints: Sequence[Taint], now: int) -> str:
        return process_pod_on_node(
            self.taint_evictions,
            pod,
            taints,
            now,
            comparison=self.features.enable_taint_toleration_comparison_operators,
        )

    def _pod_bound(self, pod: Pod) -> None:
        """A pod bound (mid-timeline) to a node with NoExecute taints it tolerates: its
        eviction is scheduled from now; one due at once fires in the same settle round.

        Upstream: handlePodUpdate (taint_eviction.go, v1.35)
        """
        taints = get_no_execute_taints(self.cluster.infos[pod.spec.node_name].node.spec.taints)
        if taints and self._process(pod, taints, self.now) == "evict":
            # The scheduler does not bind a pod to a taint it does not tolerate; a pod created
            # with spec.nodeName may be.
            self.taint_evictions.work[pod.key] = ScheduledEviction(
                pod.key, pod.spec.node_name, self.now, self.now, ()
            )

    def _start_taint_manager(self) -> None:
        """The taint manager on the initial nodes, replayed as it acted while their NoExecute
        taints arrived (in timeAdded order, none before the clock's 0 when it has none), then
        the evictions due by the clock's 0. What it did goes into ``start_events``."""
        for info in self.cluster.list():
            node = info.node
            taints = get_no_execute_taints(node.spec.taints)
            if not taints:
                continue
            added = sorted(
                (min(self._taint_time(t), 0), i)
                for i, t in enumerate(node.spec.taints)
                if t in taints
            )
            for at in sorted({t for t, _ in added}):
                spec_taints = [node.spec.taints[i] for t, i in added if t <= at]
                partial = msgspec.structs.replace(
                    node, spec=msgspec.structs.replace(node.spec, taints=spec_taints)
                )
                changes = self.node_taints_changed(partial, at)
                if changes.evicted:
                    self.start_events.append(
                        f"{node.metadata.name}: {changes.text()[0]}: they do not tolerate its "
                        "NoExecute taints"
                    )
        self.start_events += [
            f"{ran_out_text(keys, taints)} at {format_duration(at)}"
            for at, taints, keys in self.fire_due_evictions(0, self.scenario.source)
        ]
        scheduled: dict[tuple[str, int], list[str]] = {}
        for work in self.taint_evictions.work.values():
            scheduled.setdefault((work.node, work.fire_at), []).append(work.pod)
        for (name, at), keys in sorted(scheduled.items()):
            self.start_events.append(
                f"{name}: eviction of {count_text(sorted(keys))} due at {format_duration(at)}"
            )

    def _taint_time(self, taint: Taint) -> int:
        """When the taint manager saw the taint: its timeAdded on the clock, else the start."""
        if taint.time_added is None:
            return 0
        added = parse_time(taint.time_added)
        assert added is not None  # checked when the node was read (_taint_times)
        return added - self.epoch

    def fire_due_evictions(
        self, until: int, where: str
    ) -> list[tuple[int, tuple[str, ...], list[str]]]:
        """Carry out the scheduled evictions due by ``until``, each at its time (the clock
        moves there, and the controllers and the scheduler settle before the next falls due);
        returns the evicted pods by time and by the taints tolerated for a while."""
        groups: dict[tuple[int, tuple[str, ...]], list[str]] = {}
        while (at := self.taint_evictions.next_due(until)) is not None:
            self.now = max(self.now, at)
            for work in self.taint_evictions.pop_due(at):
                pod = self.pods.get(work.pod)
                if pod is None:
                    continue
                self.delete_pod(pod)
                groups.setdefault((at, work.taints), []).append(work.pod)
            if self._started:
                self.settle_within_step(where)
        return [(at, taints, keys) for (at, taints), keys in sorted(groups.items())]

    def node(self, name: str, where: str) -> Node:
        info = self.cluster.get(name)
        if info is None:
            known = ", ".join(sorted(self.cluster.infos)[:12])
            raise ManifestError(f'{where}: Not found: node "{name}" (nodes: {known})')
        return info.node

    def zone_nodes(self, zone: str, zone_key: str, where: str) -> list[Node]:
        nodes = [
            info.node
            for _, info in sorted(self.cluster.infos.items())
            if info.node.metadata.labels.get(zone_key) == zone
        ]
        if not nodes:
            zones = sorted(
                {
                    v
                    for i in self.cluster.infos.values()
                    if (v := i.node.metadata.labels.get(zone_key))
                }
            )
            raise ManifestError(
                f'{where}: zone: Not found: "{zone}": no node has {zone_key}={zone} '
                f"(zones: {', '.join(zones) or 'none'})"
            )
        return nodes

    def add_group_nodes(self, group: NodeGroup, zone: str, count: int, where: str) -> list[str]:
        """``count`` more nodes of ``group`` (in ``zone``), numbered after the existing ones."""
        names = []
        for _ in range(count):
            n = self.group_counters.get((group.name, zone), 0) + 1
            self.group_counters[(group.name, zone)] = n
            name = f"{group.name}-{zone}-{n}" if zone else f"{group.name}-{n}"
            labels = {**group.template.metadata.labels, LABEL_HOSTNAME: name}
            if zone:
                labels[group.zone_key] = zone
                if group.zone_key == LABEL_TOPOLOGY_ZONE:
                    labels.setdefault(LABEL_TOPOLOGY_REGION, region_of(zone))
            if self.autoscaler_spec is not None:
                labels.update(self.autoscaler_spec.labels_for(group.name, zone))
            meta = msgspec.structs.replace(group.template.metadata, name=name, labels=labels)
            self._add_node(msgspec.structs.replace(group.template, metadata=meta), where)
            names.append(name)
        return names

    def remove_node(self, name: str) -> list[str]:
        """Delete a node; the pod garbage collector deletes the pods bound to it."""
        gone = self.cluster.infos[name]
        pods = list(gone.pods)
        for pod in pods:
            self.delete_pod(pod)
        self.cluster.remove_node(name)
        self._node_version += 1
        self.scheduler.on_node_change(old=gone.node)
        return [p.key for p in pods]

    # ------------------------------------------------------------------ pods

    def _create_pod(self, pod: Pod, where: str) -> Pod:
        label = f"{where} (Pod {pod.key})"
        admitted = add_default_toleration_seconds(admit_pod(pod, self._priorities(), label))
        if is_terminal(admitted):
            # Finished (from a cluster or a saved file): controllers read it (a Job counts its
            # succeeded pods), kube-scheduler never sees it; it holds no node's resources.
            pass
        elif admitted.spec.node_name:
            if admitted.spec.node_name not in self.cluster.infos:
                raise ValidationError(
                    f'{label}: spec.nodeName: Not found: "{admitted.spec.node_name}": no such node'
                )
            self.cluster.bind(admitted, admitted.spec.node_name)
            if self._started:
                self._pod_bound(admitted)
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
                storage.add(admit_claim(claim, storage.classes.values()))

    def delete_pod(self, pod: Pod) -> None:
        """Delete a pod at once (no graceful termination): bound pods leave their node."""
        stored = self.pods.pop(pod.key, None)
        self.taint_evictions.cancel(pod.key)
        current = stored if stored is not None else pod
        for claim in ephemeral_claims(current):  # the garbage collector: the pod owned them
            owned = self.cluster.storage_state.pvcs.get(claim.key)
            if owned is not None and any(
                r.controller and r.uid == current.metadata.uid
                for r in owned.metadata.owner_references
            ):
                self.cluster.storage_state.delete_pvc(claim.key)
        if current.spec.node_name:
            self.scheduler.delete_assigned_pod(current)
        else:
            self.scheduler.delete_pending_pod(current.key)

    def _update_pod(self, pod: Pod) -> None:
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
            if parent is not None and _parent_reported(owner, parent.kind):
                return (parent.kind, namespace, parent.name)
        return key if owner is not None else None

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

    def scale_of(self, pod: Pod) -> tuple[str, int] | None:
        """The controller whose scale a budget counts for the pod (a Deployment for its
        ReplicaSets' pods) and that scale; None when it is not in the simulation (the
        disruption controller turns away controllers without a scale, DaemonSets and Jobs,
        before it asks).

        Upstream: the disruption controller's finders (disruption.go, v1.35)
        """
        ref = get_controller_of(pod.metadata)
        if ref is None:
            return None
        ns = pod.metadata.namespace
        if ref.kind == "ReplicationController":
            rc = self.cluster.objects.replication_controller(ns, ref.name)
            if rc is None:
                return None
            replicas = rc.spec.replicas
            return f"ReplicationController/{ns}/{ref.name}", 1 if replicas is None else replicas
        key = self.owner_of(pod)
        owner = self.workloads.get(key) if key is not None else None
        if key is None or not isinstance(owner, (Deployment, ReplicaSet, StatefulSet)):
            return None
        replicas = owner.spec.replicas
        return "/".join(key), 1 if replicas is None else replicas

    def budgets(self) -> list[PodDisruptionBudget]:
        return [o for o in self.lookups if isinstance(o, PodDisruptionBudget)]

    def _publish_budgets(self) -> None:
        # Preemption reads the budgets from the scheduler's list: keep it in place.
        self.scheduler.pdbs[:] = self.budgets()

    def _write_budget(self, pdb: PodDisruptionBudget) -> None:
        """A budget's status update (the controller's, or an eviction's)."""
        self.lookups = [pdb if same_object(o, pdb) else o for o in self.lookups]
        self._publish_budgets()

    def sync_budgets(self) -> None:
        """The disruption controller: every budget's status recomputed from the pods now
        (simulator/controllers/disruption.py). In a cluster it reacts to each pod change on
        its own; here it runs in every round after the workload controllers, after each
        preemption, and when a settle ends, so whatever reads a status (preemption, the
        eviction subresource) reads it caught up, except within one controller round."""
        budgets = self.budgets()
        if not budgets:
            return
        for pdb in budgets:
            synced = sync_budget(pdb, self._pods_in(pdb.metadata.namespace), self.scale_of)
            if synced is not pdb:
                self._write_budget(synced)

    def evictions(self) -> Evictions:
        """The eviction subresource for one drain pass. kubectl waits for each evicted pod to
        be deleted before it goes on, and the disruption controller catches up meanwhile: the
        budgets are synced first, then each eviction of the pass takes from them."""
        self.sync_budgets()
        return Evictions(self.budgets(), self._write_budget)

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

    def sorted_pods(self) -> list[tuple[str, Pod]]:
        """Every pod by key, in key order; sorted once per change of the pods, not per call
        (the list is shared: do not modify it)."""
        version, ordered = self._sorted
        if version != self.pods.version:
            pods = self.pods
            ordered = [(k, pods[k]) for k in sorted(pods)]
            self._sorted = (pods.version, ordered)
        return ordered

    def _pods_in(self, namespace: str) -> list[Pod]:
        """The namespace's pods by key; grouped once per change of the pods, not per call."""
        version, groups = self._by_namespace
        if version != self.pods.version:
            groups = {}
            for _, p in self.sorted_pods():
                groups.setdefault(p.metadata.namespace, []).append(p)
            self._by_namespace = (self.pods.version, groups)
        return list(groups.get(namespace, ()))

    def _deployment_pods(self, d: Deployment, rss: list[ReplicaSet]) -> list[Pod]:
        """What a Deployment's step reads of the namespace's pods, in key order: a superset
        of the pods its ReplicaSets (its own and the orphans it may adopt) own or may adopt,
        and of those their selectors and its own select (the ReplicaSet controller ranks
        victims against those). Pods of other owners that none of them selects play no part.
        """
        ns = d.metadata.namespace
        pods = self.pods
        mine = [
            rs
            for rs in rss
            if rs.metadata.namespace == ns
            and (get_controller_of(rs.metadata) is None or is_controlled_by(rs.metadata, d))
        ]
        keys = set(pods.orphans.get(ns, ()))
        for selector in (d.spec.selector, *(rs.spec.selector for rs in mine)):
            selected = pods.selectable_by(ns, selector)
            if selected is None:
                return self._pods_in(ns)
            keys |= selected
        for rs in mine:
            keys |= pods.owned_by(ns, rs)
        return [pods[k] for k in sorted(keys)]

    def _sync_controllers(self, out: Settled) -> bool:
        acted = False
        order = {kind: i for i, kind in enumerate(_KIND_ORDER)}
        for key in sorted(self.workloads, key=lambda k: (order[k[0]], k[1], k[2])):
            obj = self.workloads.get(key)
            if obj is None:
                continue
            if isinstance(obj, ReplicaSet):
                ref = get_controller_of(obj.metadata)
                if ref is not None and ref.kind == "Deployment":
                    continue  # its Deployment's step syncs it
            self._forget_quiet()
            inputs = self._sync_inputs(key, obj)
            quiet = self._quiet.get(key)
            if quiet is not None and quiet.inputs == inputs:
                continue
            self._quiet.pop(key, None)
            did = self._sync_one(key, obj, out)
            acted = acted or did
            unchanged = not did and not self.pods.changed
            if self._skip_quiet and unchanged and self._sync_inputs(key, obj) == inputs:
                self._quiet[key] = self._quiet_for(key, obj, inputs)
        return acted

    def _sync_inputs(self, key: WorkloadKey, obj: Workload) -> tuple[object, ...]:
        """What a sync of ``obj`` reads besides pods (which ``_forget_quiet`` follows): the
        object; for a Deployment the ReplicaSets it owns or may adopt; for a DaemonSet the
        nodes; for a StatefulSet mid-rollout its current revision. Controllers read no clock
        (their ``now`` is unset)."""
        if isinstance(obj, Deployment):
            return (obj, *self._replica_sets_of(obj))
        if isinstance(obj, DaemonSet):
            return (obj, self._node_version)
        if isinstance(obj, StatefulSet):
            return (obj, self.sts_current.get(key))
        if isinstance(obj, CronJob):
            # It reads its namespace's Jobs and the clock, no pods.
            jobs = tuple(k for k in self.workloads if k[0] == "Job" and k[1] == key[1])
            return (obj, jobs, self.now)
        return (obj,)

    def _replica_sets_of(self, d: Deployment) -> list[ReplicaSet]:
        """The ReplicaSets of the Deployment's namespace that it controls or may adopt."""
        ns = d.metadata.namespace
        return [
            w
            for w in self.workloads.values()
            if isinstance(w, ReplicaSet)
            and w.metadata.namespace == ns
            and (get_controller_of(w.metadata) is None or is_controlled_by(w.metadata, d))
        ]

    def _quiet_for(self, key: WorkloadKey, obj: Workload, inputs: tuple[object, ...]) -> _Quiet:
        """The pods a sync of ``obj`` reads, described: those it or (a Deployment) one of its
        ReplicaSets owns, by name, or that one of their selectors matches (a selector that
        cannot be compiled is None: every pod of the namespace), and for a StatefulSet those
        named after it."""
        owned: list[Workload] = [obj]
        if isinstance(obj, Deployment):
            owned += self._replica_sets_of(obj)
        selectors: list[Selector | None] = []
        for w in owned:
            if isinstance(w, CronJob):
                continue  # it reads no pods
            selector = (
                as_replica_set(w).spec.selector
                if isinstance(w, ReplicationController)
                else w.spec.selector
            )
            try:
                compiled = label_selector_as_selector(selector)
            except SelectorError:
                compiled = None
            # No selector (a Job's is generated): every pod of the namespace, to be safe.
            selectors.append(compiled if selector is not None else None)
        return _Quiet(
            inputs,
            tuple(selectors),
            frozenset((w.kind, w.metadata.name) for w in owned),
            key[2] if isinstance(obj, StatefulSet) else "",
        )

    def _forget_quiet(self) -> None:
        """Pods stored or removed since the last call wake the quiet workloads that read them."""
        changed = self.pods.take_changed()
        if not changed or not self._quiet:
            return
        seen: set[tuple[object, ...]] = set()
        for pod in changed:
            meta = pod.metadata
            ref = get_controller_of(meta)
            owner = (ref.kind, ref.name) if ref is not None else None
            sts_name = get_parent_name_and_ordinal(pod)[0]
            labels = tuple(meta.labels.items())
            group = (meta.namespace, owner, sts_name, labels)
            if group in seen:
                continue
            seen.add(group)
            for key in [k for k in self._quiet if k[1] == meta.namespace]:
                quiet = self._quiet[key]
                if (
                    (owner is not None and owner in quiet.owners)
                    or (sts_name and sts_name == quiet.sts_name)
                    or any(s is None or s.matches(meta.labels) for s in quiet.selectors)
                ):
                    del self._quiet[key]

    def _sync_one(self, key: WorkloadKey, obj: Workload, out: Settled) -> bool:
        """One controller's sync of ``obj``; True when it acted."""
        acted = False
        actions: PodActions
        if isinstance(obj, Deployment):
            rss = [w for w in self.workloads.values() if isinstance(w, ReplicaSet)]
            step = step_deployment(
                obj,
                rss,
                self._deployment_pods(obj, rss),
                rng=self.rng,
                claim_memos=self.memo.setdefault("pod-claims", {}),
            )
            sync = step.sync
            for rs in (*sync.created, *sync.updated):
                self.workloads[workload_key(rs)] = rs
            for rs in sync.deleted:
                self.workloads.pop(workload_key(rs), None)
            if sync.collision_count != obj.status.collision_count:
                status = msgspec.structs.replace(obj.status, collision_count=sync.collision_count)
                self.workloads[key] = msgspec.structs.replace(obj, status=status)
            if sync:
                self.refresh_objects()
            actions = step.pods
            acted = bool(sync)
        elif isinstance(obj, ReplicaSet):
            actions = sync_replica_set(obj, self._pods_in(key[1]), rng=self.rng)
        elif isinstance(obj, ReplicationController):
            actions = sync_replication_controller(obj, self._pods_in(key[1]), rng=self.rng)
        elif isinstance(obj, CronJob):
            jobs = [w for w in self.workloads.values() if isinstance(w, Job)]
            created_jobs = [
                job
                for job in sync_cron_job(obj, jobs, now=self.epoch + self.now)
                if workload_key(job) not in self.workloads  # upstream: AlreadyExists
            ]
            for job in created_jobs:
                self._apply_workload(job, describe_workload(key))
            actions = PodActions()
            acted = bool(created_jobs)
        elif isinstance(obj, StatefulSet):
            current = self.sts_current.get(key)
            actions = sync_stateful_set(
                obj, self._pods_in(key[1]), rng=self.rng, current_template=current
            )
            for pod in actions.create:
                self._create_claims(obj, pod)
            if deletes_claims_when_scaled(obj):
                start = get_start_ordinal(obj)
                replicas = obj.spec.replicas if obj.spec.replicas is not None else 1
                for pod in actions.delete:
                    if not start <= get_ordinal(pod) < start + replicas:
                        for claim in get_persistent_volume_claims(obj, get_ordinal(pod)):
                            self.cluster.storage_state.delete_pvc(claim.key)
        elif isinstance(obj, DaemonSet):
            nodes = [info.node for info in self.cluster.list()]
            actions = sync_daemon_set(
                obj, self._pods_in(key[1]), nodes, rng=self.rng, should_run_on=self._should_run
            )
        else:
            actions = sync_job(obj, self._pods_in(key[1]), rng=self.rng)
        if actions:
            acted = True
            # The StatefulSet controller names its pods itself (by ordinal); every other
            # controller leaves the name to generateName.
            generated = not isinstance(obj, StatefulSet)
            self._apply_actions(actions, describe_workload(key), out, generated=generated)
        if isinstance(obj, StatefulSet) and key in self.sts_current:
            self._maybe_finish_sts_rollout(obj)
        return acted

    def _apply_actions(
        self, actions: PodActions, who: str, out: Settled, *, generated: bool
    ) -> None:
        """Carry out one sync's actions as the API server would. ``generated``: the created
        pods' names were drawn from their generateName, and one already taken in the namespace
        is drawn again (upstream's RetryGenerateName); a name the controller gave that is taken
        is AlreadyExists, and that pod is not created (nor one whose every drawn name is taken):
        the controller's next sync, which still misses it, tries again."""
        for pod in actions.update:
            self._update_pod(pod)
        for pod in actions.delete:
            self.delete_pod(pod)
            out.deleted.append(pod.key)
        for pod in actions.create:
            stored = pod
            if generated:
                taken = functools.partial(self._name_taken, pod.metadata.namespace)
                stored = retry_generate_name(pod, self.rng, taken)
            if stored.key in self.pods:
                continue
            if stored.metadata.creation_timestamp is None:
                # The API server stamps what it creates with its own clock: the simulation's.
                meta = msgspec.structs.replace(
                    stored.metadata, creation_timestamp=format_time(self.epoch + self.now)
                )
                stored = msgspec.structs.replace(stored, metadata=meta)
            created = self._create_pod(stored, who)
            out.created.append(created.key)

    def _create_claims(self, sts: StatefulSet, pod: Pod) -> None:
        """The claims of a StatefulSet pod's ordinal that do not exist yet, created before the
        pod (Upstream: createPersistentVolumeClaims, stateful_pod_control.go)."""
        storage = self.cluster.storage_state
        for claim in get_persistent_volume_claims(sts, get_ordinal(pod)):
            if claim.key not in storage.pvcs:
                owned = with_retention_owner(sts, claim)
                storage.add(admit_claim(owned, storage.classes.values()))

    def _name_taken(self, namespace: str, name: str) -> bool:
        return f"{namespace}/{name}" in self.pods

    def _maybe_finish_sts_rollout(self, sts: StatefulSet) -> None:
        key = workload_key(sts)
        update = revision_name(sts, sts.spec.template)
        owned = [
            p
            for p in self.pods.values()
            if p.metadata.namespace == key[1]
            and (ref := get_controller_of(p.metadata)) is not None
            and ref.kind == "StatefulSet"
            and ref.name == key[2]
        ]
        replicas = sts.spec.replicas if sts.spec.replicas is not None else 1
        if len(owned) == replicas and all(get_pod_revision(p) == update for p in owned):
            del self.sts_current[key]

    def _schedule(self, out: Settled) -> bool:
        bound = False

        def record(decision: Decision) -> None:
            nonlocal bound
            if decision.node is not None and decision.key in self.pods:
                self.pods[decision.key] = decision.pod
                out.placed[decision.key] = decision.node
                bound = True
                self._pod_bound(decision.pod)
            for victim in decision.preempted:
                if self.pods.pop(victim, None) is not None:
                    out.preempted.append(victim)
                    out.placed.pop(victim, None)
            if decision.preempted:
                # The victims' budgets lost healthy pods before the next scheduling cycle.
                self.sync_budgets()

        self.scheduler.run(record)
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


def same_object(a: LookupObject, b: LookupObject) -> bool:
    """The same API object: kind, namespace and name."""
    return (
        a.kind == b.kind
        and a.metadata.namespace == b.metadata.namespace
        and a.metadata.name == b.metadata.name
    )


def ran_out_text(keys: Sequence[str], taints: Sequence[str]) -> str:
    """``evicted 2 pods whose tolerations of <taints> ran out (<pods>)``."""
    if not taints:  # bound to a node whose NoExecute taint it does not tolerate
        return f"evicted {count_text(keys)}"
    n = len(keys)
    whose = f"whose toleration{'s' if n != 1 else ''} of {', '.join(taints)} ran out"
    return f"evicted {n} pod{'s' if n != 1 else ''} {whose} ({', '.join(keys)})"


def count_text(keys: Sequence[str]) -> str:
    if not keys:
        return "no pods"
    return f"{len(keys)} pod{'s' if len(keys) != 1 else ''} ({', '.join(keys)})"


def check_taint_times(node: Node, where: str) -> None:
    """Check that every taint's timeAdded is a time, as the API server decodes it."""
    for i, taint in enumerate(node.spec.taints):
        if taint.time_added is None:
            continue
        if parse_time(taint.time_added) is None:
            raise ManifestError(
                f"{where} (Node {node.metadata.name}): spec.taints[{i}].timeAdded: Invalid "
                f'value: "{taint.time_added}": expected an RFC 3339 time such as '
                "2025-01-01T00:00:00Z"
            )


def _epoch(scenario: TimelineScenario) -> int:
    """The clock's 0: the latest timeAdded of the initial nodes' NoExecute taints, else
    DEFAULT_EPOCH. Unreadable times are left to the node checks (``_taint_times``)."""
    templates = [g.template for g in scenario.groups.values()]
    times = []
    for node in [n for _, n in scenario.nodes] + templates:
        for taint in get_no_execute_taints(node.spec.taints):
            added = parse_time(taint.time_added)
            if added is not None:
                times.append(added)
    return max(times, default=DEFAULT_EPOCH)


def _parent_reported(obj: Workload, parent_kind: str) -> bool:
    """Whether reports name the object's controller for its pods: a Deployment for its
    ReplicaSets, a CronJob for its Jobs."""
    return (isinstance(obj, ReplicaSet) and parent_kind == "Deployment") or (
        isinstance(obj, Job) and parent_kind == "CronJob"
    )


def iter_controller_refs(sim: Simulation) -> Iterable[tuple[WorkloadKey, Workload]]:
    """Workloads in report order: kind, namespace, name; a Deployment's ReplicaSets and a
    CronJob's Jobs left out (their pods are reported under the Deployment, the CronJob)."""
    order = {kind: i for i, kind in enumerate(_KIND_ORDER)}
    for key in sorted(sim.workloads, key=lambda k: (order[k[0]], k[1], k[2])):
        obj = sim.workloads[key]
        ref = get_controller_of(obj.metadata)
        if ref is not None and _parent_reported(obj, ref.kind):
            continue
        yield key, obj


__all__ = [
    "MAX_ROUNDS",
    "Settled",
    "Simulation",
    "TaintChanges",
    "Workload",
    "WorkloadKey",
    "count_text",
    "describe_workload",
    "iter_controller_refs",
    "ran_out_text",
    "same_object",
    "workload_key",
]
