"""Run a conformance case through the plugin as upstream's unit tests do, and compare.

The plugin runs alone, on the case's snapshot, without API validation of the pod: several
upstream table cases are deliberately invalid for the API server (e.g. minDomains with
ScheduleAnyway) and still state what the plugin decides.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from topospread.api.spread_validation import validate_pod_topology_spread_args
from topospread.api.types import ReplicaSet, ReplicationController, Service, StatefulSet
from topospread.cluster.snapshot import ObjectStore, Snapshot, SnapshotHandle
from topospread.conformance.case import Case
from topospread.errors import ConfigError
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import features_from_gates
from topospread.framework.status import Code
from topospread.framework.types import NodeScore
from topospread.plugins.podtopologyspread.filtering import PRE_FILTER_STATE_KEY
from topospread.plugins.podtopologyspread.plugin import PodTopologySpread


def build_plugin(case: Case) -> tuple[PodTopologySpread, Snapshot]:
    """The plugin constructed from the case's args and gates, over the case's snapshot."""
    errors = validate_pod_topology_spread_args(case.args, "args")
    if errors:
        raise ConfigError(f"{case.path}: {errors[0]}")
    features = features_from_gates(case.features, f"{case.path}: features")
    snapshot = Snapshot(case.nodes, case.pods)
    objects = ObjectStore(
        services=[o for o in case.objects if isinstance(o, Service)],
        replication_controllers=[o for o in case.objects if isinstance(o, ReplicationController)],
        replica_sets=[o for o in case.objects if isinstance(o, ReplicaSet)],
        stateful_sets=[o for o in case.objects if isinstance(o, StatefulSet)],
    )
    return PodTopologySpread(
        case.args, SnapshotHandle(snapshot, objects, features), features
    ), snapshot


def evaluate(case: Case) -> dict[str, Any]:
    """Every key FORMAT.md defines, computed for the case.

    ``filter`` is the framework's view: when PreFilter returns Skip the plugin's Filter is not
    run and every node passes it; when PreFilter fails the cycle stops and nothing is filtered.
    ``globalMin`` is the minimum Filter uses, after minDomains is applied.
    """
    plugin, snapshot = build_plugin(case)
    nodes = snapshot.list()
    state = CycleState()
    _, pre_filter = plugin.pre_filter(state, case.pod, nodes)
    filter_result: dict[str, str] = {}
    domains: list[dict[str, Any]] = []
    if pre_filter.code is Code.Success:
        for info in nodes:
            filter_result[info.name] = plugin.filter(state, case.pod, info).code.name
        s = state.read(PRE_FILTER_STATE_KEY)
        for i, c in enumerate(s.constraints):
            domains.append(
                {
                    "topologyKey": c.topology_key,
                    "counts": dict(sorted(s.tp_value_to_match_num[i].items())),
                    "globalMin": s.min_match_num(i, c.min_domains),
                }
            )
    elif pre_filter.code is Code.Skip:
        filter_result = {info.name: Code.Success.name for info in nodes}

    if case.filtered_nodes is None:
        filtered = list(nodes)
    else:
        filtered = [info for info in nodes if info.name in set(case.filtered_nodes)]
        order = {name: i for i, name in enumerate(case.filtered_nodes)}
        filtered.sort(key=lambda info: order[info.name])
    pre_score = plugin.pre_score(state, case.pod, filtered)
    scores: dict[str, int] = {}
    if pre_score.code is Code.Success:
        node_scores = [
            NodeScore(info.name, plugin.score(state, case.pod, info)[0]) for info in filtered
        ]
        plugin.normalize_score(state, case.pod, node_scores)
        scores = {ns.name: ns.score for ns in node_scores}
    return {
        "case": case.path,
        "preFilter": pre_filter.code.name,
        "filter": filter_result,
        "preScore": pre_score.code.name,
        "score": scores,
        "domains": domains,
    }


def compare(expect: Mapping[str, Any], got: Mapping[str, Any]) -> list[str]:
    """Differences between what a case expects and what was computed, one line each."""
    diffs: list[str] = []
    for key in ("preFilter", "preScore"):
        if key in expect and expect[key] != got[key]:
            diffs.append(f"{key}: expected {expect[key]}, got {got[key]}")
    for key in ("filter", "score"):
        for node, want in (expect.get(key) or {}).items():
            have = got[key].get(node, "<not computed>")
            if want != have:
                diffs.append(f"{key}.{node}: expected {want}, got {have}")
    if "domains" in expect:
        diffs.extend(_compare_domains(expect["domains"] or [], got["domains"]))
    return diffs


def _compare_domains(
    want: Sequence[Mapping[str, Any]], have: Sequence[Mapping[str, Any]]
) -> list[str]:
    if len(want) != len(have):
        return [f"domains: expected {len(want)} hard constraint(s), got {len(have)}"]
    diffs: list[str] = []
    for i, (w, h) in enumerate(zip(want, have, strict=True)):
        for key, value in w.items():
            expected = dict(value) if isinstance(value, Mapping) else value
            if expected != h.get(key):
                diffs.append(f"domains[{i}].{key}: expected {expected}, got {h.get(key)}")
    return diffs
