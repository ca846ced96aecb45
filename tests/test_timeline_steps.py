"""The timeline's steps as a registry of step classes: every action has one class that parses,
applies and names it, and nothing else in the source dispatches on action names; the cloud
steps (``stockout``, ``addNodes`` with ``startupDelay``) on the simulation's clock."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path
from typing import Any, Final

import pytest

from test_timeline import deployment
from topospread.analysis.simulate import simulate
from topospread.errors import ManifestError
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import parse_timeline
from topospread.simulator.timeline_steps.actions import STEPS, apply_step, parse_step, register
from topospread.simulator.timeline_steps.step import Step

SRC: Final = Path(__file__).resolve().parents[1] / "src" / "topospread"
STEPS_PACKAGE: Final = SRC / "simulator" / "timeline_steps"


def string_constants(tree: ast.AST) -> list[ast.Constant]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def dispatch_positions(tree: ast.AST) -> list[tuple[int, str]]:
    """String constants where code branches or looks up on them: compared (``==``, ``in``),
    used as a dict key or a subscript, matched in a ``case``."""
    found: list[tuple[int, str]] = []

    def add(node: ast.AST | None) -> None:
        for c in string_constants(node) if node is not None else []:
            found.append((c.lineno, c.value))

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            add(node.left)
            for comparator in node.comparators:
                add(comparator)
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                add(key)
        elif isinstance(node, ast.Subscript):
            add(node.slice)
        elif isinstance(node, ast.match_case):
            add(node.pattern)
    return found


def modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(), str(p))) for p in sorted(SRC.rglob("*.py"))]


def test_every_action_has_one_step_class_that_names_it() -> None:
    assert list(STEPS)[:17] == [
        "apply",
        "scale",
        "rollout",
        "cordon",
        "uncordon",
        "drain",
        "taint",
        "untaint",
        "addNodes",
        "removeNode",
        "loseZone",
        "restoreZone",
        "loseNode",
        "restoreNode",
        "deletePods",
        "wait",
        "rebalance",
    ]
    assert "stockout" in STEPS
    for action, cls in STEPS.items():
        assert cls.action == action and issubclass(cls, Step)
    assert len(set(STEPS.values())) == len(STEPS)


# ``rebalance`` is a command as well as a step: the command line dispatches on command names.
COMMAND_NAMES: Final = frozenset({"rebalance"})
COMMAND_MODULES: Final = ("cli/", "kubectl.py")


def test_no_code_outside_the_step_classes_branches_on_an_action_name() -> None:
    """Outside simulator/timeline_steps/, an action name is never compared, used as a dict
    key or subscript, or matched (the command line's command names apart); and nothing
    compares a step's ``.action``."""
    wrong = []
    for path, tree in modules():
        if STEPS_PACKAGE in path.parents:
            continue
        rel = path.relative_to(SRC)
        commands = rel.as_posix().startswith(COMMAND_MODULES)
        wrong += [
            f"{rel}:{line}: {v!r}"
            for line, v in dispatch_positions(tree)
            if v in STEPS and not (commands and v in COMMAND_NAMES)
        ]
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(isinstance(s, ast.Attribute) and s.attr == "action" for s in sides):
                    wrong.append(f"{rel}:{node.lineno}: compares .action")
    assert wrong == []


def test_an_action_name_is_written_once_in_the_step_package_by_its_class() -> None:
    """Each action's name appears in the step package exactly once: its class's ``action``.
    The camelCase names, which are no ordinary words, appear nowhere else in the source."""
    seen: dict[str, list[str]] = {}
    for path, tree in modules():
        rel = path.relative_to(SRC).as_posix()
        for c in string_constants(tree):
            if c.value in STEPS:
                seen.setdefault(c.value, []).append(rel)
    for action, cls in STEPS.items():
        home = Path(cls.__module__.replace(".", "/")).relative_to("topospread").as_posix()
        in_package = [p for p in seen[action] if p.startswith("simulator/timeline_steps/")]
        assert in_package == [f"{home}.py"], action
        if action != action.lower():
            assert seen[action] == [f"{home}.py"], action


def test_a_registered_action_cannot_be_registered_twice() -> None:
    with pytest.raises(ValueError, match="'wait' is already registered"):
        register(STEPS["wait"])


def test_unknown_action_lists_every_registered_action() -> None:
    with pytest.raises(ManifestError) as err:
        parse_step({"explode": "a"}, 0, "t.yaml")
    assert str(err.value) == (
        f"t.yaml: timeline[0]: explode: unknown action; the actions are {', '.join(STEPS)}"
    )


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ({"cordon": "a-1"}, "cordon a-1"),
        ({"loseNode": ["a-1", "b-2"]}, "loseNode a-1, b-2"),
        ({"loseZone": {"zone": "a"}}, "loseZone"),
        ({"drain": {"nodes": ["a-1", "a-2"], "force": True}}, "drain a-1, a-2"),
        ({"drain": {"node": "a-1"}}, "drain a-1"),
        ({"wait": "5m"}, "wait 5m"),
        ({"rebalance": None}, "rebalance"),
        ({"name": "given", "wait": "5m"}, "given"),
        ({"stockout": {"zone": "a", "duration": "10m"}}, "stockout"),
    ],
    ids=lambda v: str(v),
)
def test_a_step_is_named_as_reports_name_it(raw: dict[str, Any], name: str) -> None:
    assert parse_step(raw, 3, "t.yaml").title() == name


