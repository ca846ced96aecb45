"""``python -m topospread``: the ``topospread`` command."""

from topospread.cli import console

console()
