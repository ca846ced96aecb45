"""The workload controllers against upstream's rules: names, hashes, labels and owner
references, scale-down victims, rolling-update steps, StatefulSet order, DaemonSet pinning,
Job counts. Tables translate upstream's controller_utils_test.go and replica_set_test.go.
"""

from __future__ import annotations

import datetime
import itertools
import random
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import make_node, make_pod
from topospread.api.cron import CronError, location, next_time, parse_schedule
from topospread.api.loader import load_text
from topospread.api.types import (
    ContainerStatus,
    CronJob,
    DaemonSet,
    Deployment,
    Job,
    ObjectMeta,
    Pod,
    PodCondition,
    PodSpec,
    PodStatus,
    PodTemplateSpec,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
    Toleration,
)
from topospread.errors import ValidationError
from topospread.simulator.controllers import (
    step_deployment,
    sync_daemon_set,
    sync_job,
    sync_replica_set,
    sync_stateful_set,
)
from topospread.simulator.controllers.active_pods import (
    POD_DELETION_COST,
    active_pods_with_ranks_less,
    deletion_cost,
    sort_active_pods,
)
from topospread.simulator.controllers.common import (
    ALPHANUMS,
    GENERATE_NAME_CONFLICT,
    MAX_NAME_GENERATION_CREATE_ATTEMPTS,
    compute_hash,
    fnv32,
    fnv32a,
    generate_name,
    get_scaled_value_from_int_or_percent,
    pods_prefix,
    random_string,
    retry_generate_name,
    safe_encode_string,
)
from topospread.simulator.controllers.cronjob import CRON_JOB_SCHEDULED_TIMESTAMP, sync_cron_job
from topospread.simulator.controllers.deployment import sync_deployment
from topospread.simulator.controllers.deployment_util import (
    DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
    REVISION_ANNOTATION,
    resolve_fenceposts,
)
from topospread.simulator.controllers.replicaset import get_pods_to_delete
from topospread.simulator.controllers.replicationcontroller import (
    as_replica_set,
    set_defaults_replication_controller,
    sync_replication_controller,
)

HASH = re.compile(r"[4-9bcdf]{1,10}")
SUFFIX = f"[{ALPHANUMS}]{{5}}"

# ---------------------------------------------------------------------------------------------
# Builders


def template(labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels if labels is not None else {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "v1"}], **spec},
    }


def workload(kind: str, name: str = "web", **spec: Any) -> Any:
    cls = {
        "Deployment": Deployment,
        "ReplicaSet": ReplicaSet,
        "StatefulSet": StatefulSet,
        "DaemonSet": DaemonSet,
        "Job": Job,
    }[kind]
    body: dict[str, Any] = {"selector": {"matchLabels": {"app": "web"}}, "template": template()}
    body.update(spec)
    return msgspec.convert(
        {
            "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid"},
            "spec": body,
        },
        cls,
    )


def bind(pods: Sequence[Pod], nodes: Sequence[str] = ("n1", "n2", "n3")) -> list[Pod]:
    """Bind every unbound pod, round robin over ``nodes`` (a stand-in for the scheduler)."""
    out = []
    for i, p in enumerate(pods):
        if not p.spec.node_name:
            p = msgspec.structs.replace(
                p, spec=msgspec.structs.replace(p.spec, node_name=nodes[i % len(nodes)])
            )
        out.append(p)
    return out


def apply(pods: Sequence[Pod], actions: Any) -> list[Pod]:
    gone = {p.metadata.name for p in actions.delete}
    changed = {p.metadata.name: p for p in actions.update}
    kept = [changed.get(p.metadata.name, p) for p in pods if p.metadata.name not in gone]
    return kept + list(actions.create)


SEEDS = itertools.count(1)
NOW = 1_700_000_000 * 10**9
HOUR = 3600 * 10**9


def ts(nanos: int | None) -> str | None:
    if nanos is None:
        return None
    from topospread.simulator.controllers.common import format_time

    return format_time(nanos)


def ranked_pod(
    name: str,
    node: str,
    phase: str,
    ready: bool,
    restarts: int = 0,
    ready_since: int | None = None,
    created: int | None = None,
    annotations: dict[str, str] | None = None,
) -> Pod:
    """upstream's ``pod`` helper in TestSortingActivePodsWithRanks."""
    conditions = []
    statuses = []
    if ready:
        conditions = [
            PodCondition(type="Ready", status="True", last_transition_time=ts(ready_since))
        ]
        statuses = [ContainerStatus(restart_count=restarts)]
    return Pod(
        metadata=ObjectMeta(
            name=name, creation_timestamp=ts(created), annotations=annotations or {}
        ),
        spec=PodSpec(node_name=node),
        status=PodStatus(phase=phase, conditions=conditions, container_statuses=statuses),
    )


# ---------------------------------------------------------------------------------------------
# Names


def test_random_strings_use_upstreams_alphabet_and_the_seeded_source() -> None:
    a = random_string(random.Random(7), 5)
    assert a == random_string(random.Random(7), 5)
    assert re.fullmatch(SUFFIX, a)
    draws = "".join(random_string(random.Random(s), 40) for s in range(50))
    assert set(draws) == set(ALPHANUMS)  # every character of the alphabet, and no other


def test_generated_names_truncate_the_base_to_58_characters() -> None:
    name = generate_name("x" * 70, random.Random(1))
    assert len(name) == 63
    assert name.startswith("x" * 58)


def test_a_generated_name_that_is_taken_is_drawn_again_from_the_same_seeded_source() -> None:
    (pod,) = sync_replica_set(workload("ReplicaSet", replicas=1), [], rng=random.Random(1)).create
    taken = {pod.metadata.name}
    drawn: list[str] = []

    def is_taken(name: str) -> bool:
        drawn.append(name)
        return name in taken

    again = retry_generate_name(pod, random.Random(2), is_taken)
    assert drawn == [pod.metadata.name, again.metadata.name]
    assert again.metadata.name == generate_name("web-", random.Random(2))
    assert again.metadata.uid == pod.metadata.uid
    # A free name is kept as it is, the same object.
    assert retry_generate_name(pod, random.Random(2), lambda name: False) is pod


def test_a_create_tries_eight_names_then_fails_with_the_api_servers_conflict() -> None:
    (pod,) = sync_replica_set(workload("ReplicaSet", replicas=1), [], rng=random.Random(1)).create
    drawn: list[str] = []

    def everything_taken(name: str) -> bool:
        drawn.append(name)
        return True

    last = retry_generate_name(pod, random.Random(2), everything_taken)
    assert MAX_NAME_GENERATION_CREATE_ATTEMPTS == 8
    assert len(drawn) == 7 and drawn[0] == pod.metadata.name  # the caller checks the 8th
    rng = random.Random(2)
    assert [*drawn[1:], last.metadata.name] == [generate_name("web-", rng) for _ in range(7)]
    assert GENERATE_NAME_CONFLICT.format(resource="pods", name="web-bcdfg") == (
        'pods "web-bcdfg" already exists, the server was not able to generate a unique name '
        "for the object"
    )


def test_pods_prefix_is_the_name_and_a_dash_when_that_is_a_valid_generate_name() -> None:
    assert pods_prefix("web-5d4f8c7b9") == "web-5d4f8c7b9-"
    assert pods_prefix("Web") == "Web"


def test_replica_set_pods_are_named_after_the_replica_set_with_five_random_characters() -> None:
    rs = workload("ReplicaSet", replicas=3)
    actions = sync_replica_set(rs, [], rng=random.Random(1))
    names = [p.metadata.name for p in actions.create]
    assert len(names) == 3 and len(set(names)) == 3
    for p in actions.create:
        assert re.fullmatch(f"web-{SUFFIX}", p.metadata.name)
        assert p.metadata.generate_name == "web-"
    again = sync_replica_set(rs, [], rng=random.Random(1))
    assert [p.metadata.name for p in again.create] == names


