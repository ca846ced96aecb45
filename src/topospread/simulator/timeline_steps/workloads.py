"""Steps on workloads and pods: ``apply`` manifests, ``scale``, ``rollout`` and
``deleteWorkload`` a workload, ``deletePods``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

import msgspec

from topospread.api.loader import decode_manifest, decode_object
from topospread.api.types import (
    DaemonSet,
    Deployment,
    Pod,
    PodTemplateSpec,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
)
from topospread.errors import ManifestError
from topospread.simulator.api_server import as_created
from topospread.simulator.garbage_collector import delete_workload
from topospread.simulator.simulation import Simulation
from topospread.simulator.stores import describe_workload, parse_workload_ref, workload_key
from topospread.simulator.taint_eviction_controller import count_text
from topospread.simulator.timeline_steps.arguments import count_arg, mapping_arg, names_arg
from topospread.simulator.timeline_steps.step import Step, StepEnv, StepResult


@dataclass(frozen=True, slots=True, kw_only=True)
class Apply(Step):
    """``apply``: a manifest or a list of manifests, created or updated as ``kubectl apply``;
    a Karpenter NodePool (``karpenter.sh/v1``) goes to the Karpenter in the loop, whose nodes
    launched from a NodePool that changed then drift."""

    action = "apply"

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        if not isinstance(args, (list, Mapping)):
            raise ManifestError(f"{where}: expected a manifest or a list of manifests")
        if not args:
            raise ManifestError(f"{where}: no objects passed to apply")  # kubectl apply's
        return cls(args=args, where=where)

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        raw = self.args if isinstance(self.args, list) else [self.args]
        # Decoded before any is applied: a List without items is no object, as for kubectl.
        planned: list[tuple[str, Any, bool]] = []  # (where, object or NodePool, a NodePool)
        for i, item in enumerate(raw):
            where = f"{self.where}[{i}]"
            if _is_nodepool(item):
                planned.append((where, item, True))
            else:
                planned += [(where, obj, False) for obj in decode_manifest(item, where)]
        if not planned:
            raise ManifestError(f"{self.where}: no objects passed to apply")
        return StepResult(
            [
                _apply_nodepool(sim, obj, where) if nodepool else sim.apply(as_created(obj), where)
                for where, obj, nodepool in planned
            ]
        )


def _is_nodepool(item: object) -> bool:
    return (
        isinstance(item, Mapping)
        and item.get("kind") == "NodePool"
        and str(item.get("apiVersion", "")).startswith("karpenter.sh/")
    )


def _apply_nodepool(sim: Simulation, item: Mapping[str, Any], where: str) -> str:
    from topospread.simulator.karpenter_loop import KarpenterController

    auto = sim.autoscaler
    if not isinstance(auto, KarpenterController):
        meta = item.get("metadata")
        name = meta.get("name", "") if isinstance(meta, Mapping) else ""
        raise ManifestError(
            f"{where} (NodePool {name}): a NodePool is Karpenter's: the scenario's autoscaler "
            "section has no karpenter"
        )
    return auto.apply_nodepool(item, where)


@dataclass(frozen=True, slots=True, kw_only=True)
class Scale(Step):
    """``scale``: ``{workload: kind/name, replicas}``."""

    action = "scale"
    workload: str  # [namespace/]kind/name; found when the step runs
    replicas: int

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        a = mapping_arg(
            args, where, required=("workload", "replicas"), allowed=("workload", "replicas")
        )
        parse_workload_ref(a["workload"], where)
        replicas = count_arg(a["replicas"], f"{where}: replicas")
        return cls(args=args, where=where, workload=a["workload"], replicas=replicas)

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        obj = sim.find_workload(self.workload, self.where)
        if not isinstance(obj, (Deployment, ReplicaSet, ReplicationController, StatefulSet)):
            raise ManifestError(
                f"{self.where}: workload: {obj.kind} {obj.metadata.name} has no replicas to "
                "scale (Deployments, ReplicaSets, ReplicationControllers and StatefulSets do)"
            )
        before = obj.spec.replicas if obj.spec.replicas is not None else 1
        spec = msgspec.structs.replace(obj.spec, replicas=self.replicas)
        sim.workloads[workload_key(obj)] = msgspec.structs.replace(obj, spec=spec)
        sim.api_server.refresh_objects()
        what = describe_workload(workload_key(obj))
        return StepResult([f"scaled {what} from {before} to {self.replicas} replicas"])


@dataclass(frozen=True, slots=True, kw_only=True)
class Rollout(Step):
    """``rollout``: ``{workload, patch | template}``: a new pod template, merged or whole."""

    action = "rollout"
    workload: str  # [namespace/]kind/name; found when the step runs

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        a = mapping_arg(
            args, where, required=("workload",), allowed=("workload", "patch", "template")
        )
        parse_workload_ref(a["workload"], where)
        if ("patch" in a) == ("template" in a):
            raise ManifestError(f"{where}: give exactly one of patch (merged) or template")
        body = a.get("patch", a.get("template"))
        if not isinstance(body, Mapping):
            raise ManifestError(
                f"{where}: {'patch' if 'patch' in a else 'template'}: expected a mapping"
            )
        return cls(args=args, where=where, workload=a["workload"])

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        obj = sim.find_workload(self.workload, self.where)
        if not isinstance(obj, (Deployment, StatefulSet, DaemonSet)):
            raise ManifestError(
                f"{self.where}: workload: a {obj.kind} does not roll out "
                "(Deployments, StatefulSets and DaemonSets do)"
            )
        if "patch" in self.args:
            raw = merge_patch(msgspec.to_builtins(obj.spec.template), self.args["patch"])
            field_name = "patch"
        else:
            raw, field_name = self.args["template"], "template"
        where = f"{self.where}: {field_name}"
        template = decode_template(raw, where)
        spec = msgspec.structs.replace(obj.spec, template=template)
        new = msgspec.structs.replace(obj, spec=spec)
        what = describe_workload(workload_key(obj))
        if new.spec.template == obj.spec.template:
            return StepResult([f"{what}: the template is unchanged; no rollout"])
        sim.apply(new, where)
        return StepResult([f"rolled out a new template for {what}"])


@dataclass(frozen=True, slots=True, kw_only=True)
class DeletePods(Step):
    """``deletePods``: a pod name or a list (``namespace/name`` or a name in default)."""

    action = "deletePods"
    pods: tuple[str, ...]

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        return cls(args=args, where=where, pods=tuple(names_arg(args, where)))

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        pods = [sim.find_pod(n, self.where) for n in self.pods]
        for pod in pods:
            sim.delete_pod(pod)
        return StepResult([f"deleted {count_text([p.key for p in pods])}"])


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteWorkload(Step):
    """``deleteWorkload``: ``[namespace/]kind/name``, deleted as ``kubectl delete`` deletes it
    (the garbage collector then deletes what it owns: ``garbage_collector.py``)."""

    action = "deleteWorkload"
    workload: str

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        if not isinstance(args, str):
            raise ManifestError(f"{where}: expected a workload, [namespace/]kind/name")
        parse_workload_ref(args, where)
        return cls(args=args, where=where, workload=args)

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        obj = sim.find_workload(self.workload, self.where)
        deleted = delete_workload(sim, obj)
        what, *dependents = deleted.workloads
        events = [f"deleted {describe_workload(what)}"]
        if dependents:
            names = ", ".join(describe_workload(k) for k in dependents)
            events.append(f"the garbage collector deleted {names}")
        events.append(f"the garbage collector deleted {count_text(deleted.pods)}")
        if deleted.claims:
            events.append(
                f"the garbage collector deleted {_claims_text(deleted.claims)} (whenDeleted: "
                "Delete)"
            )
        if deleted.retained:
            events.append(f"kept {_claims_text(deleted.retained)} (whenDeleted: Retain)")
        return StepResult(events)


def _claims_text(keys: list[str]) -> str:
    return f"{len(keys)} claim{'s' if len(keys) != 1 else ''} ({', '.join(keys)})"


def merge_patch(target: Any, patch: Any) -> Any:
    """A JSON merge patch (RFC 7386: mappings merge key by key, ``null`` deletes, the rest
    replaces) that, like kubectl's strategic merge patch for containers, merges lists whose
    entries all have a ``name`` entry by entry, by name (new names are appended)."""
    if _named_list(target) and _named_list(patch):
        merged = {item["name"]: item for item in target}
        for item in patch:
            merged[item["name"]] = merge_patch(merged.get(item["name"]), item)
        return list(merged.values())
    if not isinstance(patch, Mapping):
        return patch
    out = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _named_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        # A name of another type (a mapping) is no merge key: the list is replaced whole, and
        # the template's strict decoding then names the field.
        and all(isinstance(v, Mapping) and isinstance(v.get("name"), str) for v in value)
    )


def decode_template(raw: Any, where: str) -> PodTemplateSpec:
    """A pod template from parsed data, with the loader's errors (field paths, types)."""
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where}: expected a pod template (metadata, spec)")
    pod = decode_object({**raw, "apiVersion": "v1", "kind": "Pod"}, Pod, where)
    return PodTemplateSpec(metadata=pod.metadata, spec=pod.spec)


__all__ = [
    "Apply",
    "DeletePods",
    "DeleteWorkload",
    "Rollout",
    "Scale",
    "decode_template",
    "merge_patch",
]
