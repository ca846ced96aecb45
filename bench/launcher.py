"""Start a measured command through a small launcher, so that its peak RSS is its own.

On Linux a process's ``ru_maxrss`` does not start from zero: fork gives the child the parent's
resident pages, and exec keeps the larger of that and what the new program uses (the kernel
records the old image's high-water mark in the process's rusage before replacing it). The bench
grows to hundreds of MiB writing its inputs, so a command it forks itself would report at least
that much. The launcher is a bare interpreter (``-I -S``, about 9 MiB) exec'd from the bench: it
forks and execs the command, so the command starts from the launcher's few MiB, waits for it
with ``wait4`` and writes the command's own ``ru_maxrss`` (the command and the children it
reaped) to a pipe. The launcher's exit status is the command's: its exit code, or the signal
that ended it raised again. SIGINT and SIGTERM sent to the launcher are passed on to the
command; the bench kills the command itself (its pid is the pipe's first line).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import IO, Any, Final

# Writes the command's pid, then (once the command has exited) its ru_maxrss, one line each.
_LAUNCHER: Final = r"""
import os, signal, sys
fd = int(sys.argv[1])
cmd = sys.argv[2:]
os.set_inheritable(fd, False)  # the command must not hold the pipe open
pid = 0
def forward(sig, _frame):
    if pid:
        os.kill(pid, sig)
for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, forward)
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
os.write(fd, b"%d\n" % pid)
_, status, usage = os.wait4(pid, 0)
os.write(fd, b"%d\n" % usage.ru_maxrss)
os.close(fd)
if os.WIFSIGNALED(status):
    sig = os.WTERMSIG(status)
    if sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def maxrss_mib(maxrss: float) -> float:
    """``ru_maxrss`` in MiB: Linux reports KiB, macOS bytes."""
    return maxrss / 2**20 if sys.platform == "darwin" else maxrss / 2**10


@dataclass(frozen=True, slots=True)
class Exited:
    """How a launched command ended: its exit code (negative: the signal that ended it), the
    CPU seconds (user and system) of the command and the children it reaped, and its own peak
    RSS in MiB (the largest of the command and the children it reaped)."""

    code: int
    cpu: float
    rss_mib: float


@dataclass(slots=True)
class Launched:
    """A command started through the launcher; ``pid`` is the command's own."""

    proc: subprocess.Popen[bytes]
    pid: int
    _results: IO[bytes]

    def poll(self, *, block: bool = False) -> Exited | None:
        """The command's end, once it has ended (at once unless ``block``)."""
        pid, status, usage = os.wait4(self.proc.pid, 0 if block else os.WNOHANG)
        if not pid:
            return None
        self.proc.returncode = code = os.waitstatus_to_exitcode(status)
        line = self._results.readline()
        self._results.close()
        rss = maxrss_mib(float(line)) if line.strip() else 0.0
        return Exited(code, float(usage.ru_utime + usage.ru_stime), rss)

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the command (not to the launcher: SIGKILL cannot be passed on)."""
        # It may have just exited: poll() will say how.
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, sig)


def launch(cmd: list[str], stdout: Any) -> Launched:
    """Start ``cmd`` through the launcher, its stdout to ``stdout`` (a file or ``PIPE``)."""
    read, write = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(write), *cmd],
            stdout=stdout,
            pass_fds=(write,),
        )
    finally:
        os.close(write)
    results = os.fdopen(read, "rb")
    line = results.readline()
    if not line.strip():
        proc.wait()
        results.close()
        raise SystemExit(f"bench: the launcher failed to start {cmd[0]} (exit {proc.returncode})")
    return Launched(proc, int(line), results)
