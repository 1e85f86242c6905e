"""A pool of worker processes that run adjudications off the event loop, each under a time limit.

A job that runs past its time limit has its worker process killed and replaced,
so one hostile or huge request cannot hold a worker (or the server) for longer
than the limit. Each worker also has a memory ceiling, and the interpreter's own
bounds (steps, loops, depth, dice, odds paths) apply inside it as everywhere.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
import time

from .jobs import Workspace, run_job


class Busy(Exception):
    """Every worker stayed busy for longer than the time limit."""


class TimeLimit(Exception):
    """A job ran past the time limit (its worker was replaced)."""


class WorkerCrashed(Exception):
    """A worker process died (for example at its memory ceiling)."""


def _serve(conn, roots: list[str], upload_dir: str, memory_mb: int) -> None:
    if memory_mb:
        try:
            import resource
            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError):
            pass
    ws = Workspace(roots, upload_dir)
    conn.send(("ready", None))
    while True:
        try:
            name, params = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        try:
            conn.send(run_job(ws, name, params))
        except MemoryError:
            conn.send(("error", {"kind": "limit", "text": "limit reached: the request needs more memory than "
                                 "a worker may use", "diagnostics": []}))


class Worker:
    def __init__(self, ctx, roots, upload_dir, memory_mb):
        self.args = (roots, upload_dir, memory_mb)
        self.ctx = ctx
        self.start()

    def start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.process = self.ctx.Process(target=_serve, args=(child,) + self.args, daemon=True)
        self.process.start()
        child.close()
        self.ready = False

    def wait_ready(self, timeout: float) -> None:
        if not self.ready:
            if not self.conn.poll(timeout):
                raise TimeLimit("a worker took too long to start")
            self.conn.recv()
            self.ready = True

    def call(self, name: str, params: dict, timeout: float):
        """Run one job; raise TimeLimit (worker replaced) or WorkerCrashed (worker replaced)."""
        try:
            self.wait_ready(max(timeout, 30))
            self.conn.send((name, params))
            if not self.conn.poll(timeout):
                self.restart()
                raise TimeLimit(f"the request took longer than the time limit ({timeout:g} s)")
            return self.conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
            self.restart()
            raise WorkerCrashed("the worker stopped (it may have reached its memory ceiling)") from None

    def restart(self) -> None:
        self.stop()
        self.start()

    def stop(self) -> None:
        try:
            self.process.kill()
            self.process.join(5)
        except Exception:
            pass
        self.conn.close()


class WorkerPool:
    def __init__(self, roots: list[str], upload_dir: str, size: int = 2, time_limit: float = 10.0,
                 memory_mb: int = 2048):
        ctx = multiprocessing.get_context("spawn")
        self.time_limit = time_limit
        self.workers = [Worker(ctx, [str(r) for r in roots], upload_dir, memory_mb) for _ in range(size)]
        self.idle: asyncio.Queue | None = None
        self.lock = threading.Lock()

    def _queue(self) -> asyncio.Queue:
        if self.idle is None:
            self.idle = asyncio.Queue()
            for w in self.workers:
                self.idle.put_nowait(w)
        return self.idle

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        for w in self.workers:
            w.wait_ready(max(1, deadline - time.monotonic()))

    async def run(self, name: str, params: dict):
        import anyio
        idle = self._queue()
        try:
            worker = await asyncio.wait_for(idle.get(), self.time_limit)
        except asyncio.TimeoutError:
            raise Busy("the server is busy: every worker stayed busy for the whole time limit; "
                       "try again in a moment") from None
        try:
            return await anyio.to_thread.run_sync(worker.call, name, params, self.time_limit)
        finally:
            idle.put_nowait(worker)

    def close(self) -> None:
        for w in self.workers:
            w.stop()
