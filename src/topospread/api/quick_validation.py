"""Yes/no forms of ``validate_pod``'s and ``validate_node``'s checks, for the common case of a
valid object: a cluster's thousands of pods and nodes are valid, and finding that builds no
field path and no message.

NOTE: each function here is True only when the check it names finds no error, by testing the
very conditions under which that check reports one (tests/test_quick_validation.py holds each
beside its check). Whenever one is False, the caller runs the full check, which finds the
errors, their messages and their order; so these decide only how fast an object is found valid.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from topospread.api.affinity_validation import OBJECT_NAME_FIELD
from topospread.api.annotation_validation import MIRROR_POD
from topospread.api.meta_validation import (
    TOTAL_ANNOTATION_SIZE_LIMIT_B,
    name_is_valid_dns_subdomain,
)
from topospread.api.taint_validation import SUPPORTED_TAINT_EFFECTS
from topospread.api.types import (
    Container,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodSpec,
    Taint,
)
from topospread.api.volume_validation import volumes_valid
from topospread.util.net import parse_cidr_sloppy
from topospread.util.validation import (
    Remembered,
    valid_dns1123_label,
    valid_dns1123_subdomain,
    valid_label_value,
    valid_qualified_name,
)

# strings.TrimSpace's white space (unicode.IsSpace).
GO_SPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

# Values that recur from object to object (pod names, node hostname labels, do not).
_recurring_label_value: Final = Remembered(valid_label_value)
_recurring_namespace: Final = Remembered(valid_dns1123_label)
_recurring_node_name: Final = Remembered(valid_dns1123_subdomain)
_recurring_subdomain: Final = Remembered(valid_dns1123_label)


def _valid_generate_name(prefix: str) -> bool:
    return name_is_valid_dns_subdomain(prefix, True)


_recurring_generate_name: Final = Remembered(_valid_generate_name)
_LABEL_KEYS: Final = valid_qualified_name.known
_LABEL_VALUES: Final = _recurring_label_value.known
_NAMESPACES: Final = _recurring_namespace.known
_NODE_NAMES: Final = _recurring_node_name.known
_SUBDOMAINS: Final = _recurring_subdomain.known
_GENERATE_NAMES: Final = _recurring_generate_name.known


def labels_valid(labels: Mapping[str, str]) -> bool:
    """Whether ``validate_labels(labels, ...)`` is empty."""
    for key, value in labels.items():
        if (key in _LABEL_KEYS or valid_qualified_name(key)) and (
            value in _LABEL_VALUES or _recurring_label_value(value)
        ):
            continue
        return False
    return True


def annotations_valid(annotations: Mapping[str, str]) -> bool:
    """Whether ``validate_annotations(annotations, ...)`` is empty."""
    if not annotations:
        return True
    for key in annotations:
        if not valid_qualified_name(key.lower()):
            return False
    total = sum(len(k.encode()) + len(v.encode()) for k, v in annotations.items())
    return total <= TOTAL_ANNOTATION_SIZE_LIMIT_B


def taints_valid(taints: Sequence[Taint]) -> bool:
    """Whether ``validate_taints(taints, ...)`` is empty: valid keys and values, a supported
    effect, no two alike in key and effect."""
    seen: set[tuple[str, str]] = set()
    for taint in taints:
        if (
            not valid_qualified_name(taint.key)
            or not _recurring_label_value(taint.value)
            or taint.effect not in SUPPORTED_TAINT_EFFECTS
            or (taint.key, taint.effect) in seen
        ):
            return False
        seen.add((taint.key, taint.effect))
    return True


def _requirement_valid(req: NodeSelectorRequirement, *, any_value: bool) -> bool:
    """Whether ``validate_node_selector_requirement(req, ..., allow_invalid_label_value=
    any_value)`` is empty."""
    operator, values = req.operator, req.values
    if operator in ("In", "NotIn"):
        if not values:
            return False
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            return False
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            return False
    else:
        return False
    if not valid_qualified_name(req.key):
        return False
    return any_value or all(_recurring_label_value(value) for value in values)


def _field_requirement_valid(req: NodeSelectorRequirement) -> bool:
    """Whether ``validate_node_field_selector_requirement(req, ...)`` is empty."""
    return (
        req.operator in ("In", "NotIn")
        and len(req.values) == 1
        and req.key == OBJECT_NAME_FIELD
        and (req.values[0] in _NODE_NAMES or _recurring_node_name(req.values[0]))
    )


def _term_valid(term: NodeSelectorTerm, *, any_value: bool) -> bool:
    """Whether ``validate_node_selector_term(term, ..., allow_invalid_label_value=any_value)``
    is empty."""
    for req in term.match_expressions:
        if not _requirement_valid(req, any_value=any_value):
            return False
    for req in term.match_fields:
        if not _field_requirement_valid(req):
            return False
    return True


def node_affinity_valid(affinity: NodeAffinity) -> bool:
    """Whether ``validate_node_affinity(affinity, ...)`` is empty: required terms (at least
    one) with valid requirements, preferred ones with weights 1 to 100 (any label value)."""
    required = affinity.required_during_scheduling_ignored_during_execution
    preferred_terms = affinity.preferred_during_scheduling_ignored_during_execution
    if required is not None:
        terms = required.node_selector_terms
        if not terms:
            return False
        if len(terms) == 1 and not preferred_terms:  # a DaemonSet pod's: one term, its node
            term = terms[0]
            if not term.match_expressions and len(term.match_fields) == 1:
                return _field_requirement_valid(term.match_fields[0])
        for term in terms:
            if not _term_valid(term, any_value=False):
                return False
    for preferred in preferred_terms:
        if not 0 < preferred.weight <= 100 or not _term_valid(preferred.preference, any_value=True):
            return False
    return True


def images_trimmed(containers: Sequence[Container]) -> bool:
    """Whether no image starts or ends with white space (``_images_only_for_pod``'s check)."""
    for container in containers:
        if container.image != container.image.strip(GO_SPACE):
            return False
    return True


def pod_valid(pod: Pod, spec_errors_found: bool, *, from_template: bool) -> bool:
    """Whether ``validate_pod`` finds nothing wrong with ``pod``, given whether
    ``pod_spec_errors`` found anything: ``pod_fields_valid``, and (for a pod, not a
    template) trimmed images."""
    if spec_errors_found or not pod_fields_valid(pod, from_template=from_template):
        return False
    spec = pod.spec
    return from_template or (
        images_trimmed(spec.containers) and images_trimmed(spec.init_containers)
    )


def pod_fields_valid(pod: Pod, *, from_template: bool = False) -> bool:
    """Whether the fields ``validate_pod`` checks for each pod (not with ``pod_spec_errors``,
    nor its images) are valid: a name (not one to generate) and generateName that are DNS
    subdomains, a namespace that is a DNS label, valid volumes (``volumes_valid``; for a
    template, without the pod's name), valid node affinity, a nodeName that is a DNS subdomain
    and no scheduling gates beside it, and none missing for a mirror pod, a hostname and a
    subdomain that are DNS labels when given."""
    meta = pod.metadata
    name = meta.name
    if not name or not valid_dns1123_subdomain(name):
        return False
    generate_name = meta.generate_name
    if (
        generate_name
        and generate_name not in _GENERATE_NAMES
        and not _recurring_generate_name(generate_name)
    ):
        return False
    namespace = meta.namespace
    if namespace not in _NAMESPACES and not _recurring_namespace(namespace):
        return False  # an empty one too: it is not a DNS label
    spec = pod.spec
    if spec.volumes and not volumes_valid(spec.volumes, "" if from_template else name):
        return False
    affinity = spec.affinity
    if (
        affinity is not None
        and affinity.node_affinity is not None
        and not node_affinity_valid(affinity.node_affinity)
    ):
        return False
    # A StatefulSet's pods each have their own hostname (not remembered); their subdomain is
    # the set's Service's.
    hostname, subdomain = spec.hostname, spec.subdomain
    if hostname and not valid_dns1123_label(hostname):
        return False
    if subdomain and subdomain not in _SUBDOMAINS and not _recurring_subdomain(subdomain):
        return False
    node_name = spec.node_name
    if not node_name and (MIRROR_POD in meta.annotations or refuses_ephemeral_containers(spec)):
        return False
    return not node_name or (
        not spec.scheduling_gates and (node_name in _NODE_NAMES or _recurring_node_name(node_name))
    )


def refuses_ephemeral_containers(spec: PodSpec) -> bool:
    """Whether ValidatePodCreate refuses the pod for its ephemeral containers: it has some and
    is not bound to a node.

    NOTE: a bound pod is one read back from a cluster (``kubectl get``, a cluster dump, a live
    cluster), not one created as written: its ephemeral containers came after it was created,
    through the ``ephemeralcontainers`` subresource (``kubectl debug``), which the API server
    allows on a running pod. Refusing them refused every dump taken after a ``kubectl debug``.
    The one pod read more loosely than the server would is a manifest written with both a
    nodeName and ephemeral containers.
    """
    return bool(spec.ephemeral_containers) and not spec.node_name


def node_meta_and_taints_valid(node: Node) -> bool:
    """Whether ``validate_node`` finds nothing wrong with the node's metadata and taints (its
    resources are checked apart): a name and generateName that are DNS subdomains, no
    namespace, valid labels and annotations, valid taints."""
    meta = node.metadata
    if not meta.name or not valid_dns1123_subdomain(meta.name) or meta.namespace:
        return False
    if meta.generate_name and not _recurring_generate_name(meta.generate_name):
        return False
    return (
        labels_valid(meta.labels)
        and annotations_valid(meta.annotations)
        and taints_valid(node.spec.taints)
    )


def pod_cidrs_valid(cidrs: Sequence[str]) -> bool:
    """Whether ``validate_pod_cidrs(cidrs)`` is empty: each entry read by the sloppy CIDR
    parser, and more than one a pair of one IPv4 and one IPv6 value."""
    families = set()
    for value in cidrs:
        net = parse_cidr_sloppy(value)
        if net is None:
            return False
        families.add(net.family)
    return len(cidrs) == 1 or (len(cidrs) == 2 and len(families) == 2)
