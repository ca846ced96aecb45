"""The workload controllers the simulator drives, as pure functions of a workload object, the
pods (and nodes) it sees, a seeded ``random.Random`` and an optional clock: each sync returns
the pods (and, for a Deployment, the ReplicaSets) the controller would create, delete or
update, in upstream's order. Upstream: kube-controller-manager v1.35.
"""

from topospread.simulator.controllers.common import PodActions
from topospread.simulator.controllers.daemonset import sync_daemon_set
from topospread.simulator.controllers.deployment import (
    DeploymentStep,
    step_deployment,
    sync_deployment,
)
from topospread.simulator.controllers.deployment_sync import DeploymentSync
from topospread.simulator.controllers.job import sync_job
from topospread.simulator.controllers.replicaset import sync_replica_set
from topospread.simulator.controllers.statefulset import sync_stateful_set

__all__ = [
    "DeploymentStep",
    "DeploymentSync",
    "PodActions",
    "step_deployment",
    "sync_daemon_set",
    "sync_deployment",
    "sync_job",
    "sync_replica_set",
    "sync_stateful_set",
]