def test_parsed_steps_survive_pickling_as_snapshots_need() -> None:
    raw = [
        {"drain": {"node": "a-1", "force": True}},
        {"addNodes": {"group": "g", "zone": "a", "startupDelay": "90s"}},
        {"stockout": {"instanceType": "m5.large", "duration": "1h"}},
        {"rebalance": {"maxEvictions": 2}},
    ]
    steps = [parse_step(r, i, "t.yaml") for i, r in enumerate(raw)]
    assert pickle.loads(pickle.dumps(steps)) == steps


def test_a_rebalance_step_needs_the_analysis() -> None:
    doc = {"nodeGroups": ZONES, "objects": [deployment(3)], "timeline": [{"rebalance": {}}]}
    scenario = parse_timeline(doc, "t.yaml")
    sim = Simulation(scenario)
    sim.settle(scenario.source)
    with pytest.raises(ManifestError) as err:
        apply_step(sim, scenario.steps[0])
    assert str(err.value) == (
        "t.yaml: timeline[0] (rebalance): the simulator alone cannot carry out this step"
    )


# ------------------------------------------------------------------ stockout and startupDelay

ZONE: Final = "topology.kubernetes.io/zone"
ZONES: Final = [{"name": "pool", "zones": ["a", "b", "c"], "perZone": 1}]
TYPED: Final = [
    {
        "name": "pool",
        "zones": ["a", "b", "c"],
        "perZone": 1,
        "template": {"metadata": {"labels": {"node.kubernetes.io/instance-type": "m5.large"}}},
    }
]


def run(timeline: list[dict[str, Any]], replicas: int = 3, groups: Any = ZONES) -> Any:
    doc = {"nodeGroups": groups, "objects": [deployment(replicas)], "timeline": timeline}
    return simulate(parse_timeline(doc, "t.yaml"))


BAD_STEPS = {
    "stockout without duration": (
        {"stockout": {"zone": "a"}},
        "t.yaml: timeline[0] (stockout): duration: Required value",
    ),
    "stockout of nothing": (
        {"stockout": {"duration": "5m"}},
        "t.yaml: timeline[0] (stockout): give zone, instanceType or both",
    ),
    "stockout with an unknown field": (
        {"stockout": {"region": "r", "duration": "5m"}},
        "t.yaml: timeline[0] (stockout): region: unknown field; "
        "expected zone, instanceType, duration",
    ),
    "stockout of a zone that is no name": (
        {"stockout": {"zone": 3, "duration": "5m"}},
        "t.yaml: timeline[0] (stockout): zone: expected a zone name",
    ),
    "stockout of an empty instance type": (
        {"stockout": {"instanceType": "", "duration": "5m"}},
        "t.yaml: timeline[0] (stockout): instanceType: expected an instance type",
    ),
    "stockout for no time": (
        {"stockout": {"zone": "a", "duration": "0s"}},
        't.yaml: timeline[0] (stockout): duration: Invalid value: "0s": must be more than 0s',
    ),
    "stockout for a bad duration": (
        {"stockout": {"zone": "a", "duration": "soon"}},
        't.yaml: timeline[0] (stockout): duration: Invalid value: "soon": time: invalid '
        'duration "soon"; expected a duration such as 90s, 5m or 1h30m',
    ),
    "stockout that is no mapping": (
        {"stockout": "a"},
        "t.yaml: timeline[0] (stockout): expected a mapping with duration",
    ),
    "startupDelay without a unit": (
        {"addNodes": {"group": "pool", "zone": "a", "startupDelay": 90}},
        "t.yaml: timeline[0] (addNodes): startupDelay: Invalid value: 90: "
        "expected a duration such as 90s, 5m or 1h30m",
    ),
    "negative startupDelay": (
        {"addNodes": {"group": "pool", "zone": "a", "startupDelay": "-1m"}},
        't.yaml: timeline[0] (addNodes): startupDelay: Invalid value: "-1m": '
        "must not be negative (the clock only moves on)",
    ),
    "addNodes with an unknown field": (
        {"addNodes": {"group": "pool", "zone": "a", "delay": "1m"}},
        "t.yaml: timeline[0] (addNodes): delay: unknown field; "
        "expected group, zone, count, startupDelay",
    ),
}


