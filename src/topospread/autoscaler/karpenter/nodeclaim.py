"""The nodes a provisioning run packs pods onto: existing nodes (and in-flight nodeclaims), whose
labels are fixed, and new nodeclaims, whose requirements and instance-type options narrow as pods
join them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from topospread.api.resource import BINARY_SI, DECIMAL_EXPONENT, Quantity, parse_quantity
from topospread.api.types import (
    LABEL_ARCH_STABLE,
    LABEL_HOSTNAME,
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_OS_STABLE,
    LABEL_TOPOLOGY_ZONE,
    Node,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    Pod,
    Taint,
)
from topospread.autoscaler.karpenter.instance import fleet_overrides
from topospread.autoscaler.karpenter.instancetypes import (
    InstanceType,
    Offering,
    satisfies_min_values,
)
from topospread.autoscaler.karpenter.nodepool import NodePool
from topospread.autoscaler.karpenter.requirements import (
    CAPACITY_TYPE_LABEL,
    NODEPOOL_LABEL,
    Requirement,
    Requirements,
    from_labels,
)
from topospread.autoscaler.karpenter.topology import Topology
from topospread.plugins.noderesources.resource_helpers import pod_requests
from topospread.taints import find_matching_untolerated_taint

# Upstream: MaxInstanceTypes (nodeclaim launch truncates the options to the 60 cheapest).
MAX_INSTANCE_TYPES: Final = 60


@dataclass(frozen=True, slots=True)
class Resources:
    """CPU (millicores), memory (bytes) and pod slots."""

    cpu_milli: int = 0
    memory: int = 0
    pods: int = 0

    def __add__(self, other: Resources) -> Resources:
        return Resources(
            self.cpu_milli + other.cpu_milli, self.memory + other.memory, self.pods + other.pods
        )

    def __sub__(self, other: Resources) -> Resources:
        return Resources(
            self.cpu_milli - other.cpu_milli, self.memory - other.memory, self.pods - other.pods
        )

    def fits_in(self, capacity: Resources) -> bool:
        return (
            self.cpu_milli <= capacity.cpu_milli
            and self.memory <= capacity.memory
            and self.pods <= capacity.pods
        )

    def __str__(self) -> str:
        return f'{{"cpu":"{self.cpu_milli}m","memory":"{self.memory}","pods":"{self.pods}"}}'


def requests_of(pod: Pod) -> Resources:
    """A pod's requests as Karpenter counts them (no defaults for missing requests)."""
    reqs = pod_requests(pod)
    cpu = reqs.get("cpu")
    mem = reqs.get("memory")
    return Resources(
        cpu.milli_value() if cpu is not None else 0, mem.value() if mem is not None else 0, 1
    )


_FIELDS: Final = ("cpu_milli", "memory", "pods")


def request_list(pod: Pod) -> dict[str, Quantity]:
    """A pod's requests and one pod slot. Upstream: resources.RequestsForPods"""
    out = dict(pod_requests(pod))
    out["pods"] = Quantity.new_quantity(1, DECIMAL_EXPONENT)
    return out


def overhead_list(r: Resources) -> dict[str, Quantity]:
    """Daemon overhead as a resource list (memory in binary units, as daemons request it)."""
    out = {}
    if r.cpu_milli:
        out["cpu"] = Quantity.new_milli_quantity(r.cpu_milli)
    if r.memory:
        out["memory"] = Quantity.new_quantity(r.memory, BINARY_SI)
    if r.pods:
        out["pods"] = Quantity.new_quantity(r.pods, DECIMAL_EXPONENT)
    return out


def merged(a: Mapping[str, Quantity], b: Mapping[str, Quantity]) -> dict[str, Quantity]:
    """Upstream: resources.Merge (sums per resource)"""
    out = dict(a)
    for k, v in b.items():
        out[k] = out[k] + v if k in out else v
    return out


def resources_text(resources: Mapping[str, Quantity]) -> str:
    """Upstream: resources.String (the list as JSON, keys sorted)"""
    if not resources:
        return "{}"
    return "{" + ",".join(f'"{k}":"{resources[k]}"' for k in sorted(resources)) + "}"


