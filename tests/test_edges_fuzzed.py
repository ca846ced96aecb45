"""The classes of bad input the mutation fuzzer (tests/input_fuzz.py) found accepted, or refused
without naming the file, each now refused with one line naming the file, the object and the
field, and exit code 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import pytest
import yaml

from test_bad_input import assert_one_line_exit_2, write_text
from test_strict_config_and_cases import CASE

EXAMPLES: Final = Path(__file__).resolve().parents[1] / "examples"

# A conformance case's values are typed as FORMAT.md gives them: a wrong type used to be taken
# (a name that is a mapping, an expected score that is a list) and compared, or printed, as is.
BAD_CASE_VALUES: Final = {
    "name not a string": (
        ("name: strict", "name: {a: b}"),
        "case.yaml: name: expected a string, got a mapping",
    ),
    "source not a string": (
        ("name: strict", "name: strict\nsource: [a]"),
        "case.yaml: source: expected a string, got a list",
    ),
    "features a list": (
        ("name: strict", "name: strict\nfeatures: []"),
        "case.yaml: features: expected a mapping, got a list",
    ),
    "preFilter not a code": (
        ("preFilter: Success", "preFilter: Sucess"),
        'case.yaml: expect.preFilter: Unsupported value: "Sucess": supported values: '
        '"Success", "Skip", "UnschedulableAndUnresolvable", "Error"',
    ),
    "preScore a mapping": (
        ("preFilter: Success", "preFilter: Success\n  preScore: {a: b}"),
        "case.yaml: expect.preScore: expected a string, got a mapping",
    ),
    "filter result a list": (
        ("filter: {node1: Success}", "filter: {node1: [Success]}"),
        "case.yaml: expect.filter.node1: expected a string, got a list",
    ),
    "score a string": (
        ("filter: {node1: Success}", "filter: {node1: Success}\n  score: {node1: high}"),
        "case.yaml: expect.score.node1: expected an integer, got a string",
    ),
    "globalMin a boolean": (
        ("globalMin: 0", "globalMin: true"),
        "case.yaml: expect.domains[0].globalMin: expected an integer, got a boolean",
    ),
    "topologyKey a list": (
        ("topologyKey: zone, counts", "topologyKey: [zone], counts"),
        "case.yaml: expect.domains[0].topologyKey: expected a string, got a list",
    ),
    "a count a mapping": (
        ("counts: {a: 0}", "counts: {a: {b: 0}}"),
        "case.yaml: expect.domains[0].counts.a: expected an integer, got a mapping",
    ),
}


@pytest.mark.parametrize("command", ["evaluate", "conformance"])
@pytest.mark.parametrize(("change", "message"), BAD_CASE_VALUES.values(), ids=list(BAD_CASE_VALUES))
def test_a_case_value_of_the_wrong_type_is_refused(
    command: str,
    change: tuple[str, str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert change[0] in CASE
    path = write_text(tmp_path, "case.yaml", CASE.replace(*change, 1))
    assert_one_line_exit_2([command, path], capsys, message)


TAINTED_ZONE: Final = (EXAMPLES / "simulations/tainted-zone.yaml").read_text()
ROLLING_UPDATE: Final = (EXAMPLES / "simulations/rolling-update.yaml").read_text()


def _with(base: str, old: str, new: str) -> str:
    assert old in base, old
    return base.replace(old, new, 1)


# A kind the simulator models, in a version no module decodes, is an UnknownObject (under
# --validate=ignore, or in an apply step, counted before the step says no matches): the size
# bounds used to count it by its kind and read a spec it does not have (a traceback).
@pytest.mark.parametrize(
    ("command", "text", "validate", "message"),
    [
        (
            "rebalance",
            _with(TAINTED_ZONE, "  - apiVersion: apps/v1", "  - apiVersion: 1Qi"),
            "strict",
            "t.yaml: timeline[1] (apply)[0] (Deployment ignore): no matches for kind "
            '"Deployment" in version "1Qi"',
        ),
        (
            "simulate",
            _with(
                (EXAMPLES / "simulations/zone-outage.yaml").read_text(),
                "apiVersion: apps/v1",
                "apiVersion: 1Qi",
            ),
            "ignore",
            't.yaml: timeline[3] (scale): workload: Not found: "deployment/web": no such '
            "workload (known: none)",
        ),
    ],
    ids=["apply step", "objects under ignore"],
)
def test_a_workload_kind_in_a_version_no_module_decodes_is_not_counted_as_one(
    command: str,
    text: str,
    validate: str,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = write_text(tmp_path, "t.yaml", text)
    assert_one_line_exit_2([command, path, "--validate", validate], capsys, message)


def test_a_rollout_patch_whose_container_name_is_no_string_is_the_decoders_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The merge by name took the name as a dict key (a traceback); a list whose names are not
    # all strings is replaced whole, and the template's decoding names the field.
    text = _with(ROLLING_UPDATE, "- {name: plain, image: 'nginx:1.28'}", "- {name: {a: b}}")
    path = write_text(tmp_path, "t.yaml", text)
    assert_one_line_exit_2(
        ["simulate", path],
        capsys,
        "t.yaml: timeline[0] (rollout): patch (Pod): json: cannot unmarshal object into Go "
        "struct field Container.spec.containers.name of type string",
    )


ZONE_OUTAGE: Final = (EXAMPLES / "simulations/zone-outage.yaml").read_text()
LAST_STEP: Final = "  - name: scale down to 4\n    scale: {workload: deployment/web, replicas: 4}\n"
STEP_WHERE: Final = "t.yaml: timeline[3] "

# Each step's arguments are typed (and a taint checked as the API server checks a node's) when
# the timeline is read: they were taken as written (a taint key that is a mapping became its
# text; a workload that is a list was found nowhere only when the step ran, and never under
# sweep and rebalance, which do not replay the scenario's own timeline by default).
BAD_STEPS: Final = {
    "scale workload a list": (
        "  - scale: {workload: [deployment/web], replicas: 4}\n",
        "(scale): workload: expected [namespace/]kind/name",
    ),
    "scale workload of no kind": (
        "  - scale: {workload: deploy-web, replicas: 4}\n",
        '(scale): workload: Invalid value: "deploy-web": expected [namespace/]kind/name, '
        "e.g. deployment/web",
    ),
    "rollout workload of an unknown kind": (
        "  - rollout: {workload: pod/web, patch: {}}\n",
        '(rollout): workload: Invalid value: "pod/web": unknown kind "pod" (deployment, '
        "replicaset, replicationcontroller, statefulset, daemonset, cronjob, job)",
    ),
    "deleteWorkload without a name": (
        "  - deleteWorkload: deployment/\n",
        '(deleteWorkload): workload: Invalid value: "deployment/": expected '
        "[namespace/]kind/name, e.g. deployment/web",
    ),
    "taint key a mapping": (
        "  - taint: {zone: zone-a, key: {a: b}, effect: NoSchedule}\n",
        "(taint): key: expected a taint key",
    ),
    "taint key no qualified name": (
        "  - taint: {zone: zone-a, key: 'bad key', effect: NoSchedule}\n",
        '(taint): key: Invalid value: "bad key": name part must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    ),
    "taint value a number": (
        "  - taint: {zone: zone-a, key: k, value: 5, effect: NoSchedule}\n",
        "(taint): value: expected a string",
    ),
    "taint value no label value": (
        "  - taint: {zone: zone-a, key: k, value: 'a b', effect: NoSchedule}\n",
        '(taint): value: Invalid value: "a b": a valid label must be an empty string or '
        "consist of alphanumeric characters",
    ),
    "untaint zone a list": (
        "  - untaint: {zone: [zone-a], key: k}\n",
        "(untaint): zone: expected a zone name",
    ),
    "taint nodes a mapping": (
        "  - taint: {nodes: {a: b}, key: k, effect: NoSchedule}\n",
        "(taint): nodes: expected a name or a list of names",
    ),
    "loseZone zone a number": (
        "  - loseZone: {zone: 5}\n",
        "(loseZone): zone: expected a zone name",
    ),
    "loseZone zoneKey a list": (
        "  - loseZone: {zone: zone-a, zoneKey: [zone]}\n",
        "(loseZone): zoneKey: expected a node label key",
    ),
    "addNodes group a list": (
        "  - addNodes: {group: [node]}\n",
        "(addNodes): group: expected a node group's name",
    ),
}


@pytest.mark.parametrize("command", ["simulate", "sweep", "rebalance"])
@pytest.mark.parametrize(("step", "message"), BAD_STEPS.values(), ids=list(BAD_STEPS))
def test_a_step_argument_of_the_wrong_type_or_value_is_refused_when_the_timeline_is_read(
    command: str, step: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_text(tmp_path, "t.yaml", _with(ZONE_OUTAGE, LAST_STEP, step))
    argv = [command, path, *(["--zones", "-j", "1"] if command == "sweep" else [])]
    assert_one_line_exit_2(argv, capsys, STEP_WHERE + message)


def test_a_then_step_failing_in_a_run_is_named_in_the_then_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It was named as a step of the scenario's file, at its place in the run.
    scenario = write_text(tmp_path, "t.yaml", ZONE_OUTAGE)
    then = write_text(
        tmp_path, "then.yaml", "- wait: 1m\n- scale: {workload: deployment/nope, replicas: 2}\n"
    )
    assert_one_line_exit_2(
        ["sweep", scenario, "--zones", "-j", "1", "--then", then],
        capsys,
        'then.yaml [zone zone-a]: timeline[1] (scale): workload: Not found: "deployment/nope": '
        "no such workload (known: deployment/web, replicaset/web-6b995ff6b8)",
    )


VERIFY: Final = (EXAMPLES / "verify/redis-2shards-2zones.yaml").read_text()
SCENARIO: Final = (EXAMPLES / "scenarios/docs-one-constraint.yaml").read_text()


# An item of a scenario's list of manifests that is a list (or null) was read as its items
# (or as nothing), in silence; an empty apply step applied nothing.
@pytest.mark.parametrize(
    ("argv", "text", "change", "message"),
    [
        (
            ["simulate"],
            ZONE_OUTAGE,
            ("objects:\n", "objects:\n  - []\n"),
            "t.yaml: objects[0]: expected an object (a mapping), got a list",
        ),
        (
            ["simulate"],
            ZONE_OUTAGE,
            ("objects:\n", "objects:\n  - null\n"),
            "t.yaml: objects[0]: expected an object (a mapping), got null",
        ),
        (
            ["simulate"],
            ZONE_OUTAGE,
            ("objects:\n", "objects:\n  - [{apiVersion: v1, kind: Namespace, metadata: {}}]\n"),
            "t.yaml: objects[0]: expected an object (a mapping), got a list",
        ),
        (
            ["schedule"],
            SCENARIO,
            ("queue:", "objects: [[]]\nqueue:"),
            "t.yaml: objects[0]: expected an object (a mapping), got a list",
        ),
        (
            ["verify"],
            VERIFY,
            ("workloads:\n", "workloads:\n- []\n"),
            "t.yaml: workloads[0]: expected an object (a mapping), got a list",
        ),
        (
            ["simulate"],
            ZONE_OUTAGE,
            (LAST_STEP, "  - apply: [[]]\n"),
            "t.yaml: timeline[3] (apply)[0]: expected an object (a mapping), got a list",
        ),
        (
            ["simulate"],
            ZONE_OUTAGE,
            (LAST_STEP, "  - apply: []\n"),
            "t.yaml: timeline[3] (apply): no objects passed to apply",
        ),
        # A List without items is no object either (kubectl apply: count == 0); it was applied
        # as nothing, in silence.
        (
            ["simulate"],
            ZONE_OUTAGE,
            (LAST_STEP, "  - apply: {apiVersion: v1, kind: List, items: null}\n"),
            "t.yaml: timeline[3] (apply): no objects passed to apply",
        ),
        (
            ["simulate"],
            ZONE_OUTAGE,
            (LAST_STEP, "  - apply: [{apiVersion: v1, kind: List, items: []}]\n"),
            "t.yaml: timeline[3] (apply): no objects passed to apply",
        ),
    ],
    ids=[
        "timeline object an empty list",
        "timeline object null",
        "timeline object a list of one",
        "scenario object a list",
        "verify workload a list",
        "apply item a list",
        "apply nothing",
        "apply a List of null items",
        "apply a List of no items",
    ],
)
def test_an_item_of_a_list_of_manifests_must_be_one_manifest(
    argv: list[str],
    text: str,
    change: tuple[str, str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = write_text(tmp_path, "t.yaml", _with(text, *change))
    assert_one_line_exit_2([*argv, path], capsys, message)


# A node group's template or zones that were empty but not null (an empty list, "", false) were
# read as absent: the template as the default node, the zones as none.
@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("    perZone: 2\n", "    perZone: 2\n    template: []\n"),
            "t.yaml: nodeGroups[0]: template: expected an object (a mapping), got a list",
        ),
        (
            ("    perZone: 2\n", "    perZone: 2\n    template: ''\n"),
            't.yaml: nodeGroups[0]: template: expected an object (a mapping), got ""',
        ),
        (
            ("    zones: [zone-a, zone-b, zone-c]\n", "    zones: false\n"),
            "t.yaml: nodeGroups[0]: zones: expected a list of zone names",
        ),
    ],
    ids=["template an empty list", "template an empty string", "zones false"],
)
def test_an_empty_node_group_template_or_zones_of_another_type_is_refused(
    change: tuple[str, str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_text(tmp_path, "t.yaml", _with(ZONE_OUTAGE, *change))
    assert_one_line_exit_2(["simulate", path], capsys, message)


INVARIANT: Final = "distinct: {selector: {matchLabels: {app: redis-cluster}}"


# An invariant's selector was converted leniently: a misspelled matchLabels was dropped (the
# selector then matched every pod) and a wrong type said in msgspec's words.
@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (
            "{matchLabel: {app: redis-cluster}}",
            'invariants[0].distinct.selector: strict decoding error: unknown field "matchLabel"',
        ),
        (
            "{matchLabels: [app]}",
            "invariants[0].distinct.selector: json: cannot unmarshal array into Go struct field "
            "LabelSelector.matchLabels of type map[string]string",
        ),
    ],
    ids=["misspelled", "wrong type"],
)
def test_an_invariants_selector_is_decoded_strictly(
    selector: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _with(VERIFY, INVARIANT, f"distinct: {{selector: {selector}")
    path = write_text(tmp_path, "t.yaml", text)
    assert_one_line_exit_2(["verify", path], capsys, f"t.yaml: {message}")


@pytest.mark.parametrize("command", ["evaluate", "conformance"])
def test_a_case_args_value_of_the_wrong_type_is_the_go_decoders_error_as_in_a_profile(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _with(CASE, "defaultConstraints: []", "defaultConstraints: [{maxSkew: x}]")
    path = write_text(tmp_path, "case.yaml", text)
    assert_one_line_exit_2(
        [command, path],
        capsys,
        "case.yaml: args: decoding args for plugin PodTopologySpread: json: cannot unmarshal "
        "string into Go struct field TopologySpreadConstraint.defaultConstraints.maxSkew of type "
        "int32",
    )


LIST: Final = """\
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
  "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}]}
