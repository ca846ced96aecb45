"""Every module of topospread imported before any test runs.

NOTE: Hypothesis draws, now and then, a constant found in the source of the local modules
loaded so far (``hypothesis.internal.conjecture.providers._get_local_constants``: every
module of ``sys.modules`` outside site-packages and the tests), so a derandomized test drew
other examples depending on which modules the tests before it had imported: counts taken
over its examples varied with the tests selected and their order (2,390 VolumeBinding rows
alone, 298 after tests/test_bad_input.py). With every module imported first, the pool is the
same for every test in every selection, and a derandomized test draws the same examples
whatever else runs (tests/test_hypothesis_constants.py).
"""

from __future__ import annotations

import importlib
import pkgutil

import topospread


def import_every_module() -> list[str]:
    """Import each module of the package (not ``__main__``, which runs the command); their
    names, in order."""
    names = [
        info.name
        for info in pkgutil.walk_packages(topospread.__path__, "topospread.")
        if info.name.rpartition(".")[2] != "__main__"
    ]
    for name in names:
        importlib.import_module(name)
    return names


import_every_module()
