"""plugins/interpodaffinity: InterPodAffinity, its args, and the API server's label-key merge."""

from topospread.plugins.interpodaffinity.args import (
    DEFAULT_HARD_POD_AFFINITY_WEIGHT,
    InterPodAffinityArgs,
    decode_inter_pod_affinity_args,
    resolve_inter_pod_affinity_args,
    set_defaults_inter_pod_affinity_args,
    validate_inter_pod_affinity_args,
)
from topospread.plugins.interpodaffinity.common import NAME
from topospread.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_STATE_KEY,
    PreFilterState,
)
from topospread.plugins.interpodaffinity.match_label_keys import (
    apply_affinity_match_label_keys,
)
from topospread.plugins.interpodaffinity.plugin import InterPodAffinity, new
from topospread.plugins.interpodaffinity.scoring import PRE_SCORE_STATE_KEY, PreScoreState
from topospread.plugins.interpodaffinity.terms import (
    AffinityTerm,
    PodAffinityTerms,
    WeightedAffinityTerm,
    parse_pod_affinity_terms,
)

__all__ = [
    "DEFAULT_HARD_POD_AFFINITY_WEIGHT",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "AffinityTerm",
    "InterPodAffinity",
    "InterPodAffinityArgs",
    "PodAffinityTerms",
    "PreFilterState",
    "PreScoreState",
    "WeightedAffinityTerm",
    "apply_affinity_match_label_keys",
    "decode_inter_pod_affinity_args",
    "new",
    "parse_pod_affinity_terms",
    "resolve_inter_pod_affinity_args",
    "set_defaults_inter_pod_affinity_args",
    "validate_inter_pod_affinity_args",
]