def _resources(raw: Mapping[str, str | int | float]) -> Resources:
    return Resources(
        parse_quantity(raw.get("cpu", 0)).milli_value(),
        parse_quantity(raw.get("memory", 0)).value(),
        parse_quantity(raw.get("pods", 0)).value(),
    )


def allocatable_of(node: Node) -> Resources:
    return _resources(node.status.allocatable or node.status.capacity)


def node_capacity_of(node: Node) -> Resources:
    """What a node counts against its NodePool's limits: its capacity, not its allocatable.
    Upstream: Scheduler.updateRemainingResources (StateNode.Capacity)"""
    return _resources(node.status.capacity or node.status.allocatable)


def capacity_of(it: InstanceType) -> Resources:
    return Resources(it.cpu_milli, it.memory, it.pods)


def tolerates(pod: Pod, taints: Sequence[Taint]) -> str:
    """ "" when the pod tolerates every taint, PreferNoSchedule included (Karpenter packs
    no pod onto a node whose taints it does not all tolerate), else why not.
    Upstream: scheduling.Taints.ToleratesPod (pkg/scheduling/taints.go)"""
    taint = find_matching_untolerated_taint(taints, pod.spec.tolerations)
    if taint is None:
        return ""
    return f"did not tolerate taint {taint.key}={taint.value}:{taint.effect}"


@dataclass(slots=True)
class ExistingNode:
    """A node already in the cluster, or a nodeclaim launched but not yet registered.

    Upstream: ExistingNode (existingnode.go)
    """

    name: str
    requirements: Requirements
    taints: Sequence[Taint]
    remaining: Resources
    initialized: bool = True
    pods: list[Pod] = field(default_factory=list)

    @staticmethod
    def of(
        node: Node,
        pods: Sequence[Pod],
        initialized: bool = True,
        daemon_reserve: Resources = Resources(),
    ) -> ExistingNode:
        """``daemon_reserve``: what the node keeps for daemon pods yet to run on it
        (daemons.existing_node_reserve). Upstream: NewExistingNode"""
        used = daemon_reserve
        for p in pods:
            used = used + requests_of(p)
        return ExistingNode(
            node.metadata.name,
            from_labels(node.metadata.labels),
            list(node.spec.taints),
            allocatable_of(node) - used,
            initialized,
        )

    def can_add(
        self,
        pod: Pod,
        pod_reqs: Requirements,
        topology: Topology,
        volumes: Sequence[Requirements | None] | None = None,
    ) -> tuple[Requirements | None, str]:
        """The topology's requirements with the pod added, or why not; ``volumes``: the
        alternatives its volumes allow (volumetopology.py), tried in turn.
        Upstream: ExistingNode.CanAdd, tryVolumeAlternative"""
        if why := tolerates(pod, self.taints):
            return None, why
        if not requests_of(pod).fits_in(self.remaining):
            return None, "exceeds node resources"
        if why := self.requirements.compatible(pod_reqs, allow_undefined_well_known=False):
            return None, why
        last = ""
        for alternative in volumes or (None,):
            base = self.requirements
            if alternative is not None:
                if why := base.compatible(alternative, allow_undefined_well_known=False):
                    last = f"incompatible volume requirements, {why}"
                    continue
                base = base.copy()
                base.add(*alternative.values())
            reqs, why = topology.add_requirements(pod, base)
            if reqs is not None:
                return reqs, ""
            last = why
        return None, last

    def add(self, pod: Pod, reqs: Requirements, topology: Topology) -> None:
        self.pods.append(pod)
        self.remaining = self.remaining - requests_of(pod)
        topology.record(pod, reqs)


