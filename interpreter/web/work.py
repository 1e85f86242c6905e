"""A pool of worker processes that run adjudications off the event loop, each under a time limit.

A job that reaches its time limit is stopped inside its worker (a timer signal
ends it between two interpreter steps), so the worker stays warm for the next
request; only a job that does not stop within a few seconds more (stuck in one
long native operation) has its worker killed and replaced. Each worker also has
a memory ceiling, and the interpreter's own bounds (steps, loops, depth, dice,
odds paths) apply inside it as everywhere.

Heavy jobs (odds, simulations, diffs) may hold at most all workers but one, and
wait their turn round-robin by client, so a light request (a page, a resolve) is
never stuck behind two heavy ones and one client's burst cannot starve another.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
import threading
import time
from collections import deque

from .jobs import Workspace, run_job

HEAVY = frozenset({"odds", "simulate", "diff"})
"""Jobs whose cost can reach the time limit: they queue for the heavy slots (FairGate)."""
GRACE = 5.0
"""Seconds past the time limit a stopped job may take to come back before its worker is killed."""


class Busy(Exception):
    """Every worker stayed busy for longer than the time limit."""


class TimeLimit(Exception):
    """A job ran past the time limit (its worker was replaced)."""


class WorkerCrashed(Exception):
    """A worker process died (for example at its memory ceiling)."""


class _Deadline(BaseException):
    """Raised in a worker by its timer: a BaseException, so no ``except Exception`` in the job swallows it."""


def _on_alarm(signum, frame):
    raise _Deadline()


def _limit_reply(limit: float) -> tuple[str, dict]:
    return "limit", {"kind": "limit", "diagnostics": [],
                     "text": f"limit reached: the request took longer than the time limit ({limit:g} s); "
                             "start the workbench with `umpire serve --time-limit SECONDS` to allow longer"}


def _run_until(ws: Workspace, name: str, params, limit: float) -> tuple[str, dict]:
    """The job's answer, or a limit reply if it was still running after ``limit`` seconds."""
    timed = hasattr(signal, "setitimer")
    try:
        try:
            if timed:
                signal.setitimer(signal.ITIMER_REAL, limit)
            return run_job(ws, name, params)
        finally:
            if timed:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except _Deadline:
        return _limit_reply(limit)


def _serve(conn, roots: list[str], upload_dir: str, memory_mb: int) -> None:
    if memory_mb:
        try:
            import resource
            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError):
            pass
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, _on_alarm)
    ws = Workspace(roots, upload_dir)
    conn.send(("ready", None))
    while True:
        try:
            name, params, limit = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        try:
            conn.send(_run_until(ws, name, params, limit))
        except _Deadline:           # the timer fired just as the answer was ready: report the limit
            conn.send(_limit_reply(limit))
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
        """Run one job; raise TimeLimit or WorkerCrashed when its worker had to be replaced."""
        try:
            self.wait_ready(max(timeout, 30))
            self.conn.send((name, params, timeout))
            if not self.conn.poll(timeout + GRACE):
                self.restart()
                raise TimeLimit(f"the request took longer than the time limit ({timeout:g} s); start the "
                                "workbench with `umpire serve --time-limit SECONDS` to allow longer")
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


class FairGate:
    """At most ``slots`` holders at once; those waiting are let in round-robin by client."""

    def __init__(self, slots: int):
        self.slots, self.running = slots, 0
        self.waiting: dict[str, deque[asyncio.Future]] = {}     # insertion order is the turn order

    async def enter(self, client: str) -> None:
        if self.running < self.slots and not self.waiting:
            self.running += 1
            return
        turn = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(client, deque()).append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            queue = self.waiting.get(client)
            if queue is not None and turn in queue:
                queue.remove(turn)
                if not queue:
                    del self.waiting[client]
            elif turn.done() and not turn.cancelled():
                self.leave()            # the slot was handed over as the wait was given up: pass it on
            raise

    def leave(self) -> None:
        while self.waiting:
            client = next(iter(self.waiting))
            queue = self.waiting.pop(client)
            turn = queue.popleft()
            if queue:
                self.waiting[client] = queue        # to the back of the line: the next client goes first
            if not turn.done():
                turn.set_result(None)               # the slot passes straight to it
                return
        self.running -= 1


class WorkerPool:
    def __init__(self, roots: list[str], upload_dir: str, size: int = 2, time_limit: float = 20.0,
                 memory_mb: int = 2048):
        ctx = multiprocessing.get_context("spawn")
        self.time_limit = time_limit
        self.workers = [Worker(ctx, [str(r) for r in roots], upload_dir, memory_mb) for _ in range(size)]
        self.idle: asyncio.Queue | None = None
        self.heavy = FairGate(max(1, size - 1))
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

    async def run(self, name: str, params: dict, client: str = ""):
        heavy = name in HEAVY
        if heavy:
            try:
                await asyncio.wait_for(self.heavy.enter(client), self.time_limit)
            except asyncio.TimeoutError:
                raise Busy("the server is busy with other odds and simulations; try again in a moment") from None
        try:
            return await self._on_a_worker(name, params)
        finally:
            if heavy:
                self.heavy.leave()

    async def _on_a_worker(self, name: str, params: dict):
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
