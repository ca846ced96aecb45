"""Which pending pods Karpenter provisions for (upstream Provisioner.GetPendingPods:
IsProvisionable, then Validate)."""

from __future__ import annotations

from builders import make_pod
from karpenter_helpers import Env
from topospread.api.types import LABEL_HOSTNAME

HOSTNAME_RESTRICTED = (
    "ignoring pod, using label kubernetes.io/hostname is not allowed as it might interfere "
    "with the internal provisioning logic; specify a well known label: "
    "[karpenter.sh/capacity-type karpenter.sh/nodepool kubernetes.io/arch kubernetes.io/os "
    "node.kubernetes.io/instance-type node.kubernetes.io/windows-build "
    "topology.kubernetes.io/region topology.kubernetes.io/zone], or a custom label that "
    "does not use a restricted domain: [karpenter.sh]"
)


def test_a_preempting_pod_is_left_to_its_nominated_node() -> None:
    env = Env()
    result = env.provision(make_pod("p").req(cpu="1").nominated_node("n1").obj())
    assert result.launched == []
    assert result.pod_errors == {}


def test_daemonset_and_static_pods_are_not_provisioned_for() -> None:
    env = Env()
    ds = make_pod("ds").req(cpu="1").owner("DaemonSet", "d").obj()
    static = make_pod("static").req(cpu="1").owner("Node", "n1", api_version="v1").obj()
    result = env.provision(ds, static, make_pod("web").req(cpu="1").obj())
    [launch] = result.launched
    assert launch.pods == ("default/web",)


def test_a_pod_that_refuses_karpenter_nodes_is_ignored_silently() -> None:
    env = Env()
    pod = make_pod("p").req(cpu="1").node_affinity("karpenter.sh/nodepool", "DoesNotExist", [])
    result = env.provision(pod.obj())
    assert result.launched == []
    assert result.pod_errors == {}


def test_a_pod_pinned_to_a_hostname_is_ignored_with_upstreams_error() -> None:
    env = Env()
    result = env.provision(make_pod("p").req(cpu="1").node_selector(LABEL_HOSTNAME, "n1").obj())
    assert result.launched == []
    assert result.pod_errors == {"default/p": HOSTNAME_RESTRICTED}


def test_a_negative_gt_value_is_refused() -> None:
    env = Env()
    pod = make_pod("p").req(cpu="1").node_affinity("team-size", "Gt", ["-1"]).obj()
    result = env.provision(pod)
    assert result.pod_errors == {
        "default/p": "ignoring pod, key team-size with operator Gt must have a single "
        "positive integer value"
    }
