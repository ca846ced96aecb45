"""``sweep --autoscaler``: after each failure cluster-autoscaler or Karpenter acts on the clock
until nothing is Pending (or the recovery limit passes); each run says whether the cluster
recovered, how long it took, the nodes added and removed per group and what the autoscaler
could not do — the same through every backend, in JSON (schema), text and HTML, and each
run's timeline replays it under ``simulate``."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from test_autoscaling import CA, KARPENTER, web
from test_cli import run as cli
from test_html_json import parse
from topospread.analysis.simulate import simulate
from topospread.analysis.sweep import Backend, SweepReport, serial_backend, sweep
from topospread.analysis.sweep_pool import process_backend
from topospread.render.schemas import load_schema
from topospread.simulator.timeline_format import parse_timeline

ZONES = ["zone-a", "zone-b", "zone-c"]


def cluster(
    autoscaler: dict[str, Any] | None, policy: str = "Honor", replicas: int = 6
) -> dict[str, Any]:
    """Three zones of one 1-CPU node each, a Deployment of ``replicas`` 400m pods spread by
    zone (two fit a node): a lost zone's pods need new nodes elsewhere."""
    doc: dict[str, Any] = {
        "nodeGroups": [
            {
                "name": "node",
                "zones": ZONES,
                "perZone": 1,
                "template": {"status": {"capacity": {"cpu": "1", "memory": "4Gi", "pods": "110"}}},
            }
        ],
        "objects": [web(replicas, cpu="400m", nodeTaintsPolicy=policy)],
    }
    if autoscaler is not None:
        doc["autoscaler"] = autoscaler
    return doc


def swept(doc: dict[str, Any], backend: Backend = serial_backend, **kw: Any) -> SweepReport:
    return sweep(parse_timeline(copy.deepcopy(doc), "t.yaml"), zones=True, backend=backend, **kw)


def runs(report: SweepReport) -> dict[str, dict[str, Any]]:
    return {r["failure"]["name"]: r for r in report.to_json()["runs"]}


def test_honouring_the_lost_zones_taints_cluster_autoscaler_adds_nodes_in_the_others() -> None:
    report = swept(cluster(CA))
    a = runs(report)["zone zone-a"]
    r = a["autoscaler"]
    # The evicted pods went Pending at 5m (too young for the 5m tick: new-pod-scale-up-delay).
    # At 5m10s the lost zone's own group is the best option for the default expander,
    # least-waste: its untainted template is a domain with 0 pods, so one node takes both
    # (the others' one node takes one). The dark zone is stocked out: the request times out
    # once its expected add time (5m10s + max-node-provision-time 15m) is before the loop's
    # time, at 20m20s, and the group backs off; then, with DoNotSchedule zone spread, one node
    # per loop (autoscaler#9150): zone-c's at 20m20s, zone-b's at 20m30s, Ready a minute later.
    assert r["recovered"] and r["took"] == 990 and r["pendingBefore"] == 2
    assert [(c["time"], c["group"]) for c in r["changes"] if c["action"] == "scaleUp"] == [
        (310.0, "node-zone-a"),
        (1220.0, "node-zone-c"),
        (1230.0, "node-zone-b"),
    ]
    assert [(c["time"], c["group"]) for c in r["changes"] if c["action"] == "add"] == [
        (1220.0, "node-zone-c"),
        (1230.0, "node-zone-b"),
    ]
    assert r["reasons"] == [
        "group node-zone-a: the cloud cannot create a node: stockout, no new nodes in zone "
        "zone-a until 35m1s",
        "group node-zone-a: 1 node(s) not registered within max-node-provision-time; target "
        "size back to 1, the group is in back-off until 25m20s",
    ]
    assert r["added"] == {"node-zone-b": 1, "node-zone-c": 1}
    assert r["nodeGroups"] == {"node-zone-a": 1, "node-zone-b": 2, "node-zone-c": 2}
    assert a["during"]["pending"] == [] and a["during"]["violated"] == []
    # Once zone-a is back (empty: nothing moves pods back) the spread is skewed: the
    # sweep's own "recovers" stays about the state after the failure is undone.
    assert not a["recovered"] and a["after"]["violated"]
    # The lost zone is stocked out while it is lost, and the recovery is a wait in the replay.
    actions = [next(k for k in s if k != "name") for s in a["timeline"]]
    assert actions == ["loseZone", "stockout", "wait", "wait", "restoreZone"]
    assert a["timeline"][3] == {"name": "the autoscaler acts", "wait": "16m30s"}


def test_a_scale_up_chosen_in_the_dark_zone_waits_out_max_node_provision_time() -> None:
    """enhancements#3990: the group in the lost zone cannot get its node; cluster-autoscaler
    only tries elsewhere after max-node-provision-time (15m) puts the group in back-off."""
    by_name = runs(swept(cluster(CA)))
    slow = [r["autoscaler"] for r in by_name.values() if r["autoscaler"]["took"] == 990]
    assert slow, [r["autoscaler"]["took"] for r in by_name.values()]
    for r in slow:
        assert r["recovered"]
        assert any("stockout" in why for why in r["reasons"])
        assert any("max-node-provision-time" in why for why in r["reasons"])


