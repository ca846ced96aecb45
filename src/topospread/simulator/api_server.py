"""Objects entering a simulation as the API server takes them: ``kubectl apply``'s create or
replace, with the API server's validation, defaulting and admission, for nodes, pods,
workloads, storage objects and the objects the scheduler and controllers look up (Services,
Namespaces, PriorityClasses, PodDisruptionBudgets); everything else is left out and said once
per kind in the scenario's warnings.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import msgspec

from topospread.api.apps_validation import template_path
from topospread.api.claim_validation import prepare_claim
from topospread.api.loader import UnknownObject
from topospread.api.object_validation import describe_object, validate_object
from topospread.api.storage import (
    STORAGE_KINDS,
    CSIStorageCapacity,
    PersistentVolumeClaim,
    StorageObject,
)
from topospread.api.types import (
    CronJob,
    Job,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PodStatus,
    PodTemplateSpec,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)
from topospread.cluster.snapshot import ObjectStore
from topospread.errors import ManifestError, ValidationError
from topospread.simulator.controllers.common import (
    GENERATE_NAME_CONFLICT,
    check_selector_matches_template,
    get_pod_from_template,
    retry_generate_name,
    stamp,
    workload_selector,
)
from topospread.simulator.controllers.cronjob import cron_job_schedule
from topospread.simulator.controllers.replicationcontroller import (
    as_replica_set,
    set_defaults_replication_controller,
    validate_replication_controller_spec,
)
from topospread.simulator.eviction import validate_pdb
from topospread.simulator.pod_admission import admit_pod, priority_classes
from topospread.simulator.stores import (
    WORKLOAD_TYPES,
    Workload,
    describe_workload,
    parse_workload_ref,
    workload_key,
)

if TYPE_CHECKING:
    from topospread.simulator.simulation import Simulation

LookupObject: TypeAlias = Service | Namespace | PriorityClass | PodDisruptionBudget
LOOKUP_TYPES: Final = (
    Service,
    Namespace,
    PriorityClass,
    PodDisruptionBudget,
)


class ApiServer:
    """The API server of one simulation (``Simulation.api_server``): ``apply`` and the
    lookups of workloads by the name a step gives."""

    __slots__ = ("sim",)

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim

    def priorities(self) -> dict[str, PriorityClass | int]:
        sim = self.sim
        return priority_classes(o for o in sim.lookups if isinstance(o, PriorityClass))

    def refresh_objects(self) -> None:
        """The scheduler's object lister (default spreading's owner lookups) follows the
        ReplicaSets, StatefulSets and Services of the simulation."""
        sim = self.sim
        sim.cluster.objects = ObjectStore(
            services=[o for o in sim.lookups if isinstance(o, Service)],
            replication_controllers=[
                w for w in sim.workloads.values() if isinstance(w, ReplicationController)
            ],
            replica_sets=[w for w in sim.workloads.values() if isinstance(w, ReplicaSet)],
            stateful_sets=[w for w in sim.workloads.values() if isinstance(w, StatefulSet)],
            namespaces=[o for o in sim.lookups if isinstance(o, Namespace)],
        )
        sim.cluster.priority_classes = {
            o.metadata.name: o for o in sim.lookups if isinstance(o, PriorityClass)
        }

    def apply(self, obj: Any, where: str) -> str:
        """Create or replace one object, as ``kubectl apply`` would; returns what happened."""
        sim = self.sim
        if isinstance(obj, Node):
            if obj.metadata.name in sim.cluster.infos:
                return sim.nodes.replace(obj, where)
            sim.add_node(obj, where)
            return f"added node {obj.metadata.name}"
        if isinstance(obj, Pod):
            pod = self._namespaced(obj)
            generated = not pod.metadata.name and bool(pod.metadata.generate_name)
            if generated:
                taken = functools.partial(sim.name_taken, pod.metadata.namespace)
                pod = retry_generate_name(pod, sim.rng, taken)
            key = pod.key
            if key in sim.pods and generated:
                raise ValidationError(
                    f"{where} (Pod {key}): "
                    + GENERATE_NAME_CONFLICT.format(resource="pods", name=pod.metadata.name)
                )
            if key in sim.pods:
                raise ValidationError(
                    f'{where} (Pod {key}): metadata.name: Duplicate value: "{pod.metadata.name}"'
                )
            sim.create_pod(pod, where)
            return f"created pod {key}"
        if isinstance(obj, WORKLOAD_TYPES):
            return self.apply_workload(self._namespaced(obj), where)
        if isinstance(obj, STORAGE_KINDS):
            return self._apply_storage(obj, where)
        if isinstance(obj, LOOKUP_TYPES):
            if not isinstance(obj, (Namespace, PriorityClass)):
                obj = self._namespaced(obj)
            errors = validate_object(obj)
            if errors:
                raise ValidationError(f"{where} ({describe_object(obj)}): {errors[0]}")
            if isinstance(obj, PodDisruptionBudget):
                validate_pdb(obj, where)
            kept = [o for o in sim.lookups if not same_object(o, obj)]
            sim.lookups = [*kept, obj]
            sim.disruption.publish()
            self.refresh_objects()
            ns = obj.metadata.namespace
            return f"applied {obj.kind.lower()} {ns + '/' if ns else ''}{obj.metadata.name}"
        kind = obj.kind if isinstance(obj, UnknownObject) else type(obj).__name__
        sim.left_out.add(obj)
        sim.left_out.update_warnings(sim.scenario.warnings)
        return f"left out a {kind}"

    def _apply_storage(self, obj: StorageObject, where: str) -> str:
        """A PV, claim, StorageClass, CSINode, CSIDriver or capacity joins the cluster's
        storage, which the volume plugins read (and volume binding writes)."""
        sim = self.sim
        if isinstance(obj, (PersistentVolumeClaim, CSIStorageCapacity)):
            obj = self._namespaced(obj)
        errors = validate_object(obj)
        if errors:
            raise ValidationError(f"{where} ({describe_object(obj)}): {errors[0]}")
        if isinstance(obj, PersistentVolumeClaim):
            obj = prepare_claim(obj)
        sim.cluster.storage_state.add(obj)
        if sim.started:
            sim.scheduler.on_storage_change(obj)
        ns = obj.metadata.namespace
        return f"applied {obj.kind.lower()} {ns + '/' if ns else ''}{obj.metadata.name}"

    def _namespaced(self, obj: Any) -> Any:
        if obj.metadata.namespace:
            return obj
        meta = msgspec.structs.replace(obj.metadata, namespace="default")
        return msgspec.structs.replace(obj, metadata=meta)

    def apply_workload(self, obj: Workload, where: str) -> str:
        sim = self.sim
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
            self.priorities(),
            label,
            template=template_path(obj),
        )
        old = sim.workloads.get(key)
        if old is None:
            meta = stamp(obj.metadata, sim.rng, None)
            sim.workloads[key] = msgspec.structs.replace(obj, metadata=meta)
            self.refresh_objects()
            return f"created {describe_workload(key)}"
        meta = msgspec.structs.replace(obj.metadata, uid=old.metadata.uid)
        new = msgspec.structs.replace(obj, metadata=meta)
        if (
            isinstance(new, StatefulSet)
            and isinstance(old, StatefulSet)
            and old.spec.template != new.spec.template
            and key not in sim.sts_current
        ):
            sim.sts_current[key] = old.spec.template
        if hasattr(old, "status") and hasattr(new, "status"):
            new = msgspec.structs.replace(new, status=old.status)
        sim.workloads[key] = new
        self.refresh_objects()
        return f"configured {describe_workload(key)}"

    def find_workload(self, ref: Any, where: str) -> Workload:
        """A workload named ``[namespace/]kind/name`` (kind as kubectl spells it)."""
        sim = self.sim
        kind, namespace, name = parse_workload_ref(ref, where)
        found = sim.workloads.get((kind, namespace, name))
        if found is None:
            known = ", ".join(sorted(f"{k[0].lower()}/{k[2]}" for k in sim.workloads)) or "none"
            raise ManifestError(
                f'{where}: workload: Not found: "{ref}": no such workload (known: {known})'
            )
        return found

    # ------------------------------------------------------------------ nodes


def same_object(a: LookupObject, b: LookupObject) -> bool:
    """The same API object: kind, namespace and name."""
    return (
        a.kind == b.kind
        and a.metadata.namespace == b.metadata.namespace
        and a.metadata.name == b.metadata.name
    )


def as_created(obj: Any) -> Any:
    """``obj`` as a create request leaves it: a Pod's status is not the client's to set (the
    API server starts every pod Pending), so a manifest's status (a Succeeded pod copied from
    ``kubectl get -o yaml``) is dropped. Objects read as a cluster's state keep theirs.

    Upstream: podStrategy.PrepareForCreate (pkg/registry/core/pod/strategy.go, v1.35)
    """
    if isinstance(obj, Pod) and obj.status != PodStatus():
        return msgspec.structs.replace(obj, status=PodStatus())
    return obj


__all__ = ["LOOKUP_TYPES", "ApiServer", "LookupObject", "as_created", "same_object"]
