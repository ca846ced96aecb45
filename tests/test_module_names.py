"""No two modules under src/topospread share a basename, so a traceback, a grep or a review
comment that names a file names one file. The rule and its exceptions:

- ``__init__.py``.
- Packages that mirror an upstream project folder by folder keep upstream's per-folder file
  names, the folder being part of the name as it is upstream (CONVENTIONS.md rule 1):
  ``plugins/`` (kube-scheduler's framework/plugins: every plugin's ``plugin.py``,
  ``common.py``, ``filtering.py``, ``scoring.py``, and ``helper/``) and ``autoscaler/``
  (kubernetes/autoscaler's cluster-autoscaler and the like, one package per project), and the
  fast path's ``simulator/fastpath/kernels/`` (one module per upstream plugin, named after it,
  beside the kernels' own ``base.py``). Their files are not counted.
- One command's modules across the command pipeline: a basename may appear once in each of
  ``analysis/`` (what the command computes), ``render/`` (how its report prints) and ``cli/``
  (its declaration), e.g. ``analysis/check.py``, ``render/check.py``, ``cli/check.py``.
- Named families, each listed here with its reason, so that a new one is a decision:
  ``types.py`` and ``validation.py`` mirror different upstream files of that name
  (k8s.io/api's core types in ``api/``, the framework's types.go in ``framework/``;
  pkg/apis/core/validation in ``api/``, apimachinery's pkg/util/validation in ``util/``);
  ``storage.py`` is the storage objects at each layer: their types (``api/``), the listers'
  protocol the volume plugins see (``framework/``) and the cluster's storage state
  (``cluster/``).
Anything else that shares a basename (two ``timeline.py`` in different layers, a
``snapshot.py`` beside the scheduler's snapshot) must be renamed."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Final

SRC: Final = Path(__file__).resolve().parents[1] / "src" / "topospread"

MIRRORS: Final = ("plugins/", "autoscaler/", "simulator/fastpath/kernels/")
COMMAND_LAYERS: Final = frozenset({"analysis", "render", "cli"})
FAMILIES: Final = {
    "types": frozenset({"api/types.py", "framework/types.py"}),
    "validation": frozenset({"api/validation.py", "util/validation.py"}),
    "storage": frozenset({"api/storage.py", "framework/storage.py", "cluster/storage.py"}),
}


def modules_by_basename() -> dict[str, list[str]]:
    """Every counted module's path (relative to the package), by basename."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if not rel.startswith(MIRRORS):
            found[path.stem].append(rel)
    return found


def allowed(stem: str, paths: list[str]) -> bool:
    if stem == "__init__" or len(paths) == 1:
        return True
    if stem in FAMILIES:
        return set(paths) == FAMILIES[stem]
    layers = [p.split("/")[0] for p in paths]
    return all(p.count("/") == 1 for p in paths) and (
        set(layers) <= COMMAND_LAYERS and len(set(layers)) == len(layers)
    )


def test_no_two_modules_share_a_basename_outside_the_stated_exceptions() -> None:
    shared = {stem: paths for stem, paths in modules_by_basename().items() if len(paths) > 1}
    assert "check" in shared, "the scan found no command pipeline: is SRC right?"
    wrong = {stem: paths for stem, paths in shared.items() if not allowed(stem, paths)}
    assert wrong == {}


def test_the_rule_rejects_a_name_shared_across_other_layers() -> None:
    assert not allowed("snapshot", ["cluster/snapshot.py", "simulator/snapshot.py"])
    assert not allowed("timeline", ["analysis/timeline.py", "simulator/timeline.py"])
    assert not allowed("check", ["analysis/check.py", "analysis/sub/check.py"])
    assert not allowed("types", ["api/types.py", "framework/types.py", "cluster/types.py"])
    assert allowed("check", ["analysis/check.py", "render/check.py", "cli/check.py"])
