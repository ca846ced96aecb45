"""The API server's create-time merge of matchLabelKeys into selectors (v1.35 strategy.go)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from topospread.api.admission import (
    apply_match_label_keys_merge,
    apply_pod_affinity_label_keys_merge,
    is_match_label_keys_merged,
    match_label_keys_requirements,
    merge_match_label_keys,
    prepare_for_create,
)
from topospread.api.types import (
    LabelSelectorRequirement,
    Node,
    ObjectMeta,
    Pod,
    PriorityClass,
    TopologySpreadConstraint,
)
from topospread.errors import ValidationError
from topospread.simulator.pod_admission import AdmissionMemo, admit_pod, priority_classes


def pod(labels: dict[str, str], *constraints: dict[str, Any], **spec: Any) -> Pod:
    return msgspec.convert(
        {
            "metadata": {"name": "p", "namespace": "default", "labels": labels},
            "spec": {"topologySpreadConstraints": list(constraints), **spec},
        },
        Pod,
    )


def constraint(selector: dict[str, Any] | None, keys: list[str]) -> dict[str, Any]:
    c: dict[str, Any] = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "matchLabelKeys": keys,
    }
    if selector is not None:
        c["labelSelector"] = selector
    return c


def expressions(p: Pod, i: int = 0) -> list[dict[str, Any]]:
    selector = p.spec.topology_spread_constraints[i].label_selector
    assert selector is not None
    return [msgspec.to_builtins(e) for e in selector.match_expressions]


APP = {"matchLabels": {"app": "web"}}


@pytest.mark.parametrize(
    ("labels", "selector", "keys", "expected"),
    [
        pytest.param(
            {"app": "web", "pod-template-hash": "abc"},
            APP,
            ["pod-template-hash"],
            [{"key": "pod-template-hash", "operator": "In", "values": ["abc"]}],
            id="a key the pod has becomes key In (value)",
        ),
        pytest.param(
            {"app": "web", "a": "1", "b": "2"},
            APP,
            ["b", "a"],
            [
                {"key": "b", "operator": "In", "values": ["2"]},
                {"key": "a", "operator": "In", "values": ["1"]},
            ],
            id="requirements follow the order of matchLabelKeys",
        ),
        pytest.param(
            {"app": "web"},
            APP,
            ["pod-template-hash"],
            [],
            id="a key the pod lacks is skipped silently",
        ),
        pytest.param(
            {"app": "web", "track": ""},
            APP,
            ["track"],
            [{"key": "track", "operator": "In", "values": [""]}],
            id="an empty label value is merged too",
        ),
        pytest.param(
            {"app": "web", "a": "1"},
            APP,
            ["a", "a"],
            [
                {"key": "a", "operator": "In", "values": ["1"]},
                {"key": "a", "operator": "In", "values": ["1"]},
            ],
            id="a key listed twice is appended twice",
        ),
        pytest.param(
            {"app": "web", "a": "1"},
            {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
            ["a"],
            [
                {"key": "tier", "operator": "Exists"},
                {"key": "a", "operator": "In", "values": ["1"]},
            ],
            id="requirements are appended after the user's expressions",
        ),
        pytest.param(
            {"a": "1"},
            {},
            ["a"],
            [{"key": "a", "operator": "In", "values": ["1"]}],
            id="an empty selector gains the requirement",
        ),
    ],
)
def test_merge_appends_match_label_keys_to_the_selector(
    labels: dict[str, str],
    selector: dict[str, Any],
    keys: list[str],
    expected: list[dict[str, Any]],
) -> None:
    merged = apply_match_label_keys_merge(pod(labels, constraint(selector, keys)))
    assert expressions(merged) == expected


def test_merge_keeps_match_label_keys_and_match_labels() -> None:
    merged = apply_match_label_keys_merge(pod({"app": "web", "h": "x"}, constraint(APP, ["h"])))
    c = merged.spec.topology_spread_constraints[0]
    assert c.match_label_keys == ["h"]
    assert c.label_selector is not None
    assert c.label_selector.match_labels == {"app": "web"}


def test_a_nil_label_selector_is_left_alone() -> None:
    original = pod({"a": "1"}, constraint(None, ["a"]))
    merged = apply_match_label_keys_merge(original)
    assert merged is original
    assert merged.spec.topology_spread_constraints[0].label_selector is None


def test_nothing_to_merge_returns_the_same_pod() -> None:
    original = pod({"app": "web"}, constraint(APP, ["missing"]))
    assert apply_match_label_keys_merge(original) is original
    no_constraints = pod({"app": "web"})
    assert apply_match_label_keys_merge(no_constraints) is no_constraints


def test_merging_twice_changes_nothing_the_second_time() -> None:
    once = apply_match_label_keys_merge(pod({"app": "web", "h": "x"}, constraint(APP, ["h"])))
    twice = apply_match_label_keys_merge(once)
    assert twice is once
    assert expressions(twice) == [{"key": "h", "operator": "In", "values": ["x"]}]


def test_a_pod_read_back_from_a_cluster_is_recognised_as_merged() -> None:
    stored = pod(
        {"app": "web", "h": "x"},
        constraint(
            {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "h", "operator": "In", "values": ["x"]}],
            },
            ["h"],
        ),
    )
    c = stored.spec.topology_spread_constraints[0]
    assert is_match_label_keys_merged(c, stored.labels)
    assert apply_match_label_keys_merge(stored) is stored


def test_a_merge_for_other_label_values_is_not_mistaken_for_this_one() -> None:
    # The pod's label changed since creation: the stored requirement no longer fingerprints
    # the merge for the current labels, so merging again appends the current value.
    stored = pod(
        {"h": "new"},
        constraint(
            {"matchExpressions": [{"key": "h", "operator": "In", "values": ["old"]}]}, ["h"]
        ),
    )
    c = stored.spec.topology_spread_constraints[0]
    assert not is_match_label_keys_merged(c, stored.labels)
    assert expressions(apply_match_label_keys_merge(stored)) == [
        {"key": "h", "operator": "In", "values": ["old"]},
        {"key": "h", "operator": "In", "values": ["new"]},
    ]


def test_only_constraints_that_need_it_are_rebuilt() -> None:
    original = pod(
        {"app": "web", "h": "x"},
        constraint(APP, ["h"]),
        {**constraint(APP, []), "topologyKey": "node"},
    )
    merged = apply_match_label_keys_merge(original)
    assert merged is not original
    assert (
        merged.spec.topology_spread_constraints[1] is original.spec.topology_spread_constraints[1]
    )
    # The input pod is not mutated (API objects are frozen).
    assert expressions(original) == []


def test_the_merge_can_be_switched_off_like_the_feature_gate() -> None:
    original = pod({"h": "x"}, constraint(APP, ["h"]))
    assert apply_match_label_keys_merge(original, enabled=False) is original


def test_requirements_for_a_constraint() -> None:
    c = msgspec.convert(constraint(APP, ["a", "b"]), TopologySpreadConstraint)
    assert match_label_keys_requirements(c, {"b": "2"}) == [
        LabelSelectorRequirement(key="b", operator="In", values=["2"])
    ]
    assert merge_match_label_keys(c, {}) is c


def affinity_term(selector: dict[str, Any] | None, **keys: list[str]) -> dict[str, Any]:
    term: dict[str, Any] = {"topologyKey": "zone", **keys}
    if selector is not None:
        term["labelSelector"] = selector
    return term


def test_pod_affinity_terms_merge_match_keys_as_in_and_mismatch_keys_as_notin() -> None:
    p = pod(
        {"app": "web", "tenant": "t1", "rev": "7"},
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    affinity_term(APP, matchLabelKeys=["rev"], mismatchLabelKeys=["tenant"])
                ]
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "podAffinityTerm": affinity_term(APP, matchLabelKeys=["rev"])}
                ]
            },
        },
    )
    merged = apply_pod_affinity_label_keys_merge(p)
    assert merged.spec.affinity is not None
    pa = merged.spec.affinity.pod_affinity
    assert pa is not None
    selector = pa.required_during_scheduling_ignored_during_execution[0].label_selector
    assert selector is not None
    assert [msgspec.to_builtins(e) for e in selector.match_expressions] == [
        {"key": "rev", "operator": "In", "values": ["7"]},
        {"key": "tenant", "operator": "NotIn", "values": ["t1"]},
    ]
    paa = merged.spec.affinity.pod_anti_affinity
    assert paa is not None
    anti = paa.preferred_during_scheduling_ignored_during_execution[0].pod_affinity_term
    assert anti.label_selector is not None
    assert len(anti.label_selector.match_expressions) == 1
    assert apply_pod_affinity_label_keys_merge(merged) is merged


def test_pod_affinity_terms_without_a_selector_or_keys_are_left_alone() -> None:
    p = pod(
        {"rev": "7"},
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    affinity_term(None, matchLabelKeys=["rev"]),
                    affinity_term(APP),
                ]
            }
        },
    )
    assert apply_pod_affinity_label_keys_merge(p) is p


def test_prepare_for_create_applies_both_merges() -> None:
    p = pod(
        {"app": "web", "rev": "7"},
        constraint(APP, ["rev"]),
        affinity={
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    affinity_term(APP, matchLabelKeys=["rev"])
                ]
            }
        },
    )
    prepared = prepare_for_create(p)
    assert expressions(prepared) == [{"key": "rev", "operator": "In", "values": ["7"]}]
    assert prepared.spec.affinity is not None
    assert prepared.spec.affinity.pod_anti_affinity is not None
    anti = prepared.spec.affinity.pod_anti_affinity
    term = anti.required_during_scheduling_ignored_during_execution[0]
    assert term.label_selector is not None
    assert len(term.label_selector.match_expressions) == 1
    assert prepare_for_create(prepared) is prepared


def test_pods_of_one_template_share_its_merge_per_value_of_their_keys() -> None:
    """The pods a controller makes from one template share its constraints list; each value
    of their matchLabelKeys is merged once, and each pod gets the merge for its own value."""
    template = pod({"app": "web"}, constraint({"matchLabels": {"app": "web"}}, ["hash"]))
    shared = template.spec.topology_spread_constraints

    def made(labels: dict[str, str]) -> Pod:
        meta = msgspec.structs.replace(template.metadata, labels=labels)
        return msgspec.structs.replace(template, metadata=meta)

    a1, a2, b = (made({"app": "web", "hash": h}) for h in ("a", "a", "b"))
    merged_a1, merged_a2, merged_b = (apply_match_label_keys_merge(p) for p in (a1, a2, b))
    assert merged_a1.spec.topology_spread_constraints is merged_a2.spec.topology_spread_constraints
    assert expressions(merged_a1) == [{"key": "hash", "operator": "In", "values": ["a"]}]
    assert expressions(merged_b) == [{"key": "hash", "operator": "In", "values": ["b"]}]
    assert template.spec.topology_spread_constraints is shared  # left as it was
    unkeyed = made({"app": "web"})  # no value for the key: nothing to merge
    assert apply_match_label_keys_merge(unkeyed) is unkeyed


# ---------------------------------------------------------------------------------------------
# Admission kept per template (simulator/pod_admission.py's AdmissionMemo)

_BASE: dict[str, Any] = {
    "metadata": {
        "name": "web-1",
        "generateName": "web-",
        "namespace": "default",
        "labels": {"app": "web", "hash": "a"},
        "annotations": {"note": "x"},
    },
    "spec": {
        "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}],
        "initContainers": [
            {"name": "i", "image": "busybox", "resources": {"requests": {"cpu": "10m"}}}
        ],
        "resources": {"requests": {"cpu": "200m"}},
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "web"}},
                        "topologyKey": "zone",
                        "matchLabelKeys": ["hash"],
                    }
                ]
            }
        },
        "topologySpreadConstraints": [
            {**constraint({"matchLabels": {"app": "web"}}, ["hash"]), "maxSkew": 1}
        ],
        "nodeSelector": {"disk": "ssd"},
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
        "overhead": {"cpu": "10m"},
        "priorityClassName": "",
        "volumes": [{"name": "kube-api-access-aaaaa", "projected": {"sources": []}}],
    },
}


def _variant(path: str, value: Any) -> dict[str, Any]:
    """_BASE with the value at a dotted path replaced (None deletes it)."""
    doc: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(_BASE))
    *parents, last = path.split(".")
    node = doc
    for part in parents:
        node = node[part]
    if value is None:
        del node[last]
    else:
        node[last] = value
    return doc


def _node_affinity(node: str, operator: str = "In") -> dict[str, Any]:
    term = {"matchFields": [{"key": "metadata.name", "operator": operator, "values": [node]}]}
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}


# Each variant differs from _BASE in one field admission reads and is admitted differently:
# were that field missing from the memo's key, the variant would be given _BASE's result.
_TEMPLATE_FIELDS: dict[str, tuple[str, Any]] = {
    "labels": ("metadata.labels", {"app": "web", "hash": "b"}),
    "annotations": ("metadata.annotations", {"bad key!": "x"}),
    "containers": (
        "spec.containers",
        [{"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "1"}}}],
    ),
    "initContainers": (
        "spec.initContainers",
        [{"name": "i", "image": "busybox", "resources": {"limits": {"memory": "1Gi"}}}],
    ),
    "restartPolicy": ("spec.restartPolicy", "Sometimes"),
    "container name": (
        "spec.containers",
        [{"name": "C!", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}],
    ),
    "pod resources": ("spec.resources", {"limits": {"cpu": "2"}}),
    "podAntiAffinity": (
        "spec.affinity.podAntiAffinity",
        {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}
            ]
        },
    ),
    "podAffinity": (
        "spec.affinity.podAffinity",
        {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 1,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"app": "db"}},
                        "topologyKey": "zone",
                        "matchLabelKeys": ["hash"],
                    },
                }
            ]
        },
    ),
    "no affinity": ("spec.affinity", None),
    "topologySpreadConstraints": (
        "spec.topologySpreadConstraints",
        [{**constraint({"matchLabels": {"app": "web"}}, ["hash"]), "maxSkew": 2}],
    ),
    "nodeSelector": ("spec.nodeSelector", {"disk": "ssd!"}),
    "tolerations": ("spec.tolerations", [{"key": "k", "operator": "Exists", "value": "v"}]),
    "schedulingGates": ("spec.schedulingGates", [{"name": "not a name!"}]),
    "overhead": ("spec.overhead", {"cpu": "-1"}),
    "priority": ("spec.priority", 7),
    "priorityClassName": ("spec.priorityClassName", "high"),
    "preemptionPolicy": ("spec.preemptionPolicy", "Never"),
    "securityContext": ("spec.securityContext", {"seccompProfile": {"type": "Default"}}),
    "container securityContext": (
        "spec.containers",
        [
            {
                "name": "c",
                "image": "nginx",
                "resources": {"requests": {"cpu": "100m"}},
                "securityContext": {"appArmorProfile": {"type": "Enforce"}},
            }
        ],
    ),
    "init container securityContext": (
        "spec.initContainers",
        [
            {
                "name": "i",
                "image": "busybox",
                "resources": {"requests": {"cpu": "10m"}},
                "securityContext": {"seccompProfile": {}},
            }
        ],
    ),
    "ephemeralContainers": ("spec.ephemeralContainers", [{"name": "d", "image": "busybox"}]),
    "os": ("spec.os", {"name": "windows"}),
    "container ports": (
        "spec.containers",
        [
            {
                "name": "c",
                "image": "nginx",
                "resources": {"requests": {"cpu": "100m"}},
                "ports": [{"containerPort": 80, "hostPort": 70000}],
            }
        ],
    ),
    "init container ports": (
        "spec.initContainers",
        [
            {
                "name": "i",
                "image": "busybox",
                "resources": {"requests": {"cpu": "10m"}},
                "ports": [{"containerPort": 1, "hostPort": 9}, {"containerPort": 2, "hostPort": 9}],
            }
        ],
    ),
}

# Fields checked for each pod, not kept per template.
_POD_FIELDS: dict[str, tuple[str, Any]] = {
    "name": ("metadata.name", "Web_1"),
    "nodeName": ("spec.nodeName", "node_1"),
    # A DaemonSet's pods each name their node in their node affinity.
    "nodeAffinity": ("spec.affinity.nodeAffinity", _node_affinity("node-1")),
    "invalid nodeAffinity": ("spec.affinity.nodeAffinity", _node_affinity("node-1", "Gt")),
    "volumes": ("spec.volumes", [{"name": "kube-api-access-bbbbb", "projected": {"sources": []}}]),
    "namespace": ("metadata.namespace", "Default"),
    "generateName": ("metadata.generateName", "Web-"),
    "hostname": ("spec.hostname", "Web-0"),
    "subdomain": ("spec.subdomain", "web.svc"),
    "image": (
        "spec.containers",
        [{"name": "c", "image": "nginx ", "resources": {"requests": {"cpu": "100m"}}}],
    ),
}


def _memo() -> AdmissionMemo:
    high = PriorityClass(metadata=ObjectMeta(name="high"), value=1000)
    return AdmissionMemo(priority_classes([high]))


def _admitted(doc: dict[str, Any], memo: AdmissionMemo) -> Any:
    """The admitted pod as plain data, or the ValidationError's message."""
    try:
        admitted = admit_pod(msgspec.convert(doc, Pod), memo.priorities, "x", memo=memo)
    except ValidationError as e:
        return str(e)
    return msgspec.to_builtins(admitted)


