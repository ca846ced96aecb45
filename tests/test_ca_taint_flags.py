"""cluster-autoscaler's taint flags: ``--startup-taint``, its deprecated alias
``--ignore-taint``, ``--status-taint`` and ``--startup-taint-prefix`` (pkg/config/flags/flags.go,
repeated string flags) and the TaintConfig taints.NewTaintConfig makes of them
(pkg/utils/taints/taints.go, kubernetes-sigs/cluster-autoscaler 33c3f97): a startup taint
makes its node not ready (FilterOutNodesWithStartupTaints), startup and status taints are
dropped from template nodes (SanitizeTaints), so a pending pod that does not tolerate them
still triggers a scale-up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from test_autoscaler_fidelity import pinned
from test_autoscaling import changes, run
from test_ca_autoscaler import cluster_of, group, web
from test_cli import run as cli
from topospread.api.types import Node, Taint, Toleration
from topospread.autoscaler.clusterautoscaler import ClusterAutoscaler, parse_options
from topospread.autoscaler.clusterautoscaler.clusterstate import readiness_of
from topospread.autoscaler.clusterautoscaler.nodegroup import template_node_info
from topospread.autoscaler.clusterautoscaler.nodeinfos import TemplateNodeInfoProvider
from topospread.autoscaler.clusterautoscaler.scaledown import UnremovableReason
from topospread.autoscaler.clusterautoscaler.scaleup import (
    SCALE_UP_NO_OPTIONS_AVAILABLE,
    SCALE_UP_SUCCESSFUL,
)
from topospread.autoscaler.clusterautoscaler.taints import (
    DEFAULT_TAINT_CONFIG,
    IGNORE_TAINT_PREFIX,
    STARTUP_TAINT_PREFIX,
    STATUS_TAINT_PREFIX,
)
from topospread.cluster.state import ClusterState
from topospread.errors import ManifestError
from topospread.framework.types import NodeInfo

AGENT = "example.com/agent-not-ready"  # a startup taint an agent removes once it runs
MAINTENANCE = "example.com/maintenance"  # a status taint set during the node's life
NOW = 10_000.0
MINUTE = 60.0


def with_taint(node: Node, key: str) -> Node:
    taints = [*node.spec.taints, Taint(key=key, effect="NoSchedule")]
    return msgspec.structs.replace(node, spec=msgspec.structs.replace(node.spec, taints=taints))


# ------------------------------------------------------------------ the flags


def test_the_flags_parse_as_repeated_string_flags_and_make_the_taint_config() -> None:
    options = parse_options(
        {
            "ignore-taint": "old.example.com/a",
            "startup-taint": [AGENT, "example.com/b"],
            "status-taint": MAINTENANCE,
            "startup-taint-prefix": ["init.example.com/", "boot.example.com/"],
        },
        "test",
    )
    assert options.ignore_taint == ("old.example.com/a",)
    assert options.startup_taint == (AGENT, "example.com/b")
    config = options.taint_config
    # Upstream: StartupTaints = ignore-taint's keys then startup-taint's; the built-in
    # prefixes first, then --startup-taint-prefix's; the status prefix alone.
    assert config.startup_taints == {"old.example.com/a", AGENT, "example.com/b"}
    assert config.status_taints == {MAINTENANCE}
    assert config.startup_taint_prefixes == (
        IGNORE_TAINT_PREFIX,
        STARTUP_TAINT_PREFIX,
        "init.example.com/",
        "boot.example.com/",
    )
    assert config.status_taint_prefixes == (STATUS_TAINT_PREFIX,)
    assert config.is_startup_taint("boot.example.com/cni") and not config.is_status_taint(AGENT)


def test_without_the_flags_the_config_is_the_default_one() -> None:
    assert parse_options({}, "test").taint_config == DEFAULT_TAINT_CONFIG
    assert DEFAULT_TAINT_CONFIG.startup_taints == frozenset()
    assert DEFAULT_TAINT_CONFIG.startup_taint_prefixes == (
        IGNORE_TAINT_PREFIX,
        STARTUP_TAINT_PREFIX,
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"startup-taint": 5}, "t.yaml: autoscaler: startup-taint: Invalid value: 5: "
         "expected a taint key or a list of taint keys"),
        ({"status-taint": [MAINTENANCE, 1]}, "t.yaml: autoscaler: status-taint: Invalid value: "
         "['example.com/maintenance', 1]: expected a taint key or a list of taint keys"),
        ({"ignore-taint": {"key": AGENT}}, "t.yaml: autoscaler: ignore-taint: Invalid value: "
         "{'key': 'example.com/agent-not-ready'}: expected a taint key or a list of taint keys"),
        ({"startup-taint-prefix": True}, "t.yaml: autoscaler: startup-taint-prefix: Invalid "
         "value: True: expected a taint key prefix or a list of them"),
    ],
    ids=["startup-taint", "status-taint", "ignore-taint", "startup-taint-prefix"],
)  # fmt: skip
def test_a_bad_taint_flag_value_names_the_flag(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError) as err:
        parse_options(data, "t.yaml: autoscaler")
    assert str(err.value) == message


# ------------------------------------------------------------------ readiness


@pytest.mark.parametrize(
    ("flags", "key"),
    [
        ({"startup-taint": AGENT}, AGENT),
        ({"ignore-taint": AGENT}, AGENT),
        ({"startup-taint-prefix": "example.com/agent-"}, AGENT),
    ],
    ids=["startup-taint", "ignore-taint", "startup-taint-prefix"],
)
def test_a_startup_taint_makes_its_node_not_started_then_unready(
    flags: dict[str, str], key: str
) -> None:
    ca = ClusterAutoscaler([group("ng", size=2)])
    ready, starting = (i.node for i in cluster_of(ca).list())
    nodes = [ready, with_taint(starting, key)]
    plain = readiness_of(nodes, NOW, {"ng-1": NOW - MINUTE}, parse_options({}, "t")).total
    assert (plain.ready, plain.not_started) == (["ng-0", "ng-1"], [])
    options = parse_options(flags, "t")
    young = readiness_of(nodes, NOW, {"ng-1": NOW - MINUTE}, options).total
    assert (young.ready, young.not_started, young.unready) == (["ng-0"], ["ng-1"], [])
    old = readiness_of(nodes, NOW, {"ng-1": NOW - 20 * MINUTE}, options).total
    assert (old.ready, old.not_started, old.unready) == (["ng-0"], [], ["ng-1"])


def test_a_status_taint_leaves_its_node_ready() -> None:
    ca = ClusterAutoscaler([group("ng", size=1)])
    (n,) = (i.node for i in cluster_of(ca).list())
    options = parse_options({"status-taint": MAINTENANCE}, "t")
    out = readiness_of([with_taint(n, MAINTENANCE)], NOW, {"ng-0": NOW - MINUTE}, options)
    assert out.total.ready == ["ng-0"]


def test_scale_down_of_unready_nodes_off_keeps_a_node_with_a_startup_taint() -> None:
    # Upstream: the planner sees FilterOutNodesWithStartupTaints' unready copy, so with
    # --scale-down-unready-enabled=false the node is ScaleDownUnreadyDisabled.
    def reasons(flags: dict[str, Any]) -> dict[str, UnremovableReason]:
        options = parse_options({"scale-down-unready-enabled": False, **flags}, "t")
        ca = ClusterAutoscaler([group("ng", size=2)], options)
        first, second = (i.node for i in cluster_of(ca).list())
        out = ca.run_once(0, ClusterState([first, with_taint(second, AGENT)], []), [])
        assert out.scale_down is not None
        return {u.node: u.reason for u in out.scale_down.unremovable}

    assert reasons({})["ng-1"] is UnremovableReason.NotUnneededLongEnough
    assert reasons({"startup-taint": AGENT})["ng-1"] is UnremovableReason.ScaleDownUnreadyDisabled


# ------------------------------------------------------------------ templates


@pytest.mark.parametrize(
    "flags",
    [
        {"startup-taint": AGENT},
        {"ignore-taint": AGENT},
        {"status-taint": AGENT},
        {"startup-taint-prefix": "example.com/"},
    ],
    ids=["startup-taint", "ignore-taint", "status-taint", "startup-taint-prefix"],
)
def test_a_pending_pod_that_does_not_tolerate_a_flagged_taint_still_triggers_a_scale_up(
    flags: dict[str, str],
) -> None:
    taints = [Taint(key=AGENT, effect="NoSchedule"), Taint(key="dedicated", effect="NoSchedule")]

    def scale_up(options: dict[str, str], tolerated: str) -> tuple[str, dict[str, int]]:
        ca = ClusterAutoscaler([group("ng", size=0, taints=taints)], parse_options(options, "t"))
        pod = web(0)
        tolerations = [*pod.spec.tolerations, *_tolerations(tolerated)]
        pod = msgspec.structs.replace(
            pod, spec=msgspec.structs.replace(pod.spec, tolerations=tolerations)
        )
        out = ca.run_once(0, cluster_of(ca), [pod])
        return out.scale_up.result, out.target_sizes

    # Without the flag the template keeps the agent's taint, which the pod does not tolerate.
    assert scale_up({}, "dedicated") == (SCALE_UP_NO_OPTIONS_AVAILABLE, {"ng": 0})
    assert scale_up(flags, "dedicated") == (SCALE_UP_SUCCESSFUL, {"ng": 1})
    # The group's own taint stays in the template.
    assert scale_up(flags, "")[0] == SCALE_UP_NO_OPTIONS_AVAILABLE


def _tolerations(key: str) -> list[Toleration]:
    return [Toleration(key=key, operator="Exists")] if key else []


def test_a_good_node_gives_a_template_without_its_status_taint() -> None:
    ca = ClusterAutoscaler([group("ng", size=1)])
    (n,) = (i.node for i in cluster_of(ca).list())
    info = NodeInfo(_labelled(with_taint(with_taint(n, MAINTENANCE), "dedicated")))

    def template_taints(flags: dict[str, str]) -> list[str]:
        config = parse_options(flags, "t").taint_config
        out = TemplateNodeInfoProvider().process([info], ca.groups, [], 1000.0, {}, config)
        assert out["ng"].node.metadata.labels["extra"] == "real"
        return [t.key for t in out["ng"].node.spec.taints]

    assert template_taints({}) == [MAINTENANCE, "dedicated"]
    assert template_taints({"status-taint": MAINTENANCE}) == ["dedicated"]


def _labelled(node: Node) -> Node:
    labels = {**node.metadata.labels, "extra": "real"}
    return msgspec.structs.replace(
        node, metadata=msgspec.structs.replace(node.metadata, labels=labels)
    )


def test_a_node_with_a_startup_taint_gives_no_template_and_the_group_template_serves() -> None:
    taints = [Taint(key=AGENT, effect="NoSchedule")]
    ca = ClusterAutoscaler([group("ng", size=1, taints=taints)])
    (n,) = (i.node for i in cluster_of(ca).list())
    info = NodeInfo(_labelled(with_taint(n, AGENT)))
    config = parse_options({"startup-taint": AGENT}, "t").taint_config
    out = TemplateNodeInfoProvider().process([info], ca.groups, [], 1000.0, {}, config)
    assert "extra" not in out["ng"].node.metadata.labels  # the group's template
    assert out["ng"].node.spec.taints == []
    plain = TemplateNodeInfoProvider().process([info], ca.groups, [], 1000.0, {})
    assert plain["ng"].node.metadata.labels["extra"] == "real"  # a good node by default
    assert template_node_info(ca.groups["ng"]).node.spec.taints == taints


# ------------------------------------------------------------------ in the simulation


def agent_tainted_group(options: dict[str, Any]) -> dict[str, Any]:
    """One 1-CPU node running web's first replica; the second waits for the ``agent``
    group, whose template carries the agent's startup taint."""
    template = {
        "spec": {"taints": [{"key": AGENT, "effect": "NoSchedule"}]},
        "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"}},
    }
    return {
        "nodeGroups": [
            {"name": "node", "count": 1, "template": {"status": {"capacity": {"cpu": "1"}}}}
        ],
        "autoscaler": {
            "nodeStartupDelay": "0s",
            "clusterAutoscaler": {
                "options": options,
                "nodeGroups": [{"name": "agent", "maxSize": 2, "template": template}],
            },
        },
        "objects": [pinned("web", 2, [], cpu="600m")],
        "timeline": [{"wait": "1m"}],
    }