@pytest.mark.parametrize(("raw", "message"), BAD_STEPS.values(), ids=BAD_STEPS.keys())
def test_bad_cloud_steps_are_refused_with_one_message(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError) as err:
        parse_step(raw, 0, "t.yaml")
    assert str(err.value) == message


def test_an_add_into_a_stocked_out_zone_adds_nothing_and_says_why() -> None:
    report = run(
        [
            {"stockout": {"zone": "c", "duration": "10m"}},
            {"addNodes": {"group": "pool", "zone": "c"}},
            {"addNodes": {"group": "pool", "zone": "a"}},
        ]
    )
    stock, add_c, add_a = report.steps[1:]
    assert stock.events == ["stockout: no new nodes in zone c until 10m0s"]
    assert add_c.events == [
        f"added no node to group pool ({ZONE}=c): stockout, no new nodes in zone c until 10m0s"
    ]
    assert add_a.events == [f"added node pool-a-2 ({ZONE}=a)"]
    assert len(add_c.topology) == 3 and len(add_a.topology) == 4


def test_a_stockout_ends_when_the_clock_passes_it() -> None:
    report = run(
        [
            {"stockout": {"zone": "c", "duration": "10m"}},
            {"wait": "5m"},
            {"addNodes": {"group": "pool", "zone": "c"}},
            {"wait": "5m"},
            {"addNodes": {"group": "pool", "zone": "c"}},
        ]
    )
    _, early, refused, later, added = report.steps[1:]
    assert early.events == ["waited 5m (now 5m0s): no eviction fell due"]
    assert refused.events[0].startswith("added no node to group pool")
    assert later.events == [
        "waited 5m (now 10m0s): no eviction fell due",
        "stockout over at 10m0s: new nodes in zone c can be provisioned again",
    ]
    assert added.events == [f"added node pool-c-2 ({ZONE}=c)"]


def test_an_instance_type_stockout_holds_in_every_zone_or_in_its_own() -> None:
    report = run(
        [
            {"stockout": {"instanceType": "m5.large", "duration": "1h"}},
            {"addNodes": {"group": "pool", "zone": "b"}},
            {"stockout": {"instanceType": "other", "zone": "a", "duration": "1h"}},
            {"addNodes": {"group": "pool", "zone": "a", "count": 0}},
        ],
        groups=TYPED,
    )
    assert report.steps[1].events == ["stockout: no new m5.large nodes until 1h0m0s"]
    assert report.steps[2].events == [
        f"added no node to group pool ({ZONE}=b): stockout, no new m5.large nodes until 1h0m0s"
    ]
    assert report.steps[3].events == ["stockout: no new other nodes in zone a until 1h0m0s"]


def test_other_instance_types_are_not_stocked_out() -> None:
    report = run(
        [
            {"stockout": {"instanceType": "m6.large", "zone": "b", "duration": "1h"}},
            {"addNodes": {"group": "pool", "zone": "b"}},
        ],
        groups=TYPED,
    )
    assert report.steps[2].events == [f"added node pool-b-2 ({ZONE}=b)"]


