"""A misspelled field of a scheduler configuration or of a conformance case is refused (exit 2,
one line naming the file, the object and the field), never silently dropped.

kube-scheduler decodes its configuration strictly, every plugin's registered args type too
(``strict decoding error: unknown field "profiles[0].pluginz"``); the case format's own keys
are listed where one is unknown.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Final

import pytest
import yaml

from test_bad_input import GOOD_NODE, GOOD_POD, assert_one_line_exit_2, write_text
from test_cli import run
from topospread.errors import ConfigError
from topospread.framework.config import decode_config


def refusal(data: Any, validators: Any = None) -> str:
    """The ConfigError a configuration read from config.yaml is refused with."""
    with pytest.raises(ConfigError) as err:
        decode_config(data, "config.yaml", *([] if validators is None else [validators]))
    return str(err.value)


def schedule_with_config(tmp_path: Path, config: str) -> list[str]:
    """``schedule`` of one good node and one good pod with ``config`` as its --config file."""
    return [
        "schedule",
        "--nodes",
        write_text(tmp_path, "nodes.yaml", GOOD_NODE),
        "--pods",
        write_text(tmp_path, "pods.yaml", GOOD_POD),
        "--config",
        write_text(tmp_path, "config.yaml", config),
    ]


# Every field of kubescheduler.config.k8s.io/v1 and of each registered args type, once.
FULL_CONFIG: Final = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 16
leaderElection: {leaderElect: false, leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 2s,
  resourceLock: leases, resourceName: kube-scheduler, resourceNamespace: kube-system}
clientConnection: {kubeconfig: /etc/kubernetes/scheduler.conf, acceptContentTypes: "",
  contentType: application/vnd.kubernetes.protobuf, qps: 50, burst: 100}
enableProfiling: true
enableContentionProfiling: false
percentageOfNodesToScore: 0
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 10
delayCacheUntilActive: false
extenders:
- urlPrefix: http://127.0.0.1:8888
  filterVerb: filter
  preemptVerb: preempt
  prioritizeVerb: prioritize
  bindVerb: ""
  weight: 1
  enableHTTPS: false
  tlsConfig: {insecure: true, serverName: x, certFile: a, keyFile: b, caFile: c}
  httpTimeout: 30s
  nodeCacheCapable: false
  managedResources: [{name: example.com/foo, ignoredByScheduler: true}]
  ignorable: true
profiles:
- schedulerName: default-scheduler
  percentageOfNodesToScore: 50
  plugins:
    multiPoint: {enabled: [{name: PodTopologySpread, weight: 2}]}
    score: {disabled: [{name: ImageLocality}]}
  pluginConfig:
  - name: PodTopologySpread
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: PodTopologySpreadArgs
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}
  - name: NodeResourcesFit
    args:
      ignoredResources: [example.com/foo]
      ignoredResourceGroups: [example.org]
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources: [{name: cpu, weight: 1}]
        requestedToCapacityRatio:
          shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]
  - name: NodeResourcesBalancedAllocation
    args: {resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]}
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: 1, ignorePreferredTermsOfExistingPods: false}
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 10, minCandidateNodesAbsolute: 100}
  - name: VolumeBinding
    args: {bindTimeoutSeconds: 600, shape: [{utilization: 0, score: 0}]}
  - name: DynamicResources
    args: {filterTimeout: 10s, bindingTimeout: 600s}
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]
  - name: MyOutOfTreePlugin
    args: {anything: goes}
"""


def _renamed(path: tuple[str | int, ...]) -> dict[str, Any]:
    """FULL_CONFIG with the key at ``path`` misspelled (an ``x`` appended)."""
    data = copy.deepcopy(yaml.safe_load(FULL_CONFIG))
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    key = path[-1]
    assert isinstance(key, str)
    parent[key + "x"] = parent.pop(key)
    return data  # type: ignore[no-any-return]


def test_a_configuration_with_every_upstream_field_is_taken() -> None:
    """Every field but extenders, which are decoded (strictly) and then refused: an extender
    changes decisions that cannot be known here (test_config_type_meta_and_unmodelled)."""
    data = yaml.safe_load(FULL_CONFIG)
    with pytest.raises(ConfigError, match="extenders: Forbidden: "):
        decode_config(data, "config.yaml")
    del data["extenders"]
    config = decode_config(data, "config.yaml")
    assert config.profiles[0].plugin_args["MyOutOfTreePlugin"] == {"anything": "goes"}