@pytest.mark.parametrize(
    ("path", "value"), list(_TEMPLATE_FIELDS.values()) + list(_POD_FIELDS.values()),
    ids=list(_TEMPLATE_FIELDS) + list(_POD_FIELDS),
)  # fmt: skip
def test_a_pod_admitted_after_another_of_its_template_is_admitted_as_alone(
    path: str, value: Any
) -> None:
    """The memo gives a pod what admission makes of it by itself, whichever pod of a
    near-identical template came first: every field admission reads is in its key, or
    checked for each pod."""
    variant = _variant(path, value)
    base_alone, variant_alone = _admitted(_BASE, _memo()), _admitted(variant, _memo())
    if path != "spec.volumes":  # admission copies the volumes as they are
        assert variant_alone != base_alone  # the field makes a difference
    shared = _memo()
    assert _admitted(_BASE, shared) == base_alone
    assert _admitted(variant, shared) == variant_alone
    assert _admitted(_BASE, shared) == base_alone


@pytest.mark.parametrize(
    ("path", "value"), list(_TEMPLATE_FIELDS.values()) + list(_POD_FIELDS.values()),
    ids=list(_TEMPLATE_FIELDS) + list(_POD_FIELDS),
)  # fmt: skip
def test_the_builders_shortcut_admits_a_pod_of_a_known_template_as_alone(
    path: str, value: Any
) -> None:
    """AdmissionMemo.admit_valid, which ScenarioBuilder tries first, gives a pod what
    admission makes of it by itself, or leaves it to admit_pod (None)."""
    variant = _variant(path, value)
    alone = _admitted(variant, _memo())
    shared = _memo()
    _admitted(_BASE, shared)
    fast = shared.admit_valid(msgspec.convert(variant, Pod))
    if fast is None:
        assert _admitted(variant, shared) == alone
    else:
        assert msgspec.to_builtins(fast) == alone