def test_the_tainted_zone_trap_holds_the_pods_until_the_dark_node_goes_and_says_why() -> None:
    report = swept(cluster(CA, policy="Ignore"))
    for name, run in runs(report).items():
        r = run["autoscaler"]
        lost = name.removeprefix("zone ")
        # It scales the lost zone's group first (the only template the spread allows), which
        # the cloud cannot deliver; the others' templates break the skew.
        first = next(c for c in r["changes"] if c["action"] == "scaleUp")
        assert (first["time"], first["group"]) == (310.0, f"node-{lost}"), name
        assert any("stockout" in why for why in r["reasons"])
        assert any("didn't match pod topology spread constraints" in why for why in r["reasons"])
        # The dark zone stays a domain with 0 pods until its NotReady node is deleted as
        # unneeded: scale-down-unready-time (20m) after it emptied at 5m. Then the pods get
        # nodes in the other zones, one per loop, Ready a minute later: 21m20s after they
        # went Pending.
        removed = [(c["time"], c["group"]) for c in r["changes"] if c["action"] == "remove"]
        assert removed == [(1500.0, f"node-{lost}")], name
        assert r["recovered"] and r["took"] == 1280, name
        # Dark to the end: no tick gets a node in the lost zone.
        assert not [c for c in r["changes"] if c["action"] == "add" and c["zone"] == lost]


def test_karpenter_replaces_a_lost_node_in_its_zone_through_the_same_sweep() -> None:
    report = sweep(parse_timeline(cluster(KARPENTER), "t.yaml"), nodes=True)
    for name, run in runs(report).items():
        r = run["autoscaler"]
        zone = name.split("-")[-2]
        assert r["autoscaler"] == "karpenter" and r["pendingBefore"] == 2
        assert r["recovered"] and r["took"] == 60 and r["added"] == {"default": 1}
        (launch,) = r["changes"]
        assert f"in zone-{zone}" in launch["reason"] and "provisioning 2 pod(s)" in launch["reason"]


def test_the_base_state_is_placed_by_the_autoscaler_first_and_heads_every_replay() -> None:
    doc = cluster(CA, replicas=9)  # 9 pods on 3 nodes that hold 6: 3 Pending before it acts
    report = swept(doc)
    assert report.autoscaler is not None
    base = report.autoscaler.base[0]
    # One node per loop (zone spread, DoNotSchedule): ticks at 10s, 20s, 30s; Ready at 1m30s.
    assert base.pending_before == 3 and base.recovered and base.took == 90
    assert base.added == {"node-zone-a": 1, "node-zone-b": 1, "node-zone-c": 1}
    assert report.base[0].pending == {}
    for run in runs(report).values():
        assert run["timeline"][0] == {"name": "the autoscaler acts", "wait": "1m30s"}


@pytest.mark.parametrize("policy", ["Honor", "Ignore"])
def test_each_runs_timeline_replays_it_under_simulate(policy: str) -> None:
    doc = cluster(CA, policy=policy, replicas=7)
    report = swept(doc, seeds=[3])
    for name, run in runs(report).items():
        replay = {**copy.deepcopy(doc), "timeline": run["timeline"]}
        steps = simulate(parse_timeline(replay, "t.yaml"), seed=3).to_json()["steps"]
        last = steps[-1] if "restore" in json.dumps(run["timeline"][-1]) else None
        during = steps[-2] if last is not None else steps[-1]
        assert during["pending"] == run["during"]["pending"], name
        if last is not None:
            assert last["pending"] == run["after"]["pending"], name
        sizes = during["nodeGroups"]
        assert sizes == run["autoscaler"]["nodeGroups"], name


def test_the_forked_pool_gives_the_serial_runs_and_the_same_seed_the_same_report() -> None:
    doc = cluster(
        {"clusterAutoscaler": {"options": {"expander": "random"}, **CA["clusterAutoscaler"]}}
    )
    serial = swept(doc, seeds=[0, 1]).to_json()
    assert swept(doc, process_backend(2), seeds=[0, 1]).to_json() == serial
    assert swept(doc, seeds=[0, 1]).to_json() == serial


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    ray = pytest.importorskip("ray")
    from topospread.analysis.sweep_ray import connect

    started = connect("local")
    yield
    if started:
        ray.shutdown()


def test_ray_carries_the_autoscaler_in_the_base_state(ray_cluster: None) -> None:
    from topospread.analysis.sweep_ray import ray_backend

    doc = cluster(CA, replicas=7)
    assert swept(doc, ray_backend("local")).to_json() == swept(doc).to_json()


def test_the_json_follows_the_schema_and_without_an_autoscaler_has_no_autoscaler_keys() -> None:
    schema = load_schema("sweep")
    with_it = swept(cluster(CA, policy="Ignore")).to_json()
    jsonschema.validate(with_it, schema)
    without = swept(cluster(None)).to_json()
    jsonschema.validate(without, schema)
    assert "autoscaler" not in without and all("autoscaler" not in r for r in without["runs"])


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    scenario = tmp_path / "cluster.yaml"
    scenario.write_text(yaml.safe_dump(cluster(None)))
    section = tmp_path / "ca.yaml"
    section.write_text(yaml.safe_dump(CA))
    return scenario, section


