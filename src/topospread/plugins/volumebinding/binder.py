"""The volume binder: which of a pod's claims are bound, which PVs could take the unbound ones
on a node, which need provisioning and whether there is room for them; then assume, revert and
bind those decisions.

Upstream: pkg/scheduler/framework/plugins/volumebinding/binder.go (v1.35). This module holds
the binder itself (GetPodVolumeClaims, FindPodVolumes and its per-node-labels memo); its parts
live beside it as upstream divides binder.go's work: ``bound_claims`` (checkBoundClaims),
``matching`` (findMatchingVolumes, FindMatchingVolume), ``provisioning``
(checkVolumeProvisions, hasEnoughCapacity) and ``assume`` (AssumePodVolumes, BindPodVolumes).
``csi_migration`` translates an in-tree PV to CSI where the node's CSINode migrated its plugin
(tryTranslatePVToCSI), before its node affinity is checked. Not modelled: VolumeAttributesClass
matching beyond equal class names.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Final

from topospread.api.storage import (
    ANN_SELECTED_NODE,
    VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
)
from topospread.api.types import Node, Pod
from topospread.framework.storage import StorageLister
from topospread.plugins.helper.storage import claim_name_of, ephemeral_volume_is_for_pod, pvc_class
from topospread.plugins.nodevolumelimits.translation import TranslationError
from topospread.plugins.volumebinding import assume, bound_claims, provisioning
from topospread.plugins.volumebinding.csi_migration import (
    migrated_plugin_of,
    migrated_plugins,
    translate_in_tree_pv_to_csi,
)
from topospread.plugins.volumebinding.matching import (
    find_matching_volume,
    find_matching_volumes,
    matching_candidates,
)
from topospread.plugins.volumebinding.pod_volumes import (
    BinderError,
    BindingInfo,
    Candidate,
    PodVolumeClaims,
    PodVolumes,
    is_pvc_fully_bound,
)

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "BinderError",
    "BindingInfo",
    "Candidate",
    "PodVolumeClaims",
    "PodVolumes",
    "VolumeBinder",
    "find_matching_volume",
    "is_pvc_fully_bound",
    "matching_candidates",
]

# Conflict reasons (binder.go).
ERR_REASON_BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT: Final = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE: Final = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST: Final = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)


def _affinity_keys(pv: PersistentVolume) -> set[str]:
    """The label keys a PV's required node affinity reads."""
    affinity = pv.spec.node_affinity
    if affinity is None or affinity.required is None:
        return set()
    return {e.key for t in affinity.required.node_selector_terms for e in t.match_expressions}


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
        topologies, capacities' node topology; and, for bound claims of in-tree PVs, by which
        of their plugins the node's CSINode migrated (``csi_node_view``), last in the view.
        """
        keys = self.node_label_keys(claims)
        if keys is None:
            return None
        labels = node.metadata.labels
        view = tuple(labels.get(k) for k in keys)
        migrated = self.csi_node_view(claims, node.metadata.name)
        return view if migrated is None else (*view, migrated)

    def csi_node_view(self, claims: PodVolumeClaims, node_name: str) -> str | None:
        """Which in-tree plugins of the bound claims' PVs the node's CSINode migrated (sorted,
        comma-joined), the one thing of a node besides its labels that ``find_pod_volumes``
        reads (None: no such PV, nothing read). Taken after ``node_label_keys``."""
        plugins = claims.csi_plugins
        if not plugins:
            return None
        on_node = plugins & migrated_plugins(self.storage.csi_node(node_name))
        return ",".join(sorted(on_node))

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
        plugins: set[str] = set()
        for pvc in claims.bound_claims:
            pv = storage.assumed_pv(pvc.spec.volume_name)
            if pv is None:
                continue
            keys |= _affinity_keys(pv)
            plugin = migrated_plugin_of(pv)
            if plugin is not None:
                plugins.add(plugin)
                # Untranslatable: the nodes that migrated its plugin raise it, node by node.
                with contextlib.suppress(TranslationError):
                    keys |= _affinity_keys(translate_in_tree_pv_to_csi(pv))
        claims.csi_plugins = frozenset(plugins)
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
            bound_ok, pvs_found = bound_claims.check_bound_claims(
                self.storage, claims.bound_claims, node
            )
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
            unbound_ok, bindings, unmatched = find_matching_volumes(
                to_match, claims.unbound_volumes_delay_binding, node, claims.candidates
            )
            volumes.static_bindings = bindings
            to_provision += unmatched
        sufficient = True
        if to_provision:
            unbound_ok, sufficient, provisions = provisioning.check_volume_provisions(
                self.storage, to_provision, node
            )
            volumes.dynamic_provisions = provisions
        return unbound_ok, sufficient

    # -- Reserve, Unreserve, PreBind ---------------------------------------------------------

    def assume_pod_volumes(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """Upstream: AssumePodVolumes (binder.go); see ``assume.assume_pod_volumes``."""
        return assume.assume_pod_volumes(self.storage, pod, node_name, volumes)

    def revert_assumed_pod_volumes(self, volumes: PodVolumes) -> None:
        """Upstream: RevertAssumedPodVolumes (binder.go)."""
        assume.revert_assumed_pod_volumes(self.storage, volumes)

    def bind_pod_volumes(self, pod: Pod, volumes: PodVolumes) -> None:
        """Upstream: BindPodVolumes (binder.go); see ``assume.bind_pod_volumes``."""
        del pod
        assume.bind_pod_volumes(self.storage, volumes)

    def check_bindings(self, node: Node, volumes: PodVolumes) -> None:
        """What BindPodVolumes waits for after its API writes: raises ``BinderError``
        (``binding volumes: ...``) where they no longer suit the node.

        Upstream: BindPodVolumes / checkBindings (binder.go); see ``assume.check_bindings``
        """
        try:
            assume.check_bindings(self.storage, node, volumes)
        except BinderError as err:
            raise BinderError(f"binding volumes: {err}") from err
