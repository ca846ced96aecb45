"""The volume binder's values: its error, the binding decisions it makes for a pod on a node
(``PodVolumes``) and the pod's claims as its PreFilter splits them (``PodVolumeClaims``),
shared by the binder's parts (matching, bound claims, provisioning, assume and bind).

Upstream: BindingInfo, PodVolumes, PodVolumeClaims (binder.go, v1.35)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from topospread.api.storage import ANN_BIND_COMPLETED, PersistentVolume, PersistentVolumeClaim


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
    # The in-tree plugins of the bound claims' PVs that the binder translates to CSI on a
    # node whose CSINode migrated them (taken with ``label_keys``): the node's CSINode
    # annotation joins the labels in what its answer depends on.
    csi_plugins: frozenset[str] = frozenset()
    by_labels: dict[tuple[str | None, ...], tuple[PodVolumes, list[str]]] = field(
        default_factory=dict
    )


def is_pvc_fully_bound(pvc: PersistentVolumeClaim) -> bool:
    """Upstream: isPVCFullyBound (binder.go)."""
    return bool(pvc.spec.volume_name) and ANN_BIND_COMPLETED in pvc.metadata.annotations