def test_created_pods_carry_a_uid_and_with_a_clock_their_creation_time() -> None:
    rs = workload("ReplicaSet", replicas=1)
    (pod,) = sync_replica_set(rs, [], rng=random.Random(1), now=NOW).create
    assert re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", pod.metadata.uid
    )
    assert pod.metadata.creation_timestamp == "2023-11-14T22:13:20Z"
    assert pod.metadata.namespace == "default"


# ---------------------------------------------------------------------------------------------
# Hashes


def test_fnv_matches_the_reference_vectors() -> None:
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert fnv32a(b"foobar") == 0xBF9CF968
    assert fnv32(b"a") == 0x050C5D7E
    assert fnv32(b"foobar") == 0x31F0B262


def test_safe_encoding_maps_decimal_digits_onto_the_alphabet() -> None:
    assert safe_encode_string("0123456789") == "456789bcdf"


def test_the_template_hash_is_stable_and_shaped_like_upstreams() -> None:
    t1 = msgspec.convert(template({"app": "web", "tier": "fe"}), PodTemplateSpec)
    t2 = msgspec.convert(template({"tier": "fe", "app": "web"}), PodTemplateSpec)
    assert compute_hash(t1, None) == compute_hash(t2, None)  # key order does not matter
    assert HASH.fullmatch(compute_hash(t1, None))
    assert compute_hash(t1, None) == compute_hash(t1, None)
    other = msgspec.convert(template({"app": "web", "tier": "be"}), PodTemplateSpec)
    assert compute_hash(other, None) != compute_hash(t1, None)


@pytest.mark.parametrize(
    ("count", "other"),
    [pytest.param(1, 2, id="simple"), pytest.param(None, 2**31 - 1, id="using math.MaxInt32")],
)
def test_the_collision_count_changes_the_hash(count: int | None, other: int) -> None:
    # TestComputeHash (controller_utils_test.go)
    empty = PodTemplateSpec()
    assert compute_hash(empty, count) != compute_hash(empty, other)


def test_unset_fields_do_not_change_the_hash() -> None:
    # Fields topospread adds to its types later must not move existing hashes.
    t1 = msgspec.convert({"metadata": {"labels": {"a": "b"}}}, PodTemplateSpec)
    t2 = msgspec.convert({"metadata": {"labels": {"a": "b"}, "annotations": {}}}, PodTemplateSpec)
    assert compute_hash(t1, None) == compute_hash(t2, None)


# ---------------------------------------------------------------------------------------------
# Labels and owner references


def test_replica_set_pods_carry_the_template_and_a_controller_reference() -> None:
    rs = workload(
        "ReplicaSet",
        replicas=1,
        template={
            "metadata": {"labels": {"app": "web"}, "annotations": {"a": "1"}},
            "spec": {"nodeSelector": {"disk": "ssd"}},
        },
    )
    (pod,) = sync_replica_set(rs, [], rng=random.Random(1)).create
    assert pod.metadata.labels == {"app": "web"}
    assert pod.metadata.annotations == {"a": "1"}
    assert pod.spec.node_selector == {"disk": "ssd"}
    (ref,) = pod.metadata.owner_references
    assert (ref.api_version, ref.kind, ref.name, ref.uid) == (
        "apps/v1",
        "ReplicaSet",
        "web",
        "web-uid",
    )
    assert ref.controller is True and ref.block_owner_deletion is True


def test_a_deployment_creates_its_replica_set_with_the_pod_template_hash() -> None:
    d = workload("Deployment", replicas=4)
    step = step_deployment(d, [], [], rng=random.Random(1))
    (rs,) = step.sync.created
    h = rs.spec.template.metadata.labels["pod-template-hash"]
    assert HASH.fullmatch(h)
    assert h == compute_hash(d.spec.template, None)
    assert rs.metadata.name == f"web-{h}"
    assert rs.metadata.labels == {"app": "web", "pod-template-hash": h}
    assert rs.spec.selector is not None
    assert rs.spec.selector.match_labels == {"app": "web", "pod-template-hash": h}
    assert rs.spec.replicas == 4
    assert rs.metadata.annotations == {
        REVISION_ANNOTATION: "1",
        DESIRED_REPLICAS_ANNOTATION: "4",
        MAX_REPLICAS_ANNOTATION: "5",
    }
    (ref,) = rs.metadata.owner_references
    assert (ref.kind, ref.name, ref.uid, ref.controller) == ("Deployment", "web", "web-uid", True)
    assert len(step.pods.create) == 4
    for pod in step.pods.create:
        assert pod.metadata.labels == {"app": "web", "pod-template-hash": h}
        assert re.fullmatch(f"web-{h}-{SUFFIX}", pod.metadata.name)
        assert pod.metadata.owner_references[0].name == rs.metadata.name


def test_a_hash_collision_raises_the_collision_count_and_creates_nothing() -> None:
    d = workload("Deployment", replicas=1)
    h = compute_hash(d.spec.template, None)
    squatter = workload("ReplicaSet", name=f"web-{h}", template=template({"app": "other"}))
    squatter = msgspec.structs.replace(
        squatter,
        spec=msgspec.structs.replace(squatter.spec, selector={"matchLabels": {"app": "other"}}),
    )
    squatter = msgspec.convert(msgspec.to_builtins(squatter), ReplicaSet)
    result = sync_deployment(d, [squatter], [], rng=random.Random(1))
    assert result.collision_count == 1 and not result.created
    d2 = msgspec.structs.replace(d, status=msgspec.structs.replace(d.status, collision_count=1))
    (rs,) = sync_deployment(d2, [squatter], [], rng=random.Random(1)).created
    assert rs.metadata.name == f"web-{compute_hash(d.spec.template, 1)}"


def test_orphans_the_selector_matches_are_adopted_and_others_left_alone() -> None:
    rs = workload("ReplicaSet", replicas=2)
    orphan = make_pod("orphan").label("app", "web").node("n1").obj()
    foreign = make_pod("foreign").label("app", "web").node("n1").owner("ReplicaSet", "x").obj()
    actions = sync_replica_set(rs, [orphan, foreign], rng=random.Random(1))
    (adopted,) = actions.update
    assert adopted.metadata.name == "orphan"
    assert adopted.metadata.owner_references[0].name == "web"
    assert len(actions.create) == 1  # the adopted pod counts; the foreign one does not


def test_own_pods_the_selector_no_longer_matches_are_released() -> None:
    rs = workload("ReplicaSet", replicas=1)
    mine = make_pod("mine").label("app", "api").node("n1").owner("ReplicaSet", "web").obj()
    actions = sync_replica_set(rs, [mine], rng=random.Random(1))
    (released,) = actions.update
    assert released.metadata.owner_references == []
    assert len(actions.create) == 1


def test_a_selector_that_misses_the_template_is_rejected() -> None:
    rs = workload("ReplicaSet", template=template({"app": "api"}))
    with pytest.raises(ValidationError) as err:
        sync_replica_set(rs, [], rng=random.Random(1))
    assert str(err.value) == (
        "replicaset default/web: spec.template.metadata.labels: Invalid value: "
        'map[string]string{"app":"api"}: `selector` does not match template `labels`'
    )


