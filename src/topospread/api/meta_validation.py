"""Object metadata and labels as the API server validates them, with its messages: label keys,
values and selectors (apimachinery's pkg/apis/meta/v1/validation) and the keys of
matchLabelKeys and mismatchLabelKeys checked against a selector, annotations, names and
``ValidateObjectMeta`` (apimachinery's pkg/api/validation), and the names the API server
generates. Label maps are checked in sorted key order (Go's map order is random).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

from topospread.api.field import (
    FieldError,
    GoJSON,
    Path,
    forbidden,
    invalid,
    required,
    too_long,
)
from topospread.api.types import (
    LabelSelector,
    LabelSelectorRequirement,
    ObjectMeta,
)
from topospread.util.validation import (
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    valid_dns1123_subdomain,
)

TOTAL_ANNOTATION_SIZE_LIMIT_B: Final = 256 * (1 << 10)

# Name generation (storage/names.SimpleNameGenerator): a 58-byte prefix and 5 random characters.
_MAX_GENERATED_BASE_LENGTH: Final = 58
_GENERATED_SUFFIX: Final = "xxxxx"


# ---------------------------------------------------------------------------------------------
# Labels and label selectors (apimachinery/pkg/apis/meta/v1/validation)


def validate_label_name(name: str, path: Path) -> list[FieldError]:
    """Each problem of ``name`` as a label key, reported at ``path``.

    Upstream: ValidateLabelName (apimachinery/pkg/apis/meta/v1/validation/validation.go, v1.35)
    """
    return [invalid(path, name, msg) for msg in is_qualified_name(name)]


def validate_labels(labels: Mapping[str, str], path: Path) -> list[FieldError]:
    """Keys and values of a label map; every error is reported at ``path`` itself.

    Upstream: ValidateLabels (apimachinery/pkg/apis/meta/v1/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    for key in sorted(labels):
        errs.extend(validate_label_name(key, path))
        errs.extend(invalid(path, labels[key], msg) for msg in is_valid_label_value(labels[key]))
    return errs


def validate_label_selector_requirement(
    req: LabelSelectorRequirement, path: Path, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """Operator and values, key, then (unless allowed) each value as a label value.

    Upstream: ValidateLabelSelectorRequirement (apimachinery/pkg/apis/meta/v1/validation, v1.35)
    """
    errs: list[FieldError] = []
    if req.operator in ("In", "NotIn"):
        if not req.values:
            errs.append(
                required(
                    path.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"
                )
            )
    elif req.operator in ("Exists", "DoesNotExist"):
        if req.values:
            errs.append(
                forbidden(
                    path.child("values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    else:
        errs.append(
            invalid(path.child("operator"), GoJSON(req.operator), "not a valid selector operator")
        )
    errs.extend(validate_label_name(req.key, path.child("key")))
    if not allow_invalid_label_value:
        values = path.child("values")
        for i, value in enumerate(req.values):
            errs.extend(invalid(values.index(i), value, msg) for msg in is_valid_label_value(value))
    return errs


def validate_label_selector(
    selector: LabelSelector | None, path: Path, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """A nil selector is valid.

    Upstream: ValidateLabelSelector (apimachinery/pkg/apis/meta/v1/validation/validation.go, v1.35)
    """
    if selector is None:
        return []
    errs = validate_labels(selector.match_labels, path.child("matchLabels"))
    expressions = path.child("matchExpressions")
    for i, req in enumerate(selector.match_expressions):
        errs.extend(
            validate_label_selector_requirement(
                req, expressions.index(i), allow_invalid_label_value=allow_invalid_label_value
            )
        )
    return errs


# ---------------------------------------------------------------------------------------------
# matchLabelKeys / mismatchLabelKeys (pkg/apis/core/validation)


def _validate_label_keys(
    keys: Sequence[str], selector: LabelSelector | None, path: Path
) -> list[FieldError]:
    """Upstream: validateLabelKeys (pkg/apis/core/validation/validation.go, v1.35)"""
    if not keys:
        return []
    if selector is None:
        return [forbidden(path, "must not be specified when labelSelector is not set")]
    errs: list[FieldError] = []
    for i, key in enumerate(keys):
        errs.extend(validate_label_name(key, path.index(i)))
    return errs


def validate_match_label_keys_and_mismatch_label_keys(
    path: Path,
    match_label_keys: Sequence[str],
    mismatch_label_keys: Sequence[str],
    selector: LabelSelector | None,
) -> list[FieldError]:
    """The v1.34+ rules, written for a selector the API server has already merged into.

    A ``matchLabelKeys`` key may appear once in the selector (that is the merged requirement);
    a second appearance is an error reported at ``path[i]`` — the term's own path subscripted
    with the key's index, as in ``spec.topologySpreadConstraints[0][1]`` (upstream issue
    #130554), not at ``...matchLabelKeys[1]``.

    Upstream: ValidateMatchLabelKeysAndMismatchLabelKeys (pkg/apis/core/validation, v1.35)
    """
    errs = _validate_label_keys(match_label_keys, selector, path.child("matchLabelKeys"))
    errs += _validate_label_keys(mismatch_label_keys, selector, path.child("mismatchLabelKeys"))
    if selector is not None:
        key_index = {key: i for i, key in enumerate(match_label_keys)}  # the last index wins
        seen = set(selector.match_labels)
        for expression in selector.match_expressions:
            key = expression.key
            if key in key_index and key in seen:
                errs.append(
                    invalid(
                        path.index(key_index[key]),
                        key,
                        "exists in both matchLabelKeys and labelSelector",
                    )
                )
            seen.add(key)
    mismatch = set(mismatch_label_keys)
    for i, key in enumerate(match_label_keys):
        if key in mismatch:
            errs.append(
                invalid(
                    path.child("matchLabelKeys").index(i),
                    key,
                    "exists in both matchLabelKeys and mismatchLabelKeys",
                )
            )
    return errs


# ---------------------------------------------------------------------------------------------
# Object metadata


def _mask_trailing_dash(name: str) -> str:
    """Upstream's quirk: the last *two* bytes give way to one ``a``.

    Upstream: maskTrailingDash (apimachinery/pkg/api/validation/generic.go, v1.35)
    """
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """Upstream: NameIsDNSSubdomain (apimachinery/pkg/api/validation/generic.go, v1.35)"""
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_valid_dns_subdomain(name: str, prefix: bool) -> bool:
    """Whether ``name_is_dns_subdomain(name, prefix)`` is empty, without its messages."""
    return valid_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """Upstream: NameIsDNSLabel (apimachinery/pkg/api/validation/generic.go, v1.35)"""
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def validate_annotations(annotations: Mapping[str, str], path: Path) -> list[FieldError]:
    """Keys are label keys, compared in lower case; at most 256 KiB of keys and values.

    Upstream: ValidateAnnotations (apimachinery/pkg/api/validation/objectmeta.go, v1.35)
    """
    errs: list[FieldError] = []
    for key in sorted(annotations):
        errs.extend(invalid(path, key, msg) for msg in is_qualified_name(key.lower()))
    total = sum(len(k.encode()) + len(v.encode()) for k, v in annotations.items())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errs


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    """Upstream: NameIsDNS1035Label (apimachinery/pkg/api/validation/generic.go, v1.35)"""
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


def validate_object_meta(
    meta: ObjectMeta,
    path: Path,
    *,
    requires_namespace: bool,
    name_rule: Callable[[str, bool], list[str]] = name_is_dns_subdomain,
    labels_too: bool = True,
) -> list[FieldError]:
    """Name (by ``name_rule``: a DNS subdomain for most kinds), generateName, namespace, labels
    and annotation keys (the last two only with ``labels_too``: they come last, and
    validate_pod keeps theirs).

    Owner references, finalizers and managed fields are not checked. Name generation is
    expected to have happened already (see :func:`validate_pod`).

    Upstream: ValidateObjectMetaAccessor (apimachinery/pkg/api/validation/objectmeta.go, v1.35)
    """
    errs: list[FieldError] = []
    if meta.generate_name:
        errs.extend(
            invalid(path.child("generateName"), meta.generate_name, msg)
            for msg in name_rule(meta.generate_name, True)
        )
    if not meta.name:
        errs.append(required(path.child("name"), "name or generateName is required"))
    else:
        errs.extend(
            invalid(path.child("name"), meta.name, msg) for msg in name_rule(meta.name, False)
        )
    namespace = path.child("namespace")
    if requires_namespace:
        if not meta.namespace:
            errs.append(required(namespace))
        else:
            errs.extend(
                invalid(namespace, meta.namespace, msg)
                for msg in name_is_dns_label(meta.namespace, False)
            )
    elif meta.namespace:
        errs.append(forbidden(namespace, "not allowed on this type"))
    if labels_too:
        errs += validate_labels(meta.labels, path.child("labels"))
        errs += validate_annotations(meta.annotations, path.child("annotations"))
    return errs


def generate_name(base: str) -> str:
    """A name as the API server generates it from ``generateName``, with a fixed suffix.

    Upstream appends five random characters from ``bcdfghjklmnpqrstvwxz2456789``; any of them
    validates the same, so a fixed ``xxxxx`` keeps results reproducible.

    Upstream: simpleNameGenerator.GenerateName (apiserver/pkg/storage/names/generate.go, v1.35)
    """
    return base[:_MAX_GENERATED_BASE_LENGTH] + _GENERATED_SUFFIX
