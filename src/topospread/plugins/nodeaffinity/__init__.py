"""plugins/nodeaffinity: NodeAffinity and its args."""

from topospread.plugins.nodeaffinity.args import (
    NodeAffinityArgs,
    decode_node_affinity_args,
    set_defaults_node_affinity_args,
    validate_node_affinity_args,
)
from topospread.plugins.nodeaffinity.node_affinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NAME,
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    NodeAffinity,
    PreFilterState,
    PreScoreState,
    get_pod_preferred_node_affinity,
    new,
    node_names_from_match_fields,
)
from topospread.plugins.nodeaffinity.selectors import (
    NodeSelectorParseError,
    PreferredSchedulingTerms,
    new_node_selector,
    new_preferred_scheduling_terms,
)

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "NodeAffinity",
    "NodeAffinityArgs",
    "NodeSelectorParseError",
    "PreFilterState",
    "PreScoreState",
    "PreferredSchedulingTerms",
    "decode_node_affinity_args",
    "get_pod_preferred_node_affinity",
    "new",
    "new_node_selector",
    "new_preferred_scheduling_terms",
    "node_names_from_match_fields",
    "set_defaults_node_affinity_args",
    "validate_node_affinity_args",
]
