"""The Job controller, as far as placement goes: keep ``parallelism`` pods active, never more
than the completions still wanted.

Completions are not modelled: a pod counts as succeeded only when its status says so (the
simulator never finishes one). A suspended Job deletes its active pods. NonIndexed pods are
named ``<job>-<5 characters>``; Indexed pods ``<job>-<index>-<5 characters>``, with the
completion-index annotation and label and hostname ``<job>-<index>``, lowest missing index
first. Pods carry the labels the API server adds to a Job's template unless
``manualSelector`` is set (``batch.kubernetes.io/controller-uid``,
``batch.kubernetes.io/job-name`` and their legacy forms), and the Job's selector is the
controller-uid label.

Upstream: pkg/controller/job/job_controller.go (manageJob, activePodsForRemoval) and
pkg/registry/batch/job/strategy.go (generateSelector), v1.35
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Final

import msgspec

from topospread.api.types import Job, LabelSelector, Pod
from topospread.simulator.controllers.active_pods import (
    POD_SUCCEEDED,
    is_pod_active,
    pod_phase,
    sort_active_pods,
)
from topospread.simulator.controllers.common import (
    PodActions,
    check_selector_matches_template,
    claim_pods,
    create_pod,
    get_pod_from_template,
    new_controller_ref,
    with_label,
    workload_selector,
)

MAX_POD_CREATE_DELETE_PER_SYNC: Final = 500
NON_INDEXED_COMPLETION: Final = "NonIndexed"
INDEXED_COMPLETION: Final = "Indexed"

JOB_NAME_LABEL: Final = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME_LABEL: Final = "job-name"
CONTROLLER_UID_LABEL: Final = "batch.kubernetes.io/controller-uid"
LEGACY_CONTROLLER_UID_LABEL: Final = "controller-uid"
JOB_COMPLETION_INDEX: Final = "batch.kubernetes.io/job-completion-index"


def set_defaults_job(job: Job) -> Job:
    """Neither parallelism nor completions: both 1; parallelism alone defaults to 1;
    completionMode NonIndexed; suspend false.

    Upstream: SetDefaults_Job (pkg/apis/batch/v1/defaults.go, v1.35)
    """
    spec = job.spec
    completions, parallelism = spec.completions, spec.parallelism
    if completions is None and parallelism is None:
        completions = parallelism = 1
    new_spec = msgspec.structs.replace(
        spec,
        completions=completions,
        parallelism=1 if parallelism is None else parallelism,
        completion_mode=spec.completion_mode or NON_INDEXED_COMPLETION,
        suspend=False if spec.suspend is None else spec.suspend,
    )
    return job if new_spec == spec else msgspec.structs.replace(job, spec=new_spec)


def generate_selector(job: Job) -> Job:
    """The API server's selector and template labels for a Job without ``manualSelector``.

    Upstream: generateSelector (pkg/registry/batch/job/strategy.go, v1.35)
    """
    if job.spec.manual_selector:
        return job
    template = job.spec.template
    uid = job.metadata.uid
    for key, value in (
        (LEGACY_JOB_NAME_LABEL, job.metadata.name),
        (JOB_NAME_LABEL, job.metadata.name),
        (LEGACY_CONTROLLER_UID_LABEL, uid),
        (CONTROLLER_UID_LABEL, uid),
    ):
        if key not in template.metadata.labels:
            template = with_label(template, key, value)
    selector = job.spec.selector or LabelSelector()
    if CONTROLLER_UID_LABEL not in selector.match_labels:
        selector = msgspec.structs.replace(
            selector, match_labels={**selector.match_labels, CONTROLLER_UID_LABEL: uid}
        )
    spec = msgspec.structs.replace(job.spec, template=template, selector=selector)
    return msgspec.structs.replace(job, spec=spec)


def _completion_index(pod: Pod) -> int | None:
    text = pod.metadata.annotations.get(JOB_COMPLETION_INDEX)
    if text is None or not text.isdigit():
        return None
    return int(text)


def pod_generate_name_with_index(job_name: str, index: int) -> str:
    """Upstream: podGenerateNameWithIndex (job/indexed_job_utils.go, v1.35)"""
    append = f"-{index}-"
    prefix = job_name + append
    if len(prefix) > 58:
        prefix = job_name[: 58 - len(append)] + append
    return prefix


def active_pods_for_removal(job: Job, pods: list[Pod], at_least: int) -> list[Pod]:
    """The pods to delete: for an Indexed Job, those without a valid index and all but the
    best (last in ActivePods' order) of each repeated index; then, up to ``at_least``, the
    rest in ActivePods' order.

    Upstream: activePodsForRemoval / appendDuplicatedIndexPodsForRemoval (job_controller.go,
    indexed_job_utils.go, v1.35)
    """
    remove: list[Pod] = []
    left = list(pods)
    if job.spec.completion_mode == INDEXED_COMPLETION:
        completions = job.spec.completions or 0
        by_index: dict[int, list[Pod]] = {}
        left = []
        for pod in pods:
            index = _completion_index(pod)
            if index is None or index >= completions:
                remove.append(pod)
            else:
                by_index.setdefault(index, []).append(pod)
        for index in sorted(by_index):
            same = sort_active_pods(by_index[index])
            remove.extend(same[:-1])
            left.append(same[-1])
    if len(remove) < at_least:
        remove.extend(sort_active_pods(left)[: at_least - len(remove)])
    return remove


def sync_job(
    job: Job, pods: Iterable[Pod], *, rng: random.Random, now: int | None = None
) -> PodActions:
    """One sync of a Job: create up to ``min(parallelism, completions - succeeded)`` active
    pods, or delete the surplus (all of them while suspended), at most 500 per sync.

    ``pods``: the pods of its namespace; it claims those its selector matches.

    Upstream: Controller.manageJob (job_controller.go, v1.35)
    """
    job = generate_selector(set_defaults_job(job))
    selector = workload_selector(job, job.spec.selector)
    check_selector_matches_template(job, selector, job.spec.template)
    claim = claim_pods(job, selector, pods)
    updates = PodActions(update=tuple(claim.updated))
    if job.metadata.deletion_timestamp is not None:
        return updates
    active = [p for p in claim.owned if is_pod_active(p)]
    succeeded = sum(1 for p in claim.owned if pod_phase(p) == POD_SUCCEEDED)
    parallelism = job.spec.parallelism or 0
    completions = job.spec.completions

    if job.spec.suspend:
        victims = active_pods_for_removal(job, active, len(active))
        return updates + PodActions(delete=tuple(victims[:MAX_POD_CREATE_DELETE_PER_SYNC]))

    if completions is None:
        want = len(active) if succeeded > 0 else parallelism
    else:
        want = max(0, min(completions - succeeded, parallelism))
    surplus = max(0, len(active) - want)
    victims = active_pods_for_removal(job, active, surplus)[:MAX_POD_CREATE_DELETE_PER_SYNC]
    if victims:
        return updates + PodActions(delete=tuple(victims))
    if len(active) >= want:
        return updates
    diff = min(want - len(active), MAX_POD_CREATE_DELETE_PER_SYNC)
    ref = new_controller_ref(job)
    base = get_pod_from_template(job.spec.template, job.metadata.name, ref)
    created: list[Pod] = []
    if job.spec.completion_mode == INDEXED_COMPLETION:
        taken = {_completion_index(p) for p in claim.owned if is_pod_active(p)} | {
            _completion_index(p) for p in claim.owned if pod_phase(p) == POD_SUCCEEDED
        }
        indexes = [i for i in range(completions or 0) if i not in taken][:diff]
        for index in indexes:
            meta = msgspec.structs.replace(
                base.metadata,
                generate_name=pod_generate_name_with_index(job.metadata.name, index),
                annotations={**base.metadata.annotations, JOB_COMPLETION_INDEX: str(index)},
                labels={**base.metadata.labels, JOB_COMPLETION_INDEX: str(index)},
            )
            spec = msgspec.structs.replace(
                base.spec, hostname=base.spec.hostname or f"{job.metadata.name}-{index}"
            )
            pod = msgspec.structs.replace(base, metadata=meta, spec=spec)
            created.append(create_pod(pod, job.metadata.namespace, rng, now))
    else:
        for _ in range(diff):
            created.append(create_pod(base, job.metadata.namespace, rng, now))
    return updates + PodActions(create=tuple(created))
