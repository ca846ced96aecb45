"""kube-controller-manager's disruption controller, acting on a simulation: the budgets'
statuses recomputed from the pods (simulator/controllers/disruption.py), published to the
scheduler's preemption, and the eviction subresource's budget checks for a drain pass
(simulator/eviction.py). The budgets themselves live among the simulation's lookup objects
(``Simulation.lookups``), which snapshots carry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from topospread.api.types import Deployment, Pod, PodDisruptionBudget, ReplicaSet, StatefulSet
from topospread.simulator.api_server import same_object
from topospread.simulator.controllers.common import get_controller_of
from topospread.simulator.controllers.disruption import sync_budget
from topospread.simulator.eviction import Evictions

if TYPE_CHECKING:
    from topospread.simulator.simulation import Simulation


class DisruptionController:
    """The disruption controller of one simulation (``Simulation.disruption``).

    Upstream: DisruptionController (pkg/controller/disruption/disruption.go, v1.35)
    """

    __slots__ = ("sim",)

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim

    def scale_of(self, pod: Pod) -> tuple[str, int] | None:
        """The controller whose scale a budget counts for the pod (a Deployment for its
        ReplicaSets' pods) and that scale; None when it is not in the simulation (the
        disruption controller turns away controllers without a scale, DaemonSets and Jobs,
        before it asks).

        Upstream: the disruption controller's finders (disruption.go, v1.35)
        """
        sim = self.sim
        ref = get_controller_of(pod.metadata)
        if ref is None:
            return None
        ns = pod.metadata.namespace
        if ref.kind == "ReplicationController":
            rc = sim.cluster.objects.replication_controller(ns, ref.name)
            if rc is None:
                return None
            replicas = rc.spec.replicas
            return f"ReplicationController/{ns}/{ref.name}", 1 if replicas is None else replicas
        key = sim.owner_of(pod)
        owner = sim.workloads.get(key) if key is not None else None
        if key is None or not isinstance(owner, (Deployment, ReplicaSet, StatefulSet)):
            return None
        replicas = owner.spec.replicas
        return "/".join(key), 1 if replicas is None else replicas

    def budgets(self) -> list[PodDisruptionBudget]:
        sim = self.sim
        return [o for o in sim.lookups if isinstance(o, PodDisruptionBudget)]

    def publish(self) -> None:
        sim = self.sim
        # Preemption reads the budgets from the scheduler's list: keep it in place.
        sim.scheduler.pdbs[:] = self.budgets()

    def write(self, pdb: PodDisruptionBudget) -> None:
        """A budget's status update (the controller's, or an eviction's)."""
        sim = self.sim
        sim.lookups = [pdb if same_object(o, pdb) else o for o in sim.lookups]
        self.publish()

    def sync(self) -> None:
        """The disruption controller: every budget's status recomputed from the pods now
        (simulator/controllers/disruption.py). In a cluster it reacts to each pod change on
        its own; here it runs in every round after the workload controllers, after each
        preemption, and when a settle ends, so whatever reads a status (preemption, the
        eviction subresource) reads it caught up, except within one controller round."""
        sim = self.sim
        budgets = self.budgets()
        if not budgets:
            return
        for pdb in budgets:
            synced = sync_budget(pdb, sim.pods.in_namespace(pdb.metadata.namespace), self.scale_of)
            if synced is not pdb:
                self.write(synced)

    def evictions(self) -> Evictions:
        """The eviction subresource for one drain pass. kubectl waits for each evicted pod to
        be deleted before it goes on, and the disruption controller catches up meanwhile: the
        budgets are synced first, then each eviction of the pass takes from them."""
        self.sync()
        return Evictions(self.budgets(), self.write)


__all__ = ["DisruptionController"]