@pytest.mark.parametrize("priority", [None, 5], ids=["admission sets it", "read back"])
def test_the_builders_shortcut_is_taken_for_a_valid_pod_of_a_known_template(
    priority: int | None,
) -> None:
    shared = _memo()
    first = _variant("spec.priority", priority) if priority is not None else _BASE
    _admitted(first, shared)
    second = _variant("metadata.name", "web-2")
    second["spec"]["volumes"] = [{"name": "kube-api-access-bbbbb", "projected": {"sources": []}}]
    if priority is not None:
        second["spec"]["priority"] = priority
    fast = shared.admit_valid(msgspec.convert(second, Pod))
    assert fast is not None
    assert msgspec.to_builtins(fast) == _admitted(second, _memo())


@pytest.mark.parametrize("windows_first", [False, True])
def test_a_pods_os_decides_its_apparmor_comparison_whichever_pod_came_first(
    windows_first: bool,
) -> None:
    """A Linux pod's AppArmor annotation is compared with its fields; a Windows pod's is not
    (its profile field is refused instead): two pods differing only in their OS are admitted
    each as alone."""
    linux = _variant(
        "spec.containers",
        [
            {
                "name": "c",
                "image": "nginx",
                "resources": {"requests": {"cpu": "100m"}},
                "securityContext": {"appArmorProfile": {"type": "Unconfined"}},
            }
        ],
    )
    linux["metadata"]["annotations"] = {
        "container.apparmor.security.beta.kubernetes.io/c": "runtime/default"
    }
    windows: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(linux))
    windows["spec"]["os"] = {"name": "windows"}
    alone = {"linux": _admitted(linux, _memo()), "windows": _admitted(windows, _memo())}
    assert "apparmor type in annotation and field must match" in alone["linux"]
    assert alone["windows"].endswith(
        "spec.containers[0].securityContext.appArmorProfile: Forbidden: cannot be set for a "
        "windows pod"
    )
    shared = _memo()
    order = ["windows", "linux"] if windows_first else ["linux", "windows"]
    for name in order * 2:
        assert _admitted({"linux": linux, "windows": windows}[name], shared) == alone[name]


