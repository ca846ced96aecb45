"""The simulated clock and the taint manager of ``simulate``: ``wait`` steps, evictions when
``tolerationSeconds`` run out, and their cancellation, as kube-controller-manager's taint
eviction controller (pkg/controller/tainteviction, v1.35) times them."""

from __future__ import annotations

from typing import Any

import pytest

from test_timeline import daemon_set, deployment, run, zones
from topospread.api.types import Toleration
from topospread.simulator.clock import DurationError, format_duration, parse_duration
from topospread.simulator.tainteviction import get_min_toleration_time

SECOND = 10**9
UNREACHABLE = "node.kubernetes.io/unreachable:NoExecute"

DURATIONS = {
    "seconds": ("90s", 90 * SECOND, "1m30s"),
    "minutes": ("5m", 300 * SECOND, "5m0s"),
    "hours and minutes": ("1h30m", 5400 * SECOND, "1h30m0s"),
    "a fraction": ("1.5h", 5400 * SECOND, "1h30m0s"),
    "milliseconds": ("300ms", 300_000_000, "300ms"),
    "a leading dot": (".5s", 500_000_000, "500ms"),
    "bare zero": ("0", 0, "0s"),
    "several units": ("2m3.5s", 123_500_000_000, "2m3.5s"),
}


@pytest.mark.parametrize("text, nanos, printed", DURATIONS.values(), ids=DURATIONS.keys())
def test_durations_parse_and_print_as_go_does(text: str, nanos: int, printed: str) -> None:
    assert parse_duration(text) == nanos
    assert format_duration(nanos) == printed


BAD_DURATIONS = {
    "no unit": ("5", 'time: missing unit in duration "5"'),
    "unknown unit": ("5d", 'time: unknown unit "d" in duration "5d"'),
    "no number": ("m", 'time: invalid duration "m"'),
    "empty": ("", 'time: invalid duration ""'),
    "a lone dot": (".s", 'time: invalid duration ".s"'),
}


@pytest.mark.parametrize("text, message", BAD_DURATIONS.values(), ids=BAD_DURATIONS.keys())
def test_bad_durations_are_refused_with_gos_message(text: str, message: str) -> None:
    with pytest.raises(DurationError) as err:
        parse_duration(text)
    assert str(err.value) == message


def toleration(seconds: int | None) -> Toleration:
    return Toleration(key="k", operator="Exists", effect="NoExecute", toleration_seconds=seconds)


MIN_TOLERATION_TIMES = {
    "no tolerations: at once": ([], 0),
    "for ever": ([None], None),
    "the least of the limits": ([None, 300, 60], 60 * SECOND),
    "zero: at once": ([300, 0], 0),
    "negative: at once": ([-5, 300], 0),
}


@pytest.mark.parametrize(
    "seconds, expected", MIN_TOLERATION_TIMES.values(), ids=MIN_TOLERATION_TIMES.keys()
)
def test_the_least_toleration_seconds_decide_when_a_pod_goes(
    seconds: list[int | None], expected: int | None
) -> None:
    assert get_min_toleration_time([toleration(s) for s in seconds]) == expected


def outage(*steps: dict[str, Any]) -> dict[str, Any]:
    """Three replicas, one per zone, and zone c lost, then ``steps``."""
    return {
        "nodeGroups": zones(1),
        "objects": [deployment(3)],
        "timeline": [{"loseZone": "c"}, *steps],
    }


def test_pods_stay_bound_until_their_300_s_unreachable_toleration_runs_out() -> None:
    start, lost, short, due = run(outage({"wait": "4m59s"}, {"wait": "1s"})).steps
    assert lost.bound == start.bound and short.bound == start.bound
    assert lost.settled.created == [] and short.settled.created == []
    (pod,) = [k for k, node in start.bound.items() if node == "pool-c-1"]
    assert lost.events == [
        "pool-c-1: NotReady (unreachable); tainted node.kubernetes.io/unreachable "
        f"(NoSchedule, NoExecute); eviction of 1 pod ({pod}) due at 5m0s"
    ]
    assert short.events == [
        "waited 4m59s (now 4m59s): no eviction fell due; 1 more eviction scheduled, the next "
        "at 5m0s"
    ]
    assert (short.time, due.time) == (299 * SECOND, 300 * SECOND)
    assert due.events == [
        f"waited 1s (now 5m0s): evicted 1 pod whose toleration of {UNREACHABLE} ran out ({pod})"
    ]
    assert pod not in due.bound and len(due.pending) == 1


def test_restoring_the_zone_before_the_time_is_up_cancels_the_evictions() -> None:
    start, _, waited, restored, later = run(
        outage({"wait": "2m"}, {"restoreZone": "c"}, {"wait": "1h"})
    ).steps
    (pod,) = [k for k, node in start.bound.items() if node == "pool-c-1"]
    assert restored.events == [
        "pool-c-1: Ready again; untainted node.kubernetes.io/unreachable (NoSchedule, "
        f"NoExecute); cancelled the scheduled eviction of 1 pod ({pod})"
    ]
    assert waited.bound == start.bound and later.bound == start.bound
    assert later.events == ["waited 1h (now 1h2m0s): no eviction fell due"]
    assert later.settled.created == [] and later.settled.deleted == []


