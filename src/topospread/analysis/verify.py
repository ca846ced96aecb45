"""``verify``: check that spreading holds in every order in which the pods can be scheduled.

The scenario (nodes, bound pods, the pods to place, the controllers' order, the invariants) is
read by analysis/verify_scenario.py. The search is a breadth-first walk over cluster states:
in each state every pending pod that exists (an OrderedReady StatefulSet creates
ordinal n+1 only once ordinal n is bound) goes through the real scheduling cycle (every Filter
and Score plugin of its profile), and each node it could land on is a successor: the nodes with
the best total score, among which kube-scheduler picks at random, or with ``any_feasible``
every feasible node. Every reachable state is checked against the invariants, and a state where
pods remain but none can be placed is a deadlock. Breadth first, the first failure found is a
shortest counterexample.

States equal up to symmetry (analysis/verify_symmetry.py) are merged: a state's key is the
state with its interchangeable workloads, zones and nodes put in a standard order. Any
symmetric image would be sound; the standard order only decides how much is merged. When the
state budget runs out, the search says how deep it checked every order, then samples complete
orders at random (seeded): not a proof.

Assumptions, reported with every result: every node is evaluated (percentageOfNodesToScore as
100%; clusters under 100 nodes are evaluated whole anyway); pods are not preempted; every
order of the pending pods is possible (the queue's priority order and retries only pick among
them).
"""

from __future__ import annotations

import bisect
import random
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from topospread.analysis.reports import node_json, pending_json
from topospread.analysis.verify_scenario import (
    Invariant,
    VerifyScenario,
    Workload,
    bound_to,
    expand_workload,
    load_verify_scenario,
    parse_invariants,
    plural,
    pod_key,
)
from topospread.analysis.verify_symmetry import Symmetry, find_symmetry
from topospread.analysis.verify_volumes import ClaimBindings
from topospread.api.types import (
    Node,
    Pod,
    PodDisruptionBudget,
)
from topospread.cluster.state import ClusterState
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.runtime import Registry
from topospread.framework.schedule_one import SchedulingError, fit_error_message
from topospread.plugins.helper.storage import has_claims
from topospread.simulator.scheduler import Scheduler

__all__ = [
    "DEFAULT_MAX_STATES",
    "DEFAULT_SAMPLES",
    "Counterexample",
    "Invariant",
    "Symmetry",
    "TraceStep",
    "VerifyProgress",
    "VerifyResult",
    "VerifyScenario",
    "Workload",
    "expand_workload",
    "find_symmetry",
    "load_verify_scenario",
    "parse_invariants",
    "plural",
    "pod_key",
    "verify",
]

# About half a minute of search for a dozen pods with anti-affinity on a 2-core machine.
DEFAULT_MAX_STATES: Final = 50_000
DEFAULT_SAMPLES: Final = 200
# Progress is reported every this many expanded states (or sampled orders).
PROGRESS_EVERY: Final = 256

ASSUMPTIONS: Final = (
    "every node is evaluated (percentageOfNodesToScore taken as 100%; "
    "clusters under 100 nodes are evaluated whole anyway)",
    "no preemption: a pod that fits nowhere waits",
    "any pending pod may be scheduled next (priority order and retries pick among them)",
)

