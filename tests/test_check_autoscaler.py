"""``check --autoscaler``: on the generated shape, the chart's workloads placed, then the
autoscaler adds nodes for what is Pending; the verdict says whether they fit with it and how
many nodes it adds per group, or FAILs with the autoscaler's own reason (a zone whose group
cannot grow under a DoNotSchedule zone spread). Inputs: ``helm template`` output in
examples/check/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from test_cli import run
from topospread.analysis.check import check
from topospread.inputs import Inputs
from topospread.render.schemas import load_schema

CHECK = Path(__file__).resolve().parents[1] / "examples" / "check"
SHOP = CHECK / "shop.yaml"
CA = CHECK / "cluster-autoscaler.yaml"
CAPPED = CHECK / "cluster-autoscaler-zone-c-capped.yaml"
SHAPE = ["--zones", "3", "--nodes-per-zone", "1", "--node-cpu", "2"]


def test_without_the_autoscaler_half_the_replicas_stay_pending(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["check", str(SHOP), *SHAPE], capsys)
    assert code == 1 and "6 pod(s) stay Pending" in out


def test_with_cluster_autoscaler_the_chart_fits_and_the_verdict_counts_the_nodes_per_group(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["check", str(SHOP), *SHAPE, "--autoscaler", str(CA)], capsys)
    assert code == 0
    assert out.startswith("PASS: ") and "on 6 node(s); 0 error(s)" in out
    # balance-similar-node-groups spreads the scale-up over the three zones' groups.
    assert (
        "  autoscaler: fits with cluster-autoscaler adding 3 node(s) (node-region-1a +1, "
        "node-region-1b +1, node-region-1c +1) in 1m30s\n"
    ) in out
    code, doc_text, _ = run(
        ["check", str(SHOP), *SHAPE, "--autoscaler", str(CA), "-o", "json"], capsys
    )
    doc = json.loads(doc_text)
    jsonschema.validate(doc, load_schema("check"))
    a = doc["autoscaler"]
    assert a["recovered"] and a["pendingBefore"] == 6 and a["took"] == 90
    assert a["added"] == {"node-region-1a": 1, "node-region-1b": 1, "node-region-1c": 1}
    assert doc["pending"] == [] and len(doc["bound"]) == 12 and doc["nodeCount"] == 6


def test_a_zone_whose_group_cannot_grow_fails_with_the_autoscalers_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["check", str(SHOP), *SHAPE, "--autoscaler", str(CAPPED)], capsys)
    assert code == 1
    assert (
        "  autoscaler: does not fit with cluster-autoscaler within 30m0s; it added 2 node(s) "
        "(pool-a +1, pool-b +1)\n"
    ) in out
    assert "4 pod(s) stay Pending even with cluster-autoscaler" in out
    (why,) = [line for line in out.splitlines() if line.endswith("[autoscaler]")]
    assert why.startswith(f"error: cluster-autoscaler ({CAPPED}: autoscaler): ")
    assert "pool-c: max node group size reached" in why
    assert "pool-a: node(s) didn't match pod topology spread constraints" in why
    code, github, _ = run(
        ["check", str(SHOP), *SHAPE, "--autoscaler", str(CAPPED), "--format", "github"], capsys
    )
    assert f"::error file={CAPPED},title=topospread autoscaler%3A cluster-autoscaler::" in github


def test_survive_zone_replays_each_loss_with_the_autoscaler(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The tainted-zone trap with an autoscaler: the lost zone stays a domain with 0 pods,
    its group cannot get a node while the zone is dark, and the others break the skew."""
    argv = ["check", str(SHOP), *SHAPE, "--autoscaler", str(CA), "--survive", "zone"]
    code, out, _ = run(argv, capsys)
    assert code == 1 and "survived: 3 failure(s) replayed" in out
    lost = [
        line
        for line in out.splitlines()
        if line.endswith("[survive-zone]") and "pod(s) stay Pending" in line
    ]
    assert len(lost) == 3
    for zone, line in zip("abc", lost, strict=True):
        assert (
            f"after losing region-1{zone}: 4 pod(s) stay Pending even with cluster-autoscaler"
            in line
        )
        assert f"node-region-1{zone}: in backoff after failed scale-up" in line