"""


# kubectl's client-side look at a document's apiVersion and kind (getObjectKind) is made of a
# List as of any document: a List without an apiVersion was read, in JSON and in YAML alike.
@pytest.mark.parametrize("name", ["cluster.json", "cluster.yaml"])
@pytest.mark.parametrize("option", ["--cluster", "--nodes"])
def test_a_list_without_an_api_version_is_kubectls_validation_error(
    name: str, option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _with(LIST, '"apiVersion": "v1", "kind": "List"', '"kind": "List"')
    if name.endswith(".yaml"):
        text = yaml.safe_dump(json.loads(text))
    path = write_text(tmp_path, name, text)
    assert_one_line_exit_2(
        ["schedule", option, path],
        capsys,
        f"{name} (List): error validating data: apiVersion not set; if you choose to ignore these "
        "errors, turn validation off with --validate=false",
    )


@pytest.mark.parametrize("name", ["cluster.json", "cluster.yaml"])
@pytest.mark.parametrize("item", [[], ["node"]], ids=["empty", "one"])
def test_a_list_item_that_is_a_sequence_is_refused(
    name: str, item: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It was read as its own items (or as nothing), in silence.
    data = json.loads(LIST)
    data["items"].append([data["items"][0] for _ in item])
    text = json.dumps(data) if name.endswith(".json") else yaml.safe_dump(data)
    path = write_text(tmp_path, name, text)
    assert_one_line_exit_2(
        ["schedule", "--cluster", path],
        capsys,
        f"{name}: items[1]: expected an object (a mapping), got a list",
    )


# check's generated shape: a flag that becomes a node's label value or name part was refused
# only when the nodes were made, naming the manifests' file as the culprit.
@pytest.mark.parametrize(
    ("flag", "value", "detail"),
    [
        (
            "--node-os",
            "a b",
            "a valid label must be an empty string or consist of alphanumeric characters",
        ),
        (
            "--node-instance-type",
            "x/y",
            "a valid label must be an empty string or consist of alphanumeric characters",
        ),
        (
            "--region",
            "UP",
            "names nodes node-<region>a-1: a lowercase RFC 1123 subdomain must consist of lower "
            "case alphanumeric characters",
        ),
    ],
)
def test_a_generated_shapes_label_flag_is_refused_naming_the_flag(
    flag: str, value: str, detail: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", str(EXAMPLES / "check/web.yaml"), "--zones", "3", flag, value]
    assert_one_line_exit_2(
        argv, capsys, f'topospread: error: {flag}: Invalid value: "{value}": {detail}'
    )


# A byte that is no UTF-8 in a key no decoder reads (a misspelled field, dropped under
# --validate=ignore) was skipped by the fast paths (rapidyaml does not check; msgspec checks
# only the strings it decodes), so the field vanished; go-yaml refuses the whole text.
@pytest.mark.parametrize("validate", ["ignore", "strict"])
@pytest.mark.parametrize("name", ["nodes.json", "nodes.yaml"])
def test_a_bad_byte_in_a_key_no_decoder_reads_is_refused(
    name: str, validate: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": {}}
    text = (json.dumps(node) if name.endswith(".json") else yaml.safe_dump(node)).encode()
    path = tmp_path / name
    path.write_bytes(text.replace(b"spec", b"sp\xed\xa0\x80ec"))
    assert_one_line_exit_2(
        ["schedule", "--nodes", str(path), "--validate", validate],
        capsys,
        f"{name}: line ",
    )
    assert_one_line_exit_2(
        ["schedule", "--nodes", str(path), "--validate", validate],
        capsys,
        "invalid UTF-8 (byte 0xed); manifests must be UTF-8 text",
    )


@pytest.mark.parametrize("command", ["schedule", "simulate", "sweep", "rebalance", "verify"])
def test_a_zone_key_that_is_no_label_key_is_refused(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # It was taken: the drawing then had no zones, and sweep said no node had the label.
    scenario = {
        "schedule": "scenarios/docs-one-constraint.yaml",
        "verify": "verify/redis-2shards-2zones.yaml",
    }.get(command, "simulations/zone-outage.yaml")
    argv = [command, str(EXAMPLES / scenario), "--zone-key", "bad key"]
    argv += ["--zones"] if command == "sweep" else []
    assert_one_line_exit_2(
        argv,
        capsys,
        'topospread: error: --zone-key: Invalid value: "bad key": name part must consist of '
        "alphanumeric characters",
    )


@pytest.mark.parametrize("character", [b"\x00", b"\x1b", b"\xc2\x80"], ids=["NUL", "ESC", "C1"])
def test_a_control_character_is_refused_under_validate_ignore_too(
    character: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Small text under ignore goes through rapidyaml, which took them; go-yaml refuses them.
    text = (EXAMPLES / "check/web.yaml").read_bytes()
    path = tmp_path / "web.yaml"
    path.write_bytes(text.replace(b"# Source: web/templates/service", b"# Source" + character, 1))
    assert_one_line_exit_2(
        ["check", str(path), "--zones", "3", "--validate", "ignore"],
        capsys,
        "control characters are not allowed",
    )
