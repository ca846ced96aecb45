"""``verify``'s explorer: one cluster moved from state to state (pods bound and unbound), the
real scheduling cycle run in it for each pending pod, and a counterexample's steps replayed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from topospread.analysis.verify_results import Counterexample, TraceStep
from topospread.analysis.verify_scenario import (
    Invariant,
    VerifyScenario,
    bound_to,
    plural,
    pod_key,
)
from topospread.analysis.verify_states import State, StateKeys, successor
from topospread.analysis.verify_symmetry import Symmetry
from topospread.analysis.verify_volumes import ClaimBindings
from topospread.api.types import Pod, PodDisruptionBudget
from topospread.cluster.state import ClusterState
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.runtime import Registry
from topospread.framework.schedule_one import SchedulingError, fit_error_message
from topospread.plugins.helper.storage import has_claims
from topospread.simulator.scheduler import Scheduler


@dataclass(frozen=True, slots=True)
class Options:
    feasible: tuple[int, ...]
    choices: tuple[int, ...]
    message: str


class Explorer:
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
        self.keys = StateKeys(symmetry, len(self.nodes))
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

    def options(self, pod: Pod) -> Options:
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
                return Options((), (), fit_error_message(len(nodes), diagnosis))
            names = [info.name for info in feasible]
            best = names
            if len(feasible) > 1 and not self.any_feasible:
                scores = algorithm.prioritize_nodes(fwk, state, pod, feasible)
                top = max(s.total_score for s in scores)
                best = [s.name for s in scores if s.total_score == top]
        except SchedulingError as err:
            return Options((), (), err.status.message)
        index = self.node_index
        return Options(
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
            state = successor(state, c, i)
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
