"""The timeline's steps as a registry of step classes: every action has one class that parses,
applies and names it, and nothing else in the source dispatches on action names."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path
from typing import Any, Final

import pytest

from test_timeline import deployment
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
    ],
    ids=lambda v: str(v),
)
def test_a_step_is_named_as_reports_name_it(raw: dict[str, Any], name: str) -> None:
    assert parse_step(raw, 3, "t.yaml").title() == name


def test_parsed_steps_survive_pickling_as_snapshots_need() -> None:
    raw = [
        {"drain": {"node": "a-1", "force": True}},
        {"addNodes": {"group": "g", "zone": "a", "count": 2}},
        {"rebalance": {"maxEvictions": 2}},
    ]
    steps = [parse_step(r, i, "t.yaml") for i, r in enumerate(raw)]
    assert pickle.loads(pickle.dumps(steps)) == steps


def test_a_rebalance_step_needs_the_analysis() -> None:
    zones = [{"name": "pool", "zones": ["a", "b", "c"], "perZone": 1}]
    doc = {"nodeGroups": zones, "objects": [deployment(3)], "timeline": [{"rebalance": {}}]}
    scenario = parse_timeline(doc, "t.yaml")
    sim = Simulation(scenario)
    sim.settle(scenario.source)
    with pytest.raises(ManifestError) as err:
        apply_step(sim, scenario.steps[0])
    assert str(err.value) == (
        "t.yaml: timeline[0] (rebalance): the simulator alone cannot carry out this step"
    )
