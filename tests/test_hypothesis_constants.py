"""What conftest.py's import of every module is for: a derandomized Hypothesis test draws the
same examples whatever modules were imported before it, and without it does not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import import_every_module

_DRAW = """
import hashlib, json, sys
sys.path[:0] = [{tests!r}]
if {before!r}:
    import topospread.api.types  # noqa: F401  (some modules only, as a test file imports)
if {every!r}:
    from conftest import import_every_module
    import_every_module()
from hypothesis import given, settings, strategies as st
seen = []
@settings(max_examples=300, derandomize=True, database=None)
@given(st.integers(), st.text(max_size=8))
def draw(i, s):
    seen.append([i, s])
draw()
print(hashlib.sha256(json.dumps(seen).encode()).hexdigest())
"""


def _drawn(*, before: bool, every: bool) -> str:
    """A digest of the examples a derandomized test draws in a fresh interpreter that imported
    some modules first (``before``), then every module (``every``)."""
    script = _DRAW.format(tests=str(Path(__file__).parent), before=before, every=every)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()[-1]


def test_every_module_imported_first_draws_the_same_examples_whatever_came_before() -> None:
    assert _drawn(before=True, every=True) == _drawn(before=False, every=True)


def test_the_modules_imported_change_what_hypothesis_draws() -> None:
    """Why conftest.py imports them all: without it the draws depend on the imports."""
    assert _drawn(before=True, every=False) != _drawn(before=False, every=False)


def test_every_module_is_imported_but_main() -> None:
    names = import_every_module()
    assert "topospread.api.types" in names
    assert "topospread.simulator.fastpath.cycle" in names
    assert all(not n.endswith("__main__") for n in names)
    assert all(n in sys.modules for n in names)
