"""plugins/defaultpreemption: DefaultPreemption."""

from topospread.plugins.defaultpreemption.plugin import (
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    ERR_NO_VICTIMS,
    ERR_PREEMPTION_POLICY_NEVER,
    ERR_TERMINATING_ON_NOMINATED_NODE,
    MSG_PREFIX,
    NAME,
    DefaultPreemption,
    DefaultPreemptionArgs,
    filter_pods_with_pdb_violation,
    new,
    resolve_default_preemption_args,
    validate_default_preemption_args,
)

__all__ = [
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "ERR_NO_VICTIMS",
    "ERR_PREEMPTION_POLICY_NEVER",
    "ERR_TERMINATING_ON_NOMINATED_NODE",
    "MSG_PREFIX",
    "NAME",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "filter_pods_with_pdb_violation",
    "new",
    "resolve_default_preemption_args",
    "validate_default_preemption_args",
]