@dataclass(slots=True)
class NodeClaim:
    """A node Karpenter will launch: its NodePool, requirements, instance-type options, pods.

    Upstream: NodeClaim (nodeclaim.go)
    """

    nodepool: NodePool
    hostname: str
    requirements: Requirements
    instance_types: list[InstanceType]
    daemon_overhead: Mapping[str, Resources]  # per instance type (daemons.nodeclaim_overhead)
    pods: list[Pod] = field(default_factory=list)
    requests: Resources = Resources()

    def can_add(
        self,
        pod: Pod,
        pod_reqs: Requirements,
        topology: Topology,
        volumes: Sequence[Requirements | None] | None = None,
    ) -> tuple[tuple[Requirements, list[InstanceType]] | None, str]:
        """The narrowed requirements and remaining options with the pod added, or why not;
        ``volumes``: the alternatives its volumes allow (volumetopology.py), tried in turn,
        the first that fits taken.
        Upstream: NodeClaim.CanAdd, tryVolumeAlternative, filterInstanceTypesByRequirements"""
        if why := tolerates(pod, self.nodepool.taints):
            return None, why
        if why := self.requirements.compatible(pod_reqs):
            return None, f"incompatible requirements, {why}"
        base = self.requirements.copy()
        base.add(*pod_reqs.values())
        last = ""
        for alternative in volumes or (None,):
            reqs = base
            if alternative is not None:
                if why := base.compatible(alternative):
                    last = f"incompatible volume requirements, {why}"
                    continue
                reqs = base.copy()
                reqs.add(*alternative.values())
            fit, last = self._try_add(pod, reqs, topology)
            if fit is not None:
                return fit, ""
        return None, last

    def _try_add(
        self, pod: Pod, reqs: Requirements, topology: Topology
    ) -> tuple[tuple[Requirements, list[InstanceType]] | None, str]:
        narrowed, why = topology.add_requirements(pod, reqs)
        if narrowed is None:
            return None, why
        total = self.requests + requests_of(pod)
        none = Resources()
        options = [
            it
            for it in self.instance_types
            if it.requirements().intersects(narrowed)
            and (total + self.daemon_overhead.get(it.name, none)).fits_in(capacity_of(it))
            and it.compatible_offerings(narrowed)
        ]
        if not options:
            return None, self._filter_error(pod, narrowed, total)
        # Upstream (MinValuesPolicy Strict, the default): options that cannot cover a
        # minValues leave none; the error says so first.
        _, short = satisfies_min_values(options, narrowed)
        if short:
            return None, f"{short}, requirements={narrowed}, resources={self._resources_text(pod)}"
        return (narrowed, options), ""

    def _filter_error(self, pod: Pod, narrowed: Requirements, total: Resources) -> str:
        """Why no option is left: which of requirements, resources and offerings ruled the
        types out, alone or together. Upstream: InstanceTypeFilterError.Error (nodeclaim.go)"""
        none = Resources()
        met = fit = offered = met_fit = met_offered = fit_offered = False
        for it in self.instance_types:
            compat = it.requirements().intersects(narrowed)
            has_offering = bool(it.compatible_offerings(narrowed))
            # Upstream's fits() counts a fit only with a compatible offering.
            fits = has_offering and (total + self.daemon_overhead.get(it.name, none)).fits_in(
                capacity_of(it)
            )
            met, fit, offered = met or compat, fit or fits, offered or has_offering
            met_fit = met_fit or (compat and fits and not has_offering)
            met_offered = met_offered or (compat and has_offering and not fits)
            fit_offered = fit_offered or (fits and has_offering and not compat)
        if not met and not fit and not offered:
            why = (
                "no instance type met the scheduling requirements or had enough resources or "
                "had a required offering"
            )
        elif not met and not fit:
            why = "no instance type met the scheduling requirements or had enough resources"
        elif not met and not offered:
            why = "no instance type met the scheduling requirements or had a required offering"
        elif not fit and not offered:
            why = "no instance type had enough resources or had a required offering"
        elif not met:
            why = "no instance type met all requirements"
        elif not fit:
            why = "no instance type has enough resources"
        elif not offered:
            why = "no instance type has the required offering"
        elif met_fit:
            why = (
                "no instance type which met the scheduling requirements and had enough "
                "resources, had a required offering"
            )
        elif fit_offered:
            why = (
                "no instance type which had enough resources and the required offering met "
                "the scheduling requirements"
            )
        elif met_offered:
            why = (
                "no instance type which met the scheduling requirements and the required "
                "offering had the required resources"
            )
        else:
            why = "no instance type met the requirements/resources/offering tuple"
        text = f"{why}, requirements={narrowed}, resources={self._resources_text(pod)}"
        if not fit and requests_of(pod).cpu_milli >= 10**9:
            text += " (CPU request >= 1 Million, m vs M typo?)"
        return text

    def _resources_text(self, pod: Pod) -> str:
        """The pod's requests with the least and the most daemon overhead of the options.
        Upstream: InstanceTypeFilterError.resourcesString"""
        requests = request_list(pod)
        overheads = [o for o in self.daemon_overhead.values() if o != Resources()]
        if not overheads:
            return resources_text(requests)
        low = Resources(*(min(getattr(o, f) for o in overheads) for f in _FIELDS))
        high = Resources(*(max(getattr(o, f) for o in overheads) for f in _FIELDS))
        low_text = resources_text(merged(overhead_list(low), requests))
        high_text = resources_text(merged(overhead_list(high), requests))
        return low_text if low_text == high_text else f"min={low_text}, max={high_text}"

    def add(
        self, pod: Pod, reqs: Requirements, options: list[InstanceType], topology: Topology
    ) -> None:
        self.pods.append(pod)
        self.requests = self.requests + requests_of(pod)
        self.requirements = reqs
        self.instance_types = options
        topology.record(pod, reqs)

    def instance_type_options(self) -> list[InstanceType]:
        """The options ordered by their cheapest compatible offering, truncated to
        MAX_INSTANCE_TYPES. Upstream: InstanceTypeOptions.OrderByPrice and Truncate"""
        priced = [(it.cheapest_price(self.requirements), it.name, it) for it in self.instance_types]
        ordered = sorted((p, n, it) for p, n, it in priced if p is not None)
        return [it for _, _, it in ordered][:MAX_INSTANCE_TYPES]

    def launch_choices(self) -> list[tuple[InstanceType, Offering]]:
        """What the cloud may launch, in the order it tries: the CreateFleet overrides of
        the launch's one capacity type (instance.py), cheapest first."""
        return [
            (ov.instance_type, ov.offering)
            for ov in fleet_overrides(self.instance_type_options(), self.requirements)
        ]

    def launch_choice(self) -> tuple[InstanceType, Offering]:
        """What the cloud launches when it can serve every offering: the cheapest."""
        choices = self.launch_choices()
        if not choices:
            raise ValueError(f"nodeclaim {self.hostname} has no available offering")
        return choices[0]


