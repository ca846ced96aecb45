"""The PV controller and the CSI provisioner as the simulated cluster runs them for claims the
scheduler does not bind: a claim pre-bound to a volume, and an unbound claim of a class with
``volumeBindingMode: Immediate`` (or of no class), which gets the smallest matching static PV
or, when none fits and its class names a provisioner, a new volume provisioned at once, in a
topology segment of the class's ``allowedTopologies`` or of the nodes labelled with the
driver's topology keys, the one the external provisioner prefers (a StatefulSet's claims
round-robin over the segments by ordinal). Claims of a WaitForFirstConsumer class wait for
the scheduler (VolumeBinding's PreBind) as upstream.

Upstream: syncUnboundClaim and findBestMatchForClaim (pkg/controller/volume/persistentvolume/
pv_controller.go, index.go, v1.35); GenerateAccessibilityRequirements and
getPVCNameHashAndIndexOffset (kubernetes-csi/external-provisioner pkg/controller/topology.go).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import msgspec

from topospread.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    CLAIM_BOUND,
    NOT_SUPPORTED_PROVISIONER,
    RESOURCE_STORAGE,
    VOLUME_AVAILABLE,
    VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER,
    VOLUME_BOUND,
    CSINode,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSpec,
    StorageClass,
    VolumeNodeAffinity,
)
from topospread.api.types import (
    LABEL_TOPOLOGY_ZONE,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
)
from topospread.api.volumes import CSIPersistentVolumeSource
from topospread.labels.selector import SelectorError, label_selector_as_selector
from topospread.plugins.helper.storage import (
    check_access_modes,
    is_volume_bound_to_claim,
    pv_capacity,
    pv_class,
    pvc_class,
    storage_request,
    volume_mode_mismatches,
)

# A topology segment: the (key, value) pairs a provisioned volume's node affinity requires.
Segment = tuple[tuple[str, str], ...]


def find_best_match_for_claim(
    pvc: PersistentVolumeClaim, volumes: Iterable[PersistentVolume], delay_binding: bool
) -> PersistentVolume | None:
    """The volume pre-bound to the claim, else (unless binding is delayed for the scheduler)
    the smallest available volume of the claim's class whose size, mode, selector and
    attributes class fit, looked for first among the volumes offering the fewest access modes
    that include the claim's.

    Upstream: persistentVolumeOrderedIndex.findByClaim and findMatchingVolume with no node
    (index.go, component-helpers/storage/volume/pv_helpers.go, v1.35)
    """
    if delay_binding:
        # NOTE: only a volume bound to the claim can match then (``_find_matching_volume``):
        # the others are left out before the index is built, the order of what stays kept.
        name = pvc.metadata.name
        volumes = [
            pv
            for pv in volumes
            if (ref := pv.spec.claim_ref) is not None
            and ref.name == name
            and is_volume_bound_to_claim(pv, pvc)
        ]
    by_modes: dict[frozenset[str], list[PersistentVolume]] = {}
    for pv in volumes:
        by_modes.setdefault(frozenset(pv.spec.access_modes), []).append(pv)
    wanted = set(pvc.spec.access_modes)
    # Go's index lists the access-mode sets by size; ties are broken by the modes' names so
    # that the choice never depends on map order.
    candidates = sorted((m for m in by_modes if wanted <= m), key=lambda m: (len(m), sorted(m)))
    for modes in candidates:
        found = _find_matching_volume(pvc, by_modes[modes], delay_binding)
        if found is not None:
            return found
    return None


def _find_matching_volume(
    pvc: PersistentVolumeClaim, volumes: Sequence[PersistentVolume], delay_binding: bool
) -> PersistentVolume | None:
    requested = storage_request(pvc)
    selector = None
    if pvc.spec.selector is not None:
        try:
            selector = label_selector_as_selector(pvc.spec.selector)
        except SelectorError:
            return None  # the controller logs the error and retries; the claim stays Pending
    if delay_binding:
        # NOTE: only the volume bound to the claim can match (the scheduler binds the claim
        # otherwise): the others are left out first, the checks below kept for it.
        volumes = [pv for pv in volumes if is_volume_bound_to_claim(pv, pvc)]
    smallest: PersistentVolume | None = None
    for pv in sorted(volumes, key=lambda v: v.metadata.name):
        size = pv_capacity(pv)
        if pv.metadata.deletion_timestamp is not None or volume_mode_mismatches(pvc, pv):
            continue
        if (pvc.spec.volume_attributes_class_name or "") != (
            pv.spec.volume_attributes_class_name or ""
        ):
            continue
        if is_volume_bound_to_claim(pv, pvc):
            if size.cmp(requested) >= 0:
                return pv
            continue
        if delay_binding:
            continue  # the scheduler binds this claim once a node is chosen
        if pv.status.phase != VOLUME_AVAILABLE or pv.spec.claim_ref is not None:
            continue
        if selector is not None and not selector.matches(pv.metadata.labels):
            continue
        if pv_class(pv) != pvc_class(pvc) or not check_access_modes(pvc, pv):
            continue
        if size.cmp(requested) >= 0 and (smallest is None or pv_capacity(smallest).cmp(size) > 0):
            smallest = pv
    return smallest


def check_volume_satisfy_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> str | None:
    """Why a free volume a claim names cannot take it (None: it can): the controller then
    leaves the claim Pending with a VolumeMismatch event ``Cannot bind to requested volume
    "<pv>": <why>``. Unlike the search for a volume, the volume's phase, selector labels and
    node affinity are not looked at.

    Upstream: checkVolumeSatisfyClaim (pkg/controller/volume/persistentvolume/pv_controller.go,
    v1.35)
    """
    if pv.metadata.deletion_timestamp is not None:
        return f'the volume is marked for deletion "{pv.metadata.name}"'
    if pv_capacity(pv).value() < storage_request(pvc).value():
        return "requested PV is too small"
    if pv_class(pv) != pvc_class(pvc):
        return "storageClassName does not match"
    if volume_mode_mismatches(pvc, pv):
        return "incompatible volumeMode"
    if not check_access_modes(pvc, pv):
        return "incompatible accessMode"
    return None


ANN_DEFAULT_CLASS: Final = "storageclass.kubernetes.io/is-default-class"
ANN_BETA_DEFAULT_CLASS: Final = "storageclass.beta.kubernetes.io/is-default-class"


def default_class(classes: Iterable[StorageClass]) -> str | None:
    """The default StorageClass: of those annotated default, the newest, then the first by
    name.

    Upstream: GetDefaultClass (pkg/volume/util/storageclass.go, v1.35), which the
    DefaultStorageClass admission plugin and the PV controller both call
    """
    defaults = [
        c
        for c in classes
        if c.metadata.annotations.get(ANN_DEFAULT_CLASS) == "true"
        or c.metadata.annotations.get(ANN_BETA_DEFAULT_CLASS) == "true"
    ]
    if not defaults:
        return None
    by_name = sorted(defaults, key=lambda c: c.metadata.name)
    # A stable sort keeps the names ascending among classes created at the same time.
    newest = sorted(by_name, key=lambda c: c.metadata.creation_timestamp or "", reverse=True)
    return newest[0].metadata.name


def is_delay_binding(pvc: PersistentVolumeClaim, classes: Mapping[str, StorageClass]) -> bool:
    """Upstream: IsDelayBindingMode (component-helpers/storage/volume, v1.35)."""
    cls = classes.get(pvc_class(pvc)) if pvc_class(pvc) else None
    return cls is not None and cls.volume_binding_mode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER


def can_provision(cls: StorageClass | None) -> bool:
    return cls is not None and cls.provisioner not in ("", NOT_SUPPORTED_PROVISIONER)


def bind_volume(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> PersistentVolume:
    """The volume bound to the claim by the controller (claimRef and phase Bound).

    Upstream: bindVolumeToClaim and updateVolumePhase (pv_controller.go)
    """
    annotations = dict(pv.metadata.annotations)
    if pv.spec.claim_ref is None:
        annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
    spec = msgspec.structs.replace(pv.spec, claim_ref=claim_reference(pvc))
    return msgspec.structs.replace(
        pv,
        metadata=msgspec.structs.replace(pv.metadata, annotations=annotations),
        spec=spec,
        status=msgspec.structs.replace(pv.status, phase=VOLUME_BOUND),
    )


def bind_claim(pvc: PersistentVolumeClaim, pv_name: str) -> PersistentVolumeClaim:
    """The claim bound to the volume: volumeName, bind-completed, phase Bound.

    Upstream: bindClaimToVolume and updateClaimStatus (pv_controller.go)
    """
    annotations = {**pvc.metadata.annotations, ANN_BIND_COMPLETED: "yes"}
    return msgspec.structs.replace(
        pvc,
        metadata=msgspec.structs.replace(pvc.metadata, annotations=annotations),
        spec=msgspec.structs.replace(pvc.spec, volume_name=pv_name),
        status=msgspec.structs.replace(pvc.status, phase=CLAIM_BOUND),
    )


def claim_reference(pvc: PersistentVolumeClaim) -> ObjectReference:
    return ObjectReference(
        kind="PersistentVolumeClaim",
        namespace=pvc.metadata.namespace,
        name=pvc.metadata.name,
        uid=pvc.metadata.uid,
        api_version="v1",
    )


def provisioned_volume(
    pvc: PersistentVolumeClaim, cls: StorageClass, affinity: VolumeNodeAffinity | None
) -> PersistentVolume:
    """The volume a CSI provisioner creates for the claim (``pvc-<uid>``), bound to it."""
    name = f"pvc-{pvc.metadata.uid or pvc.key.replace('/', '-')}"
    size = pvc.spec.resources.requests.get(RESOURCE_STORAGE)
    spec = PersistentVolumeSpec(
        capacity={RESOURCE_STORAGE: size} if size is not None else {},
        access_modes=list(pvc.spec.access_modes),
        claim_ref=claim_reference(pvc),
        storage_class_name=cls.metadata.name,
        node_affinity=affinity,
        volume_mode=pvc.spec.volume_mode,
        persistent_volume_reclaim_policy=cls.reclaim_policy or "Delete",
        csi=CSIPersistentVolumeSource(driver=cls.provisioner, volume_handle=name),
    )
    return PersistentVolume(
        # The external provisioner names itself on what it provisions: the PV controller
        # reads it to tell a provisioned volume (``volume_sync.py``), the provisioner to
        # delete only its own.
        metadata=ObjectMeta(name=name, annotations={ANN_DYNAMICALLY_PROVISIONED: cls.provisioner}),
        spec=spec,
        status=msgspec.structs.replace(PersistentVolume().status, phase=VOLUME_BOUND),
    )


def node_segment(node: Node, driver: str, csi_node: CSINode | None) -> Segment:
    """The topology a volume provisioned for this node gets: the driver's topology keys on the
    node's CSINode, or the zone label when the cluster has no CSINode for the node."""
    labels = node.metadata.labels
    if csi_node is not None:
        keys = next((d.topology_keys for d in csi_node.spec.drivers if d.name == driver), [])
    else:
        keys = [LABEL_TOPOLOGY_ZONE]
    return tuple(sorted((k, labels[k]) for k in keys if k in labels))


