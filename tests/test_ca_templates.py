"""cluster-autoscaler's template of a node group: one of the group's own good nodes while it
has one (sanitized), the last such node after (the cache), the group's cloud template when it
never had one (MixedTemplateNodeInfoProvider, kubernetes-sigs/cluster-autoscaler 33c3f97)."""

from __future__ import annotations

from typing import Any

import msgspec

from test_autoscaler_fidelity import pinned
from test_autoscaling import changes, run
from topospread.api.meta_types import ObjectMeta, OwnerReference
from topospread.api.types import (
    DaemonSet,
    Node,
    NodeCondition,
    NodeSpec,
    NodeStatus,
    Pod,
    PodSpec,
    Taint,
)
from topospread.autoscaler.clusterautoscaler.nodegroup import (
    NODE_GROUP_LABEL,
    TEMPLATE_NODE_LABEL,
    NodeGroup,
    template_node_info,
)
from topospread.autoscaler.clusterautoscaler.nodeinfos import (
    TemplateNodeInfoProvider,
    is_good_template_candidate,
)
from topospread.framework.types import NodeInfo
from topospread.simulator.autoscaling import node_ready_since_times
from topospread.simulator.cluster_autoscaler_loop import ClusterAutoscalerController
from topospread.simulator.controllers.common import format_time
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import parse_timeline
from topospread.simulator.timeline_steps.waiting import advance

GROUP = NodeGroup(
    "ng",
    0,
    5,
    1,
    labels={"node.kubernetes.io/instance-type": "m5.large", "tier": "web"},
    capacity={"cpu": "2", "memory": "8Gi", "pods": "110"},
    zones=("zone-a",),
)


def node(name: str, *, labels: dict[str, str] | None = None, **spec: Any) -> Node:
    return Node(
        metadata=ObjectMeta(name=name, labels={NODE_GROUP_LABEL: "ng", **(labels or {})}),
        spec=NodeSpec(**spec),
        status=NodeStatus(capacity={"cpu": "4"}, allocatable={"cpu": "4"}),
    )


def pod(name: str, *, owner: str = "", annotations: dict[str, str] | None = None) -> Pod:
    refs = [OwnerReference(kind=owner, name="agent", controller=True)] if owner else []
    return Pod(
        metadata=ObjectMeta(
            name=name, namespace="kube-system", owner_references=refs, annotations=annotations or {}
        ),
        spec=PodSpec(node_name="n-1"),
    )


def daemonset(name: str) -> DaemonSet:
    return msgspec.convert(
        {
            "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "c", "image": "agent:1"}]},
                },
            },
        },
        DaemonSet,
    )


def test_a_good_node_of_the_group_is_its_template_sanitized() -> None:
    real = node(
        "n-1",
        labels={"extra": "yes"},
        taints=[
            Taint(key="dedicated", value="web", effect="NoSchedule"),
            Taint(key="DeletionCandidateOfClusterAutoscaler", effect="PreferNoSchedule"),
        ],
    )
    info = NodeInfo(real)
    info.add_pod(pod("agent-x", owner="DaemonSet"))
    info.add_pod(pod("kube-proxy", annotations={"kubernetes.io/config.mirror": "abc"}))
    info.add_pod(pod("web-1", owner="ReplicaSet"))
    gone = pod("agent-y", owner="DaemonSet")
    deleted = msgspec.structs.replace(gone.metadata, deletion_timestamp="2026-01-01T00:00:00Z")
    gone = msgspec.structs.replace(gone, metadata=deleted)
    info.add_pod(gone)
    templates = TemplateNodeInfoProvider().process(
        [info], {"ng": GROUP}, [daemonset("not-yet-there")], now=1000.0, ready_since={}
    )
    t = templates["ng"]
    name = t.node.metadata.name
    assert name.startswith("template-node-for-ng-")
    labels = t.node.metadata.labels
    # The real node's labels (not the group's), the hostname following the template's name.
    assert labels["extra"] == "yes" and "tier" not in labels
    assert labels["kubernetes.io/hostname"] == name and labels[TEMPLATE_NODE_LABEL] == "true"
    assert t.node.status.allocatable == {"cpu": "4"}
    assert [x.key for x in t.node.spec.taints] == ["dedicated"]
    # Its DaemonSet and mirror pods, renamed and bound to the template; no DaemonSet forced.
    suffix = name.rsplit("-", 1)[1]
    assert [p.metadata.name for p in t.pods] == [f"agent-x-{suffix}", f"kube-proxy-{suffix}"]
    assert {p.spec.node_name for p in t.pods} == {name}


def test_the_cloud_template_gets_the_deprecated_labels_and_the_template_label() -> None:
    labels = template_node_info(GROUP).node.metadata.labels
    assert labels["beta.kubernetes.io/instance-type"] == "m5.large"
    assert labels["failure-domain.beta.kubernetes.io/zone"] == "zone-a"
    assert labels[TEMPLATE_NODE_LABEL] == "true"


