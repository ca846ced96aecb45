"""How large a run may be: the nodes and pods its inputs ask for, counted before anything is
built.

A count in an input (a node group's ``perZone``, a Deployment's ``replicas``, a Job's
``completions``, an ``addNodes`` step's ``count``) becomes that many objects, and a typo — one
digit too many — would otherwise hold the machine until its memory runs out. So each reader
counts what its inputs ask for in a ``Budget`` first and refuses, with one line naming the file,
the object, the field and its value, an input that would take the run past its ``Limits``:
100,000 nodes and 1,000,000 pods by default, far past the 5,000-65,000-node clusters (and their
100,000+ pods) topospread is built for, and raised by the CLI's ``--max-nodes`` and
``--max-pods``. The bounds are fixed numbers, never the machine's memory: the same input is
accepted or refused everywhere.

What a count asks for is its peak, counted generously: a workload's largest replica count, a
DaemonSet's pod on each of the most nodes the run can have, nodes added by a timeline as if none
left. Objects a controller owns are its owner's to count (a cluster dump's pods and ReplicaSets).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from topospread.errors import SizeError

if TYPE_CHECKING:
    from topospread.api.types import JobSpec

# The kinds whose controllers make pods.
WORKLOAD_KINDS: Final = frozenset(
    {
        "Deployment",
        "ReplicaSet",
        "ReplicationController",
        "StatefulSet",
        "DaemonSet",
        "Job",
        "CronJob",
    }
)
DEFAULT_MAX_NODES: Final = 100_000
DEFAULT_MAX_PODS: Final = 1_000_000
# The options that raise each bound (cli/options.py declares them).
MAX_NODES_FLAG: Final = "--max-nodes"
MAX_PODS_FLAG: Final = "--max-pods"


@dataclass(frozen=True, slots=True)
class Limits:
    """The most nodes and pods a run may hold. ``max_pods`` also bounds what grows with pods:
    a StatefulSet's claims and a sweep's runs."""

    max_nodes: int = DEFAULT_MAX_NODES
    max_pods: int = DEFAULT_MAX_PODS

    def budget(self) -> Budget:
        """An empty count against these bounds."""
        return Budget(self)


DEFAULT_LIMITS: Final = Limits()


def too_many(
    where: str, what: str, total: int, before: int, noun: str, bound: int, flag: str
) -> SizeError:
    """The error for ``what`` (``field: value``) at ``where`` bringing a count of ``noun`` from
    ``before`` to ``total``, past ``bound`` (raised by ``flag``)."""
    bring = (
        f"would make the run hold more than the {bound:,} {noun}"
        if not before
        else f"would bring the run to {total:,} {noun} ({before:,} asked for before it), more "
        f"than the {bound:,} {noun}"
    )
    return SizeError(f"{where}: {what} {bring} topospread simulates ({flag} raises the bound)")


class Budget:
    """The nodes and pods a run's inputs ask for so far; each ``add_*`` raises ``SizeError``
    when its count takes the run past the bounds."""

    __slots__ = ("limits", "nodes", "pods")

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.nodes = 0
        self.pods = 0

    def add_nodes(self, count: int, where: str, what: str) -> None:
        """``count`` more nodes, asked for by ``what`` (``field: value``) at ``where``."""
        total = self.nodes + count
        if total > self.limits.max_nodes:
            raise too_many(
                where, what, total, self.nodes, "nodes", self.limits.max_nodes, MAX_NODES_FLAG
            )
        self.nodes = total

    def add_pods(self, count: int, where: str, what: str) -> None:
        """``count`` more pods, asked for by ``what`` (``field: value``) at ``where``."""
        total = self.pods + count
        if total > self.limits.max_pods:
            raise too_many(
                where, what, total, self.pods, "pods", self.limits.max_pods, MAX_PODS_FLAG
            )
        self.pods = total

    def check_each(self, count: int, where: str, what: str, noun: str) -> None:
        """A count of ``noun`` that grows with pods (claims, runs), bounded on its own by
        ``max_pods``."""
        if count > self.limits.max_pods:
            raise too_many(where, what, count, 0, noun, self.limits.max_pods, MAX_PODS_FLAG)

    def add_object(self, obj: Any, where: str) -> None:
        """What an object read as input asks for: a node, a pod, or the pods (and claims) a
        workload's controller creates; a DaemonSet's on each node counted so far (count nodes
        first). Objects a controller owns are their owner's to count."""
        # Told apart by kind first: the API types are imported only for a workload (a command
        # that reads none, or --help, does not import them here).
        kind = getattr(obj, "kind", "")
        if kind == "Node":
            self.add_nodes(1, where, "a node")
            return
        if (kind not in WORKLOAD_KINDS and kind != "Pod") or _controlled(obj):
            return
        if kind == "Pod":
            self.add_pods(1, where, "a pod")
            return
        from topospread.api.types import (
            CronJob,
            DaemonSet,
            Deployment,
            Job,
            ReplicaSet,
            ReplicationController,
            StatefulSet,
        )

        if not isinstance(
            obj,
            Deployment
            | ReplicaSet
            | ReplicationController
            | StatefulSet
            | DaemonSet
            | Job
            | CronJob,
        ):
            return  # a kind of that name from another API group
        named = f"{where}: {obj.kind} {obj.metadata.namespace or 'default'}/{obj.metadata.name}"
        if isinstance(obj, DaemonSet):
            self.add_pods(self.nodes, named, f"its pod on each of {self.nodes:,} nodes")
        elif isinstance(obj, Job):
            self._add_job(obj.spec, named, "spec.")
        elif isinstance(obj, CronJob):
            self._add_job(obj.spec.job_template.spec, named, "spec.jobTemplate.spec.")
        else:
            replicas = 1 if obj.spec.replicas is None else obj.spec.replicas
            self.add_pods(replicas, named, f"spec.replicas: {replicas}")
            if isinstance(obj, StatefulSet) and obj.spec.volume_claim_templates and replicas:
                per = len(obj.spec.volume_claim_templates)
                self.check_each(
                    per * replicas,
                    named,
                    f"spec.volumeClaimTemplates: {per} claim(s) for each of {replicas} replicas",
                    "claims",
                )

    def _add_job(self, spec: JobSpec, named: str, path: str) -> None:
        """A Job's pods: ``parallelism`` at once, never more than ``completions`` (which, for
        an Indexed Job, are indexes as well, bounded on their own)."""
        completions, parallelism = spec.completions, spec.parallelism
        if completions is None and parallelism is None:
            completions = parallelism = 1
        parallelism = 1 if parallelism is None else parallelism
        if completions is not None:
            self.check_each(completions, named, f"{path}completions: {completions}", "pods")
            if completions < parallelism:
                self.add_pods(completions, named, f"{path}completions: {completions}")
                return
        self.add_pods(parallelism, named, f"{path}parallelism: {parallelism}")


def _controlled(obj: Any) -> bool:
    """Whether a controller owns ``obj`` (a cluster dump's pods and ReplicaSets)."""
    refs = getattr(getattr(obj, "metadata", None), "owner_references", None) or ()
    return any(getattr(ref, "controller", False) for ref in refs)


__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_MAX_NODES",
    "DEFAULT_MAX_PODS",
    "MAX_NODES_FLAG",
    "MAX_PODS_FLAG",
    "WORKLOAD_KINDS",
    "Budget",
    "Limits",
    "too_many",
]
