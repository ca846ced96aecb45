"""The volume binder: which of a pod's claims are bound, which PVs could take the unbound ones
on a node, which need provisioning and whether there is room for them; then assume, revert and
bind those decisions.

Upstream: pkg/scheduler/framework/plugins/volumebinding/binder.go and FindMatchingVolume
(component-helpers/storage/volume/pv_helpers.go), v1.35. Not modelled: the in-tree to CSI
translation of a bound PV before its node affinity is checked (tryTranslatePVToCSI), and
VolumeAttributesClass matching beyond equal class names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

import msgspec

from topospread.api.resource import parse_quantity
from topospread.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    CLAIM_BOUND,
    NOT_SUPPORTED_PROVISIONER,
    VOLUME_AVAILABLE,
    VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER,
    VOLUME_BOUND,
    CSIStorageCapacity,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from topospread.api.types import LABEL_HOSTNAME, Node, Pod
from topospread.framework.storage import StorageLister
from topospread.labels.selector import SelectorError, label_selector_as_selector
from topospread.plugins.helper.storage import (
    check_access_modes,
    check_node_affinity,
    claim_name_of,
    ephemeral_volume_is_for_pod,
    is_volume_bound_to_claim,
    match_topology_selector_terms,
    pv_capacity,
    pv_class,
    pvc_class,
    storage_request,
    volume_mode_mismatches,
)

ANN_BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"

# Conflict reasons (binder.go).
ERR_REASON_BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT: Final = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE: Final = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST: Final = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)


class BinderError(Exception):
    """Something went wrong deciding volumes (upstream: an error, not a conflict reason)."""


@dataclass(frozen=True, slots=True)
class BindingInfo:
    """A claim and the PV proposed for it. Upstream: BindingInfo (binder.go)."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume


@dataclass(slots=True)
class PodVolumes:
    """Upstream: PodVolumes (binder.go): static bindings and claims to provision."""

    static_bindings: list[BindingInfo] = field(default_factory=list)
    dynamic_provisions: list[PersistentVolumeClaim] = field(default_factory=list)


def _affinity_keys(pv: PersistentVolume) -> set[str]:
    """The label keys a PV's required node affinity reads."""
    affinity = pv.spec.node_affinity
    if affinity is None or affinity.required is None:
        return set()
    return {e.key for t in affinity.required.node_selector_terms for e in t.match_expressions}


# A PV a claim may get, and whether it is the PV bound to that claim.
Candidate = tuple[PersistentVolume, bool]


@dataclass(slots=True)
class PodVolumeClaims:
    """Upstream: PodVolumeClaims (binder.go)."""

    bound_claims: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_claims_delay_binding: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_claims_immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    # Storage class -> the PVs of that class (from the assume cache).
    unbound_volumes_delay_binding: dict[str, Sequence[PersistentVolume]] = field(
        default_factory=dict
    )
    # Claim key -> its ``matching_candidates`` among its class's PVs, taken on first use.
    candidates: dict[str, list[Candidate]] = field(default_factory=dict)
    # The node labels ``find_pod_volumes`` reads for these claims (None: it reads more, the
    # node's name), taken on first use; and its answers by those labels' values.
    label_keys: tuple[str, ...] | None = None
    label_keys_taken: bool = False
    by_labels: dict[tuple[str | None, ...], tuple[PodVolumes, list[str]]] = field(
        default_factory=dict
    )


def is_pvc_fully_bound(pvc: PersistentVolumeClaim) -> bool:
    """Upstream: isPVCFullyBound (binder.go)."""
    return bool(pvc.spec.volume_name) and ANN_BIND_COMPLETED in pvc.metadata.annotations


