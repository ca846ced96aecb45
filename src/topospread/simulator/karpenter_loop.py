"""Karpenter in the simulation's loop (simulator/autoscaling.py has the shared controller):
its provisioner, batched, and its disruption controller, which looks 10s after a look that
found nothing and carries a command out after its 15s validation. Karpenter learns of
a stock-out only when a launch hits it: the cloud refuses the offering, Karpenter caches it as
unavailable for 3m, deletes a nodeclaim with no offering left and provisions its pods again
in a new batch; a disruption taints its candidates at once and deletes their nodeclaims once
their replacement has started up. A deleted nodeclaim's node, or an expired one's, is drained
and terminated on the clock (simulator/karpenter_termination.py); meanwhile the provisioner
places its pods as it places pending ones."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from topospread.api.types import LABEL_TOPOLOGY_ZONE, Pod
from topospread.autoscaler.karpenter import Disruption, Karpenter, builtin_catalogue
from topospread.autoscaler.karpenter.disruption import do_not_disrupt_active
from topospread.autoscaler.karpenter.instancetypes import DEFAULT_ZONES
from topospread.autoscaler.karpenter.nodepool import parse_nodepool
from topospread.autoscaler.karpenter.requirements import NODEPOOL_LABEL
from topospread.autoscaler.karpenter.validation import rejected_message
from topospread.simulator.autoscaler_spec import DISRUPTION_POLL, KarpenterSpec, nanos
from topospread.simulator.autoscaling import (
    KARPENTER,
    KARPENTER_DISRUPTED,
    AutoscalerController,
    daemonsets_of,
    pending_pods,
    pods_text,
)
from topospread.simulator.clock import format_duration
from topospread.simulator.controllers.common import parse_time
from topospread.simulator.karpenter_termination import (
    Termination,
    look,
    refusal_text,
    start_termination,
    work_queue,
)
from topospread.simulator.timeline_steps.node_status import set_taints

if TYPE_CHECKING:
    from topospread.simulator.simulation import Simulation


class KarpenterController(AutoscalerController):
    """Karpenter's provisioner (batched) and disruption controller (polled)."""

    name = KARPENTER
    group_label = NODEPOOL_LABEL

    def __init__(self, spec: KarpenterSpec, sim: Simulation) -> None:
        super().__init__(spec.startup_delay)
        self.spec = spec
        self.base = (
            list(spec.catalogue)
            if spec.catalogue is not None
            else builtin_catalogue(_zones(spec, sim))
        )
        self.model = Karpenter(
            spec.pools,
            self.base,
            config=sim.scenario.config,
            registry=sim.registry,
            features=sim.features,
            batch_max_duration=spec.batch_max,
        )
        # At the clock's 0 it has seen the initial state: its first look is a poll later.
        self.model.disruption_at = DISRUPTION_POLL
        self.model.clock_origin = sim.epoch
        # The initial nodes were launched from the NodePools as given (drift is from them).
        self.model.note_nodes(sim.cluster)
        self.batch_started: int | None = None
        # Disruptions whose replacement is still starting up.
        self.awaiting: list[Disruption] = []
        # The nodes whose nodeclaims are deleted, draining (karpenter_termination.py), and
        # when each of the NodePools' nodes expires (read again when the nodes change).
        self.terminations: dict[str, Termination] = {}
        self._expiry: dict[str, int] = {}
        self._expiry_version = -1
        # The model's last pass (at the clock's 0 it has seen the initial state).
        self._last_model = 0
        self._seen: tuple[object, ...] = ()
        self._errors: dict[str, str] = {}

    def groups(self) -> list[str]:
        return list(self.model.pools)

    def apply_nodepool(self, raw: Mapping[str, Any], where: str) -> str:
        """A NodePool manifest applied (``kubectl apply``): created, or replacing the one of
        its name; the nodes launched from a NodePool whose template changed drift from it
        (autoscaler/karpenter/drift.py)."""
        pool = parse_nodepool(raw, where)
        known = pool.name in self.model.pools
        if known and self.model.pools[pool.name] == pool:
            return f"nodepool.karpenter.sh/{pool.name} unchanged"
        pools = dict(self.model.pools)
        pools[pool.name] = pool
        self.model.set_pools(pools.values())
        self._expiry_version = -1  # expireAfter may have changed
        return f"nodepool.karpenter.sh/{pool.name} {'configured' if known else 'created'}"

    def next_tick(self, sim: Simulation) -> int:
        """The next of: the model's pass (``_model_due``), a termination's look or eviction
        retry, a nodeclaim's expiry."""
        # NOTE: the model passes once an instant; the terminations' work may fall at the
        # instant of the last tick (a step deleted a node then): each turn moves its times on.
        due = [
            max(self._model_due(sim), self._last_model + 1),
            *(t.next_due() for t in self.terminations.values()),
        ]
        expiry = self._next_expiry(sim)
        if expiry is not None:
            due.append(expiry)
        due += self._replacements_up(sim)
        return max(min(due), sim.now)

    def _replacements_up(self, sim: Simulation) -> list[int]:
        """When each command waiting for its replacements has them all started up (now, if
        they are): the disruption queue hears of their initialization at once.
        Upstream: Queue.Reconcile, woken by the nodeclaims' updates (disruption/queue.go)"""
        out = []
        for d in self.awaiting:
            if any(sim.cluster.get(r.name) is None for r in d.replacements):
                continue  # gone: the command waits for ever
            starts = [
                sim.cloud.starting[r.name] for r in d.replacements if r.name in sim.cloud.starting
            ]
            out.append(max(starts) if starts else sim.now)
        return out

    def _model_due(self, sim: Simulation) -> int:
        """The disruption controller's next look (10s after one that found nothing, the end
        of a command's 15s validation wait), or sooner the end of a provisioning batch: one
        starts when pods to place are seen that the last pass did not see as they are now
        (the pods, the nodes or the stock-outs changed since): pending pods, and those of
        the nodes being deleted (upstream: a node tainted karpenter.sh/disrupted triggers
        the provisioner too)."""
        tick = nanos(self.model.disruption_at)
        if self.batch_started is None:
            pending = [*pending_pods(sim), *self.model.deleting_pods(sim.cluster)]
            if pending and self._signature(sim, pending) != self._seen:
                self.batch_started = sim.now
        if self.batch_started is not None:
            # No pod arrives within a batch here (steps take no time), so the idle
            # duration closes it, unless the max duration is shorter.
            window = min(self.spec.batch_idle, self.spec.batch_max)
            tick = min(tick, self.batch_started + nanos(window))
        return tick

    def _next_expiry(self, sim: Simulation) -> int | None:
        """When the next of the NodePools' nodes not yet deleted expires."""
        if self._expiry_version != sim.node_version:
            self._expiry_version = sim.node_version
            self._expiry = self._expiries(sim)
        times = [
            t
            for n, t in self._expiry.items()
            if n not in self.terminations and sim.cluster.get(n) is not None
        ]
        return min(times, default=None)

    def _expiries(self, sim: Simulation) -> dict[str, int]:
        """Each NodePool node's expiry: its creation plus its NodePool's expireAfter. A node
        without a creationTimestamp (an initial node whose manifest has none) counts from the
        clock's start. Upstream: the expiration controller (NodeClaim.CreationTimestamp +
        expireAfter)"""
        pools = self.model.pools
        out = {}
        for info in sim.cluster.list():
            pool = pools.get(info.node.metadata.labels.get(NODEPOOL_LABEL, ""))
            if pool is None or pool.expire_after == math.inf:
                continue
            created = parse_time(info.node.metadata.creation_timestamp)
            since = 0 if created is None else created - sim.epoch
            out[info.name] = since + nanos(pool.expire_after)
        return out

    def _signature(self, sim: Simulation, pending: Sequence[Pod]) -> tuple[object, ...]:
        # Karpenter does not see the cloud's stock-outs, only its own cache of them.
        cached = self.model.unavailable.active(sim.now / 1e9)
        return (tuple(p.key for p in pending), sim.node_version, cached)

    def _create(self, sim: Simulation, instance_type: str, zone: str, capacity: str) -> str | None:
        """The cloud's answer to a launch: the stock-out that refuses it, if any."""
        stockout = sim.cloud.stocked_out(zone, instance_type, sim.now)
        return None if stockout is None else f"stockout, {stockout.text()}"

    def tick(self, sim: Simulation, where: str) -> None:
        """The nodeclaims expired by now are deleted; the model's pass, if due; then the
        terminations' looks and evictions due now, those just begun included."""
        self._expire(sim, where)
        if sim.now >= self._model_due(sim) and sim.now > self._last_model:
            self._last_model = sim.now
            self._model_pass(sim, where)
        self._disrupt_ready(sim, where)
        for name in sorted(self.terminations):
            t = self.terminations[name]
            if t.next_due() <= sim.now:
                self._terminate(sim, t)

    def _model_pass(self, sim: Simulation, where: str) -> None:
        self.batch_started = None
        model = self.model
        model.daemonsets = daemonsets_of(sim)
        pending = pending_pods(sim)
        result = model.run_once(
            sim.now / 1e9,
            sim.cluster,
            pending,
            not_initialized=list(sim.cloud.starting),
            create=lambda it, zone, ct: self._create(sim, it, zone, ct),
            pdbs=sim.scheduler.pdbs,
        )
        for failure in result.launch_failures:
            zone = failure.tried[0][1] if failure.tried else ""
            self._record(sim, "launchFailed", failure.nodepool, zone, failure.name, failure.reason)
        added = []
        for launch in result.launched:
            sim.add_node(launch.node, where)
            added.append(launch.name)
            self._record(
                sim,
                "add",
                launch.nodepool,
                launch.zone,
                launch.name,
                f"launched {launch.name} ({launch.instance_type} {launch.capacity_type} in "
                f"{launch.zone}, ${launch.price:.4f}/h) from NodePool {launch.nodepool}: "
                f"{launch.reason}{self._ready_text(sim)}",
            )
        self._start(sim, added, where)
        fresh = {k: v for k, v in result.pod_errors.items() if self._errors.get(k) != v}
        by_reason: dict[str, list[str]] = {}
        for pod, why in fresh.items():
            by_reason.setdefault(why, []).append(pod)
        for why, pods in by_reason.items():
            self._record(
                sim, "noScaleUp", "", "", "", f"could not schedule {pods_text(pods)}: {why}"
            )
        self._errors = dict(result.pod_errors)
        for d in result.disruptions:
            # Upstream: the candidates are tainted at once; with a replacement, they are
            # drained only once it has initialized.
            for name in d.nodes:
                set_taints(sim, sim.node(name, where), [KARPENTER_DISRUPTED], [])
            for r in d.replacements:
                sim.add_node(r.node, where)
                self._start(sim, [r.name], where)
                self._record(
                    sim,
                    "add",
                    r.nodepool,
                    r.zone,
                    r.name,
                    f"launched replacement {r.name} ({r.instance_type} {r.capacity_type} "
                    f"in {r.zone}) for {', '.join(d.nodes)}{self._ready_text(sim)}",
                )
            self.awaiting.append(d)
        for command, kind in result.rejected:
            for node in command.candidates:
                self._record(
                    sim,
                    "rejected",
                    node.pool.name,
                    node.node.metadata.labels.get(LABEL_TOPOLOGY_ZONE, ""),
                    node.name,
                    f"{command.method}: {rejected_message(command, node, kind)}",
                )
        # A failed nodeclaim is deleted and its pods trigger a new batch (upstream: the
        # provisioner is triggered again by the nodeclaim's deletion).
        placed = [*pending_pods(sim), *self.model.deleting_pods(sim.cluster)]
        self._seen = () if result.launch_failures else self._signature(sim, placed)

    def _disrupt_ready(self, sim: Simulation, where: str) -> None:
        """The candidates whose replacement is up (or that have none): their nodeclaims are
        deleted, their nodes' terminations begin. Upstream: Queue.waitOrTerminate"""
        waiting = []
        for d in self.awaiting:
            if any(
                r.name in sim.cloud.starting or sim.cluster.get(r.name) is None
                for r in d.replacements
            ):
                waiting.append(d)
                continue
            for name in d.nodes:
                self._begin_termination(sim, name, d.message, where)
        self.awaiting = waiting

    def _expire(self, sim: Simulation, where: str) -> None:
        """Delete the nodeclaims whose expiry has come.
        Upstream: the expiration controller's Reconcile (nodeclaim/expiration/controller.go)"""
        if self._next_expiry(sim) is None:
            return
        pools = self.model.pools
        for name in sorted(self._expiry):
            if self._expiry[name] > sim.now or name in self.terminations:
                continue
            if sim.cluster.get(name) is None:
                continue
            node = sim.node(name, where)
            pool = pools[node.metadata.labels[NODEPOOL_LABEL]]
            zone = node.metadata.labels.get(LABEL_TOPOLOGY_ZONE, "")
            after = format_duration(nanos(pool.expire_after))
            self._record(
                sim,
                "expired",
                pool.name,
                zone,
                name,
                f"{name} expired (expireAfter {after} of NodePool {pool.name}): its nodeclaim "
                "is deleted",
            )
            self._begin_termination(sim, name, f"expired after {after}", where)

    def delete_node(self, sim: Simulation, name: str, where: str) -> bool:
        """A node of a NodePool carries Karpenter's termination finalizer (registration adds
        it): its deletion deletes its nodeclaim and the node is drained before it goes.
        Upstream: the termination controller's finalize (node/termination/controller.go)"""
        pool = sim.node(name, where).metadata.labels.get(NODEPOOL_LABEL, "")
        if pool not in self.model.pools:
            return False
        self._begin_termination(sim, name, "deleted by the timeline (removeNode)", where)
        return True

    def _begin_termination(self, sim: Simulation, name: str, message: str, where: str) -> None:
        """The nodeclaim is deleted: the node is tainted (if the disruption has not already)
        and counts as deleting for the model until it is gone. A node already terminating
        (expired, or deleted by a step, while its disruption waited) goes on as it was."""
        if name in self.terminations or sim.cluster.get(name) is None:
            return
        node = sim.node(name, where)
        if KARPENTER_DISRUPTED not in node.spec.taints:
            set_taints(sim, node, [KARPENTER_DISRUPTED], [])
        labels = node.metadata.labels
        pool = self.model.pools.get(labels.get(NODEPOOL_LABEL, ""))
        grace = pool.termination_grace_period if pool is not None else None
        self.model.disrupting.add(name)
        self.terminations[name] = start_termination(
            sim,
            name,
            labels.get(NODEPOOL_LABEL, ""),
            labels.get(LABEL_TOPOLOGY_ZONE, ""),
            message,
            grace,
        )

    def _terminate(self, sim: Simulation, t: Termination) -> None:
        """One turn of the node's termination now: its removal when due, else the
        controller's look (when due) and the eviction queue's work."""
        if sim.cluster.get(t.node) is None:
            # Another step deleted the Node meanwhile: nothing is left to terminate.
            del self.terminations[t.node]
            return
        if t.removal is not None:
            del self.terminations[t.node]
            sim.remove_node(t.node)
            self.model.disrupting.discard(t.node)
            self._record(sim, "remove", t.pool, t.zone, t.node, f"removed {t.node}: {t.message}")
            return
        if t.next_look <= sim.now:
            look(sim, t)
        work_queue(sim, t, self.model.started, do_not_disrupt_active)
        refusals = tuple(sorted(t.refusals.items()))
        if refusals and refusals != t.reported:
            self._record(
                sim,
                "draining",
                t.pool,
                t.zone,
                t.node,
                f"draining {t.node}: {refusal_text(t)}; retried"
                + (
                    f", its pods deleted by {format_duration(t.deadline)} (terminationGracePeriod)"
                    if t.deadline is not None
                    else ""
                ),
            )
        t.reported = refusals


def _zones(spec: KarpenterSpec, sim: Simulation) -> tuple[str, ...]:
    """The zones the built-in catalogue offers: those the NodePools name, else the
    cluster's, else the catalogue's own defaults."""
    named: set[str] = set()
    for pool in spec.pools:
        for r in pool.requirements:
            if r.key == LABEL_TOPOLOGY_ZONE and not r.complement:
                named.update(r.values)
    if not named:
        named = {
            z
            for info in sim.cluster.list()
            if (z := info.node.metadata.labels.get(LABEL_TOPOLOGY_ZONE))
        }
        for group in sim.scenario.groups.values():
            named.update(group.zones)
    return tuple(sorted(named)) or DEFAULT_ZONES


__all__ = ["KarpenterController"]
