"""A scheduler configuration is taken only as kube-scheduler takes it: its apiVersion and kind
as the decoder requires them, every value of the type v1 gives it (plugin args too, in the Go
decoder's words, naming the file, the args and the field), and nothing it sets that changes
decisions is silently dropped: extenders are refused, a backoff the simulator does not model is
said on stderr."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import pytest

from test_bad_input import GOOD_NODE, GOOD_POD, assert_one_line_exit_2, write_text
from test_cli import run
from test_strict_config_and_cases import refusal, schedule_with_config
from topospread.framework.config import decode_config
from topospread.framework.config_kind import SCHEME_NAME

HEAD: Final = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _args(plugin: str, args: dict[str, Any]) -> dict[str, Any]:
    return {**HEAD, "profiles": [{"pluginConfig": [{"name": plugin, "args": args}]}]}


TYPE_META: Final = {
    "no kind": (
        {"apiVersion": HEAD["apiVersion"]},
        "Object 'Kind' is missing in '{...}'",
    ),
    "no apiVersion": ({"kind": HEAD["kind"]}, "Object 'apiVersion' is missing in '{...}'"),
    "neither (the kind is asked first)": ({}, "Object 'Kind' is missing in '{...}'"),
    "an empty kind": ({**HEAD, "kind": ""}, "Object 'Kind' is missing in '{...}'"),
    "a null apiVersion": (
        {**HEAD, "apiVersion": None},
        "Object 'apiVersion' is missing in '{...}'",
    ),
    "v1beta3, removed in v1.29": (
        {**HEAD, "apiVersion": "kubescheduler.config.k8s.io/v1beta3"},
        'no kind "KubeSchedulerConfiguration" is registered for version '
        f'"kubescheduler.config.k8s.io/v1beta3" in scheme "{SCHEME_NAME}"',
    ),
    "a version without its group": (
        {**HEAD, "apiVersion": "v1"},
        f'no kind "KubeSchedulerConfiguration" is registered for version "v1" in scheme '
        f'"{SCHEME_NAME}"',
    ),
    "a misspelled kind": (
        {**HEAD, "kind": "KubeSchedulerConfig"},
        'no kind "KubeSchedulerConfig" is registered for version '
        f'"kubescheduler.config.k8s.io/v1" in scheme "{SCHEME_NAME}"',
    ),
    "an args kind of the same group": (
        {**HEAD, "kind": "PodTopologySpreadArgs"},
        "couldn't decode as KubeSchedulerConfiguration, got kubescheduler.config.k8s.io/v1, "
        "Kind=PodTopologySpreadArgs: ",
    ),
    "an apiVersion with two slashes": (
        {**HEAD, "apiVersion": "kubescheduler.config.k8s.io/v1/x"},
        "unexpected GroupVersion string: kubescheduler.config.k8s.io/v1/x",
    ),
    "a kind that is not a string": (
        {**HEAD, "kind": 1},
        "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go "
        "struct field .kind of type string",
    ),
}


@pytest.mark.parametrize(("data", "message"), TYPE_META.values(), ids=list(TYPE_META))
def test_apiversion_and_kind_are_required_as_kube_schedulers_decoder_requires_them(
    data: dict[str, Any], message: str
) -> None:
    assert refusal(data) == f"config.yaml: {message}"


def test_a_config_file_without_kind_is_refused_in_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = schedule_with_config(tmp_path, "apiVersion: kubescheduler.config.k8s.io/v1\n")
    assert_one_line_exit_2(argv, capsys, "config.yaml: Object 'Kind' is missing in '{...}'")


def test_a_scenarios_inline_config_needs_apiversion_and_kind_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "nodes: []\nconfig: {percentageOfNodesToScore: 50}\n"
    argv = ["schedule", write_text(tmp_path, "scenario.yaml", text)]
    assert_one_line_exit_2(
        argv, capsys, "scenario.yaml: config: Object 'Kind' is missing in '{...}'"
    )


PREFIX: Final = "profiles[0].pluginConfig[0].args: decoding args for plugin"
ARGS_TYPES: Final = {
    "NodeResourcesFit's ignoredResources": (
        _args("NodeResourcesFit", {"ignoredResources": 3}),
        f"{PREFIX} NodeResourcesFit: json: cannot unmarshal number into Go struct field "
        "NodeResourcesFitArgs.ignoredResources of type []string",
    ),
    "a scoring resource's weight": (
        _args("NodeResourcesFit", {"scoringStrategy": {"resources": [{"weight": "x"}]}}),
        f"{PREFIX} NodeResourcesFit: json: cannot unmarshal string into Go struct field "
        "ResourceSpec.scoringStrategy.resources.weight of type int64",
    ),
    "a shape point's score": (
        _args(
            "NodeResourcesFit",
            {"scoringStrategy": {"requestedToCapacityRatio": {"shape": [{"score": True}]}}},
        ),
        f"{PREFIX} NodeResourcesFit: json: cannot unmarshal bool into Go struct field "
        "UtilizationShapePoint.scoringStrategy.requestedToCapacityRatio.shape.score of type int32",
    ),
    "a scoring strategy's type": (
        _args("NodeResourcesFit", {"scoringStrategy": {"type": 1}}),
        f"{PREFIX} NodeResourcesFit: json: cannot unmarshal number into Go struct field "
        "ScoringStrategy.scoringStrategy.type of type v1.ScoringStrategyType",
    ),
    "a balanced allocation resource": (
        _args("NodeResourcesBalancedAllocation", {"resources": [{"name": 1}]}),
        f"{PREFIX} NodeResourcesBalancedAllocation: json: cannot unmarshal number into Go "
        "struct field ResourceSpec.resources.name of type string",
    ),
    "InterPodAffinity's weight beyond int32": (
        _args("InterPodAffinity", {"hardPodAffinityWeight": 3000000000}),
        f"{PREFIX} InterPodAffinity: json: cannot unmarshal number 3000000000 into Go struct "
        "field InterPodAffinityArgs.hardPodAffinityWeight of type int32",
    ),
    "InterPodAffinity's flag": (
        _args("InterPodAffinity", {"ignorePreferredTermsOfExistingPods": "yes"}),
        f"{PREFIX} InterPodAffinity: json: cannot unmarshal string into Go struct field "
        "InterPodAffinityArgs.ignorePreferredTermsOfExistingPods of type bool",
    ),
    "DefaultPreemption's percentage": (
        _args("DefaultPreemption", {"minCandidateNodesPercentage": True}),
        f"{PREFIX} DefaultPreemption: json: cannot unmarshal bool into Go struct field "
        "DefaultPreemptionArgs.minCandidateNodesPercentage of type int32",
    ),
    "NodeAffinity's terms": (
        _args(
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": 3}
                }
            },
        ),
        f"{PREFIX} NodeAffinity: json: cannot unmarshal number into Go struct field "
        "NodeSelector.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms of type []v1.NodeSelectorTerm",
    ),
    "VolumeBinding's timeout": (
        _args("VolumeBinding", {"bindTimeoutSeconds": 1.5}),
        f"{PREFIX} VolumeBinding: json: cannot unmarshal number 1.5 into Go struct field "
        "VolumeBindingArgs.bindTimeoutSeconds of type int64",
    ),
    "DynamicResources' timeout": (
        _args("DynamicResources", {"filterTimeout": "ten"}),
        f'{PREFIX} DynamicResources: time: invalid duration "ten"',
    ),
}


@pytest.mark.parametrize(("data", "message"), ARGS_TYPES.values(), ids=list(ARGS_TYPES))
def test_a_wrong_type_in_any_registered_args_is_the_go_decoders_error_naming_the_field(
    data: dict[str, Any], message: str
) -> None:
    assert refusal(data) == f"config.yaml: {message}"


OTHER_TYPES: Final = {
    "leader election": (
        {**HEAD, "leaderElection": {"leaderElect": "yes"}},
        "json: cannot unmarshal string into Go struct field "
        "LeaderElectionConfiguration.leaderElection.leaderElect of type bool",
    ),
    "leader election as a whole": (
        {**HEAD, "leaderElection": 3},
        "json: cannot unmarshal number into Go struct field "
        "KubeSchedulerConfiguration.leaderElection of type v1alpha1.LeaderElectionConfiguration",
    ),
    "a lease duration": (
        {**HEAD, "leaderElection": {"leaseDuration": "long"}},
        'time: invalid duration "long"',
    ),
    "client connection": (
        {**HEAD, "clientConnection": {"qps": "fast"}},
        "json: cannot unmarshal string into Go struct field "
        "ClientConnectionConfiguration.clientConnection.qps of type float32",
    ),
    "profiling": (
        {**HEAD, "enableProfiling": "on"},
        "json: cannot unmarshal string into Go struct field "
        "KubeSchedulerConfiguration.enableProfiling of type bool",
    ),
    "an extender's weight (decoded before extenders are refused)": (
        {**HEAD, "extenders": [{"urlPrefix": "http://x", "weight": "heavy"}]},
        "json: cannot unmarshal string into Go struct field Extender.extenders.weight of "
        "type int64",
    ),
}


@pytest.mark.parametrize(("data", "message"), OTHER_TYPES.values(), ids=list(OTHER_TYPES))
def test_a_wrong_type_in_fields_topospread_does_not_read_is_refused_too(
    data: dict[str, Any], message: str
) -> None:
    assert refusal(data) == f"config.yaml: {message}"


def test_schedule_names_the_file_for_a_plugin_args_type_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n"
        "    args: {hardPodAffinityWeight: x}\n"
    )
    argv = schedule_with_config(tmp_path, config)
    assert_one_line_exit_2(
        argv,
        capsys,
        "config.yaml: profiles[0].pluginConfig[0].args: decoding args for plugin "
        "InterPodAffinity: json: cannot unmarshal string into Go struct field "
        "InterPodAffinityArgs.hardPodAffinityWeight of type int32",
    )


def test_extenders_are_refused_not_silently_dropped() -> None:
    data = {**HEAD, "extenders": [{"urlPrefix": "http://127.0.0.1:8888", "filterVerb": "filter"}]}
    assert refusal(data).startswith(
        "config.yaml: extenders: Forbidden: scheduler extenders are not modelled"
    )


def test_an_empty_extenders_list_drops_nothing_and_is_taken() -> None:
    assert decode_config({**HEAD, "extenders": []}, "config.yaml").warnings == ()


def test_fields_that_change_no_decision_are_taken_without_a_word() -> None:
    data = {
        **HEAD,
        "parallelism": 4,
        "leaderElection": {"leaderElect": True, "leaseDuration": "15s"},
        "clientConnection": {"qps": 50, "burst": 100},
        "enableProfiling": False,
        "delayCacheUntilActive": True,
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 10,
    }
    assert decode_config(data, "config.yaml").warnings == ()


def test_feature_gates_are_no_field_of_the_configuration() -> None:
    assert (
        refusal({**HEAD, "featureGates": {"Foo": True}})
        == 'config.yaml: strict decoding error: unknown field "featureGates"'
    )


def test_a_backoff_the_simulator_does_not_model_is_said_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "podMaxBackoffSeconds: 60\n"
    )
    argv = schedule_with_config(tmp_path, config)
    code, _, err = run(argv, capsys)
    assert code == 0
    assert err.splitlines() == [
        "topospread: warning: podInitialBackoffSeconds 1, podMaxBackoffSeconds 60: not modelled "
        "(the simulated queue has no backoff: a pod a cluster event may help is tried again at "
        "once)"
    ]


ARGS_META: Final = {
    "an unregistered kind": (
        _args("InterPodAffinity", {"kind": "InterPodAffinityArg"}),
        "profiles[0].pluginConfig[0].args: decoding args for plugin InterPodAffinity: no kind "
        '"InterPodAffinityArg" is registered for version "kubescheduler.config.k8s.io/v1" in '
        f'scheme "{SCHEME_NAME}"',
    ),
    "another plugin's args kind": (
        _args("PodTopologySpread", {"kind": "NodeResourcesFitArgs"}),
        "profiles[0].pluginConfig[0].args: args for plugin PodTopologySpread were not of type "
        "PodTopologySpreadArgs.kubescheduler.config.k8s.io, got "
        "NodeResourcesFitArgs.kubescheduler.config.k8s.io",
    ),
    "a removed version": (
        _args("NodeResourcesFit", {"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}),
        "profiles[0].pluginConfig[0].args: decoding args for plugin NodeResourcesFit: no kind "
        '"NodeResourcesFitArgs" is registered for version "kubescheduler.config.k8s.io/v1beta3" '
        f'in scheme "{SCHEME_NAME}"',
    ),
}


@pytest.mark.parametrize(("data", "message"), ARGS_META.values(), ids=list(ARGS_META))
def test_plugin_args_of_another_version_or_kind_are_refused(
    data: dict[str, Any], message: str
) -> None:
    assert refusal(data) == f"config.yaml: {message}"


def test_plugin_args_may_leave_out_their_apiversion_and_kind_or_give_them() -> None:
    for args in (
        {"hardPodAffinityWeight": 2},
        {"kind": "InterPodAffinityArgs", "hardPodAffinityWeight": 2},
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "InterPodAffinityArgs"},
        {"apiVersion": "kubescheduler.config.k8s.io/"},
    ):
        config = decode_config(_args("InterPodAffinity", args), "config.yaml")
        assert config.profiles[0].plugin_args["InterPodAffinity"] == args


INVALID_ARGS: Final = {
    "InterPodAffinity's weight": (
        _args("InterPodAffinity", {"hardPodAffinityWeight": 200}),
        "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 200: "
        "not in valid range [0, 100]",
    ),
    "DefaultPreemption's percentage": (
        _args("DefaultPreemption", {"minCandidateNodesPercentage": 101}),
        "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 101: "
        "not in valid range [0, 100]",
    ),
    "a balanced allocation weight": (
        _args("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 2}]}),
        "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1",
    ),
    "an added node affinity's operator": (
        _args(
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "a", "operator": "Bad"}]}
                        ]
                    }
                }
            },
        ),
        "profiles[0].pluginConfig[0].args.addedAffinity."
        "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"
        '.operator: Unsupported value: "Bad": supported values: "In", "NotIn", "Exists", '
        '"DoesNotExist", "Gt", "Lt"',
    ),
}


@pytest.mark.parametrize(("data", "message"), INVALID_ARGS.values(), ids=list(INVALID_ARGS))
def test_invalid_args_are_refused_at_their_place_in_the_file(
    data: dict[str, Any], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = schedule_with_config(tmp_path, json.dumps(data))
    assert_one_line_exit_2(argv, capsys, f"config.yaml: {message}")


def _fit_config(tmp_path: Path, disabled: bool) -> str:
    profile: dict[str, Any] = {
        "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "X"}}}]
    }
    if disabled:
        profile["plugins"] = {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}
    return write_text(tmp_path, "config.yaml", json.dumps({**HEAD, "profiles": [profile]}))


def test_node_resources_fit_args_are_refused_by_the_plugin_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Upstream validates NodeResourcesFit's args only in the plugin's constructor (the
    configuration's validation lists them under the name "NodeResourcesFitArgs")."""
    base = ["schedule", "--nodes", write_text(tmp_path, "nodes.yaml", GOOD_NODE)]
    base += ["--pods", write_text(tmp_path, "pods.yaml", GOOD_POD)]
    assert_one_line_exit_2(
        [*base, "--config", _fit_config(tmp_path, disabled=False)],
        capsys,
        'config.yaml: profiles[0].pluginConfig[0].args: plugin "NodeResourcesFit": '
        'scoringStrategy.type: Unsupported value: "X": supported values: "LeastAllocated", '
        '"MostAllocated", "RequestedToCapacityRatio"',
    )
    code, _, _ = run([*base, "--config", _fit_config(tmp_path, disabled=True)], capsys)
    assert code == 0


