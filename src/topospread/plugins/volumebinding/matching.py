"""Finding the PVs a pod's unbound delayed claims could take on a node: smallest claims first,
each the smallest fitting PV not chosen yet, by everything the PV controller would check.

Upstream: findMatchingVolumes (binder.go) and FindMatchingVolume
(component-helpers/storage/volume/pv_helpers.go), v1.35. VolumeAttributesClass matching is
modelled as equal class names only.
"""

from __future__ import annotations

from collections.abc import Sequence

from topospread.api.storage import VOLUME_AVAILABLE, PersistentVolume, PersistentVolumeClaim
from topospread.api.types import Node
from topospread.labels.selector import SelectorError, label_selector_as_selector
from topospread.plugins.helper.storage import (
    check_access_modes,
    check_node_affinity,
    is_volume_bound_to_claim,
    pv_capacity,
    pv_class,
    pvc_class,
    storage_request,
    volume_mode_mismatches,
)
from topospread.plugins.volumebinding.pod_volumes import BinderError, BindingInfo, Candidate


def find_matching_volumes(
    claims: Sequence[PersistentVolumeClaim],
    by_class: dict[str, Sequence[PersistentVolume]],
    node: Node,
    memo: dict[str, list[Candidate]] | None = None,
) -> tuple[bool, list[BindingInfo], list[PersistentVolumeClaim]]:
    """Smallest claims first, each the smallest fitting PV not chosen yet: (all matched, the
    bindings, the claims left unmatched). ``memo``: the claims' ``matching_candidates`` by
    claim key, filled on first use.

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
        # Before the claim reference: a PV pre-bound to the claim must match its class too.
        if (pvc.spec.volume_attributes_class_name or "") != (
            pv.spec.volume_attributes_class_name or ""
        ):
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