def test_workload_manifests_load_with_int_or_percent_fields() -> None:
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 10%}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c}]}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: db}}
  template: {metadata: {labels: {app: db}}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template: {metadata: {labels: {app: agent}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec: {parallelism: 2, completions: 5, template: {spec: {restartPolicy: Never}}}
"""
    d, sts, ds, job = load_text(text, "w.yaml")
    assert isinstance(d, Deployment) and d.spec.strategy.rolling_update is not None
    assert (
        d.spec.strategy.rolling_update.max_surge,
        d.spec.strategy.rolling_update.max_unavailable,
    ) == (1, "10%")
    assert isinstance(sts, StatefulSet) and sts.spec.pod_management_policy == "Parallel"
    assert sts.spec.service_name == "db"
    assert isinstance(ds, DaemonSet) and ds.metadata.namespace == "default"
    assert isinstance(job, Job) and (job.spec.parallelism, job.spec.completions) == (2, 5)


# ---------------------------------------------------------------------------------------------
# Victim order: TestSortingActivePodsWithRanks (controller_utils_test.go)

MONTH = 30 * 24 * HOUR
unscheduled = ranked_pod("unscheduled", "", "Pending", False)
scheduled_pending = ranked_pod("pending", "node", "Pending", False)
unknown_phase = ranked_pod("unknown-phase", "node", "Unknown", False)
running_not_ready = ranked_pod("not-ready", "node", "Running", False)
ready_no_transition = ranked_pod("ready-no-last-transition-time", "node", "Running", True)
ready_now = ranked_pod("ready-now", "node", "Running", True, 0, NOW, NOW)
ready_then = ranked_pod("ready-then", "node", "Running", True, 0, NOW - MONTH, NOW - MONTH)
ready_high_restarts = ranked_pod("ready-high-restarts", "node", "Running", True, 9001, NOW, NOW)
ready_now_created_then = ranked_pod(
    "ready-now-created-then", "node", "Running", True, 0, NOW, NOW - MONTH
)
low_cost = ranked_pod(
    "low-deletion-cost", "node", "Running", True, 0, NOW, NOW - MONTH, {POD_DELETION_COST: "10"}
)
high_cost = ranked_pod(
    "high-deletion-cost", "node", "Running", True, 0, NOW, NOW - MONTH, {POD_DELETION_COST: "100"}
)
unscheduled_5h = ranked_pod(
    "unscheduled-5-hours", "", "Pending", False, 0, NOW - 5 * HOUR, NOW - 5 * HOUR
)
unscheduled_8h = ranked_pod(
    "unscheduled-10-hours", "", "Pending", False, 0, NOW - 8 * HOUR, NOW - 8 * HOUR
)
ready_2h = ranked_pod("ready-2-hours", "", "Running", True, 0, NOW - 2 * HOUR, NOW - MONTH)
ready_5h = ranked_pod("ready-5-hours", "", "Running", True, 0, NOW - 5 * HOUR, NOW - MONTH)
ready_8h = ranked_pod("ready-10-hours", "", "Running", True, 0, NOW - 8 * HOUR, NOW - MONTH)


@pytest.mark.parametrize(
    ("p1", "p2"),
    [
        pytest.param(unscheduled, unscheduled, id="0"),
        pytest.param(scheduled_pending, scheduled_pending, id="1"),
        pytest.param(unknown_phase, unknown_phase, id="2"),
        pytest.param(running_not_ready, running_not_ready, id="3"),
        pytest.param(ready_now_created_then, ready_now_created_then, id="4"),
        pytest.param(ready_now, ready_now, id="5"),
        pytest.param(ready_then, ready_then, id="6"),
        pytest.param(ready_high_restarts, ready_high_restarts, id="7"),
        pytest.param(unscheduled_5h, unscheduled_8h, id="9 same power-of-two age bucket"),
        pytest.param(ready_5h, ready_8h, id="10 same power-of-two ready bucket"),
    ],
)
def test_equivalent_pods_rank_equal(p1: Pod, p2: Pod) -> None:
    assert not active_pods_with_ranks_less(p1, 1, p2, 1, NOW)
    assert not active_pods_with_ranks_less(p2, 1, p1, 1, NOW)


@pytest.mark.parametrize(
    ("lesser", "lesser_rank", "greater", "greater_rank"),
    [
        pytest.param(unscheduled, 1, scheduled_pending, 2, id="0"),
        pytest.param(unscheduled, 2, scheduled_pending, 1, id="1"),
        pytest.param(scheduled_pending, 1, unknown_phase, 2, id="2"),
        pytest.param(unknown_phase, 1, running_not_ready, 2, id="3"),
        pytest.param(running_not_ready, 1, ready_no_transition, 1, id="4"),
        pytest.param(ready_no_transition, 1, ready_now, 1, id="5"),
        pytest.param(ready_now, 2, ready_no_transition, 1, id="6"),
        pytest.param(ready_now, 1, ready_then, 1, id="7"),
        pytest.param(ready_now, 2, ready_then, 1, id="8"),
        pytest.param(ready_high_restarts, 1, ready_now, 1, id="9"),
        pytest.param(ready_now, 2, ready_high_restarts, 1, id="10"),
        pytest.param(ready_now, 1, ready_now_created_then, 1, id="11"),
        pytest.param(ready_now_created_then, 2, ready_now, 1, id="12"),
        pytest.param(low_cost, 2, high_cost, 1, id="13"),
        # 14 disables the PodDeletionCost gate (beta, on); topospread models it on.
        pytest.param(ready_2h, 1, ready_5h, 1, id="15"),
    ],
)
def test_pods_rank_for_deletion_as_upstream_ranks_them(
    lesser: Pod, lesser_rank: int, greater: Pod, greater_rank: int
) -> None:
    assert active_pods_with_ranks_less(lesser, lesser_rank, greater, greater_rank, NOW)
    assert not active_pods_with_ranks_less(greater, greater_rank, lesser, lesser_rank, NOW)


def test_without_a_clock_newer_pods_go_first_without_buckets() -> None:
    a = ranked_pod("a", "node", "Running", True, 0, NOW - 5 * HOUR, NOW)
    b = ranked_pod("b", "node", "Running", True, 0, NOW - 8 * HOUR, NOW)
    assert active_pods_with_ranks_less(a, 1, b, 1, None)
    assert not active_pods_with_ranks_less(a, 1, b, 1, NOW)  # same bucket with a clock


def test_within_a_bucket_the_uid_breaks_the_tie() -> None:
    a = msgspec.structs.replace(
        ready_5h, metadata=msgspec.structs.replace(ready_5h.metadata, uid="a")
    )
    b = msgspec.structs.replace(
        ready_8h, metadata=msgspec.structs.replace(ready_8h.metadata, uid="b")
    )
    assert active_pods_with_ranks_less(a, 1, b, 1, NOW)
    assert not active_pods_with_ranks_less(b, 1, a, 1, NOW)


def test_sidecar_restarts_break_ties_of_regular_restarts() -> None:
    plain = ranked_pod("p", "node", "Running", True, 2, NOW, NOW)
    spec = msgspec.convert(
        {"nodeName": "node", "initContainers": [{"name": "proxy", "restartPolicy": "Always"}]},
        PodSpec,
    )
    restarts = [ContainerStatus(name="proxy", restart_count=4)]
    sidecar = msgspec.structs.replace(
        plain,
        spec=spec,
        status=msgspec.structs.replace(plain.status, init_container_statuses=restarts),
    )
    assert active_pods_with_ranks_less(sidecar, 1, plain, 1, NOW)
    assert not active_pods_with_ranks_less(plain, 1, sidecar, 1, NOW)


@pytest.mark.parametrize(
    ("value", "cost"),
    [
        ("10", 10),
        ("-5", -5),
        ("0", 0),
        ("+10", 0),
        ("008", 0),
        ("2147483647", 2147483647),
        ("2147483648", 0),
        ("abc", 0),
        ("", 0),
    ],
)
def test_pod_deletion_cost_parses_as_upstream(value: str, cost: int) -> None:
    pod = Pod(metadata=ObjectMeta(annotations={POD_DELETION_COST: value}))
    assert deletion_cost(pod) == cost


def test_active_pods_sort_as_upstream() -> None:
    # TestSortingActivePods (controller_utils_test.go)
    then = NOW - MONTH

    def p(
        name: str,
        node: str,
        phase: str,
        ready: bool,
        since: int | None = None,
        restarts: tuple[int, ...] = (),
        created: int | None = None,
    ) -> Pod:
        return Pod(
            metadata=ObjectMeta(name=name, creation_timestamp=ts(created)),
            spec=PodSpec(node_name=node),
            status=PodStatus(
                phase=phase,
                conditions=[
                    PodCondition(type="Ready", status="True", last_transition_time=ts(since))
                ]
                if ready
                else [],
                container_statuses=[ContainerStatus(restart_count=r) for r in restarts],
            ),
        )

    pods = [
        p("unscheduled", "", "Pending", False),
        p("scheduledButPending", "bar", "Pending", False),
        p("unknownPhase", "foo", "Unknown", False),
        p("runningButNotReady", "foo", "Running", False),
        p("runningNoLastTransitionTime", "foo", "Running", True, None, (3, 0)),
        p("runningWithLastTransitionTime", "foo", "Running", True, NOW, (3, 0)),
        p("runningLongerTime", "foo", "Running", True, then, (3, 0)),
        p("lowerContainerRestartCount", "foo", "Running", True, then, (2, 1), NOW),
        p("oldest", "foo", "Running", True, then, (2, 1), then),
    ]
    want = [x.metadata.name for x in pods]
    rng = random.Random(3)
    for _ in range(20):
        shuffled = list(pods)
        rng.shuffle(shuffled)
        assert [x.metadata.name for x in sort_active_pods(shuffled)] == want


# TestGetPodsToDelete (replica_set_test.go)


def _rs_pod(name: str, node: str, phase: str, ready: str | None) -> Pod:
    conditions = [PodCondition(type="Ready", status=ready)] if ready else []
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", labels={"name": "foo"}),
        spec=PodSpec(node_name=node),
        status=PodStatus(phase=phase, conditions=conditions),
    )


UNSCHEDULED_PENDING = _rs_pod("unscheduled-pending-pod", "", "Pending", None)
SCHEDULED_PENDING = _rs_pod("scheduled-pending-pod", "fake-node", "Pending", None)
NOT_READY = _rs_pod("scheduled-running-not-ready-pod", "fake-node", "Running", "False")
READY_ON_1 = _rs_pod("scheduled-running-ready-pod-on-node-1", "fake-node-1", "Running", "True")
READY_ON_2 = _rs_pod("scheduled-running-ready-pod-on-node-2", "fake-node-2", "Running", "True")


@pytest.mark.parametrize(
    ("pods", "related", "diff", "expected"),
    [
        pytest.param([], None, 0, [], id="len(pods) = 0 (i.e., diff = 0 too)"),
        pytest.param(
            [NOT_READY, READY_ON_1], None, 2, [NOT_READY, READY_ON_1], id="diff = len(pods)"
        ),
        pytest.param([READY_ON_1, NOT_READY], None, 1, [NOT_READY], id="diff < len(pods)"),
        pytest.param(
            [READY_ON_1, READY_ON_1, READY_ON_2, NOT_READY, SCHEDULED_PENDING, UNSCHEDULED_PENDING],
            None,
            6,
            [READY_ON_1, READY_ON_1, READY_ON_2, NOT_READY, SCHEDULED_PENDING, UNSCHEDULED_PENDING],
            id="various pod phases and conditions, diff = len(pods)",
        ),
        pytest.param(
            [READY_ON_1, READY_ON_1, READY_ON_2, NOT_READY, SCHEDULED_PENDING, UNSCHEDULED_PENDING],
            [],
            6,
            [READY_ON_1, READY_ON_1, READY_ON_2, NOT_READY, SCHEDULED_PENDING, UNSCHEDULED_PENDING],
            id="various pod phases and conditions, diff = len(pods), relatedPods empty",
        ),
        pytest.param(
            [SCHEDULED_PENDING, UNSCHEDULED_PENDING],
            None,
            1,
            [UNSCHEDULED_PENDING],
            id="scheduled vs unscheduled, diff < len(pods)",
        ),
        pytest.param(
            [READY_ON_1, NOT_READY, NOT_READY],
            None,
            2,
            [NOT_READY, NOT_READY],
            id="ready vs not-ready, diff < len(pods)",
        ),
        pytest.param(
            [READY_ON_1, READY_ON_2],
            [READY_ON_1, READY_ON_2, READY_ON_2],
            1,
            [READY_ON_2],
            id="ready and colocated with another ready pod vs not colocated, diff < len(pods)",
        ),
        pytest.param(
            [SCHEDULED_PENDING, NOT_READY],
            None,
            1,
            [SCHEDULED_PENDING],
            id="pending vs running, diff < len(pods)",
        ),
        pytest.param(
            [READY_ON_1, READY_ON_2, NOT_READY, SCHEDULED_PENDING, UNSCHEDULED_PENDING],
            None,
            3,
            [UNSCHEDULED_PENDING, SCHEDULED_PENDING, NOT_READY],
            id="various pod phases and conditions, diff < len(pods)",
        ),
    ],
)
def test_get_pods_to_delete(
    pods: list[Pod], related: list[Pod] | None, diff: int, expected: list[Pod]
) -> None:
    got = get_pods_to_delete(pods, pods if related is None else related, diff)
    assert [p.metadata.name for p in got] == [p.metadata.name for p in expected]


def test_a_standalone_replica_set_has_no_related_pods_so_no_ranks() -> None:
    rs = workload("ReplicaSet", replicas=1)
    owned = [
        make_pod("a").label("app", "web").node("n1").owner("ReplicaSet", "web").obj(),
        make_pod("b").label("app", "web").node("n1").owner("ReplicaSet", "web").obj(),
        make_pod("c").label("app", "web").node("n2").owner("ReplicaSet", "web").obj(),
    ]
    # No ranks: all equal, so the two deleted are the first two by name.
    alone = sync_replica_set(rs, owned, rng=random.Random(1))
    assert [p.metadata.name for p in alone.delete] == ["a", "b"]
    # With its Deployment's pods as related pods, a doubled-up node loses first.
    other = make_pod("z").label("app", "web").node("n2").owner("ReplicaSet", "old").obj()
    ranked = sync_replica_set(rs, owned, rng=random.Random(1), related_pods=[*owned, other, other])
    assert [p.metadata.name for p in ranked.delete] == ["c", "a"]


def test_the_simulators_pods_are_running_and_ready_once_bound() -> None:
    rs = workload("ReplicaSet", replicas=1)
    pending = make_pod("a").label("app", "web").owner("ReplicaSet", "web").obj()
    bound = make_pod("b").label("app", "web").node("n1").owner("ReplicaSet", "web").obj()
    not_ready = (
        make_pod("c")
        .label("app", "web")
        .node("n1")
        .owner("ReplicaSet", "web")
        .condition("Ready", "False")
        .obj()
    )
    actions = sync_replica_set(rs, [bound, not_ready, pending], rng=random.Random(1))
    assert [p.metadata.name for p in actions.delete] == ["a", "c"]


# ---------------------------------------------------------------------------------------------
# Deployments: rolling updates, one reconcile step at a time


def rollout(
    d: Deployment,
    rss: list[ReplicaSet],
    pods: list[Pod],
    *,
    steps: int = 20,
    schedule: bool = True,
) -> tuple[list[tuple[int, int]], list[ReplicaSet], list[Pod]]:
    """Step the Deployment until it does nothing; returns (new replicas, old replicas) after
    each step (the ReplicaSet with the Deployment's template is the new one)."""
    # A fresh seed per call: restarting one seed would hand out the same UIDs again.
    rng = random.Random(next(SEEDS))
    trace: list[tuple[int, int]] = []
    for _ in range(steps):
        step = step_deployment(d, rss, pods, rng=rng)
        if not step:
            break
        by_name = {rs.metadata.name: rs for rs in rss}
        for rs in step.sync.deleted:
            by_name.pop(rs.metadata.name, None)
        for rs in step.sync.replica_sets:
            by_name[rs.metadata.name] = rs
        rss = list(by_name.values())
        pods = apply(pods, step.pods)
        if schedule:
            pods = bind(pods)
        h = compute_hash(d.spec.template, None)
        new = sum(rs.spec.replicas or 0 for rs in rss if rs.metadata.name.endswith(h))
        old = sum(rs.spec.replicas or 0 for rs in rss if not rs.metadata.name.endswith(h))
        trace.append((new, old))
    return trace, rss, pods


def new_version(d: Deployment, image: str = "v2") -> Deployment:
    t = msgspec.convert(template(), PodTemplateSpec)
    c = msgspec.structs.replace(t.spec.containers[0], image=image)
    t = msgspec.structs.replace(t, spec=msgspec.structs.replace(t.spec, containers=[c]))
    return msgspec.structs.replace(d, spec=msgspec.structs.replace(d.spec, template=t))


def deployed(**spec: Any) -> tuple[Deployment, list[ReplicaSet], list[Pod]]:
    d = workload("Deployment", **spec)
    _, rss, pods = rollout(d, [], [])
    return d, rss, pods


@pytest.mark.parametrize(
    ("replicas", "strategy", "steps"),
    [
        pytest.param(
            10,
            {},
            [(3, 8), (5, 8), (5, 3), (10, 3), (10, 0)],
            id="defaults 25%/25% of 10: surge 3 (2.5 up), unavailable 2 (2.5 down)",
        ),
        pytest.param(
            3,
            {"maxSurge": 1, "maxUnavailable": 0},
            [(1, 3), (1, 2), (2, 2), (2, 1), (3, 1), (3, 0)],
            id="maxSurge 1, maxUnavailable 0: one new pod, then one old pod",
        ),
        pytest.param(
            3,
            {"maxSurge": 0, "maxUnavailable": "34%"},
            [(0, 2), (1, 2), (1, 1), (2, 1), (2, 0), (3, 0)],
            id="maxSurge 0, maxUnavailable 34% of 3 is 1: remove first",
        ),
        pytest.param(
            4,
            {"maxSurge": "50%", "maxUnavailable": "50%"},
            [(2, 2), (4, 2), (4, 0)],
            id="50%/50% of 4",
        ),
        pytest.param(
            3,
            {"maxSurge": "10%", "maxUnavailable": "10%"},
            [(1, 3), (1, 2), (2, 2), (2, 1), (3, 1), (3, 0)],
            id="10% rounds surge up to 1 and unavailable down to 0",
        ),
    ],
)
def test_rolling_update_steps(
    replicas: int, strategy: dict[str, Any], steps: list[tuple[int, int]]
) -> None:
    d, rss, pods = deployed(
        replicas=replicas, strategy={"type": "RollingUpdate", "rollingUpdate": strategy}
    )
    trace, rss, pods = rollout(new_version(d), rss, pods)
    assert trace == steps
    h = compute_hash(new_version(d).spec.template, None)
    assert Counter(p.metadata.labels["pod-template-hash"] for p in pods) == {h: replicas}


def test_rollouts_wait_for_new_pods_to_become_ready() -> None:
    d, rss, pods = deployed(replicas=10)
    trace, _, pods = rollout(new_version(d), rss, pods, schedule=False)
    # New pods never bind: the rollout stops at 13 pods, 8 of them old and available.
    assert trace == [(3, 8), (5, 8)]
    assert sum(1 for p in pods if p.spec.node_name) == 8


@pytest.mark.parametrize(
    ("surge", "unavailable", "desired", "expected"),
    [
        ("25%", "25%", 10, (3, 2)),
        ("25%", "25%", 4, (1, 1)),
        ("1%", "1%", 10, (1, 0)),
        (0, "1%", 10, (0, 1)),
        (0, 0, 10, (0, 1)),
        (2, 3, 10, (2, 3)),
    ],
)
def test_fenceposts_round_surge_up_and_unavailable_down(
    surge: int | str, unavailable: int | str, desired: int, expected: tuple[int, int]
) -> None:
    assert resolve_fenceposts(surge, unavailable, desired, "x") == expected


def test_a_malformed_percentage_names_the_field() -> None:
    with pytest.raises(ValidationError, match=r"^x: maxSurge: Invalid value: '25': "):
        get_scaled_value_from_int_or_percent("25", 10, True, "x: maxSurge")


def test_recreate_removes_every_old_pod_before_creating_the_new_replica_set() -> None:
    d, rss, pods = deployed(replicas=3, strategy={"type": "Recreate"})
    v2 = new_version(d)
    rng = random.Random(1)
    first = step_deployment(v2, rss, pods, rng=rng)
    assert not first.sync.created
    assert [rs.spec.replicas for rs in first.sync.updated] == [0]
    assert len(first.pods.delete) == 3 and not first.pods.create
    rss = list(first.sync.replica_sets)
    pods = apply(pods, first.pods)
    second = step_deployment(v2, rss, pods, rng=rng)
    (new,) = second.sync.created
    assert new.spec.replicas == 3 and len(second.pods.create) == 3


def test_scaling_mid_rollout_scales_replica_sets_in_proportion() -> None:
    d, rss, pods = deployed(replicas=10)
    v2 = new_version(d)
    _, rss, pods = rollout(v2, rss, pods, steps=2)  # new 5, old 8: 13 pods
    bigger = msgspec.structs.replace(v2, spec=msgspec.structs.replace(v2.spec, replicas=20))
    result = sync_deployment(bigger, rss, pods, rng=random.Random(1))
    sizes = sorted((rs.spec.replicas for rs in result.replica_sets), reverse=True)
    # 25 allowed (20 + 5 surge), 12 to add: old 8*25/13 -> 15, new 5*25/13 -> 10.
    assert sizes == [15, 10]
    for rs in result.replica_sets:
        assert rs.metadata.annotations[DESIRED_REPLICAS_ANNOTATION] == "20"
        assert rs.metadata.annotations[MAX_REPLICAS_ANNOTATION] == "25"


def test_old_replica_sets_beyond_the_history_limit_are_deleted() -> None:
    d, rss, pods = deployed(replicas=1, revisionHistoryLimit=1)
    for image in ("v2", "v3"):
        d = new_version(d, image)
        _, rss, pods = rollout(d, rss, pods)
    revisions = sorted(int(rs.metadata.annotations[REVISION_ANNOTATION]) for rs in rss)
    assert revisions == [2, 3] and len(pods) == 1


def test_an_orphan_replica_set_the_selector_matches_is_adopted() -> None:
    d = workload("Deployment", replicas=2)
    orphan = workload("ReplicaSet", name="legacy", replicas=2)
    # Claiming reads the ReplicaSet's own labels, not its template's.
    orphan = msgspec.structs.replace(
        orphan, metadata=msgspec.structs.replace(orphan.metadata, labels={"app": "web"})
    )
    result = sync_deployment(new_version(d), [orphan], [], rng=random.Random(1))
    adopted = next(rs for rs in result.replica_sets if rs.metadata.name == "legacy")
    assert adopted.metadata.owner_references[0].name == "web"
    assert any(rs.metadata.name == "legacy" for rs in result.updated)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    replicas=st.integers(1, 12),
    surge=st.one_of(st.integers(0, 4), st.sampled_from(["0%", "10%", "25%", "50%", "100%"])),
    unavailable=st.one_of(st.integers(0, 4), st.sampled_from(["0%", "10%", "25%", "50%"])),
)
def test_rolling_updates_stay_within_surge_and_unavailability(
    replicas: int, surge: int | str, unavailable: int | str
) -> None:
    d, rss, pods = deployed(
        replicas=replicas,
        strategy={
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable},
        },
    )
    max_surge, max_unavailable = resolve_fenceposts(surge, unavailable, replicas, "x")
    v2 = new_version(d)
    rng = random.Random(2)
    for _ in range(4 * replicas + 10):
        step = step_deployment(v2, rss, pods, rng=rng)
        if not step:
            break
        rss = list(step.sync.replica_sets)
        pods = apply(pods, step.pods)
        assert len(pods) <= replicas + max_surge
        ready = sum(1 for p in pods if p.spec.node_name)
        assert ready >= replicas - min(max_unavailable, replicas)
        pods = bind(pods)
    h = compute_hash(v2.spec.template, None)
    assert Counter(p.metadata.labels["pod-template-hash"] for p in pods) == {h: replicas}


# ---------------------------------------------------------------------------------------------
# StatefulSets


def run_sts(
    sts: StatefulSet, pods: list[Pod], *, schedule: bool = True, steps: int = 10
) -> list[list[str]]:
    """Pod names after each sync that changed something."""
    rng = random.Random(1)
    seen = []
    for _ in range(steps):
        actions = sync_stateful_set(sts, pods, rng=rng)
        if not actions:
            break
        pods = apply(pods, actions)
        if schedule:
            pods = bind(pods)
        seen.append(sorted(p.metadata.name for p in pods))
    return seen


def test_ordered_ready_creates_one_ordinal_at_a_time_once_the_previous_is_ready() -> None:
    sts = workload("StatefulSet", replicas=3, serviceName="web")
    assert run_sts(sts, []) == [["web-0"], ["web-0", "web-1"], ["web-0", "web-1", "web-2"]]


def test_ordered_ready_waits_for_an_unready_ordinal() -> None:
    sts = workload("StatefulSet", replicas=3)
    assert run_sts(sts, [], schedule=False) == [["web-0"]]


def test_parallel_creates_every_ordinal_at_once() -> None:
    sts = workload("StatefulSet", replicas=3, podManagementPolicy="Parallel")
    assert run_sts(sts, [], schedule=False) == [["web-0", "web-1", "web-2"]]


def test_ordered_ready_scales_down_from_the_highest_ordinal_one_at_a_time() -> None:
    three = workload("StatefulSet", replicas=3, podManagementPolicy="Parallel")
    pods = bind(list(sync_stateful_set(three, [], rng=random.Random(1)).create))
    one = workload("StatefulSet", replicas=1)
    assert run_sts(one, pods) == [["web-0", "web-1"], ["web-0"]]
    parallel = workload("StatefulSet", replicas=1, podManagementPolicy="Parallel")
    assert run_sts(parallel, pods) == [["web-0"]]


def test_stateful_set_pods_carry_their_identity() -> None:
    sts = workload("StatefulSet", replicas=2, serviceName="web-svc", podManagementPolicy="Parallel")
    pods = sync_stateful_set(sts, [], rng=random.Random(1)).create
    pod = pods[1]
    assert pod.metadata.name == "web-1" and pod.metadata.generate_name == "web-"
    revision = pod.metadata.labels["controller-revision-hash"]
    assert re.fullmatch(r"web-[4-9bcdf]{1,10}", revision)
    assert pod.metadata.labels == {
        "app": "web",
        "statefulset.kubernetes.io/pod-name": "web-1",
        "apps.kubernetes.io/pod-index": "1",
        "controller-revision-hash": revision,
    }
    assert (pod.spec.hostname, pod.spec.subdomain) == ("web-1", "web-svc")
    assert pod.metadata.owner_references[0].kind == "StatefulSet"


def test_ordinals_start_where_spec_ordinals_says() -> None:
    sts = workload("StatefulSet", replicas=2, ordinals={"start": 5}, podManagementPolicy="Parallel")
    names = [p.metadata.name for p in sync_stateful_set(sts, [], rng=random.Random(1)).create]
    assert names == ["web-5", "web-6"]


def test_a_template_change_rolls_from_the_highest_ordinal_down_to_the_partition() -> None:
    sts = workload("StatefulSet", replicas=3, updateStrategy={"rollingUpdate": {"partition": 1}})
    pods: list[Pod] = []
    rng = random.Random(1)
    for _ in range(3):
        pods = bind(apply(pods, sync_stateful_set(sts, pods, rng=rng)))
    v2 = msgspec.structs.replace(
        sts,
        spec=msgspec.structs.replace(
            sts.spec, template=msgspec.convert(template(hostNetwork=True), PodTemplateSpec)
        ),
    )
    old_rev = pods[0].metadata.labels["controller-revision-hash"]
    deleted = []
    for _ in range(8):
        actions = sync_stateful_set(v2, pods, rng=rng)
        if not actions:
            break
        deleted.extend(p.metadata.name for p in actions.delete)
        pods = bind(apply(pods, actions))
    assert deleted == ["web-2", "web-1"]
    revisions = {p.metadata.name: p.metadata.labels["controller-revision-hash"] for p in pods}
    assert revisions["web-0"] == old_rev and revisions["web-1"] != old_rev


# ---------------------------------------------------------------------------------------------
# DaemonSets

DAEMON_TOLERATIONS = [
    Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute"),
    Toleration(key="node.kubernetes.io/unreachable", operator="Exists", effect="NoExecute"),
    Toleration(key="node.kubernetes.io/disk-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/memory-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/pid-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"),
]


def test_a_daemon_set_pins_one_pod_to_each_node() -> None:
    ds = workload("DaemonSet")
    nodes = [make_node("n1").obj(), make_node("n2").obj()]
    actions = sync_daemon_set(ds, [], nodes, rng=random.Random(1))
    assert len(actions.create) == 2
    for pod, node in zip(actions.create, ("n1", "n2"), strict=True):
        assert re.fullmatch(f"web-{SUFFIX}", pod.metadata.name)
        assert pod.spec.node_name == ""
        assert pod.spec.affinity is not None and pod.spec.affinity.node_affinity is not None
        required = (
            pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
        )
        assert msgspec.to_builtins(required) == {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
            ]
        }
        assert pod.spec.tolerations == DAEMON_TOLERATIONS
        assert pod.metadata.labels["controller-revision-hash"] == compute_hash(
            ds.spec.template, None
        )
    assert (
        sync_daemon_set(
            ds, bind(list(actions.create), ["n1", "n2"]), nodes, rng=random.Random(1)
        ).create
        == ()
    )


def test_daemon_pods_replace_required_node_affinity_and_keep_preferred_terms() -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]}
                ]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 1,
                    "preference": {"matchExpressions": [{"key": "x", "operator": "Exists"}]},
                }
            ],
        }
    }
    ds = workload("DaemonSet", template=template(affinity=affinity, hostNetwork=True))
    nodes = [make_node("a1").label("pool", "a").obj(), make_node("b1").label("pool", "b").obj()]
    (pod,) = sync_daemon_set(ds, [], nodes, rng=random.Random(1)).create
    assert pod.spec.affinity is not None and pod.spec.affinity.node_affinity is not None
    na = pod.spec.affinity.node_affinity
    assert na.required_during_scheduling_ignored_during_execution is not None
    (term,) = na.required_during_scheduling_ignored_during_execution.node_selector_terms
    assert term.match_expressions == [] and term.match_fields[0].values == ["a1"]
    assert len(na.preferred_during_scheduling_ignored_during_execution) == 1
    assert pod.spec.tolerations[-1].key == "node.kubernetes.io/network-unavailable"


