"""A NodePool is decoded and validated as the API server does for Karpenter's NodePool CRD
(nodepool_validation): strict decoding, the OpenAPI schema's checks with apiextensions'
messages, and the CEL rules by hand; the short form refuses unknown keys; each bad field is one
line naming the file, the NodePool and the field, exit code 2."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from test_cli import run
from topospread.api.strict import FieldValidation, field_validation
from topospread.autoscaler.karpenter import parse_catalogue, parse_nodepool
from topospread.autoscaler.karpenter.nodepool_validation import (
    CEL_RULES,
    crd_release,
    root_schema,
    uses_old_self,
)
from topospread.errors import ManifestError

ROOT = Path(__file__).resolve().parents[1]
WHERE = "t.yaml: autoscaler.karpenter.nodePools[0]"
LABEL = f"{WHERE} (NodePool np)"
NODE_CLASS = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
ZONE_IN = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}


def manifest(**spec: Any) -> dict[str, Any]:
    """A valid NodePool manifest; ``spec`` replaces spec's fields, ``tspec`` the template's."""
    tspec = {"nodeClassRef": dict(NODE_CLASS), "requirements": [dict(ZONE_IN)]}
    tspec.update(spec.pop("tspec", {}))
    template: dict[str, Any] = {"spec": tspec}
    if "labels" in spec:
        template["metadata"] = {"labels": spec.pop("labels")}
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": spec.pop("metadata", {"name": "np"}),
        "spec": {"template": template, **spec},
    }


def req(key: str = "k", operator: str = "In", **more: Any) -> dict[str, Any]:
    return {"key": key, "operator": operator, **more}


def error_of(raw: Any) -> str:
    with pytest.raises(ManifestError) as err:
        parse_nodepool(raw, WHERE)
    return str(err.value)


def test_the_schema_is_karpenters_current_release() -> None:
    assert crd_release() == "v1.14.1"


def test_every_cel_rule_of_the_crd_is_implemented_or_a_transition_rule() -> None:
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            found.extend(r["rule"] for r in node.get("x-kubernetes-validations", ()))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(root_schema())
    assert found
    assert [r for r in found if r not in CEL_RULES and not uses_old_self(r)] == []
    assert set(CEL_RULES) <= set(found)


def test_a_valid_manifest_parses() -> None:
    pool = parse_nodepool(manifest(weight=10, limits={"cpu": 8, "memory": "32Gi"}), WHERE)
    assert (pool.name, pool.weight, pool.limits_cpu_milli) == ("np", 10, 8000)
    assert pool.consolidate_after == 0.0 and pool.budgets[0].nodes == "10%"


def test_a_manifest_read_from_a_cluster_keeps_its_status_and_integral_floats() -> None:
    raw = manifest(weight=10.0, limits={"cpu": 2.0})
    raw["status"] = {"nodes": 3, "resources": {"cpu": "4"}, "conditions": []}
    pool = parse_nodepool(raw, WHERE)
    assert (pool.weight, pool.limits_cpu_milli) == (10, 2000)
    raw["status"]["nodez"] = 1
    assert error_of(raw) == f'{LABEL}: strict decoding error: unknown field "status.nodez"'


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        # Strict decoding: the structural schema's pruning, metadata as an ObjectMeta.
        (
            manifest(tspec={"requirments": []}),
            'strict decoding error: unknown field "spec.template.spec.requirments"',
        ),
        (
            manifest(metadata={"name": "np", "labelz": {}}, weigth=1),
            'strict decoding error: unknown field "metadata.labelz", unknown field "spec.weigth"',
        ),
        # OpenAPI v3: maximum, minimum, type, enum, pattern, required, maxLength, anyOf.
        (
            manifest(weight=101),
            "spec.weight: Invalid value: 101: spec.weight in body should be less than or equal "
            "to 100",
        ),
        (
            manifest(weight=0),
            "spec.weight: Invalid value: 0: spec.weight in body should be greater than or equal "
            "to 1",
        ),
        (
            manifest(weight="10"),
            'spec.weight: Invalid value: "string": spec.weight in body must be of type integer: '
            '"string"',
        ),
        (
            manifest(disruption={"consolidationPolicy": "Foo", "consolidateAfter": "1m"}),
            'spec.disruption.consolidationPolicy: Unsupported value: "Foo": supported values: '
            '"WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"',
        ),
        (
            manifest(disruption={"consolidateAfter": "soon"}),
            'spec.disruption.consolidateAfter: Invalid value: "soon": spec.disruption.'
            "consolidateAfter in body should match '^(([0-9]+(s|m|h))+|Never)$'",
        ),
        # v1.14.1's disruption requires consolidateAfter (the block's default sets it only
        # when the block is absent).
        (
            manifest(disruption={"consolidationPolicy": "WhenEmpty"}),
            "spec.disruption.consolidateAfter: Required value",
        ),
        (
            manifest(tspec={"nodeClassRef": None}),
            "spec.template.spec.nodeClassRef: Required value",
        ),
        (
            manifest(tspec={"nodeClassRef": {"group": "g", "kind": "K"}}),
            "spec.template.spec.nodeClassRef.name: Required value",
        ),
        (
            manifest(tspec={"taints": [{"key": "a", "effect": "Nope"}]}),
            'spec.template.spec.taints[0].effect: Unsupported value: "Nope": supported values: '
            '"NoSchedule", "PreferNoSchedule", "NoExecute"',
        ),
        (
            manifest(tspec={"requirements": [req(values=["x" * 64])]}),
            None,  # values' maxLength/pattern sit on the array: kube-openapi ignores them
        ),
        (
            manifest(labels={"team": "x" * 64}),
            "spec.template.metadata.labels.team: Too long: may not be more than 63 bytes",
        ),
        (
            manifest(tspec={"requirements": [req(values=[1])]}),
            'spec.template.spec.requirements[0].values[0]: Invalid value: "integer": '
            "spec.template.spec.requirements[0].values[0] in body must be of type string: "
            '"integer"',
        ),
        (
            manifest(tspec={"requirements": [req(values=["a"], minValues=51)]}),
            "spec.template.spec.requirements[0].minValues: Invalid value: 51: spec.template.spec"
            ".requirements[0].minValues in body should be less than or equal to 50",
        ),
        (
            manifest(limits={"cpu": True}),
            '<nil>: Invalid value: "": "spec.limits.cpu" must validate at least one schema (anyOf)',
        ),
        (
            manifest(disruption={"consolidateAfter": "0s", "budgets": [{"nodes": "101%"}]}),
            'spec.disruption.budgets[0].nodes: Invalid value: "101%": spec.disruption.budgets[0]'
            ".nodes in body should match '^((100|[0-9]{1,2})%|[0-9]+)$'",
        ),
        (
            manifest(
                disruption={
                    "consolidateAfter": "0s",
                    "budgets": [{"nodes": "1", "reasons": ["Empty", "Empty"]}],
                }
            ),
            'spec.disruption.budgets[0].reasons[1]: Duplicate value: "Empty"',
        ),
        (
            manifest(metadata={"name": "Bad_Name"}),
            'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain',
        ),
        # CEL, requirements: 'requirements with operator 'In' must have a value defined'
        # (self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)).
        (
            manifest(tspec={"requirements": [req(values=[])]}),
            "spec.template.spec.requirements: Invalid value: requirements with operator 'In' "
            "must have a value defined",
        ),
        # ... and without values at all, x.values is CEL's "no such key".
        (
            manifest(tspec={"requirements": [req()]}),
            'spec.template.spec.requirements: Invalid value: "array": no such key: values '
            "evaluating rule: requirements with operator 'In' must have a value defined",
        ),
        # CEL: (x.operator == 'Gt' || ...) ? (x.values.size() == 1 && int(x.values[0]) >= 0).
        (
            manifest(tspec={"requirements": [req(operator="Gt", values=["-1"])]}),
            "spec.template.spec.requirements: Invalid value: requirements operator 'Gt', 'Lt', "
            "'Gte', or 'Lte' must have a single positive integer value",
        ),
        (
            manifest(tspec={"requirements": [req(operator="Lt", values=["1", "2"])]}),
            "spec.template.spec.requirements: Invalid value: requirements operator 'Gt', 'Lt', "
            "'Gte', or 'Lte' must have a single positive integer value",
        ),
        (
            manifest(tspec={"requirements": [req(operator="Gt", values=["x"])]}),
            'spec.template.spec.requirements: Invalid value: "array": type conversion error '
            "from 'string' to 'int' evaluating rule: requirements operator 'Gt', 'Lt', 'Gte', or "
            "'Lte' must have a single positive integer value",
        ),
        # CEL: (x.operator == 'In' && has(x.minValues)) ? x.values.size() >= x.minValues.
        (
            manifest(tspec={"requirements": [req(values=["a"], minValues=2)]}),
            "spec.template.spec.requirements: Invalid value: requirements with 'minValues' must "
            "have at least that many values specified in the 'values' field",
        ),
        # CEL on requirements[*].key: the karpenter.sh domain (but capacity-type), the
        # nodepool label and the hostname label are restricted.
        (
            manifest(tspec={"requirements": [req("karpenter.sh/foo", "Exists")]}),
            'spec.template.spec.requirements[0].key: Invalid value: "karpenter.sh/foo": label '
            'domain "karpenter.sh" is restricted',
        ),
        (
            manifest(tspec={"requirements": [req("karpenter.sh/nodepool", "Exists")]}),
            'spec.template.spec.requirements[0].key: Invalid value: "karpenter.sh/nodepool": '
            'label "karpenter.sh/nodepool" is restricted',
        ),
        (
            manifest(tspec={"requirements": [req("kubernetes.io/hostname", values=["n"])]}),
            'spec.template.spec.requirements[0].key: Invalid value: "kubernetes.io/hostname": '
            'label "kubernetes.io/hostname" is restricted',
        ),
        # CEL on template.metadata.labels: the same three, over the map's keys.
        (
            manifest(labels={"sub.karpenter.sh/x": "y"}),
            'spec.template.metadata.labels: Invalid value: label domain "karpenter.sh" is '
            "restricted",
        ),
        (
            manifest(labels={"karpenter.sh/nodepool": "y"}),
            'spec.template.metadata.labels: Invalid value: label "karpenter.sh/nodepool" is '
            "restricted",
        ),
        (
            manifest(labels={"kubernetes.io/hostname": "y"}),
            'spec.template.metadata.labels: Invalid value: label "kubernetes.io/hostname" is '
            "restricted",
        ),
        # CEL on nodeClassRef's fields: self != ''.
        (
            manifest(tspec={"nodeClassRef": {**NODE_CLASS, "kind": ""}}),
            'spec.template.spec.nodeClassRef.kind: Invalid value: "": kind may not be empty',
        ),
        # CEL on budgets: self.all(x, has(x.schedule) == has(x.duration)).
        (
            manifest(disruption={"consolidateAfter": "0s", "budgets": [{"schedule": "@daily"}]}),
            "spec.disruption.budgets: Invalid value: 'schedule' must be set with 'duration'",
        ),
        # CEL on spec: static NodePools (replicas) take no weight and only limits.nodes.
        (
            manifest(replicas=2, weight=5),
            "spec: Invalid value: 'weight' is not supported on static NodePools",
        ),
        (
            manifest(replicas=2, limits={"cpu": "1"}),
            "spec: Invalid value: only 'limits.nodes' is supported on static NodePools",
        ),
        # Valid for the CRD, not modelled here: refused by name rather than ignored.
        (manifest(replicas=2), "spec.replicas: static NodePools (replicas) are not modelled"),
        (
            manifest(limits={"nodes": "10"}),
            "spec.limits.nodes: limits other than cpu and memory are not modelled",
        ),
        (
            manifest(tspec={"requirements": [req(operator="Gte", values=["1"])]}),
            "spec.template.spec.requirements[0].operator: operator Gte is not modelled",
        ),
        (
            manifest(disruption={"consolidationPolicy": "Balanced", "consolidateAfter": "0s"}),
            "spec.disruption.consolidationPolicy: Balanced is not modelled",
        ),
        # Budgets with a schedule are modelled now (Budget.IsActive, pkg/apis/v1/nodepool.go).
        (
            manifest(
                disruption={
                    "consolidateAfter": "0s",
                    "budgets": [{"nodes": "0", "schedule": "@daily", "duration": "1h"}],
                }
            ),
            None,
        ),
    ],
)
def test_a_bad_manifest_is_refused_as_the_api_server_refuses_it(
    raw: dict[str, Any], message: str | None
) -> None:
    if message is None:
        parse_nodepool(raw, WHERE)
        return
    name = raw["metadata"]["name"]
    assert error_of(raw).startswith(f"{WHERE} (NodePool {name}): {message}")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"name": "np", "requirments": []},
            "requirments: unknown field; expected name, labels, requirements, taints, "
            "expireAfter, terminationGracePeriod, limits, weight, disruption",
        ),
        (
            {"name": "np", "requirements": [{"key": "k", "operater": "In"}]},
            "requirements[0].operater: unknown field; expected key, minValues, operator, values",
        ),
        (
            {"name": "np", "weight": 101},
            "weight: Invalid value: 101: weight in body should be less than or equal to 100",
        ),
        (
            {"name": "np", "labels": {"kubernetes.io/hostname": "x"}},
            'labels: Invalid value: label "kubernetes.io/hostname" is restricted',
        ),
        (
            {"name": "np", "disruption": {"consolidateAfter": "5 minutes"}},
            'disruption.consolidateAfter: Invalid value: "5 minutes": disruption.consolidateAfter'
            " in body should match '^(([0-9]+(s|m|h))+|Never)$'",
        ),
    ],
)
def test_the_short_form_is_checked_by_the_same_rules(raw: dict[str, Any], message: str) -> None:
    assert error_of(raw) == f"{LABEL}: {message}"


def test_the_short_form_keeps_its_defaults() -> None:
    pool = parse_nodepool({"name": "np", "disruption": {"consolidationPolicy": "WhenEmpty"}}, "x")
    assert (pool.consolidation_policy, pool.consolidate_after) == ("WhenEmpty", 0.0)
    assert parse_nodepool(
        {"name": "np", "disruption": {"consolidateAfter": "Never"}}, "x"
    ).consolidate_after == float("inf")


def test_a_wrong_kind_or_version_is_named() -> None:
    raw = manifest()
    raw["apiVersion"] = "karpenter.sh/v1beta1"
    assert error_of(raw).startswith(
        f'{LABEL}: no matches for kind "NodePool" in version "karpenter.sh/v1beta1"'
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"instanceTypes": [], "extra": 1}, "types.yaml: extra: unknown field; expected "),
        (
            [{"name": "x", "cpu": "1", "memory": "1Gi", "offerings": [], "cpus": 2}],
            "types.yaml[0]: cpus: unknown field; expected name, cpu, memory, pods, arch",
        ),
        (
            [
                {
                    "name": "x",
                    "cpu": "1",
                    "memory": "1Gi",
                    "offerings": [{"zone": "a", "price": 1, "capcityType": "spot"}],
                }
            ],
            "types.yaml[0].offerings[0]: capcityType: unknown field; expected zone, capacityType",
        ),
    ],
)
def test_a_catalogue_refuses_unknown_keys(raw: Any, message: str) -> None:
    with pytest.raises(ManifestError) as err:
        parse_catalogue(raw, "types.yaml")
    assert str(err.value).startswith(message)


# ------------------------------------------------------------------------------------ the CLI


def example(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((ROOT / "examples/simulations" / name).read_text())
    return doc


def test_cli_a_misspelled_short_form_field_exits_2_naming_file_pool_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = example("autoscaler-zone-outage-karpenter.yaml")
    [pool] = doc["autoscaler"]["karpenter"]["nodePools"]
    pool["requirments"] = pool.pop("requirements")
    path = tmp_path / "typo.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, _, err = run(["simulate", str(path)], capsys)
    assert code == 2 and "Traceback" not in err
    assert (
        f"{path}: autoscaler.karpenter.nodePools[0] (NodePool default): requirments: unknown "
        "field; expected name, labels, requirements, taints, expireAfter, "
        "terminationGracePeriod, limits, weight, disruption"
    ) in err


def test_cli_a_misspelled_manifest_field_is_the_api_servers_strict_decoding_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = example("autoscaler-zone-outage-karpenter.yaml")
    [short] = doc["autoscaler"]["karpenter"]["nodePools"]
    pool = manifest()
    pool["metadata"]["name"] = "default"
    pool["spec"]["template"]["spec"]["requirments"] = short["requirements"]
    doc["autoscaler"]["karpenter"]["nodePools"] = [pool]
    path = tmp_path / "typo.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, _, err = run(["simulate", str(path)], capsys)
    assert code == 2 and "Traceback" not in err
    assert (
        f"{path}: autoscaler.karpenter.nodePools[0] (NodePool default): strict decoding error: "
        'unknown field "spec.template.spec.requirments"'
    ) in err


def test_cli_a_manifest_that_fails_a_cel_rule_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = example("autoscaler-zone-outage-karpenter.yaml")
    pool = copy.deepcopy(
        manifest(tspec={"requirements": [req("kubernetes.io/hostname", "Exists")]})
    )
    doc["autoscaler"]["karpenter"]["nodePools"] = [pool]
    path = tmp_path / "cel.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, _, err = run(["simulate", str(path)], capsys)
    assert code == 2 and "Traceback" not in err
    assert (
        'spec.template.spec.requirements[0].key: Invalid value: "kubernetes.io/hostname": '
        'label "kubernetes.io/hostname" is restricted'
    ) in err


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        # A custom resource's malformed metadata fields are dropped (DropMalformedFields).
        ({"name": 5}, f"{WHERE}: metadata.name: Required value: name or generateName is required"),
        ("np", f"{WHERE}: invalid metadata: expected object, got string"),
        (
            {"name": "np", "namespace": "default"},
            f"{LABEL}: metadata.namespace: Forbidden: not allowed on this type",
        ),
    ],
)
def test_the_metadata_is_read_as_for_a_cluster_scoped_custom_resource(
    metadata: Any, message: str
) -> None:
    assert error_of(manifest(metadata=metadata)) == message


def test_under_warn_an_unknown_field_is_a_warning_and_the_rest_is_still_validated() -> None:
    raw = manifest(weigth=1)
    with field_validation(FieldValidation.WARN) as warnings:
        assert parse_nodepool(raw, WHERE).weight == 0
    assert warnings == [f'{LABEL}: unknown field "spec.weigth"']
    raw["spec"]["weight"] = 500
    with field_validation(FieldValidation.IGNORE), pytest.raises(ManifestError) as err:
        parse_nodepool(raw, WHERE)
    assert str(err.value).startswith(f"{LABEL}: spec.weight: Invalid value: 500")
