"""Standard output and error that never drop what the command printed.

On a pipe or a terminal, a ``write`` the kernel interrupts part-way (the process stopped and continued: Ctrl-Z
and ``fg``, a debugger or profiler pausing it) writes only some of its bytes. Python 3.11's standard streams
then lose the rest without an error: ``umpire resolve --json | jq`` suspended and resumed received 64 KiB of a
265 KiB result, and the command still ended with exit code 0. Here each stream's bytes go through a writer that
writes again until every byte is out (or a real error is raised), under a text layer with the stream's own
encoding, error handling and line buffering.
"""

from __future__ import annotations

import io
import os
import sys


class _WholeWrites(io.RawIOBase):
    """A raw writer on a file descriptor whose ``write`` returns only once every byte is written. Closing it
    leaves the descriptor open (it is the process's own fd 1 or 2)."""

    def __init__(self, fd: int):
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            done += os.write(self._fd, view[done:])     # (an interrupted write that wrote nothing is retried by os)
        return done


def _whole(stream):
    """``stream`` rebuilt over _WholeWrites on its descriptor; the stream itself when it has none."""
    try:
        fd = stream.fileno() if hasattr(stream, "buffer") else None
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is None:
        return stream       # none (fd closed), or replaced by a caller (a test's capture): left as it is
    stream.flush()
    return io.TextIOWrapper(io.BufferedWriter(_WholeWrites(fd)), encoding=stream.encoding,
                            errors=stream.errors, line_buffering=stream.line_buffering,
                            write_through=getattr(stream, "write_through", False))


def keep_every_byte() -> None:
    """Make sys.stdout and sys.stderr write every byte (the ``umpire`` program does this once at start)."""
    sys.stdout = _whole(sys.stdout)
    sys.stderr = _whole(sys.stderr)