def test_a_users_toleration_with_the_same_key_and_effect_is_replaced() -> None:
    tol = {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    }
    ds = workload("DaemonSet", template=template(tolerations=[tol]))
    (pod,) = sync_daemon_set(ds, [], [make_node("n1").obj()], rng=random.Random(1)).create
    assert pod.spec.tolerations == DAEMON_TOLERATIONS


@pytest.mark.parametrize(
    ("effect", "tolerated", "creates", "keeps"),
    [
        pytest.param(
            "NoSchedule", False, False, True, id="NoSchedule: no new pod, the old one stays"
        ),
        pytest.param("NoExecute", False, False, False, id="NoExecute: no pod at all"),
        pytest.param("PreferNoSchedule", False, True, True, id="PreferNoSchedule is ignored"),
        pytest.param("NoSchedule", True, True, True, id="a tolerated taint"),
    ],
)
def test_daemon_sets_follow_their_own_taint_rules(
    effect: str, tolerated: bool, creates: bool, keeps: bool
) -> None:
    tolerations = [{"key": "dedicated", "operator": "Exists"}] if tolerated else []
    ds = workload("DaemonSet", template=template(tolerations=tolerations))
    node = make_node("n1").taint("dedicated", "x", effect).obj()
    assert bool(sync_daemon_set(ds, [], [node], rng=random.Random(1)).create) == creates
    h = compute_hash(ds.spec.template, None)
    running = (
        make_pod("web-abcde")
        .label("app", "web")
        .label("controller-revision-hash", h)
        .node("n1")
        .owner("DaemonSet", "web")
        .obj()
    )
    assert bool(sync_daemon_set(ds, [running], [node], rng=random.Random(1)).delete) == (not keeps)