MISSPELLED: Final = {
    "a top-level field": (("parallelism",), 'strict decoding error: unknown field "parallelismx"'),
    "a leader election field": (
        ("leaderElection", "leaderElect"),
        'strict decoding error: unknown field "leaderElection.leaderElectx"',
    ),
    "a client connection field": (
        ("clientConnection", "qps"),
        'strict decoding error: unknown field "clientConnection.qpsx"',
    ),
    "an extender field": (
        ("extenders", 0, "tlsConfig", "insecure"),
        'strict decoding error: unknown field "extenders[0].tlsConfig.insecurex"',
    ),
    "a profile's plugins": (
        ("profiles", 0, "plugins"),
        'strict decoding error: unknown field "profiles[0].pluginsx"',
    ),
    "an extension point": (
        ("profiles", 0, "plugins", "score"),
        'strict decoding error: unknown field "profiles[0].plugins.scorex"',
    ),
    "a plugin's weight": (
        ("profiles", 0, "plugins", "multiPoint", "enabled", 0, "weight"),
        'strict decoding error: unknown field "profiles[0].plugins.multiPoint.enabled[0].weightx"',
    ),
    "a pluginConfig's args": (
        ("profiles", 0, "pluginConfig", 1, "args"),
        'strict decoding error: unknown field "profiles[0].pluginConfig[1].argsx"',
    ),
    "NodeResourcesFitArgs' scoring strategy": (
        ("profiles", 0, "pluginConfig", 1, "args", "scoringStrategy", "resources", 0, "weight"),
        "profiles[0].pluginConfig[1].args: strict decoding error: "
        'unknown field "scoringStrategy.resources[0].weightx"',
    ),
    "NodeResourcesBalancedAllocationArgs' resources": (
        ("profiles", 0, "pluginConfig", 2, "args", "resources"),
        'profiles[0].pluginConfig[2].args: strict decoding error: unknown field "resourcesx"',
    ),
    "InterPodAffinityArgs' weight": (
        ("profiles", 0, "pluginConfig", 3, "args", "hardPodAffinityWeight"),
        "profiles[0].pluginConfig[3].args: strict decoding error: "
        'unknown field "hardPodAffinityWeightx"',
    ),
    "DefaultPreemptionArgs' percentage": (
        ("profiles", 0, "pluginConfig", 4, "args", "minCandidateNodesPercentage"),
        "profiles[0].pluginConfig[4].args: strict decoding error: "
        'unknown field "minCandidateNodesPercentagex"',
    ),
    "VolumeBindingArgs' shape": (
        ("profiles", 0, "pluginConfig", 5, "args", "shape", 0, "score"),
        'profiles[0].pluginConfig[5].args: strict decoding error: unknown field "shape[0].scorex"',
    ),
    "DynamicResourcesArgs' timeout": (
        ("profiles", 0, "pluginConfig", 6, "args", "filterTimeout"),
        'profiles[0].pluginConfig[6].args: strict decoding error: unknown field "filterTimeoutx"',
    ),
    "NodeAffinityArgs' node selector term": (
        (
            "profiles",
            0,
            "pluginConfig",
            7,
            "args",
            "addedAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
            0,
            "matchExpressions",
        ),
        "profiles[0].pluginConfig[7].args: strict decoding error: unknown field "
        '"addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]'
        '.matchExpressionsx"',
    ),
}


@pytest.mark.parametrize(("path", "message"), MISSPELLED.values(), ids=list(MISSPELLED))
def test_a_misspelled_configuration_field_is_kube_schedulers_strict_decoding_error(
    path: tuple[str | int, ...], message: str
) -> None:
    assert refusal(_renamed(path)) == f"config.yaml: {message}"


def test_schedule_refuses_a_config_file_with_a_misspelled_plugin_args_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = yaml.safe_dump(
        _renamed(("profiles", 0, "pluginConfig", 1, "args", "ignoredResources"))
    )
    argv = schedule_with_config(tmp_path, config)
    assert_one_line_exit_2(
        argv,
        capsys,
        "config.yaml: profiles[0].pluginConfig[1].args: strict decoding error: unknown field "
        '"ignoredResourcesx"',
    )


CASE: Final = """\
name: strict
args: {defaultingType: List, defaultConstraints: []}
nodes:
- metadata: {name: node1, labels: {zone: a}}
pod:
  metadata: {name: p, labels: {foo: bar}}
  spec:
    topologySpreadConstraints:
    - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,
       labelSelector: {matchLabels: {foo: bar}}}
expect:
  preFilter: Success
  filter: {node1: Success}
  domains:
  - {topologyKey: zone, counts: {a: 0}, globalMin: 0}
"""

BAD_CASES: Final = {
    "args field misspelled": (
        ("defaultingType: List", "defaultingTyp: List"),
        'args: strict decoding error: unknown field "defaultingTyp"',
    ),
    "default constraint field misspelled": (
        ("defaultConstraints: []", "defaultConstraints: [{maxskew: 1}]"),
        'args: strict decoding error: unknown field "defaultConstraints[0].maxskew"',
    ),
    "expected domain key misspelled": (
        ("globalMin: 0", "globalmin: 0"),
        "expect.domains[0]: unknown key 'globalmin'; its keys are counts, globalMin, topologyKey",
    ),
    "expected filter of no node of the case": (
        ("filter: {node1: Success}", "filter: {node-1: Success}"),
        "expect.filter: Not found: 'node-1' is not a node of the case",
    ),
    "expected score of no node of the case": (
        ("  preFilter: Success", "  preFilter: Success\n  score: {node2: 100}"),
        "expect.score: Not found: 'node2' is not a node of the case",
    ),
}


def test_the_strict_case_itself_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["conformance", write_text(tmp_path, "case.yaml", CASE)], capsys)
    assert (code, out) == (0, "1 passed, 0 failed\n")


@pytest.mark.parametrize("command", ["evaluate", "conformance"])
@pytest.mark.parametrize(("change", "message"), BAD_CASES.values(), ids=list(BAD_CASES))
def test_a_misspelled_case_key_is_refused_by_evaluate_and_conformance(
    command: str,
    change: tuple[str, str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert change[0] in CASE
    path = write_text(tmp_path, "case.yaml", CASE.replace(*change))
    assert_one_line_exit_2([command, path], capsys, f"case.yaml: {message}")
