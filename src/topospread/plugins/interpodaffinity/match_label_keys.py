"""matchLabelKeys/mismatchLabelKeys of pod (anti-)affinity: the API server's job, not the plugin's.

The v1.35 scheduler never reads ``matchLabelKeys`` or ``mismatchLabelKeys`` of a
PodAffinityTerm: its parsed AffinityTerm (pkg/scheduler/framework/types.go) has no such fields,
and InterPodAffinity matches the ``labelSelector`` alone. Since the feature was introduced
(KEP-3633: alpha v1.29, beta v1.31, GA in v1.33 with ``MatchLabelKeysInPodAffinity`` locked on)
kube-apiserver rewrites the pod when it is created (podStrategy.PrepareForCreate ->
mutatePodAffinity, pkg/registry/core/pod/strategy.go), before validating it:

- for every required and preferred term of both podAffinity and podAntiAffinity that has a
  non-empty ``matchLabelKeys`` or ``mismatchLabelKeys`` and a non-nil ``labelSelector`` (a nil
  selector selects nothing and is left alone);
- for each key of ``matchLabelKeys``, in order, that is among the pod's labels, it appends
  ``{key, operator: In, values: [the pod's value]}`` to ``labelSelector.matchExpressions``; then
  for each such key of ``mismatchLabelKeys`` it appends ``{key, operator: NotIn, values: [...]}``;
  keys the pod lacks are skipped;
- the key lists themselves are kept; pods are never rewritten again on update.

The merge is implemented once, in :mod:`topospread.api.admission` (which the scenario loader
applies to every submitted pod); this module names it for the plugin's users.
"""

from __future__ import annotations

from topospread.api.admission import apply_pod_affinity_label_keys_merge
from topospread.api.types import Pod


def apply_affinity_match_label_keys(pod: Pod) -> Pod:
    """The pod as kube-apiserver stores it on create, label keys merged into its selectors.

    Returns ``pod`` itself when nothing changes. Unlike upstream it is idempotent: a term whose
    ``matchExpressions`` already end with the requirements the merge would append (a pod read
    back from a cluster) is left alone, where upstream would append them again (and then reject
    the pod in validation).
    Upstream: mutatePodAffinity (pkg/registry/core/pod/strategy.go, v1.35)
    """
    return apply_pod_affinity_label_keys_merge(pod)