def test_an_unschedulable_taint_is_tolerated_and_the_node_selector_obeyed() -> None:
    ds = workload("DaemonSet", template=template(nodeSelector={"role": "edge"}))
    nodes = [
        make_node("cordoned").label("role", "edge").taint("node.kubernetes.io/unschedulable").obj(),
        make_node("core").label("role", "core").obj(),
    ]
    (pod,) = sync_daemon_set(ds, [], nodes, rng=random.Random(1)).create
    required = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution  # type: ignore[union-attr]
    assert required is not None and required.node_selector_terms[0].match_fields[0].values == [
        "cordoned"
    ]


def test_extra_daemon_pods_go_and_pending_pods_of_removed_nodes_too() -> None:
    ds = workload("DaemonSet")
    nodes = [make_node("n1").obj()]
    old = make_pod("old").label("app", "web").node("n1").owner("DaemonSet", "web").obj()
    old = msgspec.structs.replace(
        old, metadata=msgspec.structs.replace(old.metadata, creation_timestamp=ts(NOW - HOUR))
    )
    new = make_pod("new").label("app", "web").node("n1").owner("DaemonSet", "web").obj()
    new = msgspec.structs.replace(
        new, metadata=msgspec.structs.replace(new.metadata, creation_timestamp=ts(NOW))
    )
    pinned = sync_daemon_set(ds, [], [make_node("gone").obj()], rng=random.Random(1)).create[0]
    actions = sync_daemon_set(ds, [new, old, pinned], nodes, rng=random.Random(1))
    assert sorted(p.metadata.name for p in actions.delete) == sorted(["new", pinned.metadata.name])


