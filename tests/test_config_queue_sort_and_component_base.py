"""The rest of ValidateKubeSchedulerConfiguration: every profile sorts the one queue alike
(validateCommonQueueSort), VolumeBinding's and DynamicResources' args are validated with the
v1.35 feature gates' defaults, and clientConnection and leaderElection get component-base's
checks — each refused with upstream's field path and message, naming the file, exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import pytest

from test_bad_input import assert_one_line_exit_2
from test_cli import run
from test_strict_config_and_cases import refusal, schedule_with_config
from topospread.api.field import Path as FieldPath
from topospread.errors import ConfigError
from topospread.framework.config import decode_config
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.plugins.dynamicresources import new as new_dynamic_resources
from topospread.plugins.dynamicresources.args import validate_dynamic_resources_args
from topospread.plugins.registry import ARGS_VALIDATORS
from topospread.plugins.volumebinding.args import validate_volume_binding_args

HEAD: Final = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
PRIORITY_SORT: Final = {"queueSort": {"enabled": [{"name": "PrioritySort"}]}}
SHAPE_GATED: Final = (
    "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"
)


def _args(plugin: str, args: Any) -> dict[str, Any]:
    return {**HEAD, "profiles": [{"pluginConfig": [{"name": plugin, "args": args}]}]}


def _two(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    return {
        **HEAD,
        "profiles": [{"schedulerName": "a", **first}, {"schedulerName": "b", **second}],
    }


REFUSED: Final = {
    "a queue sort set only the first profile gives": (
        _two({"plugins": PRIORITY_SORT}, {}),
        'profiles[1].plugins.queueSort: Invalid value: {"Enabled":null,"Disabled":null}: '
        "must be the same for all profiles",
    ),
    "a queue sort set only the second profile gives": (
        _two({}, {"plugins": {"queueSort": {"disabled": [{"name": "*"}]}}}),
        'profiles[1].plugins.queueSort: Invalid value: {"Enabled":null,"Disabled":'
        '[{"Name":"*","Weight":0}]}: must be the same for all profiles',
    ),
    "another weight for the same queue sort plugin": (
        _two(
            {"plugins": PRIORITY_SORT},
            {"plugins": {"queueSort": {"enabled": [{"name": "PrioritySort", "weight": 2}]}}},
        ),
        'profiles[1].plugins.queueSort: Invalid value: {"Enabled":[{"Name":"PrioritySort",'
        '"Weight":2}],"Disabled":null}: must be the same for all profiles',
    ),
    "two queue sort plugins in the first profile, even alone": (
        {
            **HEAD,
            "profiles": [
                {"plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}, {"name": "X"}]}}}
            ],
        },
        "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: "
        "only one queue sort plugin can be enabled",
    ),
    "the same queue sort plugin enabled twice": (
        {
            **HEAD,
            "profiles": [
                {
                    "plugins": {
                        "queueSort": {
                            "enabled": [{"name": "PrioritySort"}, {"name": "PrioritySort"}]
                        }
                    }
                }
            ],
        },
        "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: "
        "only one queue sort plugin can be enabled",
    ),
    "other args for the queue sort plugin (the path names no index, as upstream's)": (
        _two(
            {
                "plugins": PRIORITY_SORT,
                "pluginConfig": [{"name": "PrioritySort", "args": {"b": 1, "a": True}}],
            },
            {
                "plugins": PRIORITY_SORT,
                "pluginConfig": [
                    {"name": "NodeAffinity", "args": {}},
                    {"name": "PrioritySort", "args": {"b": 1, "a": 1}},
                ],
            },
        ),
        'profiles[1].pluginConfig.args: Invalid value: {"a":1,"b":1}: '
        "queueSort must be the same for all profiles",
    ),
    "args for the queue sort plugin only in the second profile": (
        _two(
            {"plugins": PRIORITY_SORT},
            {"plugins": PRIORITY_SORT, "pluginConfig": [{"name": "PrioritySort", "args": {}}]},
        ),
        "profiles[1].pluginConfig.args: Invalid value: {}: "
        "queueSort must be the same for all profiles",
    ),
    "a queue sort error comes after the profiles' own, before the global percentage": (
        {
            **HEAD,
            "percentageOfNodesToScore": 101,
            "profiles": [
                {"schedulerName": "a", "plugins": PRIORITY_SORT},
                {"schedulerName": "b", "percentageOfNodesToScore": -1},
            ],
        },
        "[profiles[1].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100], "
        'profiles[1].plugins.queueSort: Invalid value: {"Enabled":null,"Disabled":null}: '
        "must be the same for all profiles, "
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]]",
    ),
    "a negative bind timeout": (
        _args("VolumeBinding", {"bindTimeoutSeconds": -1}),
        "profiles[0].pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -1: "
        "invalid BindTimeoutSeconds, should not be a negative value",
    ),
    "a shape while StorageCapacityScoring is off (v1.35's default), fields left out as 0": (
        _args("VolumeBinding", {"shape": [{"utilization": 0, "score": 10}, {"utilization": 100}]}),
        "profiles[0].pluginConfig[0].args.shape: Invalid value: "
        f'[{{"Utilization":0,"Score":10}},{{"Utilization":100,"Score":0}}]: {SHAPE_GATED}',
    ),
    "an empty shape is still a shape": (
        _args("VolumeBinding", {"shape": []}),
        f"profiles[0].pluginConfig[0].args.shape: Invalid value: []: {SHAPE_GATED}",
    ),
    "both VolumeBinding errors, in upstream's order": (
        _args("VolumeBinding", {"shape": [{"utilization": 5}], "bindTimeoutSeconds": -600}),
        "[profiles[0].pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -600: "
        "invalid BindTimeoutSeconds, should not be a negative value, "
        "profiles[0].pluginConfig[0].args.shape: Invalid value: "
        f'[{{"Utilization":5,"Score":0}}]: {SHAPE_GATED}]',
    ),
    "a negative filter timeout, printed as Go prints a duration": (
        _args("DynamicResources", {"filterTimeout": "-90s"}),
        'profiles[0].pluginConfig[0].args.filterTimeout: Invalid value: "-1m30s": '
        "must be zero or positive",
    ),
    "a binding timeout while DRADeviceBindingConditions is off (v1.35's default)": (
        _args("DynamicResources", {"bindingTimeout": "10m"}),
        "profiles[0].pluginConfig[0].args.bindingTimeout: Forbidden: "
        "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled",
    ),
    "a negative burst": (
        {**HEAD, "clientConnection": {"burst": -1}},
        "clientConnection.burst: Invalid value: -1: must be non-negative",
    ),
    "a negative lease duration, then one not longer than the renew deadline": (
        {**HEAD, "leaderElection": {"leaseDuration": "-1s", "renewDeadline": "20s"}},
        '[leaderElection.leaseDuration: Invalid value: "-1s": must be greater than zero, '
        'leaderElection.leaseDuration: Invalid value: "20s": '
        "must be greater than `RenewDeadline`]",
    ),
    "a lease duration equal to the default renew deadline": (
        {**HEAD, "leaderElection": {"leaseDuration": "10s"}},
        'leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`',
    ),
    "negative renew deadline and retry period": (
        {**HEAD, "leaderElection": {"renewDeadline": "-1ms", "retryPeriod": "-1.5s"}},
        '[leaderElection.renewDeadline: Invalid value: "-1ms": must be greater than zero, '
        'leaderElection.retryPeriod: Invalid value: "-1.5s": must be greater than zero]',
    ),
    "component-base's checks come first, the lock's after them": (
        {
            **HEAD,
            "parallelism": 0,
            "clientConnection": {"burst": -2},
            "leaderElection": {"retryPeriod": "-1s", "resourceLock": "endpoints"},
        },
        "[clientConnection.burst: Invalid value: -2: must be non-negative, "
        'leaderElection.retryPeriod: Invalid value: "-1s": must be greater than zero, '
        'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be '
        '"leases", parallelism: Invalid value: 0: should be an integer value greater than zero]',
    ),
}


@pytest.mark.parametrize(("data", "message"), REFUSED.values(), ids=list(REFUSED))
def test_a_configuration_kube_scheduler_refuses_is_refused_with_its_message(
    data: dict[str, Any], message: str
) -> None:
    assert refusal(data, ARGS_VALIDATORS) == f"config.yaml: {message}"


TAKEN: Final = {
    "the same queue sort set and args in every profile": _two(
        {"plugins": PRIORITY_SORT, "pluginConfig": [{"name": "PrioritySort", "args": {"a": 1}}]},
        {
            "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort", "weight": 0}]}},
            "pluginConfig": [{"name": "PrioritySort", "args": {"a": 1}}],
        },
    ),
    "two profiles leaving queueSort to multiPoint": _two({}, {"plugins": {}}),
    "null args equal absent ones": _two(
        {"plugins": PRIORITY_SORT},
        {"plugins": PRIORITY_SORT, "pluginConfig": [{"name": "PrioritySort", "args": None}]},
    ),
    "zero durations, burst and qps are defaulted, not refused; qps is not checked": {
        **HEAD,
        "clientConnection": {"burst": 0, "qps": -5},
        "leaderElection": {"leaseDuration": "0s", "renewDeadline": "0s", "retryPeriod": "0s"},
    },
    "durations are not checked without leader election": {
        **HEAD,
        "leaderElection": {"leaderElect": False, "leaseDuration": "-1s", "renewDeadline": "1h"},
    },
    "a null shape, a zero bind timeout": _args(
        "VolumeBinding", {"shape": None, "bindTimeoutSeconds": 0}
    ),
    "a zero filter timeout (no timeout), a null binding timeout": _args(
        "DynamicResources", {"filterTimeout": "0s", "bindingTimeout": None}
    ),
}


@pytest.mark.parametrize("data", TAKEN.values(), ids=list(TAKEN))
def test_what_kube_scheduler_takes_is_taken(data: dict[str, Any]) -> None:
    decode_config(data, "config.yaml", ARGS_VALIDATORS)


@pytest.mark.parametrize(
    "case",
    [
        "a queue sort set only the first profile gives",
        "a shape while StorageCapacityScoring is off (v1.35's default), fields left out as 0",
        "a binding timeout while DRADeviceBindingConditions is off (v1.35's default)",
        "a negative lease duration, then one not longer than the renew deadline",
    ],
)
def test_schedule_exits_2_with_one_line_naming_the_file_and_the_field(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, message = REFUSED[case]
    argv = schedule_with_config(tmp_path, json.dumps(data))
    assert_one_line_exit_2(argv, capsys, f"config.yaml: {message}")


def test_schedule_takes_two_profiles_sorting_the_queue_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _two({"plugins": PRIORITY_SORT}, {"plugins": PRIORITY_SORT})
    argv = schedule_with_config(tmp_path, json.dumps(data))
    code, _, err = run(argv, capsys)
    assert code == 0, err


def test_with_the_gates_on_the_shape_and_the_binding_timeout_get_their_own_checks() -> None:
    """The branches v1.35's defaults never reach, as upstream's options and features take them."""
    on = Features(
        enable_storage_capacity_scoring=True,
        enable_dra_device_binding_conditions=True,
        enable_dra_resource_claim_device_status=True,
    )
    shape = [{"utilization": 50, "score": 11}, {"utilization": 50, "score": 0}]
    errors = validate_volume_binding_args({"shape": shape}, FieldPath.root("args"), on)
    assert [str(e) for e in errors] == [
        "args.shape[1].utilization: Invalid value: 50: values must be sorted in increasing order",
        "args.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
    ]
    assert validate_volume_binding_args({"shape": []}, FieldPath.root("args"), on) == []
    errors = validate_dynamic_resources_args(
        {"bindingTimeout": "999ms"}, FieldPath.root("args"), on
    )
    assert [str(e) for e in errors] == [
        'args.bindingTimeout: Invalid value: "999ms": must be at least 1 second'
    ]
    off = Features(enable_dra_scheduler_filter_timeout=False)
    errors = validate_dynamic_resources_args({"filterTimeout": "1s"}, FieldPath.root("args"), off)
    assert [str(e) for e in errors] == [
        "args.filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled"
    ]


def test_the_plugins_validate_their_own_args_as_their_constructors_do() -> None:
    with pytest.raises(ConfigError) as err:
        new_dynamic_resources({"filterTimeout": "-1s"}, None, DEFAULT_FEATURES)  # type: ignore[arg-type]
    assert str(err.value) == 'filterTimeout: Invalid value: "-1s": must be zero or positive'