def test_the_cli_reads_the_section_from_a_file_and_prints_each_recovery(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    scenario, section = files
    argv = ["sweep", str(scenario), "--zones", "-j", "1", "--autoscaler", str(section)]
    code, text, _ = cli(argv, capsys)
    assert code == 0
    assert "Autoscaler: cluster-autoscaler, acting up to 30m0s after each failure" in text
    assert "  zone zone-a: recovered in 16m30s: +1 node-zone-b, +1 node-zone-c;" in text
    # Wrapped as {autoscaler: ...}, and as the scenario's own section: the same report.
    wrapped = section.with_name("wrapped.yaml")
    wrapped.write_text(yaml.safe_dump({"autoscaler": CA}))
    assert cli([*argv[:-1], str(wrapped)], capsys)[1] == text
    inline = scenario.with_name("inline.yaml")
    inline.write_text(yaml.safe_dump(cluster(CA)))
    assert cli(["sweep", str(inline), "--zones", "-j", "1"], capsys)[1] == text.replace(
        str(scenario), str(inline)
    )


def test_require_no_pending_fails_when_the_autoscaler_cannot_place_the_pods(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    scenario, section = files
    scenario.write_text(yaml.safe_dump(cluster(None, policy="Ignore")))
    argv = ["sweep", str(scenario), "--zones", "-j", "1", "--autoscaler", str(section)]
    code, text, _ = cli([*argv, "--recovery-limit", "10m", "--require", "no-pending"], capsys)
    assert code == 1
    assert "  zone zone-a: NOT recovered within 10m0s" in text
    assert "group node-zone-a: the cloud cannot create a node: stockout" in text
    assert "FAIL: 3 of 3 runs break --require no-pending." in text


def test_the_html_shows_the_numbers_of_the_json(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    scenario, section = files
    argv = ["sweep", str(scenario), "--zones", "-j", "1", "--autoscaler", str(section)]
    doc = json.loads(cli([*argv, "-o", "json"], capsys)[1])
    root = parse(cli([*argv, "-o", "html"], capsys)[1])
    (table,) = root.find("id", "recoveries")
    shown = {}
    for row in table.find("data-run"):
        took = row.find("data-took")
        shown[row.attrs["data-run"]] = {
            "recovered": row.find("data-recovered")[0].attrs["data-recovered"] == "yes",
            "took": float(took[0].attrs["data-took"]) if took else None,
            "added": {e.attrs["data-added"]: int(e.all_text()) for e in row.find("data-added")},
            "removed": {
                e.attrs["data-removed"]: int(e.all_text()) for e in row.find("data-removed")
            },
            "nodeGroups": {
                e.attrs["data-group-size"]: int(e.all_text()) for e in row.find("data-group-size")
            },
        }
    want = {
        r["failure"]["name"]: {k: r["autoscaler"][k] for k in next(iter(shown.values()))}
        for r in doc["runs"]
    }
    assert shown == want and len(shown) == 3
    assert root.counts()["recovery-limit"] == [1800]


def test_a_bad_autoscaler_file_names_the_file_and_field_and_exits_2(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    scenario, section = files
    section.write_text(
        yaml.safe_dump({"clusterAutoscaler": {"nodeGroups": [{"nodeGroup": "nod", "maxSize": 3}]}})
    )
    argv = ["sweep", str(scenario), "--zones", "--autoscaler", str(section)]
    code, _, err = cli(argv, capsys)
    assert code == 2 and "Traceback" not in err
    assert f"{section}: autoscaler.clusterAutoscaler.nodeGroups[0]: nodeGroup: Not found" in err
    section.write_text("- 1\n")
    code, _, err = cli(argv, capsys)
    assert code == 2 and f"{section}: autoscaler: expected one mapping" in err
    section.write_text(yaml.safe_dump(CA))
    code, _, err = cli([*argv, "--recovery-limit", "-1m"], capsys)
    assert code == 2 and '--recovery-limit: Invalid value: "-1m": must not be negative' in err


def test_the_readme_shows_what_the_example_prints(capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).resolve().parents[1]
    command = (
        "topospread sweep examples/simulations/zone-outage.yaml --zones --nodes --autoscaler "
        "examples/sweep/cluster-autoscaler.yaml"
    )
    readme = (root / "README.md").read_text()
    shown = readme.split(f"{command}\n```\n", 1)[1].split("```text\n", 1)[1].split("\n```")[0]
    code, out, _ = cli(
        [
            "sweep",
            str(root / "examples/simulations/zone-outage.yaml"),
            "--zones",
            "--nodes",
            "-j",
            "1",
            "--autoscaler",
            str(root / "examples/sweep/cluster-autoscaler.yaml"),
        ],
        capsys,
    )
    assert code == 0
    lines = [line for line in shown.splitlines() if line.strip() != "..."]
    assert lines and all(line in out.splitlines() for line in lines), out
