"""What the workload controllers share: stamping pods out of templates, names, hashes,
claiming. The state of a pod as a controller reads it and the order in which controllers delete
pods are active_pods.py's.

The controllers are pure functions of a workload object, the pods (and nodes) they see and a
seeded ``random.Random``; they return the actions the controller would take. Where upstream
asks the API server to create an object, the action carries the object as the API server would
store it: ``generateName`` resolved to a name drawn from the seeded source, a ``uid`` drawn from
it too, and, when the caller passes ``now``, the ``creationTimestamp``. A controller sees only
its own pods, the API server every pod: the caller that stores the pods (the simulator) checks
each name against its namespace's pods, draws a fresh name for a generated one that is taken
(``retry_generate_name``) and refuses a create whose given name is taken. The simulator admits
created pods like any other (defaulting, priority).

Statuses of workloads (a ReplicaSet's available replicas, a Deployment's updated replicas)
are recomputed from the pods at every sync, as if every status write had already landed.

Time. ``now`` is nanoseconds since the epoch, or None for a simulation without a clock; without
it, orders that depend on age fall back to upstream's "zero time" rules, and ``minReadySeconds``
is treated as already elapsed. A pod made ready by the simulator (no Ready condition) has no
ready time, so it is available at once.
"""

from __future__ import annotations

import datetime
import math
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Generic, Protocol, TypeVar, cast

import msgspec

from topospread.api.types import (
    LabelSelector,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodStatus,
    PodTemplateSpec,
)
from topospread.errors import ValidationError
from topospread.framework.preemption import parse_rfc3339_nanos
from topospread.labels.selector import Selector, SelectorError, label_selector_as_selector
from topospread.util.validation import is_dns1123_subdomain

# apimachinery/pkg/util/rand: the characters of generated names and of safe-encoded hashes
# (vowels left out to avoid bad words).
ALPHANUMS: Final = "bcdfghjklmnpqrstvwxz2456789"
_ALPHANUMS_IDX_BITS: Final = 5
_ALPHANUMS_IDX_MASK: Final = (1 << _ALPHANUMS_IDX_BITS) - 1
_MAX_ALPHANUMS_PER_INT: Final = 63 // _ALPHANUMS_IDX_BITS

# apiserver/pkg/storage/names: generateName appends 5 random characters to at most 58.
MAX_NAME_LENGTH: Final = 63
RANDOM_LENGTH: Final = 5
MAX_GENERATED_NAME_LENGTH: Final = MAX_NAME_LENGTH - RANDOM_LENGTH

# apiserver/pkg/registry/generic/registry/store.go: a create from generateName is tried at most
# this many times, each with a freshly generated name, while the name is taken (RetryGenerateName:
# GA and locked on since v1.32). When every attempt's name is taken the create fails with
# GENERATE_NAME_CONFLICT (errors.NewGenerateNameConflict), the last name quoted.
MAX_NAME_GENERATION_CREATE_ATTEMPTS: Final = 8
GENERATE_NAME_CONFLICT: Final = (
    '{resource} "{name}" already exists, the server was not able to generate a unique name for '
    "the object"
)