def local_pv_node_names(pv: PersistentVolume) -> set[str] | None:
    """The node names a PV's required affinity pins it to with ``kubernetes.io/hostname In``:
    per term the intersection of its hostname expressions, the union over terms.

    Upstream: GetLocalPersistentVolumeNodeNames (pkg/scheduler/util/utils.go, v1.35)
    """
    affinity = pv.spec.node_affinity
    if affinity is None or affinity.required is None:
        return None
    result: set[str] = set()
    for term in affinity.required.node_selector_terms:
        nodes: set[str] | None = None
        for expr in term.match_expressions:
            if expr.key == LABEL_HOSTNAME and expr.operator == "In":
                nodes = set(expr.values) if nodes is None else nodes & set(expr.values)
        result |= nodes or set()
    return result


class VolumeBinder:
    """Upstream: volumeBinder (binder.go). ``storage`` gives the cluster's storage lister."""

    __slots__ = ("_storage",)

    def __init__(self, storage: Callable[[], StorageLister]) -> None:
        self._storage = storage

    @property
    def storage(self) -> StorageLister:
        return self._storage()

    # -- PreFilter -------------------------------------------------------------------------

    def get_pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """The pod's claims split into bound, unbound delayed and unbound immediate ones, and
        the PVs of the delayed claims' classes. Upstream: GetPodVolumeClaims (binder.go)."""
        out = PodVolumeClaims()
        storage = self.storage
        for volume in pod.spec.volumes:
            claim = claim_name_of(pod, volume)
            if claim is None:
                continue
            name, ephemeral = claim
            key = f"{pod.metadata.namespace}/{name}"
            pvc = storage.assumed_pvc(key)
            if pvc is None:
                raise BinderError(
                    f'error getting PVC "{key}": could not find v1/PersistentVolumeClaim "{key}"'
                )
            if ephemeral:
                err = ephemeral_volume_is_for_pod(pod, pvc)
                if err is not None:
                    raise BinderError(err)
            if is_pvc_fully_bound(pvc):
                out.bound_claims.append(pvc)
            elif self._is_delay_binding_mode(pvc) and not pvc.spec.volume_name:
                out.unbound_claims_delay_binding.append(pvc)
            else:
                # Prebound claims count as immediate: the PV controller binds them.
                out.unbound_claims_immediate.append(pvc)
        # NOTE: of each class only the PVs free or referring to one of the pod's claims: the
        # binder passes over every other (``matching_candidates``), upstream after listing it.
        by_class: dict[str, list[PersistentVolumeClaim]] = {}
        for pvc in out.unbound_claims_delay_binding:
            by_class.setdefault(pvc_class(pvc), []).append(pvc)
        for cls, of_class in by_class.items():
            out.unbound_volumes_delay_binding[cls] = storage.assumed_pvs_for_claims(cls, of_class)
        return out

    def _is_delay_binding_mode(self, pvc: PersistentVolumeClaim) -> bool:
        """Upstream: IsDelayBindingMode (component-helpers/storage/volume, v1.35)."""
        name = pvc_class(pvc)
        if not name:
            return False
        cls = self.storage.storage_class(name)
        if cls is None:
            return False
        if cls.volume_binding_mode is None:
            raise BinderError(f'VolumeBindingMode not set for StorageClass "{name}"')
        return cls.volume_binding_mode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER

    def get_eligible_nodes(
        self, bound_claims: Sequence[PersistentVolumeClaim]
    ) -> frozenset[str] | None:
        """The nodes local PVs of bound claims pin the pod to (None: no restriction).

        Upstream: GetEligibleNodes (binder.go)
        """
        eligible: set[str] | None = None
        for pvc in bound_claims:
            pv = self.storage.assumed_pv(pvc.spec.volume_name)
            if pv is None:
                continue
            names = local_pv_node_names(pv)
            if names:
                eligible = set(names) if eligible is None else eligible & names
        return frozenset(eligible) if eligible is not None else None

    # -- Filter ----------------------------------------------------------------------------

    def find_pod_volumes(
        self, pod: Pod, claims: PodVolumeClaims, node: Node
    ) -> tuple[PodVolumes, list[str]]:
        """The volumes the pod would get on ``node``, or the reasons it cannot have them.

        Upstream: FindPodVolumes (binder.go)
        """
        view = self._node_view(claims, node)
        if view is not None:
            hit = claims.by_labels.get(view)
            if hit is None:
                hit = claims.by_labels[view] = self._find_pod_volumes(claims, node)
            found, reasons = hit
            return PodVolumes(list(found.static_bindings), list(found.dynamic_provisions)), list(
                reasons
            )
        return self._find_pod_volumes(claims, node)

    def _node_view(self, claims: PodVolumeClaims, node: Node) -> tuple[str | None, ...] | None:
        """The values of the node labels ``find_pod_volumes`` reads for the claims (None where
        it reads the node's name too): nodes that agree on them get the same answer.

        NOTE: the claims, PVs, classes and capacities do not change during an attempt (a
        PreFilter's ``PodVolumeClaims`` lives for one), and the binder reads a node only by
        those labels: PV node affinity (matched on a node built from labels alone), allowed
        topologies, capacities' node topology.
        """
        keys = self.node_label_keys(claims)
        if keys is None:
            return None
        labels = node.metadata.labels
        return tuple(labels.get(k) for k in keys)

    def node_label_keys(self, claims: PodVolumeClaims) -> tuple[str, ...] | None:
        """The node labels ``find_pod_volumes`` reads for the claims, sorted (None: it reads
        the node's name too), taken once per ``PodVolumeClaims``: nodes that agree on their
        values get the same answer (``_node_view``; the fast path groups nodes by them)."""
        if not claims.label_keys_taken:
            claims.label_keys = self._label_keys(claims)
            claims.label_keys_taken = True
        return claims.label_keys

    def _label_keys(self, claims: PodVolumeClaims) -> tuple[str, ...] | None:
        keys: set[str] = set()
        storage = self.storage
        for pvc in claims.bound_claims:
            pv = storage.assumed_pv(pvc.spec.volume_name)
            if pv is not None:
                keys |= _affinity_keys(pv)
        for pvc in claims.unbound_claims_delay_binding:
            if ANN_SELECTED_NODE in pvc.metadata.annotations:
                return None  # compared with the node's name
            volumes = claims.unbound_volumes_delay_binding.get(pvc_class(pvc), ())
            try:
                candidates = claims.candidates.get(pvc.key)
                if candidates is None:
                    candidates = claims.candidates[pvc.key] = matching_candidates(pvc, volumes)
            except BinderError:
                return None  # the search raises it again, node by node
            for pv, _ in candidates:
                keys |= _affinity_keys(pv)
            cls = storage.storage_class(pvc_class(pvc))
            if cls is None:
                return None
            for term in cls.allowed_topologies:
                keys.update(e.key for e in term.match_label_expressions)
            driver = storage.csi_driver(cls.provisioner)
            if driver is not None and driver.spec.storage_capacity:
                for capacity in storage.csi_storage_capacities():
                    topology = capacity.node_topology
                    if topology is not None:
                        keys.update(topology.match_labels)
                        keys.update(e.key for e in topology.match_expressions)
        return tuple(sorted(keys))

    def _find_pod_volumes(
        self, claims: PodVolumeClaims, node: Node
    ) -> tuple[PodVolumes, list[str]]:
        volumes = PodVolumes()
        bound_ok = unbound_ok = sufficient = pvs_found = True
        if claims.bound_claims:
            bound_ok, pvs_found = self._check_bound_claims(claims.bound_claims, node)
        if claims.unbound_claims_delay_binding:
            unbound_ok, sufficient = self._find_unbound(claims, node, volumes)
        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not sufficient:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return volumes, reasons

    def _find_unbound(
        self, claims: PodVolumeClaims, node: Node, volumes: PodVolumes
    ) -> tuple[bool, bool]:
        to_match: list[PersistentVolumeClaim] = []
        to_provision: list[PersistentVolumeClaim] = []
        for pvc in claims.unbound_claims_delay_binding:
            selected = pvc.metadata.annotations.get(ANN_SELECTED_NODE)
            if selected is not None:
                if selected != node.metadata.name:
                    return False, True  # fast path: another node was selected
                to_provision.append(pvc)
            else:
                to_match.append(pvc)
        unbound_ok = True
        if to_match:
            unbound_ok, bindings, unmatched = self._find_matching_volumes(
                to_match, claims.unbound_volumes_delay_binding, node, claims.candidates
            )
            volumes.static_bindings = bindings
            to_provision += unmatched
        sufficient = True
        if to_provision:
            unbound_ok, sufficient, provisions = self._check_volume_provisions(to_provision, node)
            volumes.dynamic_provisions = provisions
        return unbound_ok, sufficient

    def _check_bound_claims(
        self, claims: Sequence[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, bool]:
        """(node affinity satisfied, PVs found). Upstream: checkBoundClaims (binder.go)."""
        for pvc in claims:
            pv = self.storage.assumed_pv(pvc.spec.volume_name)
            if pv is None:
                return True, False
            if not check_node_affinity(pv, node.metadata.labels):
                return False, True
        return True, True

    def _find_matching_volumes(
        self,
        claims: Sequence[PersistentVolumeClaim],
        by_class: dict[str, Sequence[PersistentVolume]],
        node: Node,
        memo: dict[str, list[Candidate]] | None = None,
    ) -> tuple[bool, list[BindingInfo], list[PersistentVolumeClaim]]:
        """Smallest claims first, each the smallest fitting PV not chosen yet.

        Upstream: findMatchingVolumes (binder.go)
        """
        chosen: set[str] = set()
        found = True
        bindings: list[BindingInfo] = []
        unmatched: list[PersistentVolumeClaim] = []
        memo = memo if memo is not None else {}
        for pvc in sorted(claims, key=storage_request):
            volumes = by_class.get(pvc_class(pvc), ())
            candidates = memo.get(pvc.key)
            if candidates is None:
                candidates = memo[pvc.key] = matching_candidates(pvc, volumes)
            pv = find_matching_volume(pvc, volumes, node, chosen, candidates)
            if pv is None:
                unmatched.append(pvc)
                found = False
                continue
            chosen.add(pv.metadata.name)
            bindings.append(BindingInfo(pvc, pv))
        return found, bindings, unmatched

    def _check_volume_provisions(
        self, claims: Sequence[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, bool, list[PersistentVolumeClaim]]:
        """(provisioning possible, enough storage, claims to provision).

        Upstream: checkVolumeProvisions (binder.go)
        """
        provisions: list[PersistentVolumeClaim] = []
        for pvc in claims:
            name = pvc_class(pvc)
            if not name:
                raise BinderError(f'no class for claim "{pvc.key}"')
            cls = self.storage.storage_class(name)
            if cls is None:
                raise BinderError(f'failed to find storage class "{name}"')
            if not cls.provisioner or cls.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology_selector_terms(cls.allowed_topologies, node.metadata.labels):
                return False, True, []
            if not self._has_enough_capacity(pvc, cls, node):
                return True, False, []
            provisions.append(pvc)
        return True, True, provisions

    def _has_enough_capacity(
        self, pvc: PersistentVolumeClaim, cls: StorageClass, node: Node
    ) -> bool:
        """Upstream: hasEnoughCapacity (binder.go): only for CSI drivers with storageCapacity."""
        if "storage" not in pvc.spec.resources.requests:
            return True
        driver = self.storage.csi_driver(cls.provisioner)
        if driver is None or not driver.spec.storage_capacity:
            return True
        size = storage_request(pvc).value()
        for capacity in self.storage.csi_storage_capacities():
            if (
                capacity.storage_class_name == cls.metadata.name
                and _capacity_sufficient(capacity, size)
                and _node_has_access(node, capacity)
            ):
                return True
        return False

    # -- Reserve, Unreserve, PreBind ---------------------------------------------------------

    def assume_pod_volumes(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """Assume each static binding's PV bound to its claim and each claim to provision
        annotated with the node; True when all the pod's claims were bound already.

        Upstream: AssumePodVolumes (binder.go)
        """
        if self._all_bound(pod):
            return True
        storage = self.storage
        bindings: list[BindingInfo] = []
        for b in volumes.static_bindings:
            pv = bind_volume_to_claim(b.pv, b.pvc)
            if pv is not b.pv:
                storage.assume_pv(pv)
            bindings.append(BindingInfo(b.pvc, pv))
        provisions: list[PersistentVolumeClaim] = []
        for pvc in volumes.dynamic_provisions:
            annotations = {**pvc.metadata.annotations, ANN_SELECTED_NODE: node_name}
            assumed = msgspec.structs.replace(
                pvc, metadata=msgspec.structs.replace(pvc.metadata, annotations=annotations)
            )
            storage.assume_pvc(assumed)
            provisions.append(assumed)
        volumes.static_bindings = bindings
        volumes.dynamic_provisions = provisions
        return False

    def revert_assumed_pod_volumes(self, volumes: PodVolumes) -> None:
        """Upstream: RevertAssumedPodVolumes (binder.go)."""
        storage = self.storage
        for b in volumes.static_bindings:
            storage.restore_pv(b.pv.metadata.name)
        for pvc in volumes.dynamic_provisions:
            storage.restore_pvc(pvc.key)

    def bind_pod_volumes(self, pod: Pod, volumes: PodVolumes) -> None:
        """Write the assumed PVs and claims to the API; the PV controller then binds each
        static binding's claim (done here at once, which upstream's PreBind waits for).

        Upstream: BindPodVolumes / bindAPIUpdate (binder.go)
        """
        storage = self.storage
        for b in volumes.static_bindings:
            status = msgspec.structs.replace(b.pv.status, phase=VOLUME_BOUND)
            storage.update_pv(msgspec.structs.replace(b.pv, status=status))
            current = storage.persistent_volume_claim(b.pvc.metadata.namespace, b.pvc.metadata.name)
            pvc = current if current is not None else b.pvc
            annotations = {**pvc.metadata.annotations, ANN_BIND_COMPLETED: "yes"}
            storage.update_pvc(
                msgspec.structs.replace(
                    pvc,
                    metadata=msgspec.structs.replace(pvc.metadata, annotations=annotations),
                    spec=msgspec.structs.replace(pvc.spec, volume_name=b.pv.metadata.name),
                    status=msgspec.structs.replace(pvc.status, phase=CLAIM_BOUND),
                )
            )
        for pvc in volumes.dynamic_provisions:
            storage.update_pvc(pvc)

    def _all_bound(self, pod: Pod) -> bool:
        """Upstream: arePodVolumesBound (binder.go)."""
        storage = self.storage
        for volume in pod.spec.volumes:
            claim = claim_name_of(pod, volume)
            if claim is None:
                continue
            pvc = storage.assumed_pvc(f"{pod.metadata.namespace}/{claim[0]}")
            if pvc is None or not is_pvc_fully_bound(pvc):
                return False
        return True


def matching_candidates(
    pvc: PersistentVolumeClaim, volumes: Sequence[PersistentVolume]
) -> list[Candidate]:
    """The PVs of ``volumes`` that ``find_matching_volume`` may return for the claim on some
    node, in order: every check but the node's (the claim's size, mode, selector, class and
    access modes, the PV's phase and claim reference), which the PVs pass or fail alike on
    every node. ``find_matching_volume`` over them gives what it gives over ``volumes``.

    NOTE: a PreFilter's claims and PVs do not change during its attempt, so the Filter of
    every node reuses one list (``PodVolumeClaims.candidates``).
    """
    requested = storage_request(pvc)
    requested_class = pvc_class(pvc)
    selector = None
    if pvc.spec.selector is not None:
        try:
            selector = label_selector_as_selector(pvc.spec.selector)
        except SelectorError as err:
            raise BinderError(
                f"error creating internal label selector for claim: {pvc.key}: {err}"
            ) from err
    out: list[Candidate] = []
    name = pvc.metadata.name
    for pv in volumes:
        ref = pv.spec.claim_ref
        # NOTE: the name test first, inlined: most PVs of a class are bound to other claims.
        if ref is not None and (ref.name != name or not is_volume_bound_to_claim(pv, pvc)):
            continue
        size = pv_capacity(pv)
        if size.cmp(requested) < 0 or volume_mode_mismatches(pvc, pv):
            continue
        if pv.metadata.deletion_timestamp is not None:
            continue
        if is_volume_bound_to_claim(pv, pvc):
            out.append((pv, True))
            continue
        if pv.status.phase != VOLUME_AVAILABLE:
            continue
        if selector is not None and not selector.matches(pv.metadata.labels):
            continue
        if pv_class(pv) != requested_class:
            continue
        if (pvc.spec.volume_attributes_class_name or "") != (
            pv.spec.volume_attributes_class_name or ""
        ):
            continue
        if not check_access_modes(pvc, pv):
            continue
        out.append((pv, False))
    return out


def find_matching_volume(
    pvc: PersistentVolumeClaim,
    volumes: Sequence[PersistentVolume],
    node: Node,
    excluded: set[str],
    candidates: Sequence[Candidate] | None = None,
) -> PersistentVolume | None:
    """The PV pre-bound to the claim if it fits the node, else the smallest available PV of
    the claim's class that the claim's size, mode, selector, access modes and the node's
    labels allow (scheduler path: delayed binding, a node given). ``candidates``: the
    claim's ``matching_candidates`` among ``volumes``, when already taken.

    Upstream: FindMatchingVolume (component-helpers/storage/volume/pv_helpers.go, v1.35)
    """
    if candidates is None:
        candidates = matching_candidates(pvc, volumes)
    labels = node.metadata.labels
    smallest: PersistentVolume | None = None
    for pv, bound in candidates:
        if pv.metadata.name in excluded:
            continue
        affinity_ok = check_node_affinity(pv, labels)
        if bound:
            return pv if affinity_ok else None
        if not affinity_ok:
            continue
        if smallest is None or pv_capacity(smallest).cmp(pv_capacity(pv)) > 0:
            smallest = pv
    return smallest


def bind_volume_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> PersistentVolume:
    """The PV with its claimRef naming the claim, marked bound by the controller when it was
    not bound to it before (the same object when nothing changes).

    Upstream: GetBindVolumeToClaim (component-helpers/storage/volume/pv_helpers.go, v1.35)
    """
    ref = pv.spec.claim_ref
    meta = pvc.metadata
    bound_before = is_volume_bound_to_claim(pv, pvc)
    if ref is None or (ref.name, ref.namespace, ref.uid) != (meta.name, meta.namespace, meta.uid):
        ref = ObjectReference(
            kind="PersistentVolumeClaim",
            namespace=meta.namespace,
            name=meta.name,
            uid=meta.uid,
            api_version="v1",
        )
        pv = msgspec.structs.replace(pv, spec=msgspec.structs.replace(pv.spec, claim_ref=ref))
    if not bound_before and ANN_BOUND_BY_CONTROLLER not in pv.metadata.annotations:
        annotations = {**pv.metadata.annotations, ANN_BOUND_BY_CONTROLLER: "yes"}
        pv = msgspec.structs.replace(
            pv, metadata=msgspec.structs.replace(pv.metadata, annotations=annotations)
        )
    return pv


def _capacity_sufficient(capacity: CSIStorageCapacity, size: int) -> bool:
    """Upstream: capacitySufficient / volumeLimit (binder.go): maximumVolumeSize first."""
    limit = (
        capacity.maximum_volume_size
        if capacity.maximum_volume_size is not None
        else capacity.capacity
    )
    return limit is not None and parse_quantity(limit).value() >= size


def _node_has_access(node: Node, capacity: CSIStorageCapacity) -> bool:
    """Upstream: nodeHasAccess (binder.go): a nil topology is available nowhere."""
    if capacity.node_topology is None:
        return False
    try:
        selector = label_selector_as_selector(capacity.node_topology)
    except SelectorError:
        return False
    return selector.matches(node.metadata.labels)