# ---------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True, slots=True)
class VerifyProgress:
    """Where the search is: ``phase`` is "search" or "sample"."""

    phase: str
    states: int
    depth: int
    frontier: int
    samples: int = 0


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One binding of a counterexample: the pod, its node, and the nodes it could have had."""

    pod: str
    node: str
    choices: tuple[str, ...]
    feasible: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "node": self.node,
            "choices": list(self.choices),
            "feasible": list(self.feasible),
        }


@dataclass(frozen=True, slots=True)
class Counterexample:
    """A reachable state that breaks a property, and the steps that reach it."""

    kind: Literal["deadlock", "invariant"]
    message: str
    steps: tuple[TraceStep, ...]
    # The cluster at the failing step: every node (scenario order) with its pods.
    cluster: tuple[tuple[Node, tuple[Pod, ...]], ...]
    # Pods not bound there, with why (FailedScheduling message, or what they wait for).
    pending: tuple[tuple[str, str], ...]
    invariant: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "invariant": self.invariant,
            "message": self.message,
            "steps": [s.to_json() for s in self.steps],
            # The cluster at the failing step, in every report's shapes.
            "bound": {pod_key(p): n.metadata.name for n, pods in self.cluster for p in pods},
            "pending": pending_json(dict(self.pending)),
            "nodes": [node_json(n) for n, _ in self.cluster],
        }


@dataclass(slots=True)
class VerifyResult:
    """The verdict: ``proved`` (every order explored, nothing found), a counterexample, or a
    bounded run (``exhaustive`` false) that found nothing, which is not a proof."""

    source: str
    pods: int
    nodes: int
    any_feasible: bool
    exhaustive: bool
    states: int
    transitions: int
    depth: int
    orders: int | None = None
    samples: int = 0
    seed: int = 0
    max_states: int = DEFAULT_MAX_STATES
    counterexample: Counterexample | None = None
    invariants: list[str] = field(default_factory=list)
    reduction: str = ""
    assumptions: tuple[str, ...] = ASSUMPTIONS

    @property
    def ok(self) -> bool:
        return self.counterexample is None

    @property
    def proved(self) -> bool:
        return self.ok and self.exhaustive

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.source,
            "verdict": "proved"
            if self.proved
            else ("counterexample" if not self.ok else "bounded"),
            "ok": self.ok,
            "note": (
                f"not a proof: the state budget ran out; every state up to {self.depth} "
                f"bindings deep was checked, then {self.samples} random orders were sampled"
                if self.ok and not self.exhaustive
                else None
            ),
            "proved": self.proved,
            "mode": "any-feasible" if self.any_feasible else "best-score",
            "podCount": self.pods,
            "nodeCount": self.nodes,
            "states": self.states,
            "transitions": self.transitions,
            "depth": self.depth,
            "orders": self.orders,
            "samples": self.samples,
            "seed": self.seed,
            "maxStates": self.max_states,
            "invariants": self.invariants,
            "reduction": self.reduction,
            "assumptions": list(self.assumptions),
            "counterexample": (
                self.counterexample.to_json() if self.counterexample is not None else None
            ),
        }


# ---------------------------------------------------------------------------------------------
# The search


# A state: per node (scenario order), the sorted pod classes on it; per class, how many of its
# pods are bound. Pods of a class are bound in member order, so the counts name the pods.
Contents = tuple[tuple[int, ...], ...]
State = tuple[Contents, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class _Options:
    feasible: tuple[int, ...]
    choices: tuple[int, ...]
    message: str


class _Explorer:
    """One cluster, moved from state to state, and the scheduling cycle run in it."""

    def __init__(
        self,
        sc: VerifyScenario,
        symmetry: Symmetry,
        *,
        any_feasible: bool,
        registry: Registry | None,
        features: Features,
    ) -> None:
        if registry is None:
            from topospread.plugins.registry import IN_TREE

            registry = IN_TREE
        self.sc = sc
        self.sym = symmetry
        self.any_feasible = any_feasible
        scenario = sc.scenario
        self.cluster: ClusterState = scenario.cluster()
        self.scheduler = Scheduler(
            self.cluster,
            scenario.config,
            registry,
            features,
            percentage_of_nodes_to_score=100,
            pod_disruption_budgets=[
                o for o in scenario.objects if isinstance(o, PodDisruptionBudget)
            ],
            fast=False,
            detail=False,
        )
        self.nodes = list(scenario.nodes)
        self.node_index = {n.metadata.name: i for i, n in enumerate(self.nodes)}
        k = symmetry.pod_classes
        self.members: list[list[Pod]] = [[] for _ in range(k)]
        for pod in scenario.queue:
            self.members[symmetry.pod_class[pod_key(pod)]].append(pod)
        position = {
            pod_key(p): (c, j) for c, ms in enumerate(self.members) for j, p in enumerate(ms)
        }
        # A class may be scheduled once these classes have at least these many pods bound.
        self.requires: list[tuple[tuple[int, int], ...]] = []
        for c in range(k):
            need: dict[int, int] = {}
            for key in sc.waits_for.get(pod_key(self.members[c][0]), ()) if self.members[c] else ():
                d, j = position[key]
                need[d] = max(need.get(d, 0), j + 1)
            self.requires.append(tuple(sorted(need.items())))
        contents: list[list[int]] = [[] for _ in self.nodes]
        for pod in scenario.pods:
            contents[self.node_index[pod.spec.node_name]].append(symmetry.pod_class[pod_key(pod)])
        self.initial: State = (
            tuple(tuple(sorted(c)) for c in contents),
            tuple(0 for _ in range(k)),
        )
        self.total = len(scenario.queue)
        # A class's id blind to which workload of its orbit it belongs to.
        self._blind: list[tuple[int, ...]] = [(0, c) for c in range(k)]
        for o, orbit in enumerate(symmetry.orbits):
            for roles in orbit:
                for r, c in enumerate(roles):
                    self._blind[c] = (1, o, r)
        self._zones = [zone for group in symmetry.zone_groups for zone in group]
        self._zone_group = [0] * len(self.nodes)
        for g, group in enumerate(symmetry.zone_groups):
            for zone in group:
                for i in zone:
                    self._zone_group[i] = g
        self._placed: dict[str, tuple[Pod, int]] = {}
        self._bound_copies: dict[tuple[str, int], Pod] = {}
        # Claims are bound as the placed pods' cycles would bind them (None: no pod has any).
        self.claims = ClaimBindings(self.cluster) if any(map(has_claims, scenario.queue)) else None

    # -- moving the cluster

    def goto(self, state: State) -> None:
        """Bind and unbind queued pods so that the cluster holds ``state``."""
        contents, _ = state
        taken = [0] * len(self.members)
        want: dict[str, int] = {}
        for i, classes in enumerate(contents):
            for c in classes:
                members = self.members[c]
                if members:
                    want[pod_key(members[taken[c]])] = i
                    taken[c] += 1
        for key, (bound, i) in list(self._placed.items()):
            if want.get(key) != i:
                self.cluster.unbind(bound)
                del self._placed[key]
        for key, i in want.items():
            if key not in self._placed:
                pod = self._pod(key, i)
                self.cluster.bind(pod, self.nodes[i].metadata.name)
                self._placed[key] = (pod, i)
        if self.claims is not None:
            self.claims.place([(pod, self.nodes[i]) for pod, i in self._placed.values()])

    def _pod(self, key: str, i: int) -> Pod:
        bound = self._bound_copies.get((key, i))
        if bound is None:
            c = self.sym.pod_class[key]
            pod = next(p for p in self.members[c] if pod_key(p) == key)
            bound = self._bound_copies[key, i] = bound_to(pod, self.nodes[i].metadata.name)
        return bound

    # -- what can happen in a state

    def remaining(self, state: State) -> int:
        return self.total - sum(state[1])

    def pending(self, state: State) -> Iterator[tuple[int, Pod, bool]]:
        """Each class with pods left: its next pod, and whether its controller created it."""
        counts = state[1]
        for c, members in enumerate(self.members):
            if counts[c] < len(members):
                created = all(counts[d] >= n for d, n in self.requires[c])
                yield c, members[counts[c]], created

    def options(self, pod: Pod) -> _Options:
        """The scheduling cycle for ``pod`` in the current cluster: feasible nodes, and the
        ones the scheduler may choose (best total score, or every feasible one)."""
        fwk = self.scheduler.framework_for(pod)
        assert fwk is not None  # checked when loading
        algorithm = self.scheduler.algorithm
        state = CycleState()
        nodes = self.cluster.list()
        try:
            feasible, diagnosis = algorithm.find_nodes_that_fit_pod(fwk, state, pod, nodes)
            if not feasible:
                return _Options((), (), fit_error_message(len(nodes), diagnosis))
            names = [info.name for info in feasible]
            best = names
            if len(feasible) > 1 and not self.any_feasible:
                scores = algorithm.prioritize_nodes(fwk, state, pod, feasible)
                top = max(s.total_score for s in scores)
                best = [s.name for s in scores if s.total_score == top]
        except SchedulingError as err:
            return _Options((), (), err.status.message)
        index = self.node_index
        return _Options(
            tuple(sorted(index[n] for n in names)), tuple(sorted(index[n] for n in best)), ""
        )

    def violation(self) -> tuple[Invariant, str] | None:
        if not self.sc.invariants:
            return None
        placed = [(p, info.node) for info in self.cluster.list() for p in info.pods]
        for inv in self.sc.invariants:
            message = inv.violation(placed)
            if message is not None:
                return inv, message
        return None

    # -- states

    def successor(self, state: State, c: int, i: int) -> State:
        contents, counts = state
        on_node = list(contents[i])
        bisect.insort(on_node, c)
        new_contents = (*contents[:i], tuple(on_node), *contents[i + 1 :])
        new_counts = (*counts[:c], counts[c] + 1, *counts[c + 1 :])
        return new_contents, new_counts

    def canonical(self, state: State) -> Any:
        """A key equal for states that are images of each other under the symmetries: the
        state with its interchangeable workloads put in a standard order, then its zones and
        nodes sorted. Any image would be sound; the standard order only merges more."""
        contents, counts = self._order_workloads(state) if self.sym.orbits else state
        shape = self.sym.node_shape
        return (
            counts,
            tuple(
                tuple(
                    sorted(tuple(sorted((shape[i], contents[i]) for i in zone)) for zone in group)
                )
                for group in self.sym.zone_groups
            ),
        )

    def _order_workloads(self, state: State) -> State:
        """The image of ``state`` in which the workloads of each orbit come in the order of a
        description of their placement that no symmetry changes (ties keep their order)."""
        contents, counts = state
        blind = self._blind
        node_desc = []
        for zone_members in self._zones:
            zone_content = tuple(sorted(blind[c] for i in zone_members for c in contents[i]))
            for i in zone_members:
                node_desc.append(
                    (
                        i,
                        (
                            self._zone_group[i],
                            self.sym.node_shape[i],
                            zone_content,
                            tuple(sorted(blind[c] for c in contents[i])),
                        ),
                    )
                )
        desc_of = dict(node_desc)
        where: dict[int, list[Any]] = {}
        for i, classes in enumerate(contents):
            for c in classes:
                where.setdefault(c, []).append(desc_of[i])
        relabel = list(range(len(counts)))
        for orbit in self.sym.orbits:
            keyed = sorted(
                (tuple((counts[c], sorted(where.get(c, ()))) for c in roles), n)
                for n, roles in enumerate(orbit)
            )
            for target, (_, source) in enumerate(keyed):
                for c_from, c_to in zip(orbit[source], orbit[target], strict=True):
                    relabel[c_from] = c_to
        new_contents = tuple(tuple(sorted(relabel[c] for c in classes)) for classes in contents)
        new_counts = [0] * len(counts)
        for c, n in enumerate(counts):
            new_counts[relabel[c]] = n
        return new_contents, tuple(new_counts)

    def transitions(
        self, state: State, skip: set[int] | frozenset[int] = frozenset()
    ) -> tuple[list[tuple[int, int]], list[tuple[str, str]]]:
        """Every (class, node) the scheduler may bind next, but for the ``skip`` classes; and,
        for the pods that cannot move, why (their FailedScheduling message, or what they wait
        for)."""
        self.goto(state)
        out: list[tuple[int, int]] = []
        stuck: list[tuple[str, str]] = []
        for c, pod, created in self.pending(state):
            if not created or c in skip:
                continue
            opts = self.options(pod)
            out += [(c, i) for i in opts.choices]
            if not opts.choices:
                stuck.append((pod_key(pod), opts.message))
        return out, stuck

    def idle_twins(self, state: State) -> tuple[set[int], dict[int, int]]:
        """Classes whose moves mirror another's: of the interchangeable workloads with no pod
        bound yet, only the first needs exploring, and its moves stand for all of them.

        NOTE: exchanging two workloads of an orbit that have no pod bound leaves ``state``
        as it is, so it maps the second's moves onto the first's, successor for successor.
        Returns the classes to skip, and per class kept the number of workloads it stands for.
        """
        counts = state[1]
        skip: set[int] = set()
        weight: dict[int, int] = {}
        for orbit in self.sym.orbits:
            idle = [roles for roles in orbit if not any(counts[c] for c in roles)]
            if len(idle) > 1:
                for roles in idle[1:]:
                    skip.update(roles)
                for c in idle[0]:
                    weight[c] = len(idle)
        return skip, weight

    def waiting(self, state: State) -> list[tuple[str, str]]:
        """Pods not yet created in ``state``, with the pods they wait for."""
        out = []
        for c, _, created in self.pending(state):
            if created:
                continue
            for j in range(state[1][c], len(self.members[c])):
                p = self.members[c][j]
                waits = ", ".join(self.sc.waits_for.get(pod_key(p), ()))
                who = self.sc.origin.get(pod_key(p), "its controller")
                out.append((pod_key(p), f"not created yet: {who} waits for {waits} to be bound"))
        return out

    # -- counterexamples

    def replay(
        self, path: Sequence[tuple[int, int]], kind: Literal["deadlock", "invariant"]
    ) -> Counterexample:
        """The steps of ``path`` with the choices each had, and the failing state."""
        state = self.initial
        steps = []
        for c, i in path:
            self.goto(state)
            pod = self.members[c][state[1][c]]
            opts = self.options(pod)
            names = [n.metadata.name for n in self.nodes]
            steps.append(
                TraceStep(
                    pod_key(pod),
                    names[i],
                    tuple(names[j] for j in opts.choices),
                    tuple(names[j] for j in opts.feasible),
                )
            )
            state = self.successor(state, c, i)
        moves, stuck = self.transitions(state)
        pending = [*stuck, *self.waiting(state)]
        invariant = None
        if kind == "deadlock":
            left = self.remaining(state)
            message = (
                f"deadlock after {plural(len(path), 'binding')}: {plural(left, 'pod')} left "
                "and none can be placed"
            )
        else:
            found = self.violation()
            assert found is not None
            invariant = found[0].name
            message = f"invariant {found[0].name} ({found[0].describe()}) broken: {found[1]}"
            # Pods that could still move are pending too, with where they may go.
            names = [n.metadata.name for n in self.nodes]
            for c, pod, created in self.pending(state):
                if created and any(m[0] == c for m in moves):
                    where = ", ".join(names[i] for m, i in moves if m == c)
                    pending.append((pod_key(pod), f"may be placed on {where}"))
        cluster = tuple((n, tuple(self.cluster.infos[n.metadata.name].pods)) for n in self.nodes)
        return Counterexample(
            kind, message, tuple(steps), cluster, tuple(sorted(pending)), invariant
        )


def verify(
    scenario: VerifyScenario,
    *,
    any_feasible: bool = False,
    max_states: int = DEFAULT_MAX_STATES,
    seed: int = 0,
    progress: Callable[[VerifyProgress], None] | None = None,
    samples: int = DEFAULT_SAMPLES,
    symmetry: bool = True,
    registry: Registry | None = None,
    features: Features = DEFAULT_FEATURES,
) -> VerifyResult:
    """Explore every scheduling order (breadth first, states merged by symmetry) and report a
    proof, the shortest counterexample, or, past ``max_states``, a bounded check followed by
    ``samples`` random complete orders drawn from ``seed``. ``symmetry=False`` merges only
    identical states (the reference the reduction is tested against)."""
    sc = scenario
    keys = [pod_key(p) for p in (*sc.scenario.pods, *sc.scenario.queue)]
    sym = find_symmetry(sc) if symmetry else Symmetry.none(keys, len(sc.scenario.nodes))
    ex = _Explorer(sc, sym, any_feasible=any_feasible, registry=registry, features=features)
    result = VerifyResult(
        source=sc.source,
        pods=ex.total,
        nodes=len(ex.nodes),
        any_feasible=any_feasible,
        exhaustive=False,
        states=0,
        transitions=0,
        depth=0,
        max_states=max_states,
        seed=seed,
        invariants=[f"{inv.name}: {inv.describe()}" for inv in sc.invariants],
        reduction=sym.describe() if symmetry else "none",
    )

    # Breadth first over canonical states; each keeps the first state that reached it.
    index: dict[Any, int] = {ex.canonical(ex.initial): 0}
    states: list[State] = [ex.initial]
    parent: list[tuple[int, int, int]] = [(-1, -1, -1)]
    depth: list[int] = [0]
    successors: list[list[tuple[int, int]]] = []
    queue: deque[int] = deque([0])
    expanded = 0
    while queue:
        if len(states) > max_states:
            break
        sid = queue.popleft()
        state = states[sid]
        ex.goto(state)
        broken = ex.violation()
        if broken is not None:
            result.counterexample = ex.replay(_path(parent, sid), "invariant")
            break
        skip, weight = ex.idle_twins(state)
        moves, _ = ex.transitions(state, skip)
        if not moves and ex.remaining(state):
            result.counterexample = ex.replay(_path(parent, sid), "deadlock")
            break
        children = []
        for c, i in moves:
            nxt = ex.successor(state, c, i)
            key = ex.canonical(nxt)
            child = index.get(key)
            if child is None:
                child = index[key] = len(states)
                states.append(nxt)
                parent.append((sid, c, i))
                depth.append(depth[sid] + 1)
                queue.append(child)
            # Each pending pod of the class, in each idle twin workload, makes its own order.
            children.append((child, (len(ex.members[c]) - state[1][c]) * weight.get(c, 1)))
        successors.append(children)
        result.transitions += len(children)
        expanded += 1
        if progress is not None and expanded % PROGRESS_EVERY == 0:
            progress(VerifyProgress("search", len(states), depth[sid], len(queue)))
    result.states = len(states)
    if not queue and result.counterexample is None:
        result.exhaustive = True
        result.depth = max(depth)
        result.orders = _count_orders(successors)
        return result
    if result.counterexample is not None:
        # Breadth first: every state with fewer bindings than the counterexample was checked.
        result.depth = max(len(result.counterexample.steps) - 1, 0)
        return result
    # Every state fewer bindings deep than the first unexpanded one has been checked.
    result.depth = max(depth[queue[0]] - 1, 0)
    result.samples, result.counterexample = _sample(ex, samples, seed, progress)
    return result


def _path(parent: Sequence[tuple[int, int, int]], sid: int) -> list[tuple[int, int]]:
    out = []
    while parent[sid][0] >= 0:
        p, c, i = parent[sid]
        out.append((c, i))
        sid = p
    return out[::-1]


def _count_orders(successors: Sequence[Sequence[tuple[int, int]]]) -> int:
    """Complete scheduling orders: paths from the first state to a final one, a path being a
    sequence of pod-to-node bindings. ``successors`` holds (child, how many pods of the bound
    class were pending: each could have been the one). Every binding adds a pod, so children
    come after their parents."""
    orders = [0] * len(successors)
    for sid in range(len(successors) - 1, -1, -1):
        children = successors[sid]
        orders[sid] = sum(orders[c] * n for c, n in children) if children else 1
    return orders[0] if orders else 0


def _sample(
    ex: _Explorer,
    samples: int,
    seed: int,
    progress: Callable[[VerifyProgress], None] | None,
) -> tuple[int, Counterexample | None]:
    """Random complete orders: at each step a random pod that can move, then a random one of
    its nodes. Returns how many were run and the first counterexample met.

    NOTE: trying the created pods in a random order and taking the first that has a node
    draws uniformly among the pods that can move, with one scheduling cycle per step in the
    common case instead of one per pending pod."""
    rng = random.Random(seed)
    for n in range(samples):
        state = ex.initial
        path: list[tuple[int, int]] = []
        while True:
            ex.goto(state)
            if ex.violation() is not None:
                return n + 1, ex.replay(path, "invariant")
            candidates = [(c, pod) for c, pod, created in ex.pending(state) if created]
            rng.shuffle(candidates)
            move = None
            for c, pod in candidates:
                choices = ex.options(pod).choices
                if choices:
                    move = (c, rng.choice(choices))
                    break
            if move is None:
                if ex.remaining(state):
                    return n + 1, ex.replay(path, "deadlock")
                break
            path.append(move)
            state = ex.successor(state, *move)
        if progress is not None and (n + 1) % 16 == 0:
            progress(VerifyProgress("sample", 0, len(path), 0, n + 1))
    return samples, None