def immediate_segments(
    cls: StorageClass, nodes: Iterable[Node], csi_nodes: Mapping[str, CSINode]
) -> list[Segment] | None:
    """The requisite segments of an Immediate claim of the class, in the provisioner's order
    (fewest pairs first, then by key and value), or None while the provisioner retries
    (``no available topology found``): each combination of values an ``allowedTopologies``
    term allows; else, for the driver's topology keys on a CSINode, the segment of every node
    labelled with all of them (none: it retries). ``[()]``: no topology requirement, as for
    terms without expressions, or a driver its CSINodes list without topology keys (one that
    does not take a topology). Upstream takes the keys of a CSINode drawn at random (a driver
    registers the same keys on every node); here the first by name. A cluster given without
    CSINodes is read as a driver keyed by zone where its nodes have zones, else as one without
    topology (a modelling choice: such inputs usually leave CSINodes out).

    Upstream: GenerateAccessibilityRequirements, flatten and aggregateTopologies with no
    selected node (kubernetes-csi/external-provisioner pkg/controller/topology.go)
    """
    out: set[Segment] = set()
    if cls.allowed_topologies:
        for term in cls.allowed_topologies:
            exprs = term.match_label_expressions
            if exprs:
                for values in itertools.product(*(e.values for e in exprs)):
                    out.add(tuple(sorted(zip((e.key for e in exprs), values, strict=True))))
        return sorted(out, key=lambda s: (len(s), s)) if out else [()]
    nodes = list(nodes)
    keys: Sequence[str]
    if csi_nodes:
        keys = next(
            (
                d.topology_keys
                for name in sorted(csi_nodes)
                for d in csi_nodes[name].spec.drivers
                if d.name == cls.provisioner and d.topology_keys
            ),
            [],
        )
        if not keys:
            return [()]
    elif not nodes:
        return None
    else:
        keys = [LABEL_TOPOLOGY_ZONE]
    for node in nodes:
        labels = node.metadata.labels
        if all(k in labels for k in keys):
            out.add(tuple(sorted((k, labels[k]) for k in keys)))
    if out:
        return sorted(out, key=lambda s: (len(s), s))
    return None if csi_nodes else [()]


