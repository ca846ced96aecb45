"""``python -m topospread``: the ``topospread`` command."""

from topospread.console import topospread

topospread()
