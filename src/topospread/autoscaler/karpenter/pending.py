"""Which pending pods Karpenter's provisioner takes into a batch, and which it ignores.

The provisioner lists the pods kube-scheduler could not place and keeps those it may provision
for: not bound, not preempting (a nominated node waits for them), not a DaemonSet's or a
static pod. It then ignores, with an error, pods whose node selector or required node affinity
uses a label Karpenter reserves (``kubernetes.io/hostname``, the ``karpenter.sh`` domain other
than its well-known labels), a ``matchFields`` term, or a ``Gt``/``Lt`` value that is not a
positive integer; and silently those that ask not to run on Karpenter's nodes
(``karpenter.sh/nodepool DoesNotExist``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from topospread.api.types import NodeSelectorRequirement, Pod
from topospread.autoscaler.karpenter.requirements import (
    NODEPOOL_LABEL,
    RESTRICTED_LABELS,
    UPSTREAM_WELL_KNOWN_LABELS,
    normalized_key,
    pod_requirements,
)

# Upstream: v1.RestrictedLabelDomains (pkg/apis/v1/labels.go).
RESTRICTED_LABEL_DOMAINS: Final = ("karpenter.sh",)
_GO_INT: Final = re.compile(r"[+-]?[0-9]+")  # what strconv.Atoi parses
MANAGED_LABEL_DOES_NOT_EXIST: Final = "configured to not run on a Karpenter provisioned node"


def _owned_by(pod: Pod, api_version: str, kind: str) -> bool:
    return any(
        r.api_version == api_version and r.kind == kind for r in pod.metadata.owner_references
    )


def provisionable(pod: Pod) -> bool:
    """Whether the provisioner takes the pod: unbound, not preempting, not a DaemonSet's or a
    static (Node-owned) pod. The caller passes only pods kube-scheduler failed to place.
    Upstream: IsProvisionable (pkg/utils/pod/scheduling.go)"""
    return not (
        pod.spec.node_name
        or pod.status.nominated_node_name
        or _owned_by(pod, "apps/v1", "DaemonSet")
        or _owned_by(pod, "v1", "Node")
    )


def _go_list(values: Iterable[str]) -> str:
    return "[" + " ".join(values) + "]"


def _restricted(key: str) -> str:
    """Upstream: IsRestrictedLabel (pkg/apis/v1/labels.go)"""
    if key in UPSTREAM_WELL_KNOWN_LABELS:
        return ""
    domain = key.split("/", 1)[0] if "/" in key else ""
    restricted = any(domain == d or domain.endswith("." + d) for d in RESTRICTED_LABEL_DOMAINS)
    if not restricted and key not in RESTRICTED_LABELS:
        return ""
    return (
        f"using label {key} is not allowed as it might interfere with the internal "
        f"provisioning logic; specify a well known label: "
        f"{_go_list(sorted(UPSTREAM_WELL_KNOWN_LABELS))}, or a custom label that does not use a "
        f"restricted domain: {_go_list(sorted(RESTRICTED_LABEL_DOMAINS))}"
    )


def _requirement_errors(key: str, operator: str, values: Iterable[str]) -> list[str]:
    """Upstream: ValidateRequirement (pkg/apis/v1/nodeclaim_validation.go), for what the API
    server does not already refuse in a pod."""
    key = normalized_key(key)
    values = list(values)
    errors = []
    if why := _restricted(key):
        errors.append(why)
    if operator in ("Gt", "Lt"):
        positive = len(values) == 1 and _GO_INT.fullmatch(values[0]) and int(values[0]) >= 0
        if not positive:
            errors.append(
                f"key {key} with operator {operator} must have a single positive integer value"
            )
    return errors


def _term_errors(match_fields: bool, expressions: Iterable[NodeSelectorRequirement]) -> list[str]:
    errors = ["node selector term with matchFields is not supported"] if match_fields else []
    for r in expressions:
        errors += _requirement_errors(r.key, r.operator, r.values)
    return errors


def ignored(pod: Pod) -> tuple[bool, str]:
    """Whether the provisioner ignores the pod, and the error it reports ("" when it reports
    none: the pod asks not to run on Karpenter's nodes).
    Upstream: Provisioner.Validate and GetPendingPods ("ignoring pod, ...")"""
    errors = []
    managed_excluded = any(
        r.key == NODEPOOL_LABEL and r.operator == "DoesNotExist"
        for r in pod_requirements(pod).values()
    )
    if managed_excluded:
        errors.append(MANAGED_LABEL_DOES_NOT_EXIST)
    # Go ranges over the node selector map in random order: sorted here.
    for key in sorted(pod.spec.node_selector):
        errors += _requirement_errors(key, "In", [pod.spec.node_selector[key]])
    affinity = pod.spec.affinity
    na = affinity.node_affinity if affinity is not None else None
    required = na.required_during_scheduling_ignored_during_execution if na else None
    if required is not None:
        for term in required.node_selector_terms:
            errors += _term_errors(bool(term.match_fields), term.match_expressions)
    if not errors:
        return False, ""
    if managed_excluded:
        return True, ""
    return True, "ignoring pod, " + "; ".join(errors)


__all__ = ["ignored", "provisionable"]
