"""Pod shapes: what the static plugins and the requests read of a pod, and everything about a
shape that does not change between its decisions.

The shape is what those plugins read (namespace, node selector and affinity, tolerations,
images, ports, requests, volume sources): names, labels and per-pod token volumes never make a
pod a new shape. A shape's static filters' verdicts and static scores are taken once from the
reference plugins (the kernels flagged ``node_only`` and ``static_score``), carried over table
rebuilds, and recomputed row by row when a node changes in place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import msgspec
import numpy as np

from topospread.api.types import (
    NODE_INCLUSION_POLICY_HONOR,
    Container,
    Node,
    Pod,
    PodSpec,
    Volume,
)
from topospread.api.volumes import (
    ConfigMapVolumeSource,
    DownwardAPIVolumeSource,
    ImageVolumeSource,
    NFSVolumeSource,
    ProjectedVolumeSource,
    SecretVolumeSource,
)
from topospread.framework.cycle_state import CycleState
from topospread.framework.types import NodeInfo
from topospread.plugins.helper.storage import has_claims
from topospread.plugins.interpodaffinity.scoring import has_preferred_constraints
from topospread.plugins.interpodaffinity.terms import PodAffinityTerms, parse_pod_affinity_terms
from topospread.plugins.noderesources.fit import compute_pod_resource_request
from topospread.plugins.noderesources.resource_helpers import calculate_resource
from topospread.plugins.podtopologyspread.common import InternalConstraint
from topospread.simulator.fastpath.table import CHANGED_ROWS_KEPT, Rebuilt
from topospread.simulator.fastpath.vectors import I32, I64, B

if TYPE_CHECKING:
    from topospread.cluster.index import DomainCounter
    from topospread.simulator.fastpath.cycle import FastPath

# Changed rows replayed one by one into a shape's kept values; past this many the whole vector
# is recomputed.
REPLAYED_ROWS: Final = 32
KEY_ENCODER: Final = msgspec.json.Encoder()


@dataclass(slots=True)
class Static:
    """Everything about one pod shape that does not change between its decisions."""

    filter_status: dict[str, I32]  # static filter -> status index per node (0: passes)
    rejects: dict[str, bool]  # static filter -> whether it rejects any node
    skip_filters: frozenset[str]  # filters whose PreFilter skipped
    # The volume plugins run per attempt through their reference plugins (the pod has claims,
    # or volumes they check): ``ClaimKernel``.
    per_attempt: frozenset[str]
    static_scores: dict[str, I64]
    skipped_scores: frozenset[str]
    req_cpu: int
    req_mem: int
    req_eph: int
    score_req: tuple[int, int]  # LeastAllocated's non-zero cpu, memory request
    balanced_req: tuple[int, int] | None  # None: BalancedAllocation skips (best effort)
    terms: PodAffinityTerms
    has_preferred_terms: bool  # the spec has preferred (anti-)affinity terms
    # What a node's row is recomputed from when that node changes in place.
    pod: Pod
    state: CycleState
    # Per node values that read the nodes' resources (LeastAllocated's and
    # BalancedAllocation's scores, NodeResourcesFit's shortage bits), by kind, each with the
    # position in the table's log of changed rows it is current to (``Shapes.kept``).
    kept: dict[str, tuple[Any, int]] = field(default_factory=dict)
    # Static score -> whether it is 0 on every node (taken on first use, dropped when a row
    # of it changes): nothing to index or normalize per decision.
    all_zero: dict[str, bool] = field(default_factory=dict)


@dataclass(slots=True)
class Signature:
    """A pod shape and its spread constraints, resolved against the node table."""

    static: Static
    hard: list[tuple[InternalConstraint, DomainCounter, I64]]  # constraint, counter, domains
    soft: list[tuple[InternalConstraint, DomainCounter | None]]  # None: hostname (per node)
    soft_require_all: bool
    soft_eligible_all: B  # nodes holding every soft topology key
    skipped_scores: frozenset[str]
    host_counters: list[DomainCounter] = field(default_factory=list)


class Shapes:
    """The pod shapes met so far (key -> Static, or None where the path declines the shape)."""

    def __init__(self, path: FastPath) -> None:
        self.path = path
        self.statics: dict[bytes, Static | None] = {}
        self._plugins_by_name: tuple[dict[str, Any], dict[str, Any]] | None = None
        # (shape key, node spec encoded), plugin, whether scored -> its filter's status index
        # or its score there (``refresh_row`` on a node's spec change).
        self.spec_rows: dict[tuple[tuple[bytes, bytes] | None, str, bool], int] = {}

    def kept(self, static: Static, kind: str, full: Callable[[Static], Any],
             row: Callable[[Static, int], int]) -> Any:  # fmt: skip
        """A shape's values on every node that read only the nodes' resources, kept between
        decisions: the rows changed since (a bind changes one) are recomputed one by one
        with ``row``, in Python, and many changed rows recompute the whole vector with
        ``full``. tests/test_fastpath.py checks the kept values against fresh ones."""
        table = self.path.table
        log = table.changed_rows
        values, at = static.kept.get(kind, (None, 0))
        if values is None or len(log) - at > REPLAYED_ROWS:
            values = full(static)
        else:
            for i in set(log[at:]):
                values[i] = row(static, i)
        static.kept[kind] = (values, len(log))
        if len(log) > CHANGED_ROWS_KEPT:
            # Start the log again; every shape's kept values are computed afresh on next use.
            table.changed_rows = []
            for other in self.statics.values():
                if other is not None:
                    other.kept.clear()
        return values

    def carry(self, rebuilt: Rebuilt) -> None:
        """Carry each shape's static verdicts and scores over to the rebuilt table, computing
        the fresh rows; shapes that cannot be carried are dropped (rebuilt on their next pod):
        those the path declined, and those scored by ImageLocality while any node reports
        images (its scores read how many nodes hold each image)."""
        n = len(rebuilt.infos)
        kept, from_rows = rebuilt.kept, rebuilt.from_rows
        images = rebuilt.old_images or self.path.table.images
        kernels = self.path.kernels
        carried: dict[bytes, Static | None] = {}
        for key, static in self.statics.items():
            if static is None:
                continue
            if images and any(kernels[name].reads_images for name in static.static_scores):
                continue
            filter_status = {}
            for name, arr in static.filter_status.items():
                new = np.zeros(n, np.int32)
                new[kept] = arr[from_rows]
                filter_status[name] = new
            static_scores = {}
            for name, scores in static.static_scores.items():
                new_scores = np.zeros(n, np.int64)
                new_scores[kept] = scores[from_rows]
                static_scores[name] = new_scores
            static.filter_status, static.static_scores = filter_status, static_scores
            static.kept.clear()  # the rows moved
            static.all_zero.clear()
            if all(self.refresh_row(static, rebuilt.infos[i], i) for i in rebuilt.fresh):
                static.rejects = {name: bool(arr.any()) for name, arr in filter_status.items()}
                carried[key] = static
        self.statics = carried

    def refresh_node(self, info: NodeInfo, i: int, node: Node) -> set[bytes]:
        """A node changed in place, its labels, images and name the same: of the static
        plugins only those reading its taints and unschedulable flag can answer differently,
        and they answer alike for alike nodes (a zone outage taints thousands the same way).
        Refresh its row of every shape; drop and return the shapes that cannot be."""
        spec = KEY_ENCODER.encode((node.spec.taints, node.spec.unschedulable))
        if len(self.spec_rows) > 65536:
            self.spec_rows.clear()
        stale = {
            key
            for key, static in self.statics.items()
            if static is None or not self.refresh_row(static, info, i, memo=(key, spec))
        }
        for key in stale:
            del self.statics[key]
        return stale

    def refresh_row(
        self, static: Static, info: NodeInfo, i: int, memo: tuple[bytes, bytes] | None = None
    ) -> bool:
        """Recompute one node's static filter verdicts and scores for a pod shape; False
        when a plugin errs there (the shape is then rebuilt, and declined, on its next pod).
        ``memo`` (the shape's key, the node's taints and unschedulable flag encoded): only the
        node's spec changed, so only the plugins reading it are asked, each answer kept for
        the next node with that spec."""
        fwk = self.path.fwk
        if self._plugins_by_name is None:
            self._plugins_by_name = (
                {pl.name: pl for pl in fwk.filter_plugins},
                {pl.name: pl for pl in fwk.score_plugins},
            )
        filters, scorers = self._plugins_by_name
        kernels = self.path.kernels
        for name, arr in static.filter_status.items():
            if memo is not None and not kernels[name].reads_spec:
                continue
            found = self.spec_rows.get((memo, name, False)) if memo is not None else None
            if found is None:
                status = filters[name].filter(static.state, static.pod, info)
                if status.is_success:
                    found = 0
                elif status.is_rejected:
                    found = self.path.statuses.intern(status.with_plugin(name))
                else:
                    return False
                if memo is not None:
                    self.spec_rows[(memo, name, False)] = found
            if arr[i] == found:
                continue
            arr[i] = found
            static.rejects[name] = True if found else bool(arr.any())
        for name, scores in static.static_scores.items():
            if memo is not None and not kernels[name].reads_spec:
                continue
            found = self.spec_rows.get((memo, name, True)) if memo is not None else None
            if found is None:
                score, status = scorers[name].score(static.state, static.pod, info)
                if not status.is_success:
                    return False
                found = score
                if memo is not None:
                    self.spec_rows[(memo, name, True)] = found
            if scores[i] != found:
                scores[i] = found
                static.all_zero.pop(name, None)
        return True

    def build(self, pod: Pod) -> Static | None:
        """A shape's statics, taken from the reference plugins; None where the path declines
        it: a PreFilter that narrows the nodes or errs, a plugin this path cannot evaluate in
        play (one whose kernel requires its PreFilter to skip), an extended resource, an
        affinity that does not parse.

        The volume plugins (kernels flagged ``per_pod``) run per attempt for a pod with
        claims, whose PreFilter's answer depends on the claims (each pod's own) and the
        storage as it stands; for any other pod their PreFilter runs here, and skips unless
        the pod has a volume they check (then they too run per attempt)."""
        path = self.path
        fwk = path.fwk
        infos = path.cluster.list()
        n = len(infos)
        state = CycleState()
        claims = has_claims(pod)
        per_attempt: set[str] = set()
        for pre in fwk.pre_filter_plugins:
            kernel = path.kernels[pre.name]
            if kernel.dynamic:
                continue  # run per decision
            if kernel.per_pod and claims:
                per_attempt.add(pre.name)
                continue
            result, status = pre.pre_filter(state, pod, infos)
            if status.is_skip:
                state.skip_filter_plugins.add(pre.name)
                continue
            if kernel.per_pod:
                per_attempt.add(pre.name)  # its answer, per attempt
                continue
            if not status.is_success or (result is not None and result.node_names is not None):
                return None
            if kernel.must_skip:
                return None  # a plugin this path cannot evaluate is in play
        filter_status: dict[str, I32] = {}
        for flt in fwk.filter_plugins:
            kernel = path.kernels[flt.name]
            if not kernel.node_only or flt.name in state.skip_filter_plugins:
                continue
            arr = np.zeros(n, np.int32)
            for i, info in enumerate(infos):
                status = flt.filter(state, pod, info)
                if not status.is_success:
                    if not status.is_rejected:
                        return None  # an error: the reference reports it
                    arr[i] = path.statuses.intern(status.with_plugin(flt.name))
            filter_status[flt.name] = arr
        skipped: set[str] = set()
        static_scores = _static_scores(path, state, pod, infos, skipped)
        if static_scores is None:
            return None
        r = calculate_resource(pod, path.features)
        if r.resource.scalar_resources:
            return None
        fit: Any = fwk.plugins.get("NodeResourcesFit")
        score_req = (0, 0)
        request = (0, 0, 0)
        if fit is not None:
            reqs = fit.scorer.calculate_pod_resource_request_list(pod)
            score_req = (reqs[0], reqs[1])
            if not fit.pre_filter(CycleState(), pod, infos)[1].is_success:
                return None
            req = compute_pod_resource_request(pod, fit.enable_pod_level_resources)
            request = (req.milli_cpu, req.memory, req.ephemeral_storage)
        balanced_req: tuple[int, int] | None = None
        balanced: Any = fwk.plugins.get("NodeResourcesBalancedAllocation")
        if balanced is not None:
            reqs = balanced.scorer.calculate_pod_resource_request_list(pod)
            if any(reqs):
                balanced_req = (reqs[0], reqs[1])
            else:
                skipped.add("NodeResourcesBalancedAllocation")
        terms = parse_pod_affinity_terms(pod)
        if terms.parse_error:
            return None  # InterPodAffinity's PreFilter rejects it with the parse error
        if "InterPodAffinity" not in fwk.plugins:
            skipped.add("InterPodAffinity")
        return Static(
            filter_status=filter_status,
            rejects={name: bool(arr.any()) for name, arr in filter_status.items()},
            skip_filters=frozenset(state.skip_filter_plugins),
            per_attempt=frozenset(per_attempt),
            static_scores=static_scores,
            skipped_scores=frozenset(skipped),
            req_cpu=request[0],
            req_mem=request[1],
            req_eph=request[2],
            score_req=score_req,
            balanced_req=balanced_req,
            terms=terms,
            has_preferred_terms=has_preferred_constraints(pod),
            pod=pod,
            state=state,
        )


def _static_scores(
    path: FastPath, state: CycleState, pod: Pod, infos: Sequence[NodeInfo], skipped: set[str]
) -> dict[str, I64] | None:
    """The static score plugins' raw scores on every node (their PreScore on ``state``);
    those whose PreScore skipped go to ``skipped``; None where one errs."""
    fwk = path.fwk
    static = {pl.name for pl in fwk.score_plugins if path.kernels[pl.name].static_score}
    for prs in fwk.pre_score_plugins:
        if prs.name not in static:
            continue
        status = prs.pre_score(state, pod, infos)
        if status.is_skip:
            skipped.add(prs.name)
        elif not status.is_success:
            return None
    out: dict[str, I64] = {}
    for scr in fwk.score_plugins:
        if scr.name in static and scr.name not in skipped:
            scores = np.zeros(len(infos), np.int64)
            for i, info in enumerate(infos):
                score, status = scr.score(state, pod, info)
                if not status.is_success:
                    return None
                scores[i] = score
            out[scr.name] = scores
    return out


def honours_taints(constraints: Any) -> bool:
    """Whether resolved spread constraints (hard, soft, own) count nodes by their taints."""
    if not isinstance(constraints, tuple):
        return False
    hard, soft, _ = constraints
    return any(c.node_taints_policy == NODE_INCLUSION_POLICY_HONOR for c in (*hard, *soft))


def static_key(pod: Pod) -> bytes:
    """What the static plugins and the requests read of a pod, as bytes.

    NOTE: it leaves out what no filter or score plugin reads — the pod's name, labels and
    owners (PodTopologySpread's constraints are resolved per pod and keyed separately;
    InterPodAffinity's counts are read per decision), container names, volume names (each pod
    read from a cluster has its own ``kube-api-access-<random>`` token volume), hostname and
    subdomain, scheduling gates and priority, claim names — so that the pods of one template
    share it —
    and its spread constraints (PodTopologySpread is a dynamic plugin here: a report's probe,
    a workload pod with one of its constraints made hard, shares its pod's shape). A plugin
    without a kernel runs per decision on the pod itself, so what it reads needs no key.
    """
    view = msgspec.structs.replace(
        unnamed_spec(pod.spec),
        scheduling_gates=[],
        topology_spread_constraints=[],
        priority=None,
        priority_class_name="",
        preemption_policy=None,
    )
    return KEY_ENCODER.encode((pod.metadata.namespace, view))


def unnamed_spec(spec: PodSpec) -> PodSpec:
    """The spec without what names one pod of a template apart and no plugin reads of a pod
    without claims: container and volume names, the unread volume sources' contents, claim
    names (``_keyed_volume``), hostname and subdomain."""
    return msgspec.structs.replace(
        spec,
        containers=[_unnamed(c) for c in spec.containers],
        init_containers=[_unnamed(c) for c in spec.init_containers],
        volumes=[_keyed_volume(v) for v in spec.volumes],
        hostname="",
        subdomain="",
    )


def _keyed_volume(v: Volume) -> Volume:
    """A volume as the shape's key holds it: its name and its claim's name left out (each
    pod of a StatefulSet has its own claim; the volume plugins read claims per attempt), and
    the contents of the sources no plugin reads (only their kind: one projected token volume
    is the key's ``{"projected": {}}`` whatever its items)."""
    claim = v.persistent_volume_claim
    if claim is not None and claim.claim_name:
        claim = msgspec.structs.replace(claim, claim_name="")
        return msgspec.structs.replace(v, name="", persistent_volume_claim=claim)
    if v.projected is not None:
        return _KEYED_PROJECTED
    for attr, empty in _UNREAD_SOURCES:
        if getattr(v, attr) is not None:
            return msgspec.structs.replace(v, name="", **{attr: empty})
    return msgspec.structs.replace(v, name="")


_KEYED_PROJECTED: Final = Volume(projected=ProjectedVolumeSource())
# NOTE: no filter or score plugin reads these sources' contents (the volume plugins read
# claims, ephemeral volumes, CSI and the attachable disks), so the key holds their kind only.
_UNREAD_SOURCES: Final = (
    ("config_map", ConfigMapVolumeSource()),
    ("secret", SecretVolumeSource()),
    ("downward_api", DownwardAPIVolumeSource()),
    ("nfs", NFSVolumeSource()),
    ("image", ImageVolumeSource()),
)


def _unnamed(c: Container) -> Container:
    return msgspec.structs.replace(c, name="") if c.name else c