def test_pods_tolerating_unreachable_for_ever_stay_however_long_the_outage() -> None:
    doc = {"nodeGroups": zones(1), "objects": [daemon_set()],
           "timeline": [{"loseZone": "c"}, {"wait": "24h"}]}  # fmt: skip
    start, lost, waited = run(doc).steps
    assert lost.bound == start.bound and waited.bound == start.bound
    assert lost.events[0].endswith("tainted node.kubernetes.io/unreachable (NoSchedule, NoExecute)")


def bare_pod(
    name: str, seconds: int | None, key: str = "k", *, node: str = "pool-a-1", **more: int
) -> dict[str, Any]:
    """A pod bound to ``node`` tolerating NoExecute ``key`` (for ``seconds``; None: for ever)
    and each key of ``more`` for its seconds."""
    tolerations = [
        {"key": k, "operator": "Exists", "effect": "NoExecute"}
        | ({"tolerationSeconds": v} if v is not None else {})
        for k, v in [(key, seconds), *more.items()]
    ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": node, "tolerations": tolerations,
                     "containers": [{"name": "c", "image": "x"}]}}  # fmt: skip


def taint(key: str) -> dict[str, Any]:
    return {"taint": {"node": "pool-a-1", "key": key, "effect": "NoExecute"}}


def test_a_wait_carries_out_each_eviction_at_its_own_time_in_order() -> None:
    doc = {
        "nodeGroups": zones(1, ("a",)),
        "objects": [bare_pod("one-minute", 60), bare_pod("two-minutes", 120)],
        "timeline": [taint("k"), {"wait": "5m"}],
    }
    _, tainted, waited = run(doc).steps
    assert tainted.events == [
        "pool-a-1: tainted k (NoExecute); eviction of 1 pod (default/one-minute) due at 1m0s; "
        "eviction of 1 pod (default/two-minutes) due at 2m0s"
    ]
    assert waited.events == [
        "waited 5m (now 5m0s): evicted 1 pod whose toleration of k:NoExecute ran out "
        "(default/one-minute) at 1m0s; evicted 1 pod whose toleration of k:NoExecute ran out "
        "(default/two-minutes) at 2m0s"
    ]
    assert waited.bound == {} and waited.time == 300 * SECOND


def test_an_eviction_once_scheduled_keeps_its_time_when_another_taint_is_tolerated_less() -> None:
    # Upstream keeps the work created first (processPodOnNode compares its start with now).
    doc = {
        "nodeGroups": zones(1, ("a",)),
        "objects": [bare_pod("p", 300, k2=10)],
        "timeline": [taint("k"), {"wait": "1m"}, taint("k2"), {"wait": "3m"}, {"wait": "1m"}],
    }
    steps = run(doc).steps
    assert steps[3].events == ["pool-a-1: tainted k2 (NoExecute)"]
    assert list(steps[4].bound) == ["default/p"]
    assert steps[5].events[0].startswith("waited 1m (now 5m0s): evicted 1 pod whose toleration")


def test_a_pod_that_stops_tolerating_is_evicted_at_once_and_its_timer_dropped() -> None:
    doc = {
        "nodeGroups": zones(1, ("a",)),
        "objects": [bare_pod("p", 300)],
        "timeline": [taint("k"), taint("other"), {"wait": "10m"}],
    }
    _, _, other, waited = run(doc).steps
    assert other.events == ["pool-a-1: tainted other (NoExecute); evicted 1 pod (default/p)"]
    assert waited.events == ["waited 10m (now 10m0s): no eviction fell due"]


def test_taints_in_the_input_count_from_their_time_added() -> None:
    # The clock's 0 is the latest timeAdded: the older taint has run for 100 s already.
    def node(name: str, added: str) -> dict[str, Any]:
        return {"metadata": {"name": name}, "spec": {"taints": [
            {"key": "k", "effect": "NoExecute", "timeAdded": added}]}}  # fmt: skip

    pods = [
        bare_pod("early", 300, node="n1"),
        bare_pod("late", 300, node="n2"),
        bare_pod("gone", None, "x", node="n2"),
    ]
    doc = {
        "nodes": [node("n1", "2025-01-01T00:00:00Z"), node("n2", "2025-01-01T00:01:40Z")],
        "objects": pods,
        "timeline": [{"wait": "200s"}],
    }
    start, waited = run(doc).steps
    assert start.events == [
        "n2: evicted 1 pod (default/gone): they do not tolerate its NoExecute taints",
        "n1: eviction of 1 pod (default/early) due at 3m20s",
        "n2: eviction of 1 pod (default/late) due at 5m0s",
    ]
    assert list(waited.bound) == ["default/late"]