def test_a_daemon_set_template_change_replaces_one_pod_at_a_time() -> None:
    ds = workload("DaemonSet")
    nodes = [make_node(f"n{i}").obj() for i in range(3)]
    pods = [
        bind(
            [p],
            [
                p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms[
                    0
                ]
                .match_fields[0]
                .values[0]
            ],
        )[0]  # type: ignore[union-attr]
        for p in sync_daemon_set(ds, [], nodes, rng=random.Random(1)).create
    ]
    v2 = msgspec.structs.replace(
        ds,
        spec=msgspec.structs.replace(
            ds.spec, template=msgspec.convert(template(hostNetwork=True), PodTemplateSpec)
        ),
    )
    rng = random.Random(2)
    deletions = []
    for _ in range(10):
        actions = sync_daemon_set(v2, pods, nodes, rng=rng)
        if not actions:
            break
        deletions.append(len(actions.delete))
        pods = apply(pods, actions)
        pods = [
            p
            if p.spec.node_name
            else bind(
                [p],
                [
                    p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms[
                        0
                    ]
                    .match_fields[0]
                    .values[0]
                ],
            )[0]  # type: ignore[union-attr]
            for p in pods
        ]
    assert max(deletions) == 1 and sum(deletions) == 3
    h = compute_hash(v2.spec.template, None)
    assert {p.metadata.labels["controller-revision-hash"] for p in pods} == {h}


