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

import random
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Final

from topospread.analysis.verify_explorer import Explorer
from topospread.analysis.verify_results import (
    DEFAULT_MAX_STATES,
    DEFAULT_SAMPLES,
    Counterexample,
    TraceStep,
    VerifyProgress,
    VerifyResult,
)
from topospread.analysis.verify_scenario import (
    Invariant,
    VerifyScenario,
    Workload,
    expand_workload,
    load_verify_scenario,
    parse_invariants,
    plural,
    pod_key,
)
from topospread.analysis.verify_states import State, successor
from topospread.analysis.verify_symmetry import Symmetry, find_symmetry
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.runtime import Registry

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

# Progress is reported every this many expanded states (or sampled orders).
PROGRESS_EVERY: Final = 256


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
    identical states (the reference the reduction is tested against).

    Ctrl-C (``KeyboardInterrupt``) stops the search with what it established (``interrupted``):
    the states explored and how deep every order was checked, never a proof; or the
    counterexample already found."""
    sc = scenario
    keys = [pod_key(p) for p in (*sc.scenario.pods, *sc.scenario.queue)]
    sym = find_symmetry(sc) if symmetry else Symmetry.none(keys, len(sc.scenario.nodes))
    ex = Explorer(sc, sym, any_feasible=any_feasible, registry=registry, features=features)
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
    index: dict[Any, int] = {ex.keys.canonical(ex.initial): 0}
    states: list[State] = [ex.initial]
    parent: list[tuple[int, int, int]] = [(-1, -1, -1)]
    depth: list[int] = [0]
    successors: list[list[tuple[int, int]]] = []
    queue: deque[int] = deque([0])
    try:
        _search(ex, result, max_states, progress, index, states, parent, depth, successors, queue)
    except KeyboardInterrupt:
        # Breadth first: every state with fewer bindings than the one being expanded was
        # checked (that one was, too, before its successors were made).
        result.interrupted = True
        result.states = len(states)
        if result.counterexample is None:
            # States are expanded in the order they were found: the one cut is the next.
            result.depth = max(depth[min(len(successors), len(states) - 1)] - 1, 0)
        else:
            result.depth = max(len(result.counterexample.steps) - 1, 0)
        return result
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
    result.samples, result.counterexample, result.interrupted = _sample(ex, samples, seed, progress)
    return result


def _search(
    ex: Explorer,
    result: VerifyResult,
    max_states: int,
    progress: Callable[[VerifyProgress], None] | None,
    index: dict[Any, int],
    states: list[State],
    parent: list[tuple[int, int, int]],
    depth: list[int],
    successors: list[list[tuple[int, int]]],
    queue: deque[int],
) -> None:
    """The breadth-first walk, until ``queue`` is empty, the budget is spent or a
    counterexample is found (set on ``result``); its tables grow in place, so that what it
    explored outlives Ctrl-C."""
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
            nxt = successor(state, c, i)
            key = ex.keys.canonical(nxt)
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
    ex: Explorer,
    samples: int,
    seed: int,
    progress: Callable[[VerifyProgress], None] | None,
) -> tuple[int, Counterexample | None, bool]:
    """Random complete orders: at each step a random pod that can move, then a random one of
    its nodes. Returns how many were run to their end, the first counterexample met, and
    whether Ctrl-C stopped the sampling.

    NOTE: trying the created pods in a random order and taking the first that has a node
    draws uniformly among the pods that can move, with one scheduling cycle per step in the
    common case instead of one per pending pod."""
    rng = random.Random(seed)
    n = 0
    try:
        for n in range(samples):
            state = ex.initial
            path: list[tuple[int, int]] = []
            while True:
                ex.goto(state)
                if ex.violation() is not None:
                    return n + 1, ex.replay(path, "invariant"), False
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
                        return n + 1, ex.replay(path, "deadlock"), False
                    break
                path.append(move)
                state = successor(state, *move)
            if progress is not None and (n + 1) % 16 == 0:
                progress(VerifyProgress("sample", 0, len(path), 0, n + 1))
    except KeyboardInterrupt:
        return n, None, True  # orders 0..n-1 ran to their end
    return samples, None, False