def _fnv1_32(data: bytes) -> int:
    """Go's hash/fnv New32 (FNV-1, not FNV-1a)."""
    h = 0x811C9DC5
    for byte in data:
        h = (h * 0x01000193) & 0xFFFFFFFF
        h ^= byte
    return h


def pvc_name_hash_and_index(name: str) -> tuple[int, int]:
    """The hash and offset that spread a StatefulSet's Immediate volumes over the segments: a
    name ending in ``-<n>`` (a uint32) is offset by n and hashed on the part between its last
    two dashes (the set's name in ``<template>-<set>-<n>``, so one replica's claims share a
    segment); any other name is hashed whole.

    Upstream: getPVCNameHashAndIndexOffset (external-provisioner pkg/controller/topology.go)
    """
    hashed, index = name, 0
    dash = name.rfind("-")
    suffix = name[dash + 1 :] if dash != -1 else ""
    if suffix and all("0" <= c <= "9" for c in suffix) and int(suffix) <= 0xFFFFFFFF:
        index = int(suffix)
        hashed = name[:dash]
        hashed = hashed[hashed.rfind("-") + 1 :]
    return _fnv1_32(hashed.encode()), index


def preferred_segment(segments: Sequence[Segment], pvc: PersistentVolumeClaim) -> Segment:
    """The segment an Immediate volume is created in: the first preferred one, the requisite
    segments rotated by the claim's name hash and ordinal (the CSI drivers that take a
    topology requirement create the volume in its first preferred segment).

    Upstream: GenerateAccessibilityRequirements, step 3 (external-provisioner
    pkg/controller/topology.go)
    """
    hashed, index = pvc_name_hash_and_index(pvc.metadata.name)
    return segments[((hashed + index) & 0xFFFFFFFF) % len(segments)]


def segment_affinity(segment: Segment) -> VolumeNodeAffinity | None:
    if not segment:
        return None
    exprs = [NodeSelectorRequirement(key=k, operator="In", values=[v]) for k, v in segment]
    term = NodeSelectorTerm(match_expressions=exprs)
    return VolumeNodeAffinity(required=NodeSelector(node_selector_terms=[term]))
