"""The taints cluster-autoscaler treats specially, and the taint config its flags make.

A startup taint (a key given by ``--startup-taint`` or its deprecated alias ``--ignore-taint``,
or one starting with ``ignore-taint.cluster-autoscaler.kubernetes.io/``,
``startup-taint.cluster-autoscaler.kubernetes.io/`` or a ``--startup-taint-prefix``) makes its
node count as not ready, as if still starting. A status taint (a ``--status-taint`` key, or one
starting with ``status-taint.cluster-autoscaler.kubernetes.io/``) does not. Both are dropped
from template nodes, with the autoscaler's own taints (ToBeDeleted, DeletionCandidate) and the
node-condition taints: they are transient, so a new node is expected without them.

Upstream: utils/taints/taints.go (kubernetes-sigs/cluster-autoscaler 33c3f97)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from topospread.api.types import Taint

TO_BE_DELETED_TAINT: Final = "ToBeDeletedByClusterAutoscaler"
DELETION_CANDIDATE_TAINT_KEY: Final = "DeletionCandidateOfClusterAutoscaler"
IGNORE_TAINT_PREFIX: Final = "ignore-taint.cluster-autoscaler.kubernetes.io/"
STARTUP_TAINT_PREFIX: Final = "startup-taint.cluster-autoscaler.kubernetes.io/"
STATUS_TAINT_PREFIX: Final = "status-taint.cluster-autoscaler.kubernetes.io/"

# Upstream: NodeConditionTaints, the taints that stand for a node condition.
NODE_CONDITION_TAINTS: Final = frozenset(
    {
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/unschedulable",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/network-unavailable",
        "node.kubernetes.io/pid-pressure",
        "node.cloudprovider.kubernetes.io/uninitialized",
        "node.cloudprovider.kubernetes.io/shutdown",
        "cloud.google.com/impending-node-termination",
        "NodeWithImpairedVolumes",
    }
)
_AUTOSCALER_TAINTS: Final = frozenset({TO_BE_DELETED_TAINT, DELETION_CANDIDATE_TAINT_KEY})


@dataclass(frozen=True, slots=True)
class TaintConfig:
    """The startup and status taints: explicit keys and key prefixes.

    Upstream: taints.TaintConfig (its scaleFromUnschedulable is not modelled)
    """

    startup_taints: frozenset[str] = frozenset()
    status_taints: frozenset[str] = frozenset()
    startup_taint_prefixes: tuple[str, ...] = (IGNORE_TAINT_PREFIX, STARTUP_TAINT_PREFIX)
    status_taint_prefixes: tuple[str, ...] = (STATUS_TAINT_PREFIX,)

    def is_startup_taint(self, key: str) -> bool:
        """Upstream: TaintConfig.IsStartupTaint"""
        return key in self.startup_taints or key.startswith(self.startup_taint_prefixes)

    def is_status_taint(self, key: str) -> bool:
        """Upstream: TaintConfig.IsStatusTaint"""
        return key in self.status_taints or key.startswith(self.status_taint_prefixes)


def new_taint_config(
    startup_taints: Iterable[str] = (),
    status_taints: Iterable[str] = (),
    startup_taint_prefixes: Iterable[str] = (),
) -> TaintConfig:
    """The config the flags make: their keys, and the built-in prefixes (the ignore-taint and
    startup-taint ones, then ``--startup-taint-prefix``'s; the status-taint one).

    Upstream: taints.NewTaintConfig (utils/taints/taints.go)
    """
    return TaintConfig(
        startup_taints=frozenset(startup_taints),
        status_taints=frozenset(status_taints),
        startup_taint_prefixes=(IGNORE_TAINT_PREFIX, STARTUP_TAINT_PREFIX, *startup_taint_prefixes),
        status_taint_prefixes=(STATUS_TAINT_PREFIX,),
    )


# The config without any taint flag.
DEFAULT_TAINT_CONFIG: Final = new_taint_config()


def sanitize_taints(
    taints: Sequence[Taint], taint_config: TaintConfig = DEFAULT_TAINT_CONFIG
) -> list[Taint]:
    """The taints a new node of the group keeps: the autoscaler's own, the node-condition
    taints and the startup and status taints are transient and dropped.

    Upstream: taints.SanitizeTaints (utils/taints/taints.go)
    """
    return [
        t
        for t in taints
        if t.key not in _AUTOSCALER_TAINTS
        and t.key not in NODE_CONDITION_TAINTS
        and not taint_config.is_startup_taint(t.key)
        and not taint_config.is_status_taint(t.key)
    ]


__all__ = [
    "DEFAULT_TAINT_CONFIG",
    "DELETION_CANDIDATE_TAINT_KEY",
    "IGNORE_TAINT_PREFIX",
    "NODE_CONDITION_TAINTS",
    "STARTUP_TAINT_PREFIX",
    "STATUS_TAINT_PREFIX",
    "TO_BE_DELETED_TAINT",
    "TaintConfig",
    "new_taint_config",
    "sanitize_taints",
]
