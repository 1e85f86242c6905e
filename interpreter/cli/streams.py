"""Unbuffered standard output and error that never drop what the command printed.

On a pipe or a terminal, a ``write`` the kernel interrupts part-way (the process stopped and continued: Ctrl-Z
and ``fg``, a debugger or profiler pausing it) writes only some of its bytes. Buffered streams write the rest;
but with Python unbuffered (``PYTHONUNBUFFERED=1`` or ``python -u``, common in containers and CI) the text layer
sits right on the file and Python 3.11 drops the rest without an error: ``umpire resolve --json | jq``, stopped
and resumed, gave its reader 64 KiB of a 265 KiB result and still ended with exit code 0. There, each stream is
rebuilt over a writer that writes again until every byte is out (or a real error is raised), still unbuffered,
with the stream's own encoding, error handling and line buffering.
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
    """``stream`` rebuilt over _WholeWrites when it is an unbuffered text layer right on a file; else itself
    (buffered: its buffer writes the rest of a part-way write; none, or replaced by a caller such as a test's
    capture, or a console that is no plain file, such as Windows's: left as it is)."""
    if not isinstance(getattr(stream, "buffer", None), io.FileIO):
        return stream
    try:
        fd = stream.fileno()
        stream.flush()
    except (OSError, ValueError):
        return stream
    return io.TextIOWrapper(_WholeWrites(fd), encoding=stream.encoding, errors=stream.errors,
                            line_buffering=stream.line_buffering, write_through=True)


def keep_every_byte() -> None:
    """Make sys.stdout and sys.stderr write every byte (the ``umpire`` program does this once at start)."""
    sys.stdout = _whole(sys.stdout)
    sys.stderr = _whole(sys.stderr)