# ---------------------------------------------------------------------------------------------
# Jobs


@pytest.mark.parametrize(
    ("parallelism", "completions", "expected"),
    [
        pytest.param(None, None, 1, id="neither: one pod"),
        pytest.param(3, None, 3, id="parallelism alone"),
        pytest.param(3, 2, 2, id="bounded by completions"),
        pytest.param(2, 5, 2, id="bounded by parallelism"),
        pytest.param(0, 5, 0, id="parallelism 0"),
    ],
)
def test_a_job_runs_parallelism_pods_bounded_by_completions(
    parallelism: int | None, completions: int | None, expected: int
) -> None:
    spec: dict[str, Any] = {"template": {"spec": {"restartPolicy": "Never"}}}
    if parallelism is not None:
        spec["parallelism"] = parallelism
    if completions is not None:
        spec["completions"] = completions
    job = msgspec.convert(
        {"metadata": {"name": "batch", "namespace": "default", "uid": "u1"}, "spec": spec}, Job
    )
    created = sync_job(job, [], rng=random.Random(1)).create
    assert len(created) == expected
    for pod in created:
        assert re.fullmatch(f"batch-{SUFFIX}", pod.metadata.name)
        assert pod.metadata.labels == {
            "job-name": "batch",
            "batch.kubernetes.io/job-name": "batch",
            "controller-uid": "u1",
            "batch.kubernetes.io/controller-uid": "u1",
        }
        assert pod.metadata.owner_references[0].kind == "Job"
    # Another sync with those pods running does nothing.
    assert not sync_job(job, bind(list(created)), rng=random.Random(1))


def test_succeeded_pods_count_against_completions_and_lowering_parallelism_deletes() -> None:
    job = msgspec.convert(
        {
            "metadata": {"name": "b", "namespace": "default", "uid": "u"},
            "spec": {"parallelism": 3, "completions": 4},
        },
        Job,
    )
    pods = bind(list(sync_job(job, [], rng=random.Random(1)).create))
    done = msgspec.structs.replace(pods[0], status=PodStatus(phase="Succeeded"))
    done2 = msgspec.structs.replace(pods[1], status=PodStatus(phase="Succeeded"))
    actions = sync_job(job, [done, done2, pods[2]], rng=random.Random(1))
    assert len(actions.create) == 1  # 4 - 2 succeeded - 1 active
    fewer = msgspec.structs.replace(job, spec=msgspec.structs.replace(job.spec, parallelism=1))
    assert len(sync_job(fewer, pods, rng=random.Random(1)).delete) == 2
    suspended = msgspec.structs.replace(job, spec=msgspec.structs.replace(job.spec, suspend=True))
    assert len(sync_job(suspended, pods, rng=random.Random(1)).delete) == 3


def test_indexed_job_pods_carry_their_completion_index() -> None:
    job = msgspec.convert(
        {
            "metadata": {"name": "idx", "namespace": "default", "uid": "u"},
            "spec": {"parallelism": 2, "completions": 3, "completionMode": "Indexed"},
        },
        Job,
    )
    created = sync_job(job, [], rng=random.Random(1)).create
    assert [
        p.metadata.annotations["batch.kubernetes.io/job-completion-index"] for p in created
    ] == ["0", "1"]
    assert [p.spec.hostname for p in created] == ["idx-0", "idx-1"]
    assert re.fullmatch(f"idx-1-{SUFFIX}", created[1].metadata.name)
    assert created[1].metadata.labels["batch.kubernetes.io/job-completion-index"] == "1"