@pytest.mark.parametrize("host_network_first", [False, True])
def test_host_network_decides_the_host_ports_whichever_pod_came_first(
    host_network_first: bool,
) -> None:
    """Defaulting reads hostNetwork: two pods differing only there are admitted each as
    alone (host port 80 on the host's network, 0 off it)."""
    off = _variant(
        "spec.containers",
        [
            {
                "name": "c",
                "image": "nginx",
                "resources": {"requests": {"cpu": "100m"}},
                "ports": [{"containerPort": 80}],
            }
        ],
    )
    on: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(off))
    on["spec"]["hostNetwork"] = True
    docs = {"on": on, "off": off}
    alone = {name: _admitted(doc, _memo()) for name, doc in docs.items()}
    assert alone["on"]["spec"]["containers"][0]["ports"][0]["hostPort"] == 80
    assert "hostPort" not in alone["off"]["spec"]["containers"][0]["ports"][0]
    shared = _memo()
    order = ["on", "off"] if host_network_first else ["off", "on"]
    for name in order * 2:
        assert _admitted(docs[name], shared) == alone[name]


def test_the_admission_memo_is_not_used_with_other_priority_classes() -> None:
    """A memo made for one set of PriorityClasses is not used with another."""
    doc = _variant("spec.priorityClassName", "high")
    low = priority_classes([PriorityClass(metadata=ObjectMeta(name="high"), value=1)])
    high = priority_classes([PriorityClass(metadata=ObjectMeta(name="high"), value=1000)])
    memo = AdmissionMemo(low)
    assert admit_pod(msgspec.convert(doc, Pod), low, "x", memo=memo).spec.priority == 1
    assert admit_pod(msgspec.convert(doc, Pod), high, "x", memo=memo).spec.priority == 1000


