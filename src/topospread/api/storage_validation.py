"""The API server's create validation of the storage objects, for the fields the volume plugins
read: access modes, capacities and requests (quantities), a volume's node affinity and its
source (``pv_source_validation``), the class a volume or claim names, a StorageClass's
provisioner, parameters, binding mode, reclaim policy and allowed topologies, a CSINode driver's
allocatable count, a capacity's quantities.

Upstream: ValidatePersistentVolume, ValidatePersistentVolumeClaim (pkg/apis/core/validation),
ValidateStorageClass, ValidateCSINode, ValidateCSIStorageCapacity (pkg/apis/storage/validation),
v1.35.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any, Final

from topospread.api.affinity_validation import validate_node_selector
from topospread.api.claim_validation import (
    access_mode_errors,
    class_name_errors,
    prepare_claim_spec,
    validate_claim_spec,
    volume_mode_errors,
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
    too_long,
)
from topospread.api.meta_validation import (
    validate_label_name,
    validate_object_meta,
)
from topospread.api.pv_source_validation import validate_pv_source
from topospread.api.resource_validation import (
    parse_field_quantity,
    validate_resource_quantity_value,
)
from topospread.api.storage import (
    RESOURCE_STORAGE,
    VOLUME_BINDING_MODES,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorTerm,
    VolumeNodeAffinity,
)
from topospread.util.validation import is_qualified_name

_SUPPORTED_RECLAIM_POLICIES: Final = ("Delete", "Recycle", "Retain")
RECYCLE_OF_ROOT: Final = "may not be 'recycle' for a hostPath mount of '/'"
NO_NODE_CONSTRAINTS: Final = "must specify required node constraints"
VAC_EMPTY: Final = "an empty string is disallowed"
VAC_NEEDS_CSI: Final = "has to be specified when using volumeAttributesClassName"
# A StorageClass's parameters: at most this many, of at most this many bytes in all.
_MAX_PARAMETERS: Final = 512
_MAX_PARAMETERS_SIZE: Final = 256 * (1 << 10)


def validate_storage_object(obj: Any) -> list[FieldError] | None:
    """The errors creating ``obj`` would give; None when ``obj`` is not a storage kind."""
    meta = Path.root("metadata")
    if isinstance(obj, PersistentVolume):
        errs = validate_object_meta(obj.metadata, meta, requires_namespace=False)
        return errs + _persistent_volume_spec(obj, Path.root("spec"))
    if isinstance(obj, PersistentVolumeClaim):
        errs = validate_object_meta(obj.metadata, meta, requires_namespace=True)
        return errs + _claim_spec(obj, Path.root("spec"))
    if isinstance(obj, StorageClass):
        errs = validate_object_meta(obj.metadata, meta, requires_namespace=False)
        return errs + _storage_class(obj)
    if isinstance(obj, CSINode):
        errs = validate_object_meta(obj.metadata, meta, requires_namespace=False)
        return errs + _csi_node(obj)
    if isinstance(obj, CSIStorageCapacity):
        errs = validate_object_meta(obj.metadata, meta, requires_namespace=True)
        return errs + _capacity(obj)
    if isinstance(obj, CSIDriver):
        return validate_object_meta(obj.metadata, meta, requires_namespace=False)
    return None


def _access_modes(modes: Sequence[str], path: Path, detail: str) -> list[FieldError]:
    errs = [] if modes else [required(path, detail)]
    return errs + access_mode_errors(modes, path)


def _quantity(name: str, value: str | int | float, path: Path) -> list[FieldError]:
    parsed = parse_field_quantity(value, path)
    if isinstance(parsed, FieldError):
        return [parsed]
    return validate_resource_quantity_value(name, parsed, path)


def _persistent_volume_spec(pv: PersistentVolume, path: Path) -> list[FieldError]:
    """Upstream: ValidatePersistentVolumeSpec (core validation.go, v1.35); not the checks of an
    inline (CSI migration) spec, which a PV object never is."""
    spec = pv.spec
    errs = _access_modes(spec.access_modes, path.child("accessModes"), "")
    capacity = path.child("capacity")
    if not spec.capacity:
        errs.append(required(capacity, ""))
    elif RESOURCE_STORAGE not in spec.capacity or len(spec.capacity) > 1:
        errs.append(not_supported(capacity, GoJSON(sorted(spec.capacity)), [RESOURCE_STORAGE]))
    for name, value in spec.capacity.items():
        errs += _quantity(name, value, capacity.key(name))
    policy = spec.persistent_volume_reclaim_policy
    policy_path = path.child("persistentVolumeReclaimPolicy")
    if policy and policy not in _SUPPORTED_RECLAIM_POLICIES:
        errs.append(not_supported(policy_path, policy, _SUPPORTED_RECLAIM_POLICIES))
    if spec.node_affinity is not None:
        errs += validate_volume_node_affinity(spec.node_affinity, path.child("nodeAffinity"))
    errs += validate_pv_source(spec, path, pv.metadata.name)
    # Go's path.Clean makes "//" (kept by normpath, as POSIX allows) "/" too.
    if (
        spec.host_path is not None
        and policy == "Recycle"
        and posixpath.normpath(spec.host_path.path) in ("/", "//")
    ):
        errs.append(forbidden(policy_path, RECYCLE_OF_ROOT))
    errs += class_name_errors(spec.storage_class_name, path.child("storageClassName"))
    errs += volume_mode_errors(spec.volume_mode, path.child("volumeMode"))
    return errs + _volume_attributes_class(pv, path)


def _volume_attributes_class(pv: PersistentVolume, path: Path) -> list[FieldError]:
    """A PV's volume attributes class (the VolumeAttributesClass gate, GA and on in v1.35): a
    class name when given, "" refused, and only for a CSI volume.

    Upstream: ValidatePersistentVolumeSpec (core validation.go, v1.35), its last check
    """
    name = pv.spec.volume_attributes_class_name
    if name is None:
        return []
    at = path.child("volumeAttributesClassName")
    errs = class_name_errors(name, at) if name else [required(at, VAC_EMPTY)]
    if pv.spec.csi is None:
        errs.append(required(path.child("csi"), VAC_NEEDS_CSI))
    return errs


def validate_volume_node_affinity(affinity: VolumeNodeAffinity, path: Path) -> list[FieldError]:
    """A volume's node affinity needs its required node selector, checked as a pod's required
    node affinity is (invalid label values refused: allowed only in an update of a volume that
    has them already).

    Upstream: validateVolumeNodeAffinity (pkg/apis/core/validation/validation.go, v1.35)
    """
    if affinity.required is None:
        return [required(path.child("required"), NO_NODE_CONSTRAINTS)]
    return validate_node_selector(affinity.required, path.child("required"))


def _claim_spec(pvc: PersistentVolumeClaim, path: Path) -> list[FieldError]:
    return validate_claim_spec(prepare_claim_spec(pvc.spec), path)


def _storage_class(sc: StorageClass) -> list[FieldError]:
    """The provisioner, parameters, reclaim policy, binding mode and allowed topologies, in
    upstream's order (a missing policy or mode is defaulted by the API server first).

    Upstream: ValidateStorageClass (storage validation.go, v1.35)
    """
    provisioner = Path.root("provisioner")
    errs: list[FieldError] = []
    if not sc.provisioner:
        errs.append(required(provisioner, ""))
    else:
        # The lowercased name is checked, and shown (ValidateQualifiedName of it).
        lowered = sc.provisioner.lower()
        errs += [invalid(provisioner, lowered, msg) for msg in is_qualified_name(lowered)]
    errs += _parameters(sc.parameters, Path.root("parameters"))
    if sc.reclaim_policy is not None and sc.reclaim_policy not in ("Delete", "Retain"):
        errs.append(
            not_supported(Path.root("reclaimPolicy"), sc.reclaim_policy, ("Delete", "Retain"))
        )
    mode = sc.volume_binding_mode
    if mode is not None and mode not in VOLUME_BINDING_MODES:
        errs.append(not_supported(Path.root("volumeBindingMode"), mode, VOLUME_BINDING_MODES))
    return errs + validate_allowed_topologies(sc.allowed_topologies, Path.root("allowedTopologies"))


def _parameters(params: Mapping[str, str], path: Path) -> list[FieldError]:
    """Upstream: validateParameters (storage validation.go, v1.35), empty allowed."""
    if len(params) > _MAX_PARAMETERS:
        return [too_long(path, _MAX_PARAMETERS)]
    errs = [invalid(path, key, "field can not be empty.") for key in params if not key]
    size = sum(len(k.encode()) + len(v.encode()) for k, v in params.items())
    if size > _MAX_PARAMETERS_SIZE:
        errs.append(too_long(path, _MAX_PARAMETERS_SIZE))
    return errs


def _topology_selector_term(
    term: TopologySelectorTerm, path: Path
) -> tuple[dict[str, frozenset[str]], list[FieldError]]:
    """The term's errors, and the term as a map of each key to its set of values (a repeated
    key's last values win).

    Upstream: ValidateTopologySelectorTerm, validateTopologySelectorLabelRequirement
    (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    terms: dict[str, frozenset[str]] = {}
    expressions = path.child("matchLabelExpressions")
    for i, req in enumerate(term.match_label_expressions):
        at = expressions.index(i)
        values = at.child("values")
        if not req.values:
            errs.append(required(values, ""))
        seen: set[str] = set()
        for j, value in enumerate(req.values):
            if value in seen:
                errs.append(duplicate(values.index(j), value))
            seen.add(value)
        errs += validate_label_name(req.key, at.child("key"))
        if req.key in terms:
            errs.append(duplicate(at.child("key"), req.key))
        terms[req.key] = frozenset(seen)
    return terms, errs


def validate_allowed_topologies(
    topologies: Sequence[TopologySelectorTerm], path: Path
) -> list[FieldError]:
    """Each term's expressions, and no term equal to an earlier one (keys and value sets
    compared, order aside).

    NOTE: upstream starts its list of the terms seen with as many nil maps as there are terms,
    and a nil map equals an empty one (Semantic.DeepEqual): a term without expressions is
    refused as a duplicate (``matchLabelExpressions: Duplicate value: ""``), once for each of
    them, and once more for each earlier empty term (the reported text dedupes them).

    Upstream: validateAllowedTopologies (pkg/apis/storage/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    seen: list[dict[str, frozenset[str]]] = [{} for _ in topologies]
    for i, term in enumerate(topologies):
        terms, term_errs = _topology_selector_term(term, path.index(i))
        errs += term_errs
        errs.extend(
            duplicate(path.index(i).child("matchLabelExpressions"), "")
            for other in seen
            if other == terms
        )
        seen.append(terms)
    return errs


def _csi_node(node: CSINode) -> list[FieldError]:
    """Upstream: validateCSINodeDriver (storage validation.go, v1.35): the name given, the
    allocatable count, and each driver named once."""
    errs: list[FieldError] = []
    drivers = Path.root("spec", "drivers")
    names: set[str] = set()
    for i, d in enumerate(node.spec.drivers):
        if not d.name:
            errs.append(required(drivers.index(i).child("name"), ""))
        count = d.allocatable.count if d.allocatable is not None else None
        if count is not None and count < 0:
            path = drivers.index(i).child("allocatable", "count")
            errs.append(invalid(path, count, "must be greater than or equal to 0"))
        if d.name in names:
            errs.append(duplicate(drivers.index(i).child("name"), d.name))
        names.add(d.name)
    return errs


def _capacity(cap: CSIStorageCapacity) -> list[FieldError]:
    """Upstream: ValidateCSIStorageCapacity (storage validation.go, v1.35), in part."""
    errs: list[FieldError] = []
    if not cap.storage_class_name:
        errs.append(required(Path.root("storageClassName"), ""))
    for name, value in (("capacity", cap.capacity), ("maximumVolumeSize", cap.maximum_volume_size)):
        if value is not None:
            errs += _quantity(name, value, Path.root(name))
    return errs