class _Workload(Protocol):
    """Any API object with an identity: what owner references point at."""

    @property
    def api_version(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def metadata(self) -> ObjectMeta: ...


T = TypeVar("T", bound=_Workload)
# ---------------------------------------------------------------------------------------------
# Actions


@dataclass(frozen=True, slots=True)
class PodActions:
    """What one sync of a controller does to pods, in the order upstream issues the calls.

    ``create``: new pods, complete; ``delete``: pods to delete, first victim first;
    ``update``: pods rewritten in place (adopted or released ownerReferences, a StatefulSet
    pod's identity labels).
    """

    create: tuple[Pod, ...] = ()
    delete: tuple[Pod, ...] = ()
    update: tuple[Pod, ...] = ()

    def __add__(self, other: PodActions) -> PodActions:
        return PodActions(
            create=self.create + other.create,
            delete=self.delete + other.delete,
            update=self.update + other.update,
        )

    def __bool__(self) -> bool:
        return bool(self.create or self.delete or self.update)


# ---------------------------------------------------------------------------------------------
# Owners


def get_controller_of(meta: ObjectMeta) -> OwnerReference | None:
    """The owner reference with ``controller: true``.

    Upstream: GetControllerOfNoCopy (apimachinery/pkg/apis/meta/v1/controller_ref.go, v1.35)
    """
    for ref in meta.owner_references:
        if ref.controller:
            return ref
    return None


def new_controller_ref(owner: _Workload) -> OwnerReference:
    """Upstream: NewControllerRef (apimachinery/pkg/apis/meta/v1/controller_ref.go, v1.35)"""
    return OwnerReference(
        api_version=owner.api_version,
        kind=owner.kind,
        name=owner.metadata.name,
        uid=owner.metadata.uid,
        controller=True,
        block_owner_deletion=True,
    )


def is_controlled_by(meta: ObjectMeta, owner: _Workload) -> bool:
    """Whether ``owner`` is the object's controller.

    Upstream compares UIDs only. Manifests often leave ``uid`` out, so when either side has no
    UID the kind and name decide (within a namespace, a kind's names are unique).
    """
    ref = get_controller_of(meta)
    if ref is None:
        return False
    if ref.uid and owner.metadata.uid:
        return ref.uid == owner.metadata.uid
    return ref.kind == owner.kind and ref.name == owner.metadata.name


@dataclass(frozen=True, slots=True)
class Claim(Generic[T]):
    """The objects a controller owns after claiming, and those it rewrote to get there."""

    owned: list[T]
    updated: list[T] = field(default_factory=list)


# What claiming does with one object (``claim``'s verdicts).
CLAIM_SKIP: Final = 0  # not the owner's to take: another's, inactive, unselected orphan
CLAIM_OWNED: Final = 1  # its own, still selected
CLAIM_RELEASE: Final = 2  # its own, no longer selected: the controller reference goes
CLAIM_ADOPT: Final = 3  # a selected orphan: it gains the owner's controller reference

# An object's verdict kept by its key while it is the same object (``claim``'s ``memo``).
ClaimMemo = dict[str, tuple[Any, int]]


def claim(
    owner: _Workload,
    selector: Selector,
    objects: Iterable[T],
    match: Callable[[T], bool] | None = None,
    *,
    keep: Callable[[T], bool] | None = None,
    memo: ClaimMemo | None = None,
) -> Claim[T]:
    """Claim objects (pods, or a Deployment's ReplicaSets) as the controller-ref manager does:
    its own that its selector (and ``match``) still select, plus orphans it selects, which it
    adopts (their ownerReferences gain its controller reference). Its own that no longer
    match are released. Objects controlled by another owner are left alone. An owner being
    deleted neither adopts nor releases. The owned objects come back sorted by name
    (upstream's order is the informer's). ``keep`` narrows ``objects`` first (the active
    pods, say), asked only of those the owner may claim.

    ``memo`` keeps each object's verdict while the object is the same (objects are never
    changed in place): pass one per owner identity, deletion, selector, ``match`` and
    ``keep`` (PodClaims does), so that claiming again after a few pods changed reads the
    others' verdicts.

    Upstream: BaseControllerRefManager.ClaimObject (controller_ref_manager.go, v1.35)
    """
    candidates: list[tuple[T, int]] = []
    for obj in objects:
        if memo is None:
            found = claim_verdict(owner, selector, obj, match, keep)
        else:
            key = f"{obj.metadata.namespace}/{obj.metadata.name}"
            hit = memo.get(key)
            if hit is not None and hit[0] is obj:
                found = hit[1]
            else:
                found = claim_verdict(owner, selector, obj, match, keep)
                memo[key] = (obj, found)
        if found != CLAIM_SKIP:
            candidates.append((obj, found))
    candidates.sort(key=lambda c: (c[0].metadata.namespace, c[0].metadata.name))
    return claim_candidates(owner, candidates)


def claim_verdict(
    owner: _Workload,
    selector: Selector,
    obj: T,
    match: Callable[[T], bool] | None = None,
    keep: Callable[[T], bool] | None = None,
) -> int:
    """What claiming does with one object (CLAIM_SKIP, CLAIM_OWNED, CLAIM_RELEASE or
    CLAIM_ADOPT): a function of the owner, its selector, ``match``, ``keep`` and the object
    alone, which is what lets a caller keep verdicts per object (``claim``'s ``memo``, the
    fast path's claim_index.py)."""
    owner_meta = owner.metadata
    meta = obj.metadata
    namespace = owner_meta.namespace
    if namespace and meta.namespace != namespace:
        return CLAIM_SKIP
    deleting = owner_meta.deletion_timestamp is not None
    ref = get_controller_of(meta)
    if ref is not None:
        # Objects another owner controls are never touched.
        uid = owner_meta.uid
        mine = (
            ref.uid == uid
            if ref.uid and uid
            else ref.kind == owner.kind and ref.name == owner_meta.name
        )
        if not mine or (keep is not None and not keep(obj)):
            return CLAIM_SKIP
        if not is_controlled_by(meta, owner):
            return CLAIM_SKIP
        if selector.matches(meta.labels) and (match is None or match(obj)):
            return CLAIM_OWNED
        return CLAIM_SKIP if deleting else CLAIM_RELEASE
    if keep is not None and not keep(obj):
        return CLAIM_SKIP
    if deleting or meta.deletion_timestamp is not None:
        return CLAIM_SKIP
    if not selector.matches(meta.labels) or (match is not None and not match(obj)):
        return CLAIM_SKIP
    return CLAIM_ADOPT


def claim_candidates(owner: _Workload, candidates: Iterable[tuple[T, int]]) -> Claim[T]:
    """The claim made of the objects whose verdict is not CLAIM_SKIP, given with their
    verdicts in (namespace, name) order: the owned objects, adopted ones included, and
    the released and adopted objects rewritten."""
    owned: list[T] = []
    updated: list[T] = []
    for obj, found in candidates:
        meta = obj.metadata
        if found == CLAIM_OWNED:
            owned.append(obj)
        elif found == CLAIM_RELEASE:
            ref = get_controller_of(meta)
            kept = [r for r in meta.owner_references if r is not ref]
            updated.append(_with_owner_references(obj, kept))
        else:
            refs = [*meta.owner_references, new_controller_ref(owner)]
            adopted = _with_owner_references(obj, refs)
            updated.append(adopted)
            owned.append(adopted)
    return Claim(owned, updated)


def claim_pods(
    owner: _Workload,
    selector: Selector,
    pods: Iterable[Pod],
    match: Callable[[Pod], bool] | None = None,
    *,
    keep: Callable[[Pod], bool] | None = None,
    memo: ClaimMemo | None = None,
) -> Claim[Pod]:
    """Upstream: PodControllerRefManager.ClaimPods (controller_ref_manager.go, v1.35)"""
    return claim(owner, selector, pods, match, keep=keep, memo=memo)


def _with_owner_references(obj: T, refs: list[OwnerReference]) -> T:
    meta = msgspec.structs.replace(obj.metadata, owner_references=refs)
    return cast(T, msgspec.structs.replace(cast(Any, obj), metadata=meta))


# ---------------------------------------------------------------------------------------------
# Names, UIDs and times


def random_string(rng: random.Random, n: int) -> str:
    """``n`` characters of ALPHANUMS, five bits of a 63-bit draw at a time, as upstream draws
    them (indices past the alphabet are skipped).

    Upstream: String (apimachinery/pkg/util/rand/rand.go, v1.35)
    """
    out: list[str] = []
    bits = rng.getrandbits(63)
    remaining = _MAX_ALPHANUMS_PER_INT
    while len(out) < n:
        if remaining == 0:
            bits, remaining = rng.getrandbits(63), _MAX_ALPHANUMS_PER_INT
        idx = bits & _ALPHANUMS_IDX_MASK
        if idx < len(ALPHANUMS):
            out.append(ALPHANUMS[idx])
        bits >>= _ALPHANUMS_IDX_BITS
        remaining -= 1
    return "".join(out)


def generate_name(base: str, rng: random.Random) -> str:
    """``metadata.generateName`` resolved as the API server resolves it.

    Upstream: simpleNameGenerator.GenerateName (apiserver/pkg/storage/names/generate.go, v1.35)
    """
    if len(base) > MAX_GENERATED_NAME_LENGTH:
        base = base[:MAX_GENERATED_NAME_LENGTH]
    return base + random_string(rng, RANDOM_LENGTH)


def retry_generate_name(pod: Pod, rng: random.Random, taken: Callable[[str], bool]) -> Pod:
    """A pod created from its ``generateName`` as the API server's create retries it: its
    name (the first attempt's, drawn by ``create_pod``; drawn here when empty) and, while the
    name is taken among the pods of its namespace, a fresh name from the same seeded source,
    at most MAX_NAME_GENERATION_CREATE_ATTEMPTS attempts in all. The pod comes back with the
    last name drawn: if that is still taken, the create fails (GENERATE_NAME_CONFLICT) and
    nothing is stored.

    Upstream: Store.createWithGenerateNameRetry (registry/generic/registry/store.go, v1.35)
    """
    base = pod.metadata.generate_name
    name = pod.metadata.name or generate_name(base, rng)
    for _ in range(MAX_NAME_GENERATION_CREATE_ATTEMPTS - 1):
        if not taken(name):
            break
        name = generate_name(base, rng)
    if name == pod.metadata.name:
        return pod
    return msgspec.structs.replace(pod, metadata=msgspec.structs.replace(pod.metadata, name=name))


def pods_prefix(controller_name: str) -> str:
    """``<name>-`` when that is a valid generateName, else the bare name.

    Upstream: getPodsPrefix (pkg/controller/controller_utils.go, v1.35)
    """
    prefix = f"{controller_name}-"
    # ValidatePodName(prefix, true) masks the trailing dash before checking the subdomain.
    if is_dns1123_subdomain(prefix[:-1] + "a"):
        return controller_name
    return prefix


def new_uid(rng: random.Random) -> str:
    """A version 4 UUID drawn from the seeded source, as the API server gives every object."""
    value = rng.getrandbits(128)
    value = (value & ~(0xF000 << 64)) | (0x4000 << 64)  # version 4
    value = (value & ~(0xC000 << 48)) | (0x8000 << 48)  # RFC 4122 variant
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def format_time(nanos: int) -> str:
    """RFC 3339 to the second, as metav1.Time is stored and printed."""
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    when = epoch + datetime.timedelta(seconds=nanos // 1_000_000_000)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | None) -> int | None:
    """Nanoseconds since the epoch, or None for the zero time (unset or unreadable)."""
    return parse_rfc3339_nanos(text) if text else None


def creation_time(meta: ObjectMeta) -> int | None:
    return parse_time(meta.creation_timestamp)


def stamp(meta: ObjectMeta, rng: random.Random, now: int | None) -> ObjectMeta:
    """What the API server fills in on create: the uid and the creation timestamp."""
    return msgspec.structs.replace(
        meta,
        uid=meta.uid or new_uid(rng),
        creation_timestamp=format_time(now) if now is not None else meta.creation_timestamp,
    )


# ---------------------------------------------------------------------------------------------
# Pods from templates


def get_pod_from_template(
    template: PodTemplateSpec, parent_name: str, controller_ref: OwnerReference | None
) -> Pod:
    """A pod with the template's labels, annotations and spec, ``generateName`` from the
    parent's name and the controller reference.

    Upstream: GetPodFromTemplate (pkg/controller/controller_utils.go, v1.35)
    """
    meta = ObjectMeta(
        generate_name=pods_prefix(parent_name),
        labels=dict(template.metadata.labels),
        annotations=dict(template.metadata.annotations),
        owner_references=[controller_ref] if controller_ref is not None else [],
    )
    return Pod(metadata=meta, spec=template.spec)


def create_pod(
    pod: Pod, namespace: str, rng: random.Random, now: int | None, *, name: str = ""
) -> Pod:
    """The pod as the API server stores it after a controller's create: in ``namespace``,
    named ``name`` or from its generateName, with a uid and (given ``now``) its creation time.
    """
    meta = pod.metadata
    resolved = name or meta.name or generate_name(meta.generate_name, rng)
    meta = msgspec.structs.replace(meta, name=resolved, namespace=namespace)
    return msgspec.structs.replace(pod, metadata=stamp(meta, rng, now), status=PodStatus())


# ---------------------------------------------------------------------------------------------
# Hashes


_FNV32_OFFSET: Final = 0x811C9DC5
_FNV32_PRIME: Final = 0x01000193


def fnv32a(data: bytes, h: int = _FNV32_OFFSET) -> int:
    """FNV-1a, 32 bits (Go's hash/fnv New32a), continuing from ``h``."""
    for byte in data:
        h = ((h ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return h


def fnv32(data: bytes, h: int = _FNV32_OFFSET) -> int:
    """FNV-1, 32 bits (Go's hash/fnv New32), continuing from ``h``."""
    for byte in data:
        h = ((h * _FNV32_PRIME) & 0xFFFFFFFF) ^ byte
    return h


def safe_encode_string(s: str) -> str:
    """Map each character onto ALPHANUMS by its code point.

    Upstream: SafeEncodeString (apimachinery/pkg/util/rand/rand.go, v1.35)
    """
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in s)


def canonical_json(obj: object) -> bytes:
    """Compact JSON with every key sorted and every unset field left out."""
    return msgspec.json.encode(obj, order="sorted")


def compute_hash(template: PodTemplateSpec, collision_count: int | None) -> str:
    """The ``pod-template-hash`` of a template: FNV-32a, then the collision count, then the
    decimal digits safe-encoded (so 1 to 10 characters of ``4-9``, ``b``, ``c``, ``d``, ``f``).

    Upstream hashes the template as Go's spew printer dumps the Go struct, which Python cannot
    reproduce; this hashes the template's canonical JSON instead (sorted keys, unset fields
    left out), and follows upstream for everything else: FNV-32a, the collision count appended
    as 8 little-endian bytes of which only the low 4 are written, SafeEncodeString of the
    decimal sum. So hashes are stable and shaped like upstream's but not equal to them.

    Upstream: ComputeHash (pkg/controller/controller_utils.go, v1.35)
    """
    h = fnv32a(canonical_json(template))
    if collision_count is not None:
        h = fnv32a((collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4), h)
    return safe_encode_string(str(h))


def template_patch(template: PodTemplateSpec) -> bytes:
    """The ControllerRevision data of a StatefulSet or DaemonSet: its template as a replace
    patch, ``{"spec":{"template":{...,"$patch":"replace"}}}``, keys sorted.

    Upstream: getPatch (pkg/controller/statefulset/stateful_set_utils.go, v1.35)
    """
    raw = msgspec.to_builtins(template, order="sorted")
    raw["$patch"] = "replace"
    return canonical_json({"spec": {"template": raw}})


def hash_controller_revision(data: bytes, probe: int | None) -> str:
    """A ControllerRevision's hash: FNV-1 over its data, then the probe's decimal digits.

    Upstream: HashControllerRevision (pkg/controller/history/controller_history.go, v1.35)
    """
    h = fnv32(data)
    if probe is not None:
        h = fnv32(str(probe).encode(), h)
    return safe_encode_string(str(h))


def equal_ignore_hash(a: PodTemplateSpec, b: PodTemplateSpec, label: str) -> bool:
    """Templates equal once ``label`` (the hash label) is dropped from both.

    Upstream: EqualIgnoreHash (pkg/controller/deployment/util/deployment_util.go, v1.35)
    """
    return _without_label(a, label) == _without_label(b, label)


def _without_label(template: PodTemplateSpec, label: str) -> PodTemplateSpec:
    if label not in template.metadata.labels:
        return template
    labels = {k: v for k, v in template.metadata.labels.items() if k != label}
    meta = msgspec.structs.replace(template.metadata, labels=labels)
    return msgspec.structs.replace(template, metadata=meta)


def with_label(template: PodTemplateSpec, key: str, value: str) -> PodTemplateSpec:
    """Upstream: CloneAndAddLabel (pkg/util/labels/labels.go, v1.35), on a template."""
    meta = msgspec.structs.replace(
        template.metadata, labels={**template.metadata.labels, key: value}
    )
    return msgspec.structs.replace(template, metadata=meta)


def selector_with_label(selector: LabelSelector | None, key: str, value: str) -> LabelSelector:
    """Upstream: CloneSelectorAndAddLabel (pkg/util/labels/labels.go, v1.35)"""
    if selector is None:
        return LabelSelector(match_labels={key: value})
    return msgspec.structs.replace(selector, match_labels={**selector.match_labels, key: value})


# ---------------------------------------------------------------------------------------------
# Int or percent


def get_scaled_value_from_int_or_percent(
    value: int | str, total: int, round_up: bool, where: str
) -> int:
    """An integer as is; ``"N%"`` as N% of ``total``, rounded up or down. ``where`` (the
    object and field) prefixes the error for anything else.

    Upstream: GetScaledValueFromIntOrPercent (apimachinery/pkg/util/intstr/intstr.go, v1.35)
    """
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise ValidationError(
            f"{where}: Invalid value: {value!r}: invalid type: string is not a percentage"
        )
    digits = value[:-1]
    if re.fullmatch(r"[+-]?[0-9]+", digits) is None:
        raise ValidationError(f"{where}: Invalid value: {value!r}: not an integer percentage")
    scaled = float(int(digits)) * float(total) / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


# ---------------------------------------------------------------------------------------------
# Selectors


def workload_selector(obj: _Workload, selector: LabelSelector | None) -> Selector:
    """``spec.selector`` compiled; an invalid one is a ValidationError naming the object."""
    try:
        return label_selector_as_selector(selector)
    except SelectorError as err:
        raise ValidationError(f"{describe(obj)}: spec.selector: {err}") from err


def check_selector_matches_template(
    obj: _Workload, selector: Selector, template: PodTemplateSpec
) -> None:
    """The API server rejects a workload without a selector, with an empty one, or with one
    that does not select its own template (its controller would create pods forever).

    Upstream: ValidateDeploymentSpec, ValidateReplicaSetSpec and friends
    (pkg/apis/apps/validation/validation.go, v1.35)
    """
    if selector.is_nothing:
        raise ValidationError(f"{describe(obj)}: spec.selector: Required value")
    if selector.empty:
        raise ValidationError(
            f"{describe(obj)}: spec.selector: Invalid value: {{}}: empty selector is invalid "
            f"for {obj.kind.lower()}"
        )
    labels = template.metadata.labels
    if not selector.matches(labels):
        shown = ", ".join(f'"{k}":"{v}"' for k, v in sorted(labels.items()))
        raise ValidationError(
            f"{describe(obj)}: spec.template.metadata.labels: Invalid value: "
            f"map[string]string{{{shown}}}: `selector` does not match template `labels`"
        )


def describe(obj: _Workload) -> str:
    """``kind namespace/name``, as errors name an object."""
    return f"{obj.kind.lower()} {obj.metadata.namespace}/{obj.metadata.name}"