def test_without_a_good_node_the_group_template_serves_then_the_cache_keeps_the_last() -> None:
    provider = TemplateNodeInfoProvider()
    young = NodeInfo(node("n-1", labels={"extra": "yes"}))
    # Ready 30 s ago: not stable for a minute yet.
    first = provider.process([young], {"ng": GROUP}, [], now=100.0, ready_since={"n-1": 70.0})
    assert first["ng"].node.metadata.labels["tier"] == "web"
    second = provider.process([young], {"ng": GROUP}, [], now=131.0, ready_since={"n-1": 70.0})
    assert second["ng"].node.metadata.labels["extra"] == "yes"
    # The node goes NotReady: the template it gave stays.
    not_ready = Taint(key="node.kubernetes.io/not-ready", effect="NoExecute")
    lost = node("n-1", labels={"extra": "yes"}, taints=[not_ready])
    third = provider.process([NodeInfo(lost)], {"ng": GROUP}, [], now=200.0, ready_since={})
    assert third["ng"].node.metadata.labels["extra"] == "yes"
    assert third["ng"] is not second["ng"]  # a copy each loop
    # A group the cloud no longer has leaves the cache.
    provider.process([], {}, [], now=300.0, ready_since={})
    assert provider.cache == {}


def test_unschedulable_deleted_or_starting_nodes_are_no_good_template() -> None:
    assert is_good_template_candidate(node("a"), 100.0, None)
    assert not is_good_template_candidate(node("a", unschedulable=True), 100.0, None)
    startup = "startup-taint.cluster-autoscaler.kubernetes.io/gpu"
    for key in ("ToBeDeletedByClusterAutoscaler", startup):
        assert not is_good_template_candidate(
            node("a", taints=[Taint(key=key, effect="NoSchedule")]), 100.0, None
        )
    not_ready = msgspec.structs.replace(
        node("a"), status=NodeStatus(conditions=[NodeCondition(type="Ready", status="False")])
    )
    assert not is_good_template_candidate(not_ready, 100.0, None)
    assert not is_good_template_candidate(node("a"), 100.0, 40.0)  # Ready exactly a minute
    assert is_good_template_candidate(node("a"), 100.0, 39.0)


def test_nodes_are_taken_in_natural_name_order() -> None:
    infos = [NodeInfo(node(f"n-{i}", labels={"i": str(i)})) for i in (10, 2, 3)]
    templates = TemplateNodeInfoProvider().process(infos, {"ng": GROUP}, [], 1000.0, {})
    assert templates["ng"].node.metadata.labels["i"] == "2"


def tainted_group(taint_step: bool) -> dict[str, Any]:
    """node-1 (1 CPU) runs web's first replica; the second does not fit and waits. With
    ``taint_step`` node-1 was tainted ``dedicated=db:NoSchedule`` first."""
    timeline: list[Any] = [{"wait": "1m"}]
    if taint_step:
        taint = {"node": "node-1", "key": "dedicated", "value": "db", "effect": "NoSchedule"}
        timeline.append({"taint": taint})
    timeline += [{"scale": {"workload": "deployment/web", "replicas": 2}}, {"wait": "2m"}]
    return {
        "nodeGroups": [
            {"name": "node", "count": 1, "template": {"status": {"capacity": {"cpu": "1"}}}}
        ],
        "autoscaler": {
            "nodeStartupDelay": "0s",
            "clusterAutoscaler": {
                "nodeGroups": [{"nodeGroup": "node", "minSize": 0, "maxSize": 3}]
            },
        },
        "objects": [pinned("web", 1, [], cpu="600m")],
        "timeline": timeline,
    }


def test_the_group_scales_up_from_its_untainted_node() -> None:
    report = run(tainted_group(taint_step=False))
    assert [c["time"] for c in changes(report, "scaleUp")] == [70.0]
    assert report.steps[-1].pending == {}


def test_a_taint_put_on_the_groups_nodes_is_in_its_template_and_stops_the_scale_up() -> None:
    # Upstream builds the template from node-1 itself, taint included (SanitizeTaints keeps a
    # user's taint): the pending pod does not tolerate it, so no node of the group would help
    # it, though the cloud would make one without the taint.
    report = run(tainted_group(taint_step=True))
    assert changes(report, "scaleUp") == []
    (why, *_) = changes(report, "noScaleUp")
    assert "node(s) had untolerated taint(s)" in why["reason"], why
    assert len(report.steps[-1].pending) == 1


def test_a_new_node_serves_as_template_once_it_has_been_ready_for_a_minute() -> None:
    second = 1_000_000_000
    doc = tainted_group(taint_step=False)
    doc["nodeGroups"][0]["count"] = 0
    doc["autoscaler"]["nodeStartupDelay"] = "1m"
    doc["timeline"] = []
    sim = Simulation(parse_timeline(doc, "t.yaml"))
    sim.settle("t.yaml")
    auto = sim.autoscaler
    assert isinstance(auto, ClusterAutoscalerController)
    advance(sim, 100 * second, "t.yaml")
    # Added at 10s, NotReady until its kubelet is up at 1m10s: the Ready condition's
    # lastTransitionTime is then.
    (name,) = [info.name for info in sim.cluster.list()]
    ready = next(c for c in sim.node(name, "t.yaml").status.conditions if c.type == "Ready")
    assert (ready.status, ready.last_transition_time) == (
        "True",
        format_time(sim.epoch + 70 * second),
    )
    assert node_ready_since_times(sim) == {name: 70.0}
    assert auto.model.templates.cache == {}  # the loops at 1m20s and 1m30s: too young
    advance(sim, 140 * second, "t.yaml")
    cached = auto.model.templates.cache["node"]
    assert cached.node.metadata.labels["kubernetes.io/hostname"].startswith("template-node-for-")
