"""``check`` of chart output that holds Helm hooks: what ``helm install`` (Helm v3) does with
the resources ``helm template`` prints with the annotation ``helm.sh/hook``.

Helm reads the annotation as a comma-separated list of events, each trimmed and lower-cased:
``pre-install``, ``post-install``, ``pre-upgrade``, ``post-upgrade``, ``pre-delete``,
``post-delete``, ``pre-rollback``, ``post-rollback``, ``test`` and Helm 2's ``test-success``
(read as ``test``). One event it does not know (Helm 2's ``test-failure`` and
``crd-install``, a typo, an empty value) makes it skip the whole object: neither created nor
run. An install runs only the pre-install and post-install hooks; a hook with none of them
(a chart test, an upgrade's migration) is no part of it.

``helm install`` runs the pre-install hooks, then creates the release's other resources, then
(once they are ready, with ``--wait``) runs the post-install hooks. The hooks of one event run
one at a time, by ``helm.sh/hook-weight`` (an integer as Go's ``strconv.Atoi`` reads it, else
0), then by name, then by kind in Helm's install order: each is created and, for a Job or a
Pod, waited for until the Job completes or the Pod succeeds (a hook that does not within
``--timeout`` fails the install); a hook of any other kind is created and not waited for.
Delete policies (``helm.sh/hook-delete-policy``; none means ``before-hook-creation``) remove a
hook when the next run of it is created, after its event's hooks all succeeded
(``hook-succeeded``) or after it failed (``hook-failed``).

Here a Job or Pod hook's pods are placed by the one Simulation on the cluster as the earlier
hooks left it; a pod left Pending is the hook's failure (helm install would time out); once all
are bound they succeed (a Succeeded pod takes no room), the Job's next pods are placed until
its completions are done, and the finished hook is taken out of the placement (kept or
deleted by its policy, a finished Job makes no more pods). A hook of another kind is applied
and stays, as the release's own objects do, unless its policy deletes it.

Upstream: SortManifests (pkg/releaseutil/manifest_sorter.go), execHook (pkg/action/hooks.go),
performInstall (pkg/action/install.go), watchUntilReady (pkg/kube/client.go), Helm v3.21
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from topospread.api.loader import UnknownObject
from topospread.api.types import Job, Pod
from topospread.errors import ValidationError
from topospread.simulator.clock import SECOND, format_duration
from topospread.simulator.controllers.common import get_controller_of
from topospread.simulator.decision import is_terminal
from topospread.simulator.garbage_collector import delete_workload
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_steps.waiting import settle_with_autoscaler

HOOK_ANNOTATION: Final = "helm.sh/hook"
HOOK_WEIGHT_ANNOTATION: Final = "helm.sh/hook-weight"
HOOK_DELETE_ANNOTATION: Final = "helm.sh/hook-delete-policy"
PRE_INSTALL: Final = "pre-install"
POST_INSTALL: Final = "post-install"
INSTALL_EVENTS: Final = (PRE_INSTALL, POST_INSTALL)
# The events Helm 3 knows, by the name the annotation gives (Helm 2's test-success is test).
EVENTS: Final = {
    e: e
    for e in (
        PRE_INSTALL,
        POST_INSTALL,
        "pre-delete",
        "post-delete",
        "pre-upgrade",
        "post-upgrade",
        "pre-rollback",
        "post-rollback",
        "test",
    )
} | {"test-success": "test"}
# The note on the hooks an install does not run (check's text report).
NOT_RUN: Final = "hooks helm install does not run, left out"
HOOK_SUCCEEDED: Final = "hook-succeeded"
HOOK_FAILED: Final = "hook-failed"
BEFORE_HOOK_CREATION: Final = "before-hook-creation"
# helm install's --timeout by default: how long it waits for each Job or Pod hook.
HELM_TIMEOUT: Final = 300 * SECOND
# The kinds helm waits for (pkg/kube/client.go's watchUntilReady); any other is created only.
WAITED_KINDS: Final = ("Job", "Pod")
# Helm's InstallOrder (pkg/releaseutil/kind_sorter.go): hooks of one weight and name go in
# this order of kinds, unknown kinds last by name.
INSTALL_ORDER: Final = (
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
)
_KIND_RANK: Final = {k: i for i, k in enumerate(INSTALL_ORDER)}
_ATOI: Final = re.compile(r"[+-]?[0-9]+")
_INT64: Final = 1 << 63

# A finding as check makes it: (level, rule, object, where, message).
HookFinding = tuple[str, str, str, str, str]


@dataclass(frozen=True, slots=True)
class Hook:
    """One hook resource: where it came from, the object, its name as findings give it
    (``Job default/migrate``), its events (unknown ones as written), weight and delete
    policies (defaulted as helm defaults them when it runs the hook)."""

    where: str
    obj: Any
    name: str
    events: tuple[str, ...]
    weight: int
    delete_policies: tuple[str, ...]
    known: bool = True

    @property
    def kind(self) -> str:
        return str(getattr(self.obj, "kind", ""))

    @property
    def key(self) -> tuple[str, str, str]:
        """(kind, namespace, name): the object helm creates and deletes."""
        namespace, _, name = self.name.partition(" ")[2].partition("/")
        return (self.kind, namespace, name)

    def label(self) -> str:
        """``pre-install hook``, ``test hook``: how findings name it (by its install events
        when it has any)."""
        install = [e for e in self.events if e in INSTALL_EVENTS]
        return f"{','.join(dict.fromkeys(install or self.events))} hook"

    def ran(self, event: str) -> str:
        """``pre-install Job default/migrate (weight -5)``: a hook as it ran."""
        weight = f" (weight {self.weight})" if self.weight else ""
        return f"{event} {self.name}{weight}"

    def note(self) -> str:
        """``Pod default/web-test (test)``: how the note on hooks left out names it."""
        return f"{self.name} ({','.join(self.events)})"

    def to_json(self) -> dict[str, Any]:
        return {"object": self.name, "where": self.where, "hooks": list(self.events)}


@dataclass(slots=True)
class Release:
    """Chart output split as ``helm install`` splits it: the release's own objects, the
    hooks an install runs, and the hooks it does not (another event's, or one Helm skips)."""

    objects: list[tuple[str, Any]] = field(default_factory=list)
    hooks: list[Hook] = field(default_factory=list)
    not_run: list[Hook] = field(default_factory=list)

    def at(self, event: str) -> list[Hook]:
        """The hooks of ``event`` in the order helm runs them (a hook that names the event
        twice, twice)."""
        return [h for h in self.hooks for e in h.events if e == event]

    def installed(self) -> list[tuple[str, Any]]:
        """Every object an install creates: the release's and its install hooks', in input
        order."""
        return [*self.objects, *((h.where, h.obj) for h in self.hooks)]

    def hook_of(self, where: str) -> Hook | None:
        return next((h for h in self.hooks if h.where == where), None)


def object_name(obj: Any) -> str:
    """``Kind namespace/name``, as findings name an object."""
    if isinstance(obj, UnknownObject):
        return f"{obj.kind} {obj.namespace or 'default'}/{obj.name}"
    meta = obj.metadata
    return f"{obj.kind} {meta.namespace or 'default'}/{meta.name or meta.generate_name}"


def _annotations(obj: Any) -> dict[str, str]:
    if isinstance(obj, UnknownObject):
        meta = obj.raw.get("metadata")
        raw = meta.get("annotations") if isinstance(meta, dict) else None
        return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
    meta = getattr(obj, "metadata", None)
    return dict(meta.annotations) if meta is not None else {}


def hook_weight(text: str | None) -> int:
    """The weight as Go's strconv.Atoi reads the annotation: a signed decimal integer in
    int64's range, anything else 0.

    Upstream: calculateHookWeight (pkg/releaseutil/manifest_sorter.go, Helm v3.21)
    """
    if text is None or not _ATOI.fullmatch(text):
        return 0
    value = int(text)
    return value if -_INT64 <= value < _INT64 else 0


def _split(value: str) -> list[str]:
    return [part.strip().lower() for part in value.split(",")]


def split_release(objects: Iterable[tuple[str, Any]]) -> Release:
    """Each object into the release, the install's hooks (sorted as helm runs them) or the
    hooks an install does not run.

    Upstream: manifestFile.sort and sortHooksByKind (pkg/releaseutil/manifest_sorter.go), the
    sort of execHook (pkg/action/hooks.go), Helm v3.21
    """
    out = Release()
    for where, obj in objects:
        annotations = _annotations(obj)
        if HOOK_ANNOTATION not in annotations:
            out.objects.append((where, obj))
            continue
        written = _split(annotations[HOOK_ANNOTATION])
        known = all(e in EVENTS for e in written)
        # An event given twice runs the hook twice, as in helm.
        events = tuple(EVENTS[e] for e in written) if known else tuple(written)
        # Helm defaults the policy only when the annotation is absent (an empty one is [""]).
        policies: tuple[str, ...] = (BEFORE_HOOK_CREATION,)
        if HOOK_DELETE_ANNOTATION in annotations:
            policies = tuple(_split(annotations[HOOK_DELETE_ANNOTATION]))
        hook = Hook(
            where,
            obj,
            object_name(obj),
            events,
            hook_weight(annotations.get(HOOK_WEIGHT_ANNOTATION)),
            policies,
            known,
        )
        if known and any(e in INSTALL_EVENTS for e in events):
            out.hooks.append(hook)
        else:
            out.not_run.append(hook)
    # Helm sorts hooks by kind (stably), then stably by weight and name.
    out.hooks.sort(key=lambda h: _kind_order(h.kind))
    out.hooks.sort(key=lambda h: (h.weight, h.key[2]))
    return out


def _kind_order(kind: str) -> tuple[int, str]:
    rank = _KIND_RANK.get(kind)
    return (rank, "") if rank is not None else (len(INSTALL_ORDER), kind)


def unknown_hook_findings(release: Release) -> list[HookFinding]:
    """A warning for each object Helm skips for a hook event it does not know."""
    out = []
    for h in release.not_run:
        if h.known:
            continue
        bad = next(e for e in h.events if e not in EVENTS)
        out.append(
            (
                "warning",
                "unknown-hook",
                h.name,
                h.where,
                f"{HOOK_ANNOTATION}: {','.join(h.events)}: {bad!r} is not a Helm 3 hook event: "
                "helm skips the object (it is neither created nor run)",
            )
        )
    return out


@dataclass(slots=True)
class HookRun:
    """What running an event's hooks found, and which hook objects exist after it (by
    helm's key), as helm left them (deleted or kept by their policies)."""

    findings: list[HookFinding] = field(default_factory=list)
    existing: dict[tuple[str, str, str], Hook] = field(default_factory=dict)
    # Each hook run, with its event, in the order it ran.
    ran: list[tuple[str, Hook]] = field(default_factory=list)
    # With an autoscaler: the hooks' pods it was given (Pending) and the time it took.
    autoscaled_pods: int = 0
    autoscaled_time: int = 0


def run_hooks(
    sim: Simulation,
    hooks: Sequence[Hook],
    event: str,
    existing: dict[tuple[str, str, str], Hook],
    *,
    autoscaler_limit: int,
    timeout: int = HELM_TIMEOUT,
) -> HookRun:
    """Run ``event``'s hooks one at a time on the simulation, as helm install runs them;
    ``existing``: the hook objects earlier events left. ``timeout``: helm install's
    ``--timeout``, how long it waits for each Job or Pod hook; ``autoscaler_limit``: how long
    an autoscaler may act for a hook's Pending pods (at most ``timeout``)."""
    run = HookRun(existing=dict(existing))
    succeeded: list[Hook] = []
    for hook in hooks:
        if hook.key in run.existing:
            if BEFORE_HOOK_CREATION not in hook.delete_policies:
                run.findings.append(
                    _finding(
                        hook,
                        event,
                        f"helm install fails: {hook.kind} {hook.key[2]} already exists (the "
                        f"{run.existing[hook.key].label()} left it; no {BEFORE_HOOK_CREATION} "
                        "delete policy)",
                        "hook-exists",
                    )
                )
                continue
            _remove(sim, run.existing.pop(hook.key))
        run.ran.append((event, hook))
        if isinstance(hook.obj, UnknownObject):
            run.existing[hook.key] = hook  # created like any object; nothing to place
            succeeded.append(hook)
            continue
        before = set(sim.pods)
        waited = hook.kind in WAITED_KINDS
        try:
            sim.apply(hook.obj, hook.where)
            sim.settle(hook.where)
            failure = _wait(sim, hook, before, autoscaler_limit, timeout, run) if waited else None
        except ValidationError as err:
            # The API server refuses the hook or its pods (a PriorityClass the release has
            # not created yet): helm's create fails, or its wait times out.
            where = rf"^(?:{re.escape(hook.where)}(?: \([^)]*\))?: )+"
            refused = f"helm install fails: {re.sub(where, '', str(err))}"
            run.findings.append(_finding(hook, event, refused, "hook-refused"))
            failure = ""
        if failure is not None:
            if failure:
                run.findings.append(_finding(hook, event, failure))
            # helm install stops here; the hook leaves the placement (Pending pods take no
            # room) so that the rest of the install is still checked.
            _remove(sim, hook)
            if HOOK_FAILED not in hook.delete_policies:
                run.existing[hook.key] = hook
            continue
        if hook.kind in WAITED_KINDS:
            _remove(sim, hook)  # finished: its Succeeded pods hold nothing
        run.existing[hook.key] = hook
        succeeded.append(hook)
    for hook in succeeded:
        if HOOK_SUCCEEDED in hook.delete_policies and hook.kind != "CustomResourceDefinition":
            _remove(sim, hook)
            run.existing.pop(hook.key, None)
    return run


def _finding(hook: Hook, event: str, text: str, rule: str = "hook-pending") -> HookFinding:
    return ("error", rule, hook.name, hook.where, f"{event} hook: {text}")


def _own_pods(sim: Simulation, hook: Hook, before: set[str]) -> list[Pod]:
    """The hook's pods now: a Job's by controller, a Pod hook's the pod it made."""
    kind, namespace, name = hook.key
    out = []
    for key, pod in sim.sorted_pods():
        ref = get_controller_of(pod.metadata)
        if kind == "Job":
            mine = ref is not None and ref.kind == "Job" and ref.name == name
            if mine and pod.metadata.namespace == namespace:
                out.append(pod)
        elif ref is None and key not in before:
            out.append(pod)
    return out


def _wait(
    sim: Simulation, hook: Hook, before: set[str], autoscaler_limit: int, timeout: int, run: HookRun
) -> str | None:
    """Helm's wait for a Job to complete or a Pod to succeed: None once it has, or why it
    never does. Each round every active pod must bind, then it succeeds (the Job's next pods
    come in the next round)."""
    if isinstance(hook.obj, Job) and hook.obj.spec.suspend:
        return (
            "the Job is suspended: helm install waits for it to complete and fails when "
            f"--timeout ({format_duration(timeout)}) passes"
        )
    while True:
        active = [p for p in _own_pods(sim, hook, before) if not is_terminal(p)]
        pending = [p for p in active if not p.spec.node_name]
        if pending and sim.autoscaler is not None:
            start = sim.now
            settle_with_autoscaler(sim, autoscaler_limit, hook.where)
            run.autoscaled_pods += len(pending)
            run.autoscaled_time += sim.now - start
            active = [p for p in _own_pods(sim, hook, before) if not is_terminal(p)]
            pending = [p for p in active if not p.spec.node_name]
        if pending:
            keys = [p.key for p in pending]
            shown = ", ".join(keys[:3]) + (f", and {len(keys) - 3} more" if len(keys) > 3 else "")
            stay = "stay Pending"
            if sim.autoscaler is not None:
                stay += f" even with {sim.autoscaler.name}"
            waits = "complete" if hook.kind == "Job" else "succeed"
            return (
                f"{len(keys)} pod(s) {stay} ({shown}): helm install waits for the {hook.kind} "
                f"to {waits} and fails when --timeout ({format_duration(timeout)}) "
                f"passes: {sim.pending_message(pending[0])}"
            )
        if not active:
            return None
        for pod in active:
            sim.finish_pod(pod.key)
        sim.settle(hook.where)


def _remove(sim: Simulation, hook: Hook) -> None:
    """The hook's object out of the simulation (a workload with the pods it owns)."""
    kind, namespace, name = hook.key
    obj = sim.workloads.get(hook.key)
    if obj is not None:
        delete_workload(sim, obj)
    elif kind == "Pod":
        pod = sim.pods.get(f"{namespace}/{name}")
        if pod is not None:
            sim.delete_pod(pod)


def long_running(release: Release, existing: Iterable[Hook]) -> list[tuple[str, Any]]:
    """What stays once the install is done: the release's objects and the hooks kept that are
    not run to completion (a Deployment made as a hook runs on)."""
    kept = {id(h.obj) for h in existing if h.kind not in WAITED_KINDS}
    return [*release.objects, *((h.where, h.obj) for h in release.hooks if id(h.obj) in kept)]


__all__ = [
    "EVENTS",
    "HELM_TIMEOUT",
    "HOOK_ANNOTATION",
    "INSTALL_EVENTS",
    "NOT_RUN",
    "POST_INSTALL",
    "PRE_INSTALL",
    "Hook",
    "HookFinding",
    "HookRun",
    "Release",
    "hook_weight",
    "long_running",
    "object_name",
    "run_hooks",
    "split_release",
    "unknown_hook_findings",
]
