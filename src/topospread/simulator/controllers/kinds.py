"""Which kinds make pods, and the one note every command prints about the objects it read and
did not model.

Every built-in kind that makes pods is modelled (a controller in this package, or the pod
itself). Everything else is either something the scheduler does not need (ConfigMaps,
Services without selectors, Ingresses, CRDs, most custom resources), counted once per kind in
one ``read and left out`` line, or would make pods the simulator cannot make: a built-in
pod-making kind in an apiVersion Kubernetes no longer serves (``extensions/v1beta1``
Deployment), or a custom resource with a pod template (an Argo Rollout, a Kruise CloneSet).
Those are named on a line of their own, never left out silently.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from topospread.api.loader import UnknownObject

# The kinds whose objects make pods, each with the apiVersion Kubernetes v1.35 serves it in.
POD_MAKING_KINDS: Final[Mapping[str, str]] = {
    "Pod": "v1",
    "ReplicationController": "v1",
    "ReplicaSet": "apps/v1",
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
}

LEFT_OUT: Final = "read and left out (the scheduler does not need them)"
NOT_MODELLED: Final = "read but not modelled (their pods are not placed)"
FINISHED: Final = "read and not drawn (Succeeded or Failed: ignored by kube-scheduler)"
# The finished pods the note names; the others are counted.
_NAMED: Final = 5


def makes_pods(obj: UnknownObject) -> bool:
    """Whether an object the simulator does not model would make pods: a pod-making kind's
    name in another apiVersion, or a pod (or job) template under ``spec``."""
    if obj.kind in POD_MAKING_KINDS:
        return True
    spec = obj.raw.get("spec")
    if not isinstance(spec, Mapping):
        return False
    template = spec.get("template")
    if isinstance(template, Mapping) and isinstance(template.get("spec"), Mapping):
        return "containers" in template["spec"]
    return isinstance(spec.get("jobTemplate"), Mapping)


def unmodelled_reason(obj: UnknownObject) -> str:
    """Why a pod-making object is not modelled, for the finding that names it."""
    served = POD_MAKING_KINDS.get(obj.kind)
    if served is not None:
        return (
            f'no matches for kind "{obj.kind}" in version "{obj.api_version}" (Kubernetes '
            f"v1.35 serves {obj.kind} in {served}): the API server rejects it"
        )
    return (
        f"{obj.kind} ({obj.api_version}) has a pod template, but its controller is not "
        "modelled: the pods it makes are not placed"
    )


def _kind_key(obj: Any) -> str:
    return str(getattr(obj, "kind", "") or type(obj).__name__)


def counts_text(counts: Mapping[str, int]) -> str:
    """``3 ConfigMap, 1 Ingress``: each kind once, by name."""
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))


@dataclass(slots=True)
class LeftOut:
    """The objects read and not modelled: kinds the scheduler does not need, and pod-making
    objects it cannot model (by ``Kind (apiVersion)``), each counted."""

    kinds: Counter[str] = field(default_factory=Counter)
    pod_makers: Counter[str] = field(default_factory=Counter)
    # Pods read in a terminal phase: kept (a Job counts them) but in no report's cluster.
    finished: list[str] = field(default_factory=list)

    def add(self, obj: Any) -> None:
        if isinstance(obj, UnknownObject) and makes_pods(obj):
            self.pod_makers[f"{obj.kind} ({obj.api_version})"] += 1
        else:
            self.kinds[_kind_key(obj)] += 1

    def extend(self, objects: Iterable[Any]) -> LeftOut:
        for obj in objects:
            self.add(obj)
        return self

    def notes(self) -> list[str]:
        """One line for the pod-making objects not modelled (first), one for the rest."""
        out = []
        if self.pod_makers:
            out.append(f"{NOT_MODELLED}: {counts_text(self.pod_makers)}")
        if self.kinds:
            out.append(f"{LEFT_OUT}: {counts_text(self.kinds)}")
        if self.finished:
            named = ", ".join(self.finished[:_NAMED])
            more = len(self.finished) - _NAMED
            named += f" and {more} more" if more > 0 else ""
            out.append(f"{FINISHED}: {len(self.finished)} Pod ({named})")
        return out

    def update_warnings(self, warnings: list[str]) -> None:
        """Put the notes into ``warnings`` in place of earlier ones (objects applied later
        update the same lines)."""
        warnings[:] = [
            w
            for w in warnings
            if not w.startswith((f"{LEFT_OUT}: ", f"{NOT_MODELLED}: ", f"{FINISHED}: "))
        ]
        warnings += self.notes()


__all__ = [
    "FINISHED",
    "LEFT_OUT",
    "NOT_MODELLED",
    "POD_MAKING_KINDS",
    "LeftOut",
    "counts_text",
    "makes_pods",
    "unmodelled_reason",
]