def test_the_library_call_is_deterministic_and_takes_a_section_parser() -> None:
    read = Inputs()
    objects = read.manifests([str(SHOP)])
    from topospread.analysis.check import Shape

    def once() -> dict[str, object]:
        return check(
            objects,
            source=str(SHOP),
            shape=Shape(3, 1, "2"),
            seed=5,
            autoscaler=(str(CA), lambda groups: read.autoscaler(CA, groups)),
        ).to_json()

    assert once() == once()


@pytest.mark.parametrize(
    ("section", "message"),
    [
        (
            {"clusterAutoscaler": {"nodeGroups": [{"nodeGroup": "nodes", "maxSize": 3}]}},
            "autoscaler.clusterAutoscaler.nodeGroups[0]: nodeGroup: Not found: 'nodes': no "
            "such entry in nodeGroups (node)",
        ),
        ({"karpenter": {}}, "autoscaler.karpenter: nodePools: Required value"),
    ],
    ids=["unknown-group", "no-nodepools"],
)
def test_a_bad_section_names_the_file_and_field_and_exits_2(
    section: dict[str, object], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(yaml.safe_dump(section))
    code, _, err = run(["check", str(SHOP), *SHAPE, "--autoscaler", str(path)], capsys)
    assert code == 2 and f"{path}: {message}" in err and "Traceback" not in err


def test_the_readme_shows_what_the_examples_print(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root)
    readme = (root / "README.md").read_text()
    block = readme.split("$ topospread check examples/check/shop.yaml", 1)[1].split("\n```", 1)[0]
    for part in block.split("$ topospread check examples/check/shop.yaml"):
        args, *shown = part.strip().splitlines()
        code, out, _ = run(["check", "examples/check/shop.yaml", *args.split()], capsys)
        assert code == (0 if shown[0].startswith("PASS") else 1)
        printed = out.splitlines()
        for line in shown:
            if "..." in line:  # elided in the README: the parts around each ... are printed
                pattern = re.compile(".*".join(re.escape(part) for part in line.split("...")))
                assert any(pattern.fullmatch(p) for p in printed), line
            else:
                assert line in printed, line


BAD_GROUPS = {
    "a template that is not a mapping": (
        {"template": []},
        "clusterAutoscaler.nodeGroups[0]: template: expected a Node manifest (a mapping)",
    ),
    "a negative capacity in the template": (
        {"template": {"status": {"capacity": {"cpu": "-1"}}}},
        "clusterAutoscaler.nodeGroups[0]: template: status.capacity.cpu: Invalid value: "
        '"-1": must be greater than or equal to 0',
    ),
    "a name its nodes cannot take": (
        {"name": "Pool A"},
        'clusterAutoscaler.nodeGroups[0]: name: Invalid value: "Pool A-1": a lowercase RFC '
        "1123 subdomain must consist of",
    ),
    "a zone no label value can hold": (
        {"zones": ["zone a"]},
        'clusterAutoscaler.nodeGroups[0]: zones: Invalid value: "zone a": a valid label must be',
    ),
}


@pytest.mark.parametrize(("change", "message"), BAD_GROUPS.values(), ids=BAD_GROUPS.keys())
def test_a_node_group_whose_nodes_the_api_server_would_refuse_is_named_in_the_autoscaler_file(
    change: dict[str, object],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Before, a bad template capacity, name or zone was accepted here and refused when the
    # group's first node was created, naming the manifests file (shop.yaml (Node ...)).
    group = {"name": "pool-a", "maxSize": 4, "zones": ["region-1a"], **change}
    path = tmp_path / "ca.yaml"
    path.write_text(yaml.safe_dump({"clusterAutoscaler": {"nodeGroups": [group]}}))
    code, _, err = run(["check", str(SHOP), *SHAPE, "--autoscaler", str(path)], capsys)
    (line,) = [line for line in err.splitlines() if line.startswith("topospread: error:")]
    assert code == 2 and "Traceback" not in err
    assert f"{path}: autoscaler.{message}" in line, line
