"""NodePools: what Karpenter may launch (requirements, taints, labels), how much (limits), in
which order (weight), and how it may take nodes away again (the disruption block).

Parsed from a NodePool manifest (``apiVersion: karpenter.sh/v1``, ``kind: NodePool``),
decoded and validated as the API server does for Karpenter's CRD (nodepool_validation), or from
the short form, the spec's fields beside a ``name``; errors name the NodePool and the field and
raise ManifestError. What the CRD accepts and topospread does not model is refused by name
(static NodePools, operators Gte/Lte, limits other than cpu and memory, the Balanced policy);
accepted and without effect here: the node class reference, startupTaints and the template's
annotations. ``expireAfter`` and ``terminationGracePeriod`` are the simulation's
(simulator/karpenter_termination.py): when a node expires, and how long its drain may take.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from topospread.api.cron import CronError, next_time, parse_schedule
from topospread.api.field import FieldError
from topospread.api.go_duration import SECOND
from topospread.api.resource import parse_quantity
from topospread.api.strict import FieldValidation, current_mode, report
from topospread.api.types import Taint
from topospread.autoscaler.clusterautoscaler.options import parse_go_duration
from topospread.autoscaler.karpenter.nodepool_validation import (
    API_VERSION,
    KIND,
    MetadataError,
    validate_manifest,
)
from topospread.autoscaler.karpenter.requirements import (
    NODEPOOL_LABEL,
    OPERATORS,
    Requirement,
    Requirements,
    from_labels,
)
from topospread.errors import ManifestError

CONSOLIDATION_WHEN_EMPTY: Final = "WhenEmpty"
CONSOLIDATION_WHEN_EMPTY_OR_UNDERUTILIZED: Final = "WhenEmptyOrUnderutilized"
REASON_EMPTY: Final = "Empty"
REASON_UNDERUTILIZED: Final = "Underutilized"
REASON_DRIFTED: Final = "Drifted"
# Upstream: math.MaxInt32, what an inactive budget allows.
MAX_INT32: Final = (1 << 31) - 1
# Upstream: the NodeClaimTemplate's expireAfter default in the CRD (720h), in seconds.
DEFAULT_EXPIRE_AFTER: Final = 720 * 3600.0
DISRUPTION_REASONS: Final = (REASON_EMPTY, REASON_UNDERUTILIZED, REASON_DRIFTED)


@dataclass(frozen=True, slots=True)
class Budget:
    """At most ``nodes`` (a count or ``N%`` of the NodePool's nodes) disrupted at once, for the
    listed reasons (all when empty); with a ``schedule`` (cron, in UTC), only for ``duration``
    seconds after each time it fires.

    Upstream: v1.Budget (pkg/apis/v1/nodepool.go)
    """

    nodes: str = "10%"
    reasons: tuple[str, ...] = ()
    schedule: str | None = None
    duration: float = 0.0

    def is_active(self, now: int) -> bool:
        """Whether the budget applies at ``now`` (nanoseconds since the Unix epoch): always
        without a schedule, else when the schedule fired within the last ``duration`` (one
        that fired exactly ``duration`` ago counts). A schedule robfig/cron cannot parse
        raises CronError. Upstream: Budget.IsActive"""
        if self.schedule is None:
            return True
        fires = next_time(parse_schedule(self.schedule), now - round(self.duration * SECOND))
        return fires is not None and fires <= now

    def allowed(self, total_nodes: int, now: int = 0) -> int:
        """How many nodes it allows disrupted: all when inactive, none when its schedule is
        invalid (fail closed). Upstream: Budget.GetAllowedDisruptions,
        GetScaledValueFromIntOrPercent(nodes, total, roundUp=true)"""
        try:
            if not self.is_active(now):
                return MAX_INT32
        except CronError:
            return 0
        if self.nodes.endswith("%"):
            return math.ceil(int(self.nodes[:-1]) * total_nodes / 100)
        return int(self.nodes)


@dataclass(frozen=True, slots=True)
class NodePool:
    """Upstream: v1.NodePool's spec"""

    name: str
    requirements: tuple[Requirement, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    limits_cpu_milli: int | None = None
    limits_memory: int | None = None
    weight: int = 0
    consolidation_policy: str = CONSOLIDATION_WHEN_EMPTY_OR_UNDERUTILIZED
    consolidate_after: float = 0.0
    budgets: tuple[Budget, ...] = (Budget(),)
    # Seconds: a nodeclaim's lifetime (math.inf: Never; the CRD's default 720h) and how long
    # its node's drain may take once it is deleted (None: for as long as it takes).
    expire_after: float = DEFAULT_EXPIRE_AFTER
    termination_grace_period: float | None = None
    # The template's fields a nodeclaim drifts from when they change (``template_key``), and
    # its node class reference apart ("" for the short form's placeholder: none given).
    template_key: str = ""
    node_class: str = ""

    def node_requirements(self) -> Requirements:
        """The requirements of a nodeclaim from this pool: its requirements, its labels and
        the nodepool label. Upstream: NodeClaimTemplate's Requirements"""
        reqs = Requirements(self.requirements)
        reqs.add(*from_labels({**self.labels, NODEPOOL_LABEL: self.name}).values())
        return reqs

    def allowed_disruptions(
        self, total_nodes: int, disrupting: int, reason: str, now: int = 0
    ) -> int:
        """How many more nodes may be disrupted for ``reason`` at ``now`` (nanoseconds since
        the Unix epoch): the smallest budget for it, less the nodes already being disrupted.
        Upstream: GetAllowedDisruptionsByReason, BuildDisruptionBudgetMapping"""
        allowed = min(
            (
                b.allowed(total_nodes, now)
                for b in self.budgets
                if not b.reasons or reason in b.reasons
            ),
            default=MAX_INT32,
        )
        return max(0, allowed - disrupting)


_SHORT_KEYS: Final = (
    "name",
    "labels",
    "requirements",
    "taints",
    "expireAfter",
    "terminationGracePeriod",
    "limits",
    "weight",
    "disruption",
)
# The short form's fields and where each sits in a manifest.
_TEMPLATE_SPEC_KEYS: Final = ("requirements", "taints", "expireAfter", "terminationGracePeriod")
_SPEC_KEYS: Final = ("limits", "weight", "disruption")
# Placeholders for what the CRD requires and the short form leaves out: the provider's node
# class (not modelled) and requirements (none), and consolidateAfter (Karpenter after v1.14
# defaults it to 0s, as the disruption block's own default does).
_NODE_CLASS_PLACEHOLDER: Final = {"group": "topospread", "kind": "NodeClass", "name": "default"}


def _is_manifest(raw: Mapping[str, Any]) -> bool:
    return any(k in raw for k in ("apiVersion", "kind", "metadata", "spec"))


def _manifest_of(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest a short form stands for."""
    tspec: dict[str, Any] = {"nodeClassRef": dict(_NODE_CLASS_PLACEHOLDER), "requirements": []}
    tspec.update({k: raw[k] for k in _TEMPLATE_SPEC_KEYS if k in raw})
    template: dict[str, Any] = {"spec": tspec}
    if "labels" in raw:
        template["metadata"] = {"labels": raw["labels"]}
    spec: dict[str, Any] = {"template": template, **{k: raw[k] for k in _SPEC_KEYS if k in raw}}
    disruption = spec.get("disruption")
    if isinstance(disruption, Mapping) and disruption.get("consolidateAfter") is None:
        spec["disruption"] = {**disruption, "consolidateAfter": "0s"}
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": raw["name"]},
        "spec": spec,
    }


_SHORT_PATH: Final = re.compile(
    r"^(spec\.template\.spec\.|spec\.template\.metadata\.|spec\.|metadata\.)"
)


def _short_error(err: FieldError) -> str:
    """An error of a short form's manifest, its field as the short form names it."""
    short = _SHORT_PATH.sub("", err.field)
    return str(replace(err, field=short, detail=err.detail.replace(err.field, short)))


def _not_modelled(label: str, path: str, what: str) -> ManifestError:
    return ManifestError(f"{label}: {path}: {what} not modelled by topospread")


def parse_nodepool(raw: object, where: str) -> NodePool:
    """A NodePool from its manifest (``apiVersion: karpenter.sh/v1``, ``kind: NodePool``),
    decoded and validated as the API server does (nodepool_validation), or from the short form
    ``{name, labels, requirements, taints, limits, weight, disruption}`` (the spec's fields at
    the top level, the template's beside them), validated by the same rules. Errors name
    ``where``, the NodePool and the field, and raise ManifestError."""
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where}: expected a NodePool mapping")
    manifest = _is_manifest(raw)
    if manifest:
        meta = raw.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
    else:
        name = raw.get("name")
    label = f"{where} (NodePool {name})" if isinstance(name, str) and name else where
    if manifest:
        version, kind = raw.get("apiVersion"), raw.get("kind")
        if (version, kind) != (API_VERSION, KIND):
            raise ManifestError(
                f'{label}: no matches for kind "{kind}" in version "{version}": expected '
                f"apiVersion {API_VERSION}, kind {KIND}"
            )
        try:
            unknown, obj, errs = validate_manifest(raw)
        except MetadataError as err:
            raise ManifestError(f"{label}: {err}") from err
        if unknown:
            problems = [f'unknown field "{path}"' for path, _ in unknown]
            if current_mode() is FieldValidation.STRICT:
                raise ManifestError(f"{label}: strict decoding error: {', '.join(problems)}")
            report(label, "", problems)
        if errs:
            raise ManifestError(f"{label}: {errs[0]}")
        return _build(obj, label, "spec.", "spec.template.spec.")
    extra = [str(k) for k in raw if k not in _SHORT_KEYS]
    if extra:
        raise ManifestError(
            f"{label}: {extra[0]}: unknown field; expected {', '.join(_SHORT_KEYS)}"
        )
    if not isinstance(name, str) or not name:
        raise ManifestError(f"{where}: name: Required value: a NodePool needs a name")
    unknown, obj, errs = validate_manifest(_manifest_of(raw))
    if unknown:
        path, known = unknown[0]
        raise ManifestError(
            f"{label}: {_SHORT_PATH.sub('', path)}: unknown field; expected {', '.join(known)}"
        )
    if errs:
        raise ManifestError(f"{label}: {_short_error(errs[0])}")
    return _build(obj, label, "", "")


def _build(obj: Mapping[str, Any], label: str, spath: str, tpath: str) -> NodePool:
    """The NodePool of a validated, defaulted manifest; what it sets that topospread does not
    model is refused (``spath``/``tpath``: how the errors name spec's and the template's
    fields)."""
    spec = obj["spec"]
    template = spec["template"]
    tspec = template["spec"]
    if "replicas" in spec:
        raise _not_modelled(label, f"{spath}replicas", "static NodePools (replicas) are")
    requirements = []
    for i, r in enumerate(tspec.get("requirements", [])):
        at = f"{tpath}requirements[{i}]"
        if r["operator"] not in OPERATORS:
            raise _not_modelled(label, f"{at}.operator", f"operator {r['operator']} is")
        requirements.append(
            Requirement.new(r["key"], r["operator"], r.get("values", []), r.get("minValues"))
        )
    taints = tuple(
        Taint(key=t["key"], value=t.get("value", ""), effect=t["effect"])
        for t in tspec.get("taints", [])
    )
    limits = spec.get("limits", {})
    for key in limits:
        if key not in ("cpu", "memory"):
            raise _not_modelled(
                label, f"{spath}limits.{key}", "limits other than cpu and memory are"
            )
    disruption = spec["disruption"]
    policy = disruption["consolidationPolicy"]
    if policy not in (CONSOLIDATION_WHEN_EMPTY, CONSOLIDATION_WHEN_EMPTY_OR_UNDERUTILIZED):
        raise _not_modelled(label, f"{spath}disruption.consolidationPolicy", f"{policy} is")
    after_text = disruption["consolidateAfter"]
    after = math.inf if after_text == "Never" else parse_go_duration(after_text)
    budgets = []
    for b in disruption["budgets"]:
        # The CRD's schema and CEL rules have checked the duration's form and that schedule
        # and duration come together.
        duration = parse_go_duration(b["duration"]) if "duration" in b else 0.0
        budgets.append(Budget(b["nodes"], tuple(b.get("reasons", ())), b.get("schedule"), duration))
    # The CRD defaults expireAfter (720h) and has checked both durations' form.
    expire_text = tspec.get("expireAfter", "720h")
    expire_after = math.inf if expire_text == "Never" else parse_go_duration(expire_text)
    grace_text = tspec.get("terminationGracePeriod")
    grace = None if grace_text is None else parse_go_duration(grace_text)
    return NodePool(
        obj["metadata"]["name"],
        tuple(requirements),
        dict(template.get("metadata", {}).get("labels", {})),
        taints,
        _limit(limits, "cpu", milli=True),
        _limit(limits, "memory", milli=False),
        int(spec.get("weight", 0)),
        policy,
        after,
        tuple(budgets),
        expire_after,
        grace,
        template_key(template),
        _node_class(tspec),
    )


def template_key(template: Mapping[str, Any]) -> str:
    """The NodePool template's static fields as one text, equal for two templates when
    upstream's hash is: the metadata's labels and annotations, the taints and startup taints
    (each list as a set), the terminationGracePeriod and the expireAfter (durations by their
    value); not the requirements (their drift is told apart) nor the resources, nor the node
    class reference, compared apart (``NodePool.node_class``: the short form gives none).
    Upstream: NodePool.Hash (apis/v1/nodepool.go: hashstructure of the template,
    SlicesAsSets, IgnoreZeroValue; Requirements and Resources hash:"ignore")"""
    meta = template.get("metadata", {})
    tspec = template["spec"]

    def taints(key: str) -> list[str]:
        return sorted(json.dumps(t, sort_keys=True) for t in tspec.get(key, []))

    def duration(key: str) -> float | str | None:
        text = tspec.get(key)
        return text if text in (None, "Never") else parse_go_duration(text)

    static = {
        "labels": meta.get("labels") or None,
        "annotations": meta.get("annotations") or None,
        "taints": taints("taints") or None,
        "startupTaints": taints("startupTaints") or None,
        "terminationGracePeriod": duration("terminationGracePeriod"),
        "expireAfter": duration("expireAfter"),
    }
    return json.dumps({k: v for k, v in static.items() if v is not None}, sort_keys=True)


def _node_class(tspec: Mapping[str, Any]) -> str:
    """The template's node class reference as text; "" for the short form's placeholder."""
    ref = tspec.get("nodeClassRef")
    if not ref or ref == _NODE_CLASS_PLACEHOLDER:
        return ""
    return json.dumps(ref, sort_keys=True)


def _limit(limits: Mapping[str, object], key: str, milli: bool) -> int | None:
    if key not in limits:
        return None
    value = limits[key]
    # The schema's int-or-string; a float here is integral (e.g. 2.0 in YAML).
    assert isinstance(value, str | int | float)
    q = parse_quantity(int(value) if isinstance(value, float) else value)
    return q.milli_value() if milli else q.value()


def parse_nodepools(raw: object, where: str) -> list[NodePool]:
    """A list of NodePools with unique names."""
    if not isinstance(raw, list):
        raise ManifestError(f"{where}: expected a list of NodePools")
    out: list[NodePool] = []
    for i, item in enumerate(raw):
        pool = parse_nodepool(item, f"{where}[{i}]")
        if any(p.name == pool.name for p in out):
            raise ManifestError(f'{where}[{i}]: name: Duplicate value: "{pool.name}"')
        out.append(pool)
    return out


def sorted_by_weight(pools: Sequence[NodePool]) -> list[NodePool]:
    """Highest weight first; equal weights by name, last name first.
    Upstream: OrderByWeight (pkg/utils/nodepool/nodepool.go)"""
    by_name = sorted(pools, key=lambda p: p.name, reverse=True)
    return sorted(by_name, key=lambda p: -p.weight)