def test_pods_differing_only_in_node_affinity_are_validated_each_by_its_own() -> None:
    """validate_pod keeps the template's errors apart from each pod's node affinity."""
    from topospread.api.validation import validate_pod

    good, bad = (
        msgspec.convert(_variant("spec.affinity.nodeAffinity", _node_affinity("n", op)), Pod)
        for op in ("In", "Gt")
    )
    assert validate_pod(good) == []
    assert [str(e).split(":")[0] for e in validate_pod(bad)] == [
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchFields[0].operator"
    ]
    assert validate_pod(good) == []


def test_each_bound_pod_is_given_a_pod_of_equal_resources_for_the_scheduler() -> None:
    """build_scenario pairs each bound pod with the first of its template (Scenario.
    resource_pairs), whose resource result the scheduler then gives it: the pair reads alike
    in every field calculate_resource reads, whether admission changed the pods or not."""
    from topospread.framework.config import default_config
    from topospread.framework.features import DEFAULT_FEATURES
    from topospread.plugins.noderesources import resource_helpers
    from topospread.simulator.scenario import build_scenario

    def bound(name: str, node: str, **spec: Any) -> Pod:
        doc = _variant("metadata.name", name)
        doc["spec"].update(nodeName=node, **spec)
        return msgspec.convert(doc, Pod)

    limits_only = [{"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "1"}}}]
    pods = [
        bound("a-1", "n1"),
        bound("a-2", "n2"),
        bound("b-1", "n1", containers=limits_only),  # admission sets its requests
        bound("b-2", "n2", containers=limits_only),
        bound("c-1", "n1", priority=5, containers=limits_only, initContainers=[]),
        bound("c-2", "n2", priority=5, containers=limits_only, initContainers=[]),
    ]
    read_back = {  # as a cluster returns it: admission changes nothing
        "metadata": {"namespace": "default", "labels": {"app": "db"}},
        "spec": {
            "containers": [{"name": "c", "image": "pg", "resources": {"requests": {"cpu": "1"}}}],
            "priority": 0,
            "preemptionPolicy": "PreemptLowerPriority",
        },
    }
    for name, node in (("d-1", "n1"), ("d-2", "n2")):
        doc = msgspec.json.decode(msgspec.json.encode(read_back))
        doc["metadata"]["name"], doc["spec"]["nodeName"] = name, node
        pods.append(msgspec.convert(doc, Pod))
    nodes = [msgspec.convert({"metadata": {"name": n}}, Node) for n in ("n1", "n2")]
    scenario = build_scenario(
        [(f"x {i}", o) for i, o in enumerate([*nodes, *pods])], default_config()
    )
    assert [pod for pod, _ in scenario.resource_pairs] == scenario.pods
    assert [like.metadata.name for _, like in scenario.resource_pairs] == [
        "a-1", "a-1", "b-1", "b-1", "c-1", "c-1", "d-1", "d-1",
    ]  # fmt: skip
    assert scenario.pods[7] is pods[7]  # unchanged, yet paired
    for pod, like in scenario.resource_pairs:
        for level in (False, True):
            assert resource_helpers._resource_key(pod, level) == resource_helpers._resource_key(
                like, level
            )
    scenario.cluster()  # notes the pairs
    level = resource_helpers.pod_level_enabled(DEFAULT_FEATURES)
    for pod in scenario.pods:
        fresh = resource_helpers._calculate_resource(pod, level)
        assert resource_helpers.calculate_resource(pod, DEFAULT_FEATURES) == fresh


@pytest.mark.parametrize(
    ("first_node_affinity", "second_node_affinity"),
    [(None, None), (None, "node-2"), ("node-1", None), ("node-1", "node-2")],
    ids=["neither", "second", "first", "both"],
)
@pytest.mark.parametrize("keys", [True, False], ids=["merged", "as written"])
def test_the_pods_of_one_template_share_its_pod_affinity_objects(
    first_node_affinity: str | None, second_node_affinity: str | None, keys: bool
) -> None:
    """A pod admitted after another of its template is given the first pod's merged
    podAffinity and podAntiAffinity objects where the merges changed them, and keeps its own
    (equal) ones where they did not; either way the caches of parsed terms find it by the first
    pod's objects once told the two are alike (``same_pod_terms_as``, as ``Scenario.cluster``
    tells them), and it keeps its own node affinity, and is admitted as alone."""
    from topospread.plugins.interpodaffinity.terms import (
        PodTermsCache,
        same_pod_terms_as,
        terms_objects,
    )

    def doc(name: str, node: str | None) -> dict[str, Any]:
        out = _variant("metadata.name", name)
        if not keys:
            del out["spec"]["affinity"]["podAntiAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"
            ][0]["matchLabelKeys"]
        if node is not None:
            out["spec"]["affinity"]["nodeAffinity"] = _node_affinity(node)
        return out

    shared = _memo()
    first = admit_pod(msgspec.convert(doc("web-1", first_node_affinity), Pod), shared.priorities,
                      "x", memo=shared)  # fmt: skip
    second_doc = doc("web-2", second_node_affinity)
    for admitted in (
        admit_pod(msgspec.convert(second_doc, Pod), shared.priorities, "x", memo=shared),
        shared.admit_valid(msgspec.convert(second_doc, Pod)),
    ):
        assert admitted is not None
        assert msgspec.to_builtins(admitted) == _admitted(second_doc, _memo())
        a, b = first.spec.affinity, admitted.spec.affinity
        assert a is not None and b is not None
        assert b.pod_anti_affinity == a.pod_anti_affinity
        assert b.pod_affinity == a.pod_affinity
        assert (b.pod_anti_affinity is a.pod_anti_affinity) == keys
        assert (b is a) == (keys and first_node_affinity is None and second_node_affinity is None)
        same_pod_terms_as([(admitted, first)])
        objects = terms_objects(b)
        assert objects[0] is a.pod_affinity and objects[1] is a.pod_anti_affinity
        cache = PodTermsCache()
        assert cache.get(admitted) is cache.get(first)