# ---------------------------------------------------------------------------------------------
# ReplicationController: the ReplicaSet controller on the converted RC


def replication_controller(**spec: Any) -> ReplicationController:
    return msgspec.convert(
        {"metadata": {"name": "redis", "namespace": "default", "uid": "rc-uid"}, "spec": spec},
        ReplicationController,
    )


def test_a_replication_controller_without_a_selector_selects_its_template_labels() -> None:
    rc = set_defaults_replication_controller(
        replication_controller(template=template({"app": "redis", "role": "leader"}))
    )
    assert rc.spec.selector == {"app": "redis", "role": "leader"}
    assert rc.metadata.labels == {"app": "redis", "role": "leader"}
    assert rc.spec.replicas == 1


def test_replication_controller_pods_are_named_after_it_and_controlled_by_it() -> None:
    rc = replication_controller(replicas=3, template=template({"app": "redis"}))
    created = sync_replication_controller(rc, [], rng=random.Random(1)).create
    assert len(created) == 3
    for pod in created:
        assert re.fullmatch(f"redis-{SUFFIX}", pod.metadata.name)
        (ref,) = pod.metadata.owner_references
        assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller) == (
            "v1",
            "ReplicationController",
            "redis",
            "rc-uid",
            True,
        )
    # The same draws as a ReplicaSet of that name: one controller, converted.
    rs = as_replica_set(set_defaults_replication_controller(rc))
    assert rs.spec.selector is not None and rs.spec.selector.match_labels == {"app": "redis"}
    same = sync_replica_set(rs, [], rng=random.Random(1)).create
    assert [p.metadata.name for p in same] == [p.metadata.name for p in created]


def test_a_replication_controller_scales_down_and_adopts_orphans_it_selects() -> None:
    rc = replication_controller(replicas=1, template=template({"app": "redis"}))
    orphans = bind(
        [make_pod(f"o{i}").label("app", "redis").obj() for i in range(2)]
        + [make_pod("other").label("app", "web").obj()]
    )
    actions = sync_replication_controller(rc, orphans, rng=random.Random(1))
    assert sorted(p.metadata.name for p in actions.update) == ["o0", "o1"]
    assert len(actions.delete) == 1 and not actions.create


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            {"selector": {"app": "db"}, "template": template({"app": "redis"})},
            "replicationcontroller default/redis: spec.template.metadata.labels: Invalid value: "
            'map[string]string{"app":"redis"}: selector does not match labels in spec.template',
            id="a selector that does not select the template",
        ),
        pytest.param(
            {"selector": {"app": "redis"}},
            "replicationcontroller default/redis: spec.template: Required value",
            id="no template",
        ),
        pytest.param(
            {"template": template({})},
            "replicationcontroller default/redis: spec.selector: Required value",
            id="neither selector nor template labels",
        ),
    ],
)
def test_the_api_server_rejects_a_replication_controller_whose_pods_it_cannot_select(
    spec: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError) as err:
        sync_replication_controller(replication_controller(**spec), [], rng=random.Random(1))
    assert str(err.value) == message


# ---------------------------------------------------------------------------------------------
# CronJob: the next scheduled run's Job


def at(text: str) -> int:
    """``2025-01-15 10:31:07`` (UTC) in nanoseconds since the Unix epoch."""
    when = datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.UTC)
    return int(when.timestamp()) * 10**9


@pytest.mark.parametrize(
    ("schedule", "zone", "after", "expected"),
    [
        pytest.param("*/5 * * * *", None, "2025-01-15 10:31:07", "2025-01-15 10:35", id="step"),
        pytest.param("0 3 * * 1", None, "2025-01-15 10:31", "2025-01-20 03:00", id="weekday"),
        pytest.param("0 0 29 2 *", None, "2025-01-15 00:00", "2028-02-29 00:00", id="leap day"),
        pytest.param(
            "0 0 1 * mon", None, "2025-01-15 00:00", "2025-01-20 00:00", id="day or weekday"
        ),
        pytest.param(
            "30 6-16/4 * * 1-5", None, "2025-01-15 10:31", "2025-01-15 14:30", id="range step"
        ),
        pytest.param("@hourly", None, "2025-01-15 10:31", "2025-01-15 11:00", id="descriptor"),
        pytest.param(
            "@every 90m", None, "2025-01-15 10:31:07", "2025-01-15 12:01:07", id="constant delay"
        ),
        pytest.param(
            "0 9 * * *", "Europe/Berlin", "2025-01-15 10:31", "2025-01-16 08:00", id="time zone"
        ),
        pytest.param("* * * * *", None, "2025-01-15 10:31", "2025-01-15 10:32", id="after"),
    ],
)
def test_the_next_scheduled_time_is_robfig_crons(
    schedule: str, zone: str | None, after: str, expected: str
) -> None:
    assert next_time(parse_schedule(schedule), at(after), location(zone)) == at(expected)


@pytest.mark.parametrize(
    "schedule",
    ["", "* * * *", "61 * * * *", "* * * * 8", "5-1 * * * *", "*/0 * * * *", "@often"],
)
def test_schedules_robfig_cron_rejects_are_rejected(schedule: str) -> None:
    with pytest.raises(CronError):
        parse_schedule(schedule)


def test_a_time_zone_in_the_schedule_is_rejected_for_spec_time_zone() -> None:
    with pytest.raises(CronError, match="use timeZone field instead"):
        parse_schedule("TZ=UTC * * * * *")


def cron_job(**spec: Any) -> CronJob:
    base = {
        "schedule": "*/5 * * * *",
        "jobTemplate": {
            "metadata": {"labels": {"team": "batch"}},
            "spec": {"parallelism": 2, "template": template({"app": "report"})},
        },
    }
    return msgspec.convert(
        {"metadata": {"name": "report", "namespace": "ops", "uid": "cj-uid"}, "spec": base | spec},
        CronJob,
    )


def test_a_cron_job_creates_the_job_of_its_next_scheduled_run() -> None:
    now = at("2025-01-15 10:31:07")
    (job,) = sync_cron_job(cron_job(), [], now=now)
    scheduled = at("2025-01-15 10:35")
    assert job.metadata.name == f"report-{scheduled // 10**9 // 60}"  # getJobName
    assert job.metadata.namespace == "ops"
    assert job.metadata.labels == {"team": "batch"}
    assert job.metadata.annotations == {CRON_JOB_SCHEDULED_TIMESTAMP: "2025-01-15T10:35:00Z"}
    (ref,) = job.metadata.owner_references
    assert (ref.api_version, ref.kind, ref.name, ref.controller) == (
        "batch/v1",
        "CronJob",
        "report",
        True,
    )
    # The Job controller then makes its pods.
    stored = msgspec.structs.replace(job, metadata=msgspec.structs.replace(job.metadata, uid="j"))
    pods = sync_job(stored, [], rng=random.Random(1)).create
    assert len(pods) == 2 and all(p.metadata.name.startswith(job.metadata.name) for p in pods)


def test_a_cron_job_with_a_job_or_suspended_creates_none() -> None:
    now = at("2025-01-15 10:31:07")
    (job,) = sync_cron_job(cron_job(), [], now=now)
    assert sync_cron_job(cron_job(), [job], now=now + 3600 * 10**9) == ()
    assert sync_cron_job(cron_job(suspend=True), [], now=now) == ()


def test_a_cron_job_with_a_bad_schedule_or_time_zone_is_rejected_naming_the_field() -> None:
    with pytest.raises(ValidationError, match=r'ops/report: spec.schedule: Invalid value: "\* \*"'):
        sync_cron_job(cron_job(schedule="* *"), [], now=0)
    with pytest.raises(ValidationError, match=r'spec\.timeZone: Invalid value: "Mars/Olympus"'):
        sync_cron_job(cron_job(timeZone="Mars/Olympus"), [], now=0)