def test_in_the_simulation_the_startup_taint_flag_gets_the_waiting_pod_a_node() -> None:
    report = run(agent_tainted_group({}))
    assert changes(report, "scaleUp") == []
    (why, *_) = changes(report, "noScaleUp")
    assert "agent: node(s) had untolerated taint(s)" in why["reason"], why
    report = run(agent_tainted_group({"startup-taint": [AGENT]}))
    ((added, node),) = [(c["group"], c["node"]) for c in changes(report, "add")]
    assert added == "agent"
    assert report.steps[-1].pending == {}
    assert node in report.to_json()["steps"][-1]["bound"].values()


def test_the_cli_takes_the_taint_flags_and_exits_2_on_a_bad_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.yaml"
    options = {"startup-taint": AGENT, "status-taint": [MAINTENANCE], "ignore-taint": []}
    path.write_text(yaml.safe_dump(agent_tainted_group(options)))
    code, out, err = cli(["simulate", str(path)], capsys)
    assert code == 0, err
    assert "scale-up: agent 0->1" in out
    path.write_text(yaml.safe_dump(agent_tainted_group({"startup-taint": 5})))
    code, _, err = cli(["simulate", str(path)], capsys)
    assert code == 2 and "Traceback" not in err
    assert (
        f"{path}: autoscaler.clusterAutoscaler.options: startup-taint: Invalid value: 5: "
        "expected a taint key or a list of taint keys" in err
    )
