"""Every command's ``-o json`` against the JSON Schema shipped for it (render/schemas/): each
command runs on the bundled examples, and the schemas close their fixed shapes
(``additionalProperties: false``) so a key added, renamed or dropped fails here first."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
import yaml

from builders import make_node, make_pod
from test_cli import run
from topospread.render.schemas import SCHEMA_COMMANDS, load_schema

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SIMULATIONS = sorted((EXAMPLES / "simulations").glob("*.yaml"))
SCENARIOS = sorted((EXAMPLES / "scenarios").glob("*.yaml"))
VERIFY = sorted((EXAMPLES / "verify").glob("*.yaml"))


def preemption_scenario(path: Path) -> Path:
    """Two full nodes; a high-priority pod preempts the lower of the two pods and binds on
    its second attempt."""

    def node(name: str, zone: str) -> Any:
        return (
            make_node(name)
            .label("kubernetes.io/hostname", name)
            .label("topology.kubernetes.io/zone", zone)
            .capacity(cpu="1", memory="1Gi", pods="10")
            .obj()
        )

    doc = {
        "nodes": [node("n1", "a"), node("n2", "b")],
        "pods": [
            make_pod("low-1").priority(0).req(cpu="1").node("n1").obj(),
            make_pod("low-2").priority(10).req(cpu="1").node("n2").obj(),
        ],
        "queue": [make_pod("high").priority(100).req(cpu="1").obj()],
    }
    path.write_text(yaml.safe_dump(msgspec.to_builtins(doc)))
    return path


def cases(tmp: Path) -> Iterator[tuple[str, list[str]]]:
    """(command, argv) for every command over every bundled example it reads."""
    for case in sorted((EXAMPLES / "cases").glob("*.yaml")):
        yield "evaluate", ["evaluate", str(case)]
    for scenario in [*SCENARIOS, preemption_scenario(tmp / "preemption.yaml")]:
        yield "schedule", ["schedule", str(scenario), "-o", "json"]
    for scenario, pod in [
        *(
            (s, q["metadata"]["name"])
            for s in SCENARIOS
            for q in yaml.safe_load(s.read_text())["queue"]
        ),
        (tmp / "preemption.yaml", "high"),
    ]:
        yield "explain", ["explain", str(scenario), "--pod", pod, "-o", "json"]
    for scenario in VERIFY[:3]:
        yield "verify", ["verify", str(scenario), "-o", "json"]
    for timeline in SIMULATIONS:
        yield "simulate", ["simulate", str(timeline), "-o", "json"]
        yield "rebalance", ["rebalance", str(timeline), "--descheduler", "-o", "json"]
    zone_outage = str(EXAMPLES / "simulations" / "zone-outage.yaml")
    yield "sweep", ["sweep", zone_outage, "--zones", "--nodes", "--drains", "-j", "1", "-o", "json"]
    web = str(EXAMPLES / "check" / "web.yaml")
    yield "check", ["check", web, "--zones", "3", "--nodes-per-zone", "2", "-o", "json"]
    yield "check", ["check", web, "--zones", "1", "--nodes-per-zone", "1", "--survive", "zone",
                    "-o", "json"]  # fmt: skip
    hooks = str(EXAMPLES / "check" / "hooks.yaml")
    yield "check", ["check", hooks, "--zones", "3", "--nodes-per-zone", "1", "--node-cpu", "2",
                    "-o", "json"]  # fmt: skip
    yield "design", ["design", "redis-cluster", "--shards", "3", "--replicas", "1", "--zones",
                     "a,b,c", "-o", "json"]  # fmt: skip
    yield "design", ["design", "spread", "--selector", "app=web", "--topology-key",
                     "topology.kubernetes.io/zone", "--replicas", "6", "--domains", "3",
                     "--max-fraction", "1/2", "-o", "json"]  # fmt: skip


def documents(command: str, out: str) -> list[Any]:
    if command == "evaluate":  # one object per case, one per line
        return [json.loads(line) for line in out.splitlines()]
    return [json.loads(out)]


def test_every_command_with_json_output_has_a_schema() -> None:
    assert set(SCHEMA_COMMANDS) == {
        "evaluate", "schedule", "explain", "verify", "design", "simulate", "sweep", "check",
        "rebalance",
    }  # fmt: skip
    for command in SCHEMA_COMMANDS:
        jsonschema.Draft202012Validator.check_schema(load_schema(command))


def test_every_commands_json_on_the_examples_validates_against_its_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: set[str] = set()
    for command, argv in cases(tmp_path):
        code, out, err = run(argv, capsys)
        assert code in (0, 1), (argv, err)
        validator = jsonschema.Draft202012Validator(load_schema(command))
        for doc in documents(command, out):
            errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
            assert not errors, (argv, [f"{list(e.path)}: {e.message}" for e in errors[:5]])
        seen.add(command)
    assert seen == set(SCHEMA_COMMANDS)


def test_a_schema_refuses_a_key_it_does_not_know() -> None:
    schema = load_schema("schedule")
    doc = {"plugins": {}, "pods": [], "zoneKey": "", "bound": {}, "pending": [], "nodes": []}
    jsonschema.validate(doc, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**doc, "placement": {}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**doc, "pending": {"default/p": "why"}}, schema)


def test_a_preemptors_json_shows_the_failed_attempt_its_nomination_and_victims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = str(preemption_scenario(tmp_path / "preemption.yaml"))
    _, out, _ = run(["schedule", scenario, "-o", "json"], capsys)
    (pod,) = json.loads(out)["pods"]
    failed, binding = pod["attempts"]
    assert (pod["pod"], pod["node"]) == ("default/high", "n1")
    assert (failed["attempt"], failed["node"], failed["nominatedNode"]) == (1, None, "n1")
    assert failed["preempted"] == ["default/low-1"]
    assert failed["message"] and failed["reasons"] and not failed["feasible"]
    assert (binding["attempt"], binding["node"], binding["preempted"]) == (2, "n1", [])
    _, text, _ = run(["schedule", scenario], capsys)
    assert "default/low-1 was preempted by default/high" in text
    # jsonl's line is the document's entry; explain reads the same attempts.
    _, lines, _ = run(["schedule", scenario, "-o", "jsonl"], capsys)
    assert json.loads(lines.splitlines()[1]) == pod
    _, explained, _ = run(["explain", scenario, "--pod", "high", "-o", "json"], capsys)
    summary = ("attempt", "node", "nominatedNode", "message", "preempted")
    assert json.loads(explained)["attempts"] == [
        {k: a[k] for k in summary} for a in pod["attempts"]
    ]
    _, text, _ = run(["explain", scenario, "--pod", "high"], capsys)
    assert (
        f"attempt 1: not bound, nominated to n1, preempting default/low-1: {failed['message']}"
        in text
    )