def test_nodes_that_start_up_are_not_ready_until_the_clock_passes_their_delay() -> None:
    """Four replicas on three zones, the fourth Pending behind a scaled-up cluster whose new
    node in zone a is still starting: the zone's domain has the node but the scheduler may not
    use it (not-ready, NoSchedule); once Ready at 1m30s, a wait that passes it places the pod."""
    report = run(
        [
            {"addNodes": {"group": "pool", "zone": "a", "startupDelay": "90s"}},
            {"wait": "1m"},
            {"wait": "1m"},
        ],
        replicas=3,
    )
    added, first, second = report.steps[1:]
    assert added.events == [
        f"added node pool-a-2 ({ZONE}=a)",
        "pool-a-2: NotReady (starting up, Ready at 1m30s); tainted node.kubernetes.io/not-ready "
        "(NoSchedule, NoExecute)",
    ]
    assert first.events == ["waited 1m (now 1m0s): no eviction fell due"]
    assert second.events == [
        "waited 1m (now 2m0s): no eviction fell due",
        "pool-a-2: started up at 1m30s, Ready; untainted node.kubernetes.io/not-ready "
        "(NoSchedule, NoExecute)",
    ]
    assert report.uses_clock


def test_pending_pods_wait_for_starting_nodes_and_land_when_they_are_ready() -> None:
    """Two zones of one node each that hold two pods: of six replicas two are Pending. Two
    new nodes, one per zone, start up for 2m: tainted not-ready, they take nothing until a
    wait passes 2m0s; then the scheduler places the two pods on them."""
    small = {"status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "2"}}}
    groups = [{"name": "pool", "zones": ["a", "b"], "perZone": 1, "template": small}]
    report = run(
        [
            {"addNodes": {"group": "pool", "zone": "a", "startupDelay": "2m"}},
            {"addNodes": {"group": "pool", "zone": "b", "startupDelay": "2m"}},
            {"wait": "1m"},
            {"wait": "2m"},
        ],
        replicas=6,
        groups=groups,
    )
    initial, _, added, before, after = report.steps
    assert len(initial.pending) == 2
    assert len(added.pending) == 2 and not added.settled.placed
    assert all(
        m.startswith("0/4 nodes are available: 2 Too many pods, 2 node(s) had untolerated taint")
        for m in added.pending.values()
    )
    assert len(before.pending) == 2 and not before.settled.placed
    assert after.pending == {}
    assert sorted(after.bound[key] for key in after.settled.placed) == ["pool-a-2", "pool-b-2"]
    assert after.events[1:] == [
        f"pool-{z}-2: started up at 2m0s, Ready; untainted node.kubernetes.io/not-ready "
        "(NoSchedule, NoExecute)"
        for z in ("a", "b")
    ]


def test_a_node_removed_while_it_starts_is_forgotten() -> None:
    report = run(
        [
            {"addNodes": {"group": "pool", "zone": "a", "startupDelay": "1m"}},
            {"removeNode": "pool-a-2"},
            {"wait": "2m"},
        ]
    )
    assert report.steps[3].events == ["waited 2m (now 2m0s): no eviction fell due"]


def test_stockouts_and_starting_nodes_travel_with_a_snapshot() -> None:
    """sweep and rebalance replay futures from snapshots: a restored copy still has the
    stock-out and the node that has not started yet, and carries them out alike."""
    doc = {
        "nodeGroups": ZONES,
        "objects": [deployment(3)],
        "timeline": [
            {"stockout": {"zone": "b", "duration": "10m"}},
            {"addNodes": {"group": "pool", "zone": "a", "startupDelay": "1m"}},
            {"wait": "2m"},
            {"addNodes": {"group": "pool", "zone": "b"}},
        ],
    }
    scenario = parse_timeline(doc, "t.yaml")
    sim = Simulation(scenario)
    sim.settle(scenario.source)
    for step in scenario.steps[:2]:
        apply_step(sim, step)
        sim.settle(step.where)
    copy = sim.snapshot().restore()
    assert copy.cloud == sim.cloud and copy.cloud.starting == {"pool-a-2": 60 * 10**9}
    for step in scenario.steps[2:]:
        assert apply_step(copy, step).events == apply_step(sim, step).events
    assert copy.cloud == sim.cloud and sim.cloud.starting == {}
