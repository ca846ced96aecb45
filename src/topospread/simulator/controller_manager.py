"""The workload controllers of kube-controller-manager, run over a simulation once per round of
its settle loop (``Simulation.settle``): every workload syncs once per round, in a fixed order
(``KIND_ORDER``, then namespace/name), a Deployment's ReplicaSets within its own step, and the
pods each sync creates, updates or deletes go through the simulation as the API server would
take them.

The controllers themselves are simulator/controllers/; this module runs them, as a part of
``Simulation`` (a mixin: every sync reads and writes the simulation's pods, workloads, cluster
and random source, and tests swap its methods on the class). On the fast path
a workload whose last sync did nothing is skipped until what that sync reads changes (its
object, its ReplicaSets, the nodes, the pods it owns or selects): that is what keeps a settle
loop over thousands of quiet workloads cheap. The reference path syncs every one. On the fast
path, too, a sync costs what changed, not every pod of its workload: the ReplicaSets' claims
and statuses are kept from sync to sync and brought up to date from the pods changed since
(controllers/claim_index.py), a Deployment's step lists its pods only when it reads them
(scale-down ranking, Recreate), and the other controllers read the pods they may claim (their
own and the orphans) rather than their namespace's. The reference path claims afresh at every
sync.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from topospread.api.storage import PersistentVolumeClaim
from topospread.api.types import (
    CronJob,
    DaemonSet,
    Deployment,
    Job,
    Pod,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
)
from topospread.labels.selector import Selector, SelectorError, label_selector_as_selector
from topospread.simulator.controllers import (
    PodActions,
    step_deployment,
    sync_daemon_set,
    sync_job,
    sync_replica_set,
    sync_stateful_set,
)
from topospread.simulator.controllers.claim_index import ClaimIndex
from topospread.simulator.controllers.claim_retention import (
    is_claim_owner_up_to_date,
    pod_claim_is_stale,
    update_claim_owner_ref_for_set_and_pod,
)
from topospread.simulator.controllers.claims import (
    admit_claim,
    claim_templates,
    get_persistent_volume_claims,
)
from topospread.simulator.controllers.common import (
    format_time,
    get_controller_of,
    is_controlled_by,
    retry_generate_name,
)
from topospread.simulator.controllers.cronjob import sync_cron_job
from topospread.simulator.controllers.daemonset import (
    ShouldRun,
    ShouldRunMemo,
    node_should_run_daemon_pod,
)
from topospread.simulator.controllers.lazy_list import LazyList
from topospread.simulator.controllers.replicationcontroller import (
    as_replica_set,
    sync_replication_controller,
)
from topospread.simulator.controllers.statefulset import (
    get_ordinal,
    get_parent_name_and_ordinal,
    get_pod_revision,
    revision_name,
)
from topospread.simulator.stores import (
    KIND_ORDER,
    Workload,
    WorkloadKey,
    describe_workload,
    workload_key,
)

if TYPE_CHECKING:
    import random

    from topospread.api.types import PodTemplateSpec
    from topospread.cluster.state import ClusterState
    from topospread.simulator.api_server import ApiServer
    from topospread.simulator.cluster_nodes import ClusterNodes
    from topospread.simulator.simulation import Settled
    from topospread.simulator.stores import PodStore, WorkloadStore


@dataclass(frozen=True, slots=True)
class _Quiet:
    """A workload whose last sync did nothing: the inputs that sync read (``inputs``), and
    what tells whether a pod is one it reads (its selectors, its owners' names)."""

    inputs: tuple[object, ...]
    selectors: tuple[Selector | None, ...]
    owners: frozenset[tuple[str, str]]
    sts_name: str


class ControllerManager:
    """The workload controllers' part of ``Simulation``: ``_sync_controllers`` runs one round."""

    if TYPE_CHECKING:
        # What the controllers read and write of the simulation (simulator/simulation.py).
        pods: PodStore
        workloads: WorkloadStore
        rng: random.Random
        memo: dict[str, Any]
        epoch: int
        now: int
        sts_current: dict[WorkloadKey, PodTemplateSpec]
        cluster: ClusterState
        api_server: ApiServer
        nodes: ClusterNodes

        def _pods_in(self, namespace: str) -> list[Pod]: ...
        def create_pod(self, pod: Pod, where: str) -> Pod: ...
        def update_pod(self, pod: Pod) -> None: ...
        def delete_pod(self, pod: Pod) -> None: ...
        def name_taken(self, namespace: str, name: str) -> bool: ...

    def __init__(self, *, fast: bool) -> None:
        """``fast``: skip the workloads whose last sync did nothing until what it read
        changes, and remember what each DaemonSet decided of each node."""
        # Only when ``fast``: workloads whose last sync did nothing, skipped until what their
        # sync reads changes (``_sync_controllers``); the reference path syncs every one.
        self._skip_quiet = fast
        self._quiet: dict[WorkloadKey, _Quiet] = {}
        # What each DaemonSet's controller decided of each node, while both stay the same.
        self._should_run: ShouldRun = ShouldRunMemo() if fast else node_should_run_daemon_pod
        # Only when ``fast``: the ReplicaSets' claims of their pods, kept from sync to sync
        # and brought up to date from the pods changed since (controllers/claim_index.py).
        self._claim_index = ClaimIndex() if fast else None
        self._claimable_only = fast

    def _deployment_pods(self, d: Deployment, rss: list[ReplicaSet]) -> list[Pod]:
        """What a Deployment's step reads of the namespace's pods, in key order: a superset
        of the pods its ReplicaSets (its own and the orphans it may adopt) own or may adopt,
        and of those their selectors and its own select (the ReplicaSet controller ranks
        victims against those). Pods of other owners that none of them selects play no part.
        """
        ns = d.metadata.namespace
        pods = self.pods
        mine = [
            rs
            for rs in rss
            if rs.metadata.namespace == ns
            and (get_controller_of(rs.metadata) is None or is_controlled_by(rs.metadata, d))
        ]
        keys = set(pods.orphans.get(ns, ()))
        for selector in (d.spec.selector, *(rs.spec.selector for rs in mine)):
            selected = pods.selectable_by(ns, selector)
            if selected is None:
                return self._pods_in(ns)
            keys |= selected
        for rs in mine:
            keys |= pods.owned_by(ns, rs)
        return [pods[k] for k in sorted(keys)]

    def _claimable(self, namespace: str, owner: Workload) -> list[Pod]:
        """The pods a sync of ``owner`` reads, in key order: on the fast path those whose
        controller reference names it and the namespace's orphans (the only pods its claim
        may take: it skips every other), on the reference path the namespace's pods."""
        if not self._claimable_only:
            return self._pods_in(namespace)
        pods = self.pods
        # NOTE: owned_by's UIDs are not per namespace: pods of another one are left out.
        keys: set[str] = set().union(*pods.claimable(namespace, owner))
        return [p for k in sorted(keys) if (p := pods[k]).metadata.namespace == namespace]

    def _sync_controllers(self, out: Settled) -> bool:
        """Every workload's controller syncs once (the quiet ones skipped); True when one
        acted."""
        acted = False
        order = {kind: i for i, kind in enumerate(KIND_ORDER)}
        for key in sorted(self.workloads, key=lambda k: (order[k[0]], k[1], k[2])):
            obj = self.workloads.get(key)
            if obj is None:
                continue
            if isinstance(obj, ReplicaSet):
                ref = get_controller_of(obj.metadata)
                if ref is not None and ref.kind == "Deployment":
                    continue  # its Deployment's step syncs it
            self._forget_quiet()
            inputs = self._sync_inputs(key, obj)
            quiet = self._quiet.get(key)
            if quiet is not None and quiet.inputs == inputs:
                continue
            self._quiet.pop(key, None)
            did = self._sync_one(key, obj, out)
            acted = acted or did
            unchanged = not did and not self.pods.changed
            if self._skip_quiet and unchanged and self._sync_inputs(key, obj) == inputs:
                self._quiet[key] = self._quiet_for(key, obj, inputs)
        return acted

    def _sync_inputs(self, key: WorkloadKey, obj: Workload) -> tuple[object, ...]:
        """What a sync of ``obj`` reads besides pods (which ``_forget_quiet`` follows): the
        object; for a Deployment the ReplicaSets it owns or may adopt; for a DaemonSet the
        nodes; for a StatefulSet mid-rollout its current revision, and for one with claims
        how many claims were deleted. Controllers read no clock
        (their ``now`` is unset)."""
        if isinstance(obj, Deployment):
            return (obj, *self._replica_sets_of(obj))
        if isinstance(obj, DaemonSet):
            return (obj, self.nodes.version)
        if isinstance(obj, StatefulSet):
            # A sync waiting for a claim to go (stale, or being deleted) acts once one goes.
            templates = obj.spec.volume_claim_templates
            deleted = self.cluster.storage_state.claims_deleted if templates else 0
            return (obj, self.sts_current.get(key), deleted)
        if isinstance(obj, CronJob):
            # It reads its namespace's Jobs and the clock, no pods.
            jobs = tuple(k for k in self.workloads if k[0] == "Job" and k[1] == key[1])
            return (obj, jobs, self.now)
        return (obj,)

    def _replica_sets_of(self, d: Deployment) -> list[ReplicaSet]:
        """The ReplicaSets of the Deployment's namespace that it controls or may adopt."""
        ns = d.metadata.namespace
        return [
            w
            for w in self.workloads.values()
            if isinstance(w, ReplicaSet)
            and w.metadata.namespace == ns
            and (get_controller_of(w.metadata) is None or is_controlled_by(w.metadata, d))
        ]

    def _quiet_for(self, key: WorkloadKey, obj: Workload, inputs: tuple[object, ...]) -> _Quiet:
        """The pods a sync of ``obj`` reads, described: those it or (a Deployment) one of its
        ReplicaSets owns, by name, or that one of their selectors matches (a selector that
        cannot be compiled is None: every pod of the namespace), and for a StatefulSet those
        named after it."""
        owned: list[Workload] = [obj]
        if isinstance(obj, Deployment):
            owned += self._replica_sets_of(obj)
        selectors: list[Selector | None] = []
        for w in owned:
            if isinstance(w, CronJob):
                continue  # it reads no pods
            selector = (
                as_replica_set(w).spec.selector
                if isinstance(w, ReplicationController)
                else w.spec.selector
            )
            try:
                compiled = label_selector_as_selector(selector)
            except SelectorError:
                compiled = None
            # No selector (a Job's is generated): every pod of the namespace, to be safe.
            selectors.append(compiled if selector is not None else None)
        return _Quiet(
            inputs,
            tuple(selectors),
            frozenset((w.kind, w.metadata.name) for w in owned),
            key[2] if isinstance(obj, StatefulSet) else "",
        )

    def _forget_quiet(self) -> None:
        """Pods stored or removed since the last call wake the quiet workloads that read them."""
        changed = self.pods.take_changed()
        if not changed or not self._quiet:
            return
        seen: set[tuple[object, ...]] = set()
        for pod in changed:
            meta = pod.metadata
            ref = get_controller_of(meta)
            owner = (ref.kind, ref.name) if ref is not None else None
            sts_name = get_parent_name_and_ordinal(pod)[0]
            labels = tuple(meta.labels.items())
            group = (meta.namespace, owner, sts_name, labels)
            if group in seen:
                continue
            seen.add(group)
            for key in [k for k in self._quiet if k[1] == meta.namespace]:
                quiet = self._quiet[key]
                if (
                    (owner is not None and owner in quiet.owners)
                    or (sts_name and sts_name == quiet.sts_name)
                    or any(s is None or s.matches(meta.labels) for s in quiet.selectors)
                ):
                    del self._quiet[key]

    def _sync_one(self, key: WorkloadKey, obj: Workload, out: Settled) -> bool:
        """One controller's sync of ``obj``; True when it acted."""
        acted = False
        actions: PodActions
        if isinstance(obj, Deployment):
            rss = [w for w in self.workloads.values() if isinstance(w, ReplicaSet)]
            if self._claim_index is None:
                step = step_deployment(
                    obj,
                    rss,
                    self._deployment_pods(obj, rss),
                    rng=self.rng,
                    claim_memos=self.memo.setdefault("pod-claims", {}),
                )
            else:
                # The claims need no list of pods; the step lists them only if it reads them.
                d = obj
                step = step_deployment(
                    obj,
                    rss,
                    LazyList(lambda: self._deployment_pods(d, rss)),
                    rng=self.rng,
                    claims=self._claim_index.claims(self.pods),
                )
            sync = step.sync
            for rs in (*sync.created, *sync.updated):
                self.workloads[workload_key(rs)] = rs
            for rs in sync.deleted:
                self.workloads.pop(workload_key(rs), None)
            if sync.collision_count != obj.status.collision_count:
                status = msgspec.structs.replace(obj.status, collision_count=sync.collision_count)
                self.workloads[key] = msgspec.structs.replace(obj, status=status)
            if sync:
                self.api_server.refresh_objects()
            actions = step.pods
            acted = bool(sync)
        elif isinstance(obj, ReplicaSet):
            if self._claim_index is None:
                actions = sync_replica_set(obj, self._pods_in(key[1]), rng=self.rng)
            else:  # its claim is all it reads of the pods
                claims = self._claim_index.claims(self.pods)
                actions = sync_replica_set(obj, (), rng=self.rng, claims=claims)
        elif isinstance(obj, ReplicationController):
            actions = sync_replication_controller(obj, self._claimable(key[1], obj), rng=self.rng)
        elif isinstance(obj, CronJob):
            jobs = [w for w in self.workloads.values() if isinstance(w, Job)]
            created_jobs = [
                job
                for job in sync_cron_job(obj, jobs, now=self.epoch + self.now)
                if workload_key(job) not in self.workloads  # upstream: AlreadyExists
            ]
            for job in created_jobs:
                self.api_server.apply_workload(job, describe_workload(key))
            actions = PodActions()
            acted = bool(created_jobs)
        elif isinstance(obj, StatefulSet):
            current = self.sts_current.get(key)
            set_claims = _SetClaims(self, obj) if obj.spec.volume_claim_templates else None
            actions = sync_stateful_set(
                obj,
                self._claimable(key[1], obj),
                rng=self.rng,
                current_template=current,
                claims=set_claims,
            )
            acted = set_claims is not None and set_claims.wrote
        elif isinstance(obj, DaemonSet):
            nodes = [info.node for info in self.cluster.list()]
            actions = sync_daemon_set(
                obj,
                self._claimable(key[1], obj),
                nodes,
                rng=self.rng,
                should_run_on=self._should_run,
            )
        else:
            actions = sync_job(obj, self._claimable(key[1], obj), rng=self.rng)
        if actions:
            acted = True
            # The StatefulSet controller names its pods itself (by ordinal); every other
            # controller leaves the name to generateName.
            generated = not isinstance(obj, StatefulSet)
            self._apply_actions(actions, describe_workload(key), out, generated=generated)
        if isinstance(obj, StatefulSet) and key in self.sts_current:
            self._maybe_finish_sts_rollout(obj)
        return acted

    def _apply_actions(
        self, actions: PodActions, who: str, out: Settled, *, generated: bool
    ) -> None:
        """Carry out one sync's actions as the API server would. ``generated``: the created
        pods' names were drawn from their generateName, and one already taken in the namespace
        is drawn again (upstream's RetryGenerateName); a name the controller gave that is taken
        is AlreadyExists, and that pod is not created (nor one whose every drawn name is taken):
        the controller's next sync, which still misses it, tries again."""
        for pod in actions.update:
            self.update_pod(pod)
        for pod in actions.delete:
            self.delete_pod(pod)
            out.deleted.append(pod.key)
        for pod in actions.create:
            stored = pod
            if generated:
                taken = functools.partial(self.name_taken, pod.metadata.namespace)
                stored = retry_generate_name(pod, self.rng, taken)
            if stored.key in self.pods:
                continue
            if stored.metadata.creation_timestamp is None:
                # The API server stamps what it creates with its own clock: the simulation's.
                meta = msgspec.structs.replace(
                    stored.metadata, creation_timestamp=format_time(self.epoch + self.now)
                )
                stored = msgspec.structs.replace(stored, metadata=meta)
            created = self.create_pod(stored, who)
            out.created.append(created.key)

    def _maybe_finish_sts_rollout(self, sts: StatefulSet) -> None:
        key = workload_key(sts)
        update = revision_name(sts, sts.spec.template)
        owned = [
            p
            for p in self._claimable(key[1], sts)
            if p.metadata.namespace == key[1]
            and (ref := get_controller_of(p.metadata)) is not None
            and ref.kind == "StatefulSet"
            and ref.name == key[2]
        ]
        replicas = sts.spec.replicas if sts.spec.replicas is not None else 1
        if len(owned) == replicas and all(get_pod_revision(p) == update for p in owned):
            del self.sts_current[key]


class _SetClaims:
    """A StatefulSet sync's claims (``StatefulClaims``), read from and written to the
    cluster's storage as the sync goes.

    Upstream: StatefulPodControl's PodClaimIsStale, createPersistentVolumeClaims and
    UpdatePodClaimForRetentionPolicy (stateful_pod_control.go, v1.35)
    """

    __slots__ = ("manager", "prefixes", "sts", "wrote")

    def __init__(self, manager: ControllerManager, sts: StatefulSet) -> None:
        self.manager = manager
        self.sts = sts
        self.wrote = False
        # The keys of an ordinal's claims but the ordinal (getPersistentVolumeClaimName).
        ns, name = sts.metadata.namespace, sts.metadata.name
        self.prefixes = [f"{ns}/{t.metadata.name}-{name}-" for t in claim_templates(sts)]

    def _existing(self, pod: Pod) -> list[PersistentVolumeClaim]:
        pvcs = self.manager.cluster.storage_state.pvcs
        ordinal = get_ordinal(pod)
        return [c for p in self.prefixes if (c := pvcs.get(f"{p}{ordinal}")) is not None]

    def is_stale(self, pod: Pod) -> bool:
        return pod_claim_is_stale(self.sts, pod, lambda: self._existing(pod))

    def create_claims(self, pod: Pod) -> bool:
        """The claims of the pod's ordinal that do not exist, created (owned as the policy
        wants for the pod); False when one that exists is being deleted."""
        storage = self.manager.cluster.storage_state
        ok = True
        for claim in get_persistent_volume_claims(self.sts, get_ordinal(pod)):
            current = storage.pvcs.get(claim.key)
            if current is None:
                owned = update_claim_owner_ref_for_set_and_pod(claim, self.sts, pod)
                storage.create_claim(admit_claim(owned, storage.classes.values()))
                self.wrote = True
            elif current.metadata.deletion_timestamp is not None:
                ok = False  # upstream: "pvc <name> is being deleted"
        if ok and pod.metadata.uid:
            self.match_policy(pod)
        return ok

    def match_policy(self, pod: Pod) -> None:
        storage = self.manager.cluster.storage_state
        for claim in self._existing(pod):
            if is_claim_owner_up_to_date(claim, self.sts, pod):
                continue
            updated = update_claim_owner_ref_for_set_and_pod(claim, self.sts, pod)
            if updated is not claim:
                storage.update_pvc(updated)
                self.wrote = True


__all__ = ["ControllerManager"]
