"""What plugins see of the scheduler: the framework handle (Upstream: framework.Handle in
pkg/scheduler/framework/interface.go, implemented by frameworkImpl in runtime/framework.go) and
the cluster writes preemption makes through it.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from topospread.api.types import Pod, PodDisruptionBudget
from topospread.framework.features import Features
from topospread.framework.interface import ObjectLister, SharedLister
from topospread.framework.nominator import Nominator

if TYPE_CHECKING:
    from topospread.framework.runtime import Framework


class ClusterClient(Protocol):
    """The writes preemption makes to the cluster (Upstream: the handle's ClientSet).

    The simulator's scheduler implements it; without one, preemption only decides.
    """

    def delete_pod(self, victim: Pod, preemptor: Pod, node_name: str) -> None:
        """Evict ``victim`` from ``node_name`` to make room for ``preemptor``."""

    def clear_nominated_node_name(self, pod: Pod) -> None:
        """Remove ``pod``'s nomination (its ``status.nominatedNodeName``)."""


class FrameworkHandle:
    """What plugins see: the snapshot of the current cycle, owner objects, feature gates.

    Preemption also reaches, through it, the framework itself (``framework``), the pods
    nominated to nodes (``nominator``), the scheduler's seeded random source (``rng``), the
    PodDisruptionBudgets (``pdbs``) and the cluster writes it makes (``client``).
    """

    __slots__ = (
        "_features",
        "_objects",
        "_snapshot",
        "client",
        "framework",
        "nominator",
        "pdbs",
        "rng",
    )

    def __init__(
        self,
        snapshot: SharedLister,
        objects: ObjectLister,
        features: Features,
        *,
        nominator: Nominator | None = None,
        rng: random.Random | None = None,
        pdbs: Iterable[PodDisruptionBudget] = (),
        client: ClusterClient | None = None,
    ) -> None:
        self._snapshot = snapshot
        self._objects = objects
        self._features = features
        self.framework: Framework | None = None
        self.nominator = nominator if nominator is not None else Nominator()
        self.rng = rng if rng is not None else random.Random(0)
        self.pdbs: list[PodDisruptionBudget] = list(pdbs)
        self.client = client

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        """Upstream: PodNominator.NominatedPodsForNode (through the framework handle)."""
        return self.nominator.nominated_pods_for_node(node_name)

    def pod_disruption_budgets(self) -> list[PodDisruptionBudget]:
        """Upstream: the PodDisruptionBudget lister's List(labels.Everything())."""
        return self.pdbs

    def snapshot_shared_lister(self) -> SharedLister:
        return self._snapshot

    def set_snapshot(self, snapshot: SharedLister) -> None:
        self._snapshot = snapshot

    def object_lister(self) -> ObjectLister:
        return self._objects

    @property
    def features(self) -> Features:
        return self._features