PROFILES_AND_LEADER: Final = {
    "a profile without a name among several": (
        {**HEAD, "profiles": [{"schedulerName": "a"}, {}]},
        "profiles[1].schedulerName: Required value",
    ),
    "an empty name": (
        {**HEAD, "profiles": [{"schedulerName": ""}]},
        "profiles[0].schedulerName: Required value",
    ),
    "two unnamed profiles (in ValidateKubeSchedulerConfiguration's order)": (
        {**HEAD, "profiles": [{}, {}]},
        "[profiles[0].schedulerName: Required value, profiles[1].schedulerName: Required value, "
        'profiles[1].schedulerName: Duplicate value: ""]',
    ),
    "a leader election lock other than leases": (
        {**HEAD, "leaderElection": {"resourceLock": "endpoints"}},
        'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be '
        '"leases"',
    ),
    "parallelism, then a profile, then the percentage": (
        {
            **HEAD,
            "parallelism": 0,
            "percentageOfNodesToScore": 101,
            "profiles": [{"percentageOfNodesToScore": -1}],
        },
        "[parallelism: Invalid value: 0: should be an integer value greater than zero, "
        "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100], "
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]]",
    ),
}


@pytest.mark.parametrize(
    ("data", "message"), PROFILES_AND_LEADER.values(), ids=list(PROFILES_AND_LEADER)
)
def test_profiles_and_leader_election_are_validated_as_kube_scheduler_validates_them(
    data: dict[str, Any], message: str
) -> None:
    assert refusal(data) == f"config.yaml: {message}"


def test_a_lone_unnamed_profile_is_the_default_scheduler_and_a_lock_off_election_is_free() -> None:
    data = {**HEAD, "leaderElection": {"leaderElect": False, "resourceLock": "endpoints"}}
    assert [p.scheduler_name for p in decode_config(data, "c.yaml").profiles] == [
        "default-scheduler"
    ]
