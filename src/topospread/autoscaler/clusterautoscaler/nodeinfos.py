"""The template NodeInfo of each node group: built from one of the group's own nodes while it
has a good one, otherwise from the last good one seen (a cache), otherwise from the group's
template (the cloud provider's).

A good node is Ready (no not-ready condition or taint), Ready for more than a minute,
schedulable and not being deleted by cluster-autoscaler. Its template is a sanitized copy: a
template name, the hostname label following it, the taints a template drops gone, the
``cluster-autoscaler.kubernetes.io/template-node`` label set, and of its pods only the mirror
and DaemonSet pods not being deleted, renamed. The nodes are looked at in natural name order,
where upstream's order is its node lister's.

Upstream: MixedTemplateNodeInfoProvider.Process and isNodeGoodTemplateCandidate
(processors/nodeinfosprovider/mixed_nodeinfos_processor.go),
SanitizedTemplateNodeInfoFromNodeInfo (simulator/node_info_utils.go)
(kubernetes-sigs/cluster-autoscaler 33c3f97)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import msgspec

from topospread.api.types import LABEL_HOSTNAME, DaemonSet, Node, Pod
from topospread.autoscaler.clusterautoscaler.clusterstate import is_node_ready
from topospread.autoscaler.clusterautoscaler.drainability import is_daemonset_pod, is_mirror_pod
from topospread.autoscaler.clusterautoscaler.nodegroup import (
    TEMPLATE_NODE_LABEL,
    NodeGroup,
    node_group_of,
    template_node_info,
    template_node_name,
    with_node_name,
)
from topospread.autoscaler.clusterautoscaler.taints import (
    DEFAULT_TAINT_CONFIG,
    TO_BE_DELETED_TAINT,
    TaintConfig,
    sanitize_taints,
)
from topospread.framework.types import NodeInfo
from topospread.util.natural import natural_key

# A node Ready for less than this is no good template yet. Upstream: stabilizationDelay
STABILIZATION_DELAY: Final = 60.0


def is_good_template_candidate(
    node: Node,
    now: float,
    ready_since: float | None,
    taint_config: TaintConfig = DEFAULT_TAINT_CONFIG,
) -> bool:
    """Ready (one of ``taint_config``'s startup taints makes it not ready), Ready for more than
    a minute (``ready_since``: when its readiness last changed, seconds on the autoscaler's
    clock; None: long ago), schedulable, and not tainted ToBeDeleted.
    Upstream: isNodeGoodTemplateCandidate (on the nodes FilterOutNodesWithStartupTaints made)"""
    stable = ready_since is None or ready_since + STABILIZATION_DELAY < now
    return (
        is_node_ready(node, taint_config)
        and stable
        and not node.spec.unschedulable
        and not any(t.key == TO_BE_DELETED_TAINT for t in node.spec.taints)
    )


def _template_node(node: Node, name: str, taint_config: TaintConfig) -> Node:
    """The example node sanitized: renamed (its hostname label too), the taints a template
    drops gone, marked a template. Upstream: createSanitizedNode"""
    labels = {**node.metadata.labels, LABEL_HOSTNAME: name, TEMPLATE_NODE_LABEL: "true"}
    meta = msgspec.structs.replace(node.metadata, name=name, labels=labels, uid="")
    taints = sanitize_taints(node.spec.taints, taint_config)
    spec = msgspec.structs.replace(node.spec, taints=taints)
    return msgspec.structs.replace(node, metadata=meta, spec=spec)


def template_from_node(
    info: NodeInfo, group: NodeGroup, taint_config: TaintConfig = DEFAULT_TAINT_CONFIG
) -> NodeInfo:
    """The template a group's own node gives: the node sanitized, with its mirror and
    DaemonSet pods that are not being deleted (no DaemonSet is forced onto it: --force-ds is
    off). Upstream: SanitizedTemplateNodeInfoFromNodeInfo (forceDaemonSets false)"""
    name = template_node_name(group)
    suffix = name.rsplit("-", 1)[1]
    out = NodeInfo(_template_node(info.node, name, taint_config))
    for pod in info.pods:
        if pod.metadata.deletion_timestamp is not None:
            continue
        if is_mirror_pod(pod) or is_daemonset_pod(pod):
            out.add_pod(_renamed(pod, name, suffix))
    return out


def _renamed(pod: Pod, node_name: str, suffix: str) -> Pod:
    """A pod of the example node as the template's: its name suffixed as the template node's
    name is, bound to it. Upstream: createSanitizedPod"""
    meta = msgspec.structs.replace(pod.metadata, name=f"{pod.metadata.name}-{suffix}", uid="")
    return with_node_name(msgspec.structs.replace(pod, metadata=meta), node_name)


@dataclass(slots=True)
class TemplateNodeInfoProvider:
    """The templates, remembered per group from its last good node (the cache never expires
    within a run: --node-info-cache-expire-time is ten years by default)."""

    cache: dict[str, NodeInfo] = field(default_factory=dict)
    # The last node list seen and its nodes in name order: the cluster makes a new list only
    # when a node changes, so most loops sort nothing.
    _order: tuple[Sequence[NodeInfo] | None, list[NodeInfo]] = (None, [])

    def process(
        self,
        infos: Sequence[NodeInfo],
        groups: Mapping[str, NodeGroup],
        daemonsets: Sequence[DaemonSet],
        now: float,
        ready_since: Mapping[str, float],
        taint_config: TaintConfig = DEFAULT_TAINT_CONFIG,
    ) -> dict[str, NodeInfo]:
        """Each group's template this loop, its taints sanitized by ``taint_config``.
        Upstream: MixedTemplateNodeInfoProvider.Process"""
        result: dict[str, NodeInfo] = {}
        bad: list[NodeInfo] = []
        seen, ordered = self._order
        if seen is not infos:
            ordered = sorted(infos, key=lambda i: natural_key(i.name))
            self._order = (infos, ordered)
        for info in ordered:
            since = ready_since.get(info.name)
            if not is_good_template_candidate(info.node, now, since, taint_config):
                bad.append(info)
                continue
            of = node_group_of(info.node)
            if of in groups and of not in result:
                template = template_from_node(info, groups[of], taint_config)
                self.cache[of] = template
                result[of] = NodeInfo(template.node, list(template.pods))
        for name, group in groups.items():
            if name in result:
                continue
            cached = self.cache.get(name)
            result[name] = (
                NodeInfo(cached.node, list(cached.pods))  # a copy: callers may add pods
                if cached is not None
                else template_node_info(group, daemonsets, taint_config=taint_config)
            )
        for gone in [g for g in self.cache if g not in groups]:
            del self.cache[gone]
        # The last resort, unready or unschedulable nodes, serves only a group the cloud gives
        # no template for: every group here has one.
        return result


__all__ = [
    "STABILIZATION_DELAY",
    "TEMPLATE_NODE_LABEL",
    "TemplateNodeInfoProvider",
    "is_good_template_candidate",
    "template_from_node",
]