def node_for(claim: NodeClaim, name: str, it: InstanceType, offering: Offering) -> Node:
    """The Node that registers for a launched nodeclaim: the requirements' single values, the
    instance type's and offering's labels, the NodePool's taints, the type's resources."""
    labels = {
        **claim.requirements.labels(),
        **claim.nodepool.labels,
        NODEPOOL_LABEL: claim.nodepool.name,
        LABEL_INSTANCE_TYPE_STABLE: it.name,
        LABEL_ARCH_STABLE: it.arch,
        LABEL_OS_STABLE: "linux",
        LABEL_TOPOLOGY_ZONE: offering.zone,
        CAPACITY_TYPE_LABEL: offering.capacity_type,
        LABEL_HOSTNAME: name,
    }
    resources: dict[str, str | int | float] = {
        "cpu": f"{it.cpu_milli}m",
        "memory": str(it.memory),
        "pods": str(it.pods),
    }
    return Node(
        metadata=ObjectMeta(name=name, labels=labels),
        spec=NodeSpec(taints=list(claim.nodepool.taints)),
        status=NodeStatus(capacity=dict(resources), allocatable=dict(resources)),
    )


def hostname_requirement(hostname: str) -> Requirement:
    return Requirement.new(LABEL_HOSTNAME, "In", [hostname])
