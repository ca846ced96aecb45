"""What kube-apiserver v1.35 and kube-scheduler v1.35 reject, with their messages and field paths.

Covers the parts of ``ValidatePodCreate`` that the scheduler's inputs depend on (metadata, node
selector, affinity, scheduling gates, topology spread constraints, node name, tolerations,
priority class and preemption policy), and its security profiles and ephemeral containers (and
ValidatePodTemplateSpec's, for a template), ``ValidateNode``'s metadata, taints, resources and pod
CIDRs, and the scheduler's ``ValidatePodTopologySpreadArgs``. Every check runs with the v1.35
default feature gates and the options of a create (no old object to be lenient with).

Go iterates maps in random order; label maps are checked here in sorted key order, so the
errors come out in a stable order (upstream's order among them varies from run to run).

This module holds the pod and the node as wholes (pkg/apis/core/validation's ValidatePodCreate,
ValidatePodSpec, ValidateNode); their parts are in modules of their own, by concept: object
metadata and labels (``meta_validation.py``), topology spread constraints and the scheduler's
PodTopologySpreadArgs (``spread_validation.py``), node selectors and affinity
(``affinity_validation.py``), taints and tolerations (``taint_validation.py``), resources
(``resource_validation.py``), containers' ports (``port_validation.py``), a node's pod CIDRs
(``cidr_validation.py``), seccomp and AppArmor profiles (``security_validation.py``),
ValidatePodCreate's and ValidatePodTemplateSpec's own checks and the ephemeral containers'
(``create_validation.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec

from topospread.api.admission import prepare_for_create
from topospread.api.affinity_validation import validate_affinity, validate_node_affinity
from topospread.api.annotation_validation import (
    ApiServerPanic,
    mirror_pod_errors,
    node_annotations_valid,
    pod_annotation_errors,
    validate_node_annotations,
)
from topospread.api.cidr_validation import node_pod_cidrs, validate_pod_cidrs
from topospread.api.create_validation import (
    PADDED_IMAGE,
    create_only_errors,
    ephemeral_container_errors,
    name_and_image_errors,
)
from topospread.api.field import (
    FieldError,
    GoJSON,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from topospread.api.meta_validation import (
    generate_name,
    name_is_dns_subdomain,
    validate_annotations,
    validate_labels,
    validate_object_meta,
)
from topospread.api.port_validation import (
    container_port_errors,
    host_port_conflicts,
    init_container_host_port_conflicts,
)
from topospread.api.quick_validation import (
    GO_SPACE,
    node_meta_and_taints_valid,
    pod_cidrs_valid,
    pod_valid,
    refuses_ephemeral_containers,
)
from topospread.api.resource_validation import (
    validate_node_resources,
    validate_overhead,
    validate_resource_requirements,
)
from topospread.api.security_validation import (
    container_security_context_errors,
    os_errors,
    pod_security_context_errors,
)
from topospread.api.spread_validation import validate_topology_spread_constraints
from topospread.api.taint_validation import validate_taints, validate_tolerations
from topospread.api.types import (
    Node,
    Pod,
    PodSchedulingGate,
    PodSpec,
)
from topospread.api.volume_validation import validate_volumes
from topospread.util.validation import (
    is_dns1123_label,
    is_qualified_name,
)

RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")
PREEMPT_LOWER_PRIORITY: Final = "PreemptLowerPriority"
PREEMPT_NEVER: Final = "Never"


# ---------------------------------------------------------------------------------------------
# Pods and nodes


def _validate_scheduling_gates(gates: Sequence[PodSchedulingGate], path: Path) -> list[FieldError]:
    """Upstream: validateSchedulingGates (pkg/apis/core/validation/validation.go, v1.35)"""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, gate in enumerate(gates):
        errs.extend(invalid(path.index(i), gate.name, m) for m in is_qualified_name(gate.name))
        if gate.name in seen:
            errs.append(duplicate(path.index(i), gate.name))
        seen.add(gate.name)
    return errs


def validate_pod(
    pod: Pod,
    *,
    allow_toleration_comparison_operators: bool = False,
    match_label_keys_selector_merge: bool = True,
    spec_errors: PodSpecErrors | None = None,
    from_template: bool = False,
) -> list[FieldError]:
    """What ``kubectl create`` of this pod would be refused for, on the fields the scheduler reads.

    The pod is first prepared as the API server prepares a new pod: a name is generated from
    ``generateName`` when ``name`` is empty, and ``matchLabelKeys`` of topology spread
    constraints and pod (anti)affinity terms are merged into their selectors (a pod read back
    from a cluster is already merged and stays as it is). The namespace is not defaulted: the
    API server takes it from the request, so give manifests one.

    Checked, in upstream's order: metadata (name, generateName, namespace, labels, annotation
    keys); the pod-specific annotations (``annotation_validation.py``: mirror pod,
    tolerations, deletion cost, seccomp, AppArmor); ``spec.volumes`` (``volume_validation.py``:
    one source each, names, claim names, the claims of ephemeral volumes, the latter only for
    a pod: a template has no pod name to check them with; ``volume_source_validation.py``:
    each source's own fields); a container at least, and containers' and init containers'
    names, images, ports (``port_validation.py``: each port's name, numbers and protocol,
    then the host ports repeated across the containers, or within an init container),
    resources and seccomp and AppArmor profiles; the ephemeral containers' names,
    images and profiles; the pod-level resources (``spec.resources``); the host network's
    ports; ``spec.restartPolicy``; ``spec.nodeSelector``; the pod-level profiles;
    ``spec.affinity``; ``spec.schedulingGates``; ``spec.topologySpreadConstraints``;
    ``spec.nodeName``; ``spec.hostname`` and ``spec.subdomain`` (each pod's own);
    ``spec.tolerations``; ``spec.priorityClassName``;
    ``spec.preemptionPolicy``; overhead; ``spec.os``; then, for a pod, that it has no
    ephemeral containers unless it is bound (``refuses_ephemeral_containers``), that
    ``spec.nodeName`` is not set while scheduling gates remain, and
    that the seccomp and AppArmor annotations agree with their fields (after the AppArmor ones
    are copied into the containers' empty fields); for a template, the annotations against the
    fields as written, and no ephemeral containers (``create_validation.py``). The rest of the
    containers and the spec is not checked. Every container needs an image; a pod's (not a
    template's: ``from_template``) may not start or end with whitespace.

    ``spec_errors``: what ``pod_spec_errors`` returns for this pod with the same switches, when
    the caller has it already (admission keeps it per template).

    Upstream: ValidatePodCreate (pkg/apis/core/validation/validation.go, v1.35)
    """
    if spec_errors is None:
        # Reads neither the name nor generateName: the same before a name is generated.
        spec_errors = pod_spec_errors(
            pod,
            allow_toleration_comparison_operators=allow_toleration_comparison_operators,
            match_label_keys_selector_merge=match_label_keys_selector_merge,
        )
    meta_errors, before_node_affinity, before_node_name, after_node_name, on_create, on_template = (
        spec_errors
    )
    found = bool(
        meta_errors
        or before_node_affinity
        or before_node_name
        or after_node_name
        or (on_template if from_template else on_create)
    )
    if pod_valid(pod, found, from_template=from_template):
        return []
    if not pod.metadata.name and pod.metadata.generate_name:
        meta = msgspec.structs.replace(pod.metadata, name=generate_name(pod.metadata.generate_name))
        pod = msgspec.structs.replace(pod, metadata=meta)
    meta = pod.metadata
    errs = validate_object_meta(
        meta, Path.root("metadata"), requires_namespace=True, labels_too=False
    )
    spec = pod.spec
    # The mirror-pod check reads nodeName: per pod. It comes first of the pod-specific
    # annotations' checks, after the labels' and annotations' own (the start of meta_errors).
    meta_path = Path.root("metadata")
    mirror = mirror_pod_errors(meta.annotations, spec.node_name, meta_path.child("annotations"))
    if mirror:
        generic = len(
            validate_labels(meta.labels, meta_path.child("labels"))
            + validate_annotations(meta.annotations, meta_path.child("annotations"))
        )
        errs += meta_errors[:generic] + mirror + meta_errors[generic:]
    else:
        errs += meta_errors
    # Per pod, not with the spec's errors: each pod's volumes differ (kube-api-access-…).
    errs += validate_volumes(
        spec.volumes, "" if from_template else meta.name, Path.root("spec", "volumes")
    )
    errs += before_node_affinity
    if spec.affinity is not None and spec.affinity.node_affinity is not None:
        # Each pod's own (a DaemonSet's pods name their nodes here): checked for each pod.
        errs += validate_node_affinity(
            spec.affinity.node_affinity, Path.root("spec", "affinity", "nodeAffinity")
        )
    errs += before_node_name
    if spec.node_name:
        errs.extend(
            invalid(Path.root("spec", "nodeName"), spec.node_name, msg)
            for msg in name_is_dns_subdomain(spec.node_name, False)
        )
    if spec.hostname or spec.subdomain:
        errs += _hostname_errors(spec)
    errs += after_node_name
    if from_template:
        # ValidatePodTemplateSpec's own checks, after ValidatePodSpec.
        errs += on_template
    else:
        errs += _images_only_for_pod(spec)
    # ValidatePodCreate's own checks, after validatePodMetadataAndSpec: ephemeral containers,
    # then scheduling gates beside a nodeName, then on_create.
    if not from_template and refuses_ephemeral_containers(spec):
        errs.append(forbidden(Path.root("spec", "ephemeralContainers"), "cannot be set on create"))
    if spec.node_name and spec.scheduling_gates:
        errs.append(
            forbidden(
                Path.root("spec").child("nodeName"),
                "cannot be set until all schedulingGates have been cleared",
            )
        )
    if not from_template:
        errs += on_create
    return errs


# The errors of the labels and annotations, then the spec's: before node affinity's, after
# them and before nodeName's, after nodeName's; then ValidatePodCreate's own (a pod's: the
# ephemeral containers', the profiles' annotations against their fields, after the AppArmor
# annotations are copied into the containers' empty fields), and ValidatePodTemplateSpec's (a
# template's: the profiles' annotations against the fields as written, then the ephemeral
# containers').
PodSpecErrors = tuple[
    list[FieldError],
    list[FieldError],
    list[FieldError],
    list[FieldError],
    list[FieldError],
    list[FieldError],
]


def pod_spec_errors(
    pod: Pod,
    *,
    allow_toleration_comparison_operators: bool = False,
    match_label_keys_selector_merge: bool = True,
) -> PodSpecErrors:
    """``validate_pod``'s errors of the labels, the annotations and the spec (those before
    ``spec.affinity.nodeAffinity``'s, those after them and before ``spec.nodeName``'s, and
    those after), then those of ValidatePodCreate's own checks for a pod and of
    ValidatePodTemplateSpec's for a template (``PodSpecErrors``): all but the ones that read
    the pod's name, generateName, namespace, node affinity, nodeName, hostname or subdomain.
    The lists are shared: callers must not change them.

    NOTE: these errors depend on the labels, the annotations, the spec fields in the key below
    and the two switches, and on no other field: a controller's pods share them, so they are
    found once. The key holds only the fields they read (not a bound pod's nodeName, node
    affinity, volumes or images, which differ from pod to pod: only whether an image is
    given).
    """
    meta = pod.metadata
    spec = pod.spec
    affinity = spec.affinity
    key = _SPEC_KEY.encode(
        (
            meta.labels,
            meta.annotations,
            [
                (c.name, not c.image, c.resources, c.security_context, c.ports)
                for c in spec.containers
            ],
            [
                (c.name, not c.image, c.resources, c.security_context, c.ports)
                for c in spec.init_containers
            ],
            spec.ephemeral_containers,
            spec.security_context,
            spec.os,
            spec.host_network,
            spec.restart_policy,
            spec.node_selector,
            None if affinity is None else (affinity.pod_affinity, affinity.pod_anti_affinity),
            spec.scheduling_gates,
            spec.topology_spread_constraints,
            spec.tolerations,
            spec.priority_class_name,
            spec.preemption_policy,
            spec.overhead,
            spec.resources,
            allow_toleration_comparison_operators,
            match_label_keys_selector_merge,
        )
    )
    found = _SPEC_ERRORS.get(key)
    if found is None:
        meta_path = Path.root("metadata")
        prepared = prepare_for_create(
            pod, merge_topology_spread_keys=match_label_keys_selector_merge
        )
        annotations_path = meta_path.child("annotations")
        found = (
            validate_labels(meta.labels, meta_path.child("labels"))
            + validate_annotations(meta.annotations, annotations_path)
            + pod_annotation_errors(meta.annotations, prepared.spec, annotations_path),
            *_validate_pod_spec(
                prepared.spec,
                allow_toleration_comparison_operators=allow_toleration_comparison_operators,
                match_label_keys_selector_merge=match_label_keys_selector_merge,
            ),
            *create_only_errors(meta.annotations, prepared.spec),
        )
        if len(_SPEC_ERRORS) >= _MAX_SPEC_ERRORS:
            _SPEC_ERRORS.clear()
        _SPEC_ERRORS[key] = found
    return found


_SPEC_KEY: Final = msgspec.json.Encoder()
_SPEC_ERRORS: dict[bytes, PodSpecErrors] = {}
_MAX_SPEC_ERRORS: Final = 4096


def _validate_pod_spec(
    spec: PodSpec,
    *,
    allow_toleration_comparison_operators: bool,
    match_label_keys_selector_merge: bool,
) -> tuple[list[FieldError], list[FieldError], list[FieldError]]:
    """validate_pod's checks of the (prepared) spec, in upstream's order: those before
    ``spec.affinity.nodeAffinity``'s, those after them and before ``spec.nodeName``'s, and
    those after it but before ValidatePodCreate's own (validate_pod makes the ones that read
    node affinity and nodeName).

    Upstream: ValidatePodSpec, validateContainers, validateInitContainers,
    validateContainerCommon, checkHostPortConflicts (pkg/apis/core/validation/validation.go,
    v1.35)
    """
    spec_path = Path.root("spec")
    errs: list[FieldError] = []
    names: set[str] = set()
    if not spec.containers:
        # Upstream's validateContainers says only this of an empty list (init containers are
        # still checked).
        errs.append(required(spec_path.child("containers")))
    for field, containers in (
        ("containers", spec.containers),
        ("initContainers", spec.init_containers),
    ):
        for i, container in enumerate(containers):
            at = spec_path.child(field).index(i)
            name = container.name
            errs += name_and_image_errors(name, container.image, at)
            if container.ports:
                errs += container_port_errors(container.ports, at.child("ports"))
            errs += validate_resource_requirements(container.resources, at.child("resources"))
            if container.security_context is not None:
                errs += container_security_context_errors(
                    container.security_context, at.child("securityContext")
                )
            # Unique among the containers and init containers, told after the container's
            # other errors (validateContainerCommon's); an init container is compared with
            # every regular one and those before it; an empty name is remembered only for a
            # regular container.
            if name in names:
                errs.append(duplicate(at.child("name"), name))
            elif name or field == "containers":
                names.add(name)
            if field == "initContainers":
                # Each init container's host ports apart: they run one at a time.
                errs += init_container_host_port_conflicts(container, spec_path.child(field))
        if field == "containers" and containers:
            # The regular containers run together: their host ports are compared across them.
            errs += host_port_conflicts(containers, spec_path.child(field))
    if spec.ephemeral_containers:
        errs += ephemeral_container_errors(spec, spec_path.child("ephemeralContainers"))
    # Pod-level resources (PodLevelResources, on by default) right after the containers.
    if spec.resources is not None:
        errs += validate_resource_requirements(spec.resources, spec_path.child("resources"))
    if spec.host_network:
        errs += _host_network_ports(spec, spec_path.child("containers"))
    # The API server defaults an empty restartPolicy to Always before it validates.
    if spec.restart_policy and spec.restart_policy not in RESTART_POLICIES:
        errs.append(
            not_supported(
                spec_path.child("restartPolicy"), GoJSON(spec.restart_policy), RESTART_POLICIES
            )
        )
    errs += validate_labels(spec.node_selector, spec_path.child("nodeSelector"))
    if spec.security_context is not None:
        errs += pod_security_context_errors(
            spec.security_context, spec_path.child("securityContext")
        )
    before_node_affinity = errs
    errs = []
    if spec.affinity is not None:
        # Node affinity first (validate_pod checks it): then pod affinity and anti-affinity.
        errs += validate_affinity(
            msgspec.structs.replace(spec.affinity, node_affinity=None),
            spec_path.child("affinity"),
        )
    errs += _validate_scheduling_gates(spec.scheduling_gates, spec_path.child("schedulingGates"))
    errs += validate_topology_spread_constraints(
        spec.topology_spread_constraints,
        spec_path.child("topologySpreadConstraints"),
        selector_merge=match_label_keys_selector_merge,
    )
    before = errs
    errs = []
    if spec.tolerations:
        errs += validate_tolerations(
            spec.tolerations,
            spec_path.child("tolerations"),
            allow_comparison_operators=allow_toleration_comparison_operators,
        )
    if spec.priority_class_name:
        errs.extend(
            invalid(spec_path.child("priorityClassName"), spec.priority_class_name, msg)
            for msg in name_is_dns_subdomain(spec.priority_class_name, False)
        )
    if spec.preemption_policy is not None:
        policy_path = spec_path.child("preemptionPolicy")
        if not spec.preemption_policy:
            errs.append(required(policy_path))
        elif spec.preemption_policy not in (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER):
            errs.append(
                not_supported(
                    policy_path,
                    GoJSON(spec.preemption_policy),
                    (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER),
                )
            )
    if spec.overhead:
        errs += validate_overhead(spec.overhead, spec_path.child("overhead"))
    if spec.os is not None:
        errs += os_errors(spec, spec_path)
    return before_node_affinity, before, errs


def _host_network_ports(spec: PodSpec, path: Path) -> list[FieldError]:
    """On the host's network a container's host port is its container port: one set
    otherwise is refused (a pod's host ports left 0 are defaulted to their container ports
    first, a template's stay 0: either way 0 passes here).

    Upstream: validatePodHostNetworkDeps (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    for i, container in enumerate(spec.containers):
        for j, port in enumerate(container.ports):
            if port.host_port != 0 and port.host_port != port.container_port:
                errs.append(
                    invalid(
                        path.index(i).child("ports").index(j).child("hostPort"),
                        port.host_port,
                        "must match `containerPort` when `hostNetwork` is true",
                    )
                )
    return errs


def _hostname_errors(spec: PodSpec) -> list[FieldError]:
    """A pod's hostname and subdomain, when given, are DNS labels. Checked for each pod, not
    with the spec's errors: a StatefulSet names each of its pods' hostname after the pod.

    Upstream: ValidatePodSpec (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    for field, value in (("hostname", spec.hostname), ("subdomain", spec.subdomain)):
        if value:
            path = Path.root("spec", field)
            errs.extend(invalid(path, value, msg) for msg in is_dns1123_label(value))
    return errs


def _images_only_for_pod(spec: PodSpec) -> list[FieldError]:
    """A pod's images may not start or end with whitespace; a template's may (some tools put
    a placeholder such as " " there and fill it in later).

    Upstream: validateContainersOnlyForPod, validateContainerOnlyForPod
    (pkg/apis/core/validation/validation.go, v1.35)
    """
    spec_path = Path.root("spec")
    errs: list[FieldError] = []
    for field, containers in (
        ("containers", spec.containers),
        ("initContainers", spec.init_containers),
    ):
        for i, container in enumerate(containers):
            if container.image != container.image.strip(GO_SPACE):
                errs.append(
                    invalid(
                        spec_path.child(field).index(i).child("image"),
                        container.image,
                        PADDED_IMAGE,
                    )
                )
    return errs


def validate_node(node: Node) -> list[FieldError]:
    """A node's metadata (cluster-scoped: no namespace), its taints and preferAvoidPods
    annotations (``annotation_validation.py``; one that would make the API server panic is the
    only error told, as the request fails whole), its taints, its resources and its pod
    CIDRs (``cidr_validation.py``: the list the API server reads from ``podCIDR`` and
    ``podCIDRs``), in upstream's order. Its other spec fields are not checked on create:
    ``providerID`` only on update, ``configSource`` is dropped before validation.

    Upstream reports taint errors under ``metadata.taints`` — it builds their path from the
    metadata path — and so does this.

    Upstream: ValidateNode (pkg/apis/core/validation/validation.go, v1.35)
    """
    # NOTE: the resources' errors depend on capacity and allocatable alone: the nodes of one
    # instance type share them, so they are found once per pair.
    status = node.status
    key = _SPEC_KEY.encode((status.capacity, status.allocatable))
    found = _NODE_RESOURCE_ERRORS.get(key)
    if found is None:
        if len(_NODE_RESOURCE_ERRORS) >= _MAX_SPEC_ERRORS:
            _NODE_RESOURCE_ERRORS.clear()
        found = _NODE_RESOURCE_ERRORS[key] = validate_node_resources(node)
    spec = node.spec
    # A node without pod CIDRs (most cloud nodes) costs two attribute reads here.
    cidrs = node_pod_cidrs(spec) if spec.pod_cidr or spec.pod_cidrs else []
    annotations = node.metadata.annotations
    if (
        not found
        and node_meta_and_taints_valid(node)
        and (not cidrs or pod_cidrs_valid(cidrs))
        and node_annotations_valid(annotations)
    ):
        return []
    meta_path = Path.root("metadata")
    errs = validate_object_meta(node.metadata, meta_path, requires_namespace=False)
    try:
        errs += validate_node_annotations(annotations, meta_path.child("annotations"))
    except ApiServerPanic as panic:
        # The request fails as a whole: no other error is told.
        return [panic.error]
    if spec.taints:
        errs += validate_taints(spec.taints, meta_path.child("taints"))
    errs += found
    if cidrs:
        errs += validate_pod_cidrs(cidrs)
    return errs


_NODE_RESOURCE_ERRORS: dict[bytes, list[FieldError]] = {}
