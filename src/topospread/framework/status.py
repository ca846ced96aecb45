"""Status and Code: what every plugin returns, named and ordered as upstream names them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final


class Code(IntEnum):
    """framework.Code, with upstream's numeric order (it matters when statuses are merged)."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6


@dataclass(frozen=True, slots=True)
class Status:
    """The result of running a plugin: a code, the reasons shown to users, and who said it."""

    code: Code = Code.Success
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    error: str | None = None

    @property
    def is_success(self) -> bool:
        return self.code is Code.Success

    @property
    def is_skip(self) -> bool:
        return self.code is Code.Skip

    @property
    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending (Upstream: Status.IsRejected)."""
        return self.code in (
            Code.Unschedulable,
            Code.UnschedulableAndUnresolvable,
            Code.Pending,
        )

    @property
    def message(self) -> str:
        """The reasons joined with ", " (Upstream: Status.Message)."""
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, self.reasons, plugin, self.error)


SUCCESS: Final = Status()
SKIP: Final = Status(Code.Skip)


def format_reasons(status: Status) -> list[str]:
    """A rejection's reasons as reports show them, each after the plugin's name."""
    return [f"{status.plugin}: {r}" if status.plugin else r for r in status.reasons]


def new_status(code: Code, *reasons: str) -> Status:
    """Upstream: NewStatus (framework/interface.go)."""
    return Status(code, tuple(reasons))


def as_status(err: BaseException | str) -> Status:
    """An Error status carrying the error's text (Upstream: AsStatus)."""
    text = str(err)
    return Status(Code.Error, (text,), error=text)
