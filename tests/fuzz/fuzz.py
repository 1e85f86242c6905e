"""Fuzz driver: mutants of every shipped ruleset file, run in-process, looking for internal errors.

Each mutant is one shipped file (manifest, table, stack, catalogue, procedure, situation,
test file or house rule) changed by one to three random edits: spans deleted, duplicated
or moved, hostile characters and words inserted (brackets, anchors, tags, tabs, keywords),
numbers replaced by hostile ones (0, -1, 10**40, 1e400, .inf, 5,000 digits), words swapped.
The mutant is written over a private copy of its ruleset and put through the command a
user would run on it (``check`` for ruleset files and overlays, ``resolve`` and ``odds``
for situations, the cases of a test file), all in this process.

Every outcome must be exit 0, 1 or 2. Reported: internal errors (exit 3, or an exception
escaping the command), time-outs (a mutant using more than ``--timeout`` seconds of CPU
time; the slowest wall time is reported too), the
peak memory of the worker processes and the wall time. Failing mutants are saved under
``--save`` so each can be replayed with the ordinary ``umpire`` command.

    nice -n 19 python tests/fuzz/fuzz.py -n 100000 -j 2 --save /tmp/fuzz-failures

The test suite runs a short version (tests/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

KINDS = ("ruleset.yaml", "tables", "stacks", "catalogues", "procedures", "situations", "tests", "house-rules")

HOSTILE_TEXT = ["{", "}", "[", "]", ":", ": ", "- ", "&a ", "*a", "<<: ", "!!python/object ", "!!binary ", "|", ">",
                "'", '"', "\t", "\n", "\n  ", "    ", "#", "@x", "%", "{{", "}}", "{x.", "\\", "\u00e9", "\x00",
                "---\n", "...\n", "? ", ",", "(", ")", "d6", "2d6", "d(", "=", "==", " with {", ".", "..", "0d6",
                "if ", "let ", "else", "for each ", "call ", "lookup(", "apply(", "not ", " in ", "return ",
                "null", "true", "~", ".inf", "-.inf", ".nan", "1e400", "0x1F", "0o7", "_", "1_000", "\r\n"]
HOSTILE_NUMBERS = ["0", "-1", "1", "7", "13", "-99", "1000000", "10000000000000000000000000000000000000000",
                   "1e400", ".inf", ".nan", "3.5", "1/3", "9" * 5000, "2d1000000000", "1000000d6", "-0", "0.0001"]
KEYWORDS = ["if", "else", "elif", "for", "each", "in", "not", "and", "or", "with", "true", "false", "null",
            "call", "lookup", "apply", "locate", "let", "set", "roll", "return", "note", "fail", "refuse",
            "choose", "from", "default", "by", "procedure", "cite", "emit"]

ODDS_BUDGET = 2000
"""``odds --budget`` for each mutant: 2,000 live states and 100,000 steps of work (limit 'odds work'), enough for
every shipped situation's odds, small enough for many mutants."""

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NUMBER = re.compile(r"-?\d+(\.\d+)?")


def shipped_files() -> list[tuple[str, Path]]:
    """(kind, path) of every file of every shipped ruleset that a user could edit."""
    out = []
    for rs in sorted((ROOT / "rulesets").iterdir()):
        if not (rs / "ruleset.yaml").is_file():
            continue
        out.append(("ruleset.yaml", rs / "ruleset.yaml"))
        for kind in KINDS[1:]:
            for f in sorted((rs / kind).glob("*")):
                if f.suffix in (".yaml", ".yml", ".ump"):
                    out.append((kind, f))
    return out


def mutate(text: str, rng: random.Random) -> str:
    """One to three random edits of ``text``."""
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        n = len(text)
        op = rng.randrange(11)
        i = rng.randrange(n + 1) if n else 0
        j = min(n, i + rng.choice((1, 1, 2, 3, 5, 10, 40, 200)))
        if op == 0 and n:                      # delete a span
            text = text[:i] + text[j:]
        elif op == 1 and n:                    # duplicate a span
            text = text[:j] + text[i:j] + text[j:]
        elif op == 2:                          # insert hostile text
            text = text[:i] + rng.choice(HOSTILE_TEXT) + text[i:]
        elif op == 3:                          # replace a number
            numbers = list(NUMBER.finditer(text))
            if numbers:
                m = rng.choice(numbers)
                text = text[:m.start()] + rng.choice(HOSTILE_NUMBERS) + text[m.end():]
        elif op == 4:                          # replace a word by a keyword or another word of the file
            words = list(WORD.finditer(text))
            if words:
                m = rng.choice(words)
                other = rng.choice(KEYWORDS) if rng.random() < 0.5 else rng.choice(words).group(0)
                text = text[:m.start()] + other + text[m.end():]
        elif op == 5:                          # swap two lines
            lines = text.split("\n")
            if len(lines) > 2:
                a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
                lines[a], lines[b] = lines[b], lines[a]
                text = "\n".join(lines)
        elif op == 6:                          # change a line's indentation
            lines = text.split("\n")
            k = rng.randrange(len(lines))
            lines[k] = rng.choice(("", " ", "  ", "\t", "        ")) + lines[k].lstrip(" ") \
                if rng.random() < 0.5 else lines[k][rng.choice((1, 2, 4)):]
            text = "\n".join(lines)
        elif op == 7:                          # truncate
            text = text[:i]
        elif op == 8 and n:                    # flip one character
            text = text[:i] + chr(rng.randrange(32, 127)) + text[i + 1:]
        elif op == 9 and n:                    # move a span elsewhere
            span = text[i:j]
            rest = text[:i] + text[j:]
            k = rng.randrange(len(rest) + 1)
            text = rest[:k] + span + rest[k:]
        elif op == 10:                         # repeat a line many times (long lists, deep blocks)
            lines = text.split("\n")
            k = rng.randrange(len(lines))
            lines[k:k + 1] = [lines[k]] * rng.choice((2, 10, 100))
            text = "\n".join(lines)
    return text


class TimedOut(BaseException):
    """Raised by the CPU-time alarm: not an Exception, so no handler in Umpire can swallow it."""


def _alarm(signum, frame):
    raise TimedOut()


class Worker:
    """Private copies of the rulesets; runs mutants one at a time."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.copies: dict[str, Path] = {}
        self.originals: dict[str, str] = {}     # copy path -> shipped text (what may be memoised)
        from interpreter import api
        from interpreter.loading import cache as load_cache
        from interpreter.cli.main import main
        self.main, self.api = main, api
        # mutants are read afresh (the on-disk load cache would store an entry per mutant); put back by close()
        self.cache_was_off = load_cache.set_disabled(True)
        self._memoise_unchanged_files()

    def close(self) -> None:
        from interpreter.loading import cache as load_cache
        load_cache.set_disabled(self.cache_was_off)

    def _memoise_unchanged_files(self) -> None:
        """Parse each unchanged shipped file once: only the mutant is read afresh (a speed-up, nothing else)."""
        from interpreter.reading import parser
        from interpreter.reading import schema
        from interpreter.reading import source
        load_yaml, parse_module, read_text, validate = source.load_yaml, parser.parse_module, source.read_text, \
            schema.validate
        docs: dict = {}
        modules: dict = {}
        valid: set = set()
        originals = self.originals

        def cached_validate(doc, kind):
            if docs.get(doc.file) is not doc:
                return validate(doc, kind)
            if (doc.file, kind) not in valid:
                validate(doc, kind)
                valid.add((doc.file, kind))

        def cached_load_yaml(path, text=None):
            text = read_text(path) if text is None else text
            if originals.get(str(path)) != text:
                return load_yaml(path, text)
            if str(path) not in docs:
                docs[str(path)] = load_yaml(path, text)
            return docs[str(path)]

        def cached_parse_module(text, file, *rest):
            if rest or originals.get(str(file)) != text:
                return parse_module(text, file, *rest)
            if str(file) not in modules:
                modules[str(file)] = parse_module(text, file)
            return list(modules[str(file)])

        source.load_yaml, parser.parse_module, schema.validate = cached_load_yaml, cached_parse_module, cached_validate

    def copy_of(self, ruleset: Path) -> Path:
        if ruleset.name not in self.copies:
            target = self.tmp / ruleset.name
            shutil.copytree(ruleset, target)
            self.copies[ruleset.name] = target
            for f in target.rglob("*"):
                if f.suffix in (".yaml", ".yml", ".ump"):
                    self.originals[str(f)] = f.read_text(encoding="utf-8")
            # the unchanged ruleset loaded once, outside any mutant's run, so it stays in the process's
            # cache: a situation or test mutant then reads only its own file (as a second command would
            # on a warm cache); loaded inside a mutant's run, it was dropped with the mutant every time
            self.api.load_ruleset(target)
        return self.copies[ruleset.name]

    def run(self, kind: str, original: Path, text: str) -> list[tuple[list[str], int]]:
        """Write the mutant over its copy, run what a user would run on it, put the original back."""
        ruleset = original.parent if kind == "ruleset.yaml" else original.parent.parent
        copy = self.copy_of(ruleset)
        target = copy / original.relative_to(ruleset)
        saved, stat = target.read_bytes(), target.stat()
        cached = set(self.api._CACHE)
        target.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            if kind in ("situations",):
                commands = [["resolve", str(target), "--explain", "--seed", "1"],
                            ["odds", str(target), "--budget", str(ODDS_BUDGET), "--json"]]
            elif kind == "tests":
                commands = [["test", str(target)]]        # the mutated file's own cases
            elif kind == "house-rules":
                commands = [["check", str(copy), "--with", str(target)]]
            else:   # the ruleset as `check` loads it, then one of its situations run and enumerated
                commands = [["load", str(copy)]]
                situations = sorted((copy / "situations").glob("*.yaml"))
                if situations:
                    s = situations[len(text) % len(situations)]
                    commands.append(["resolve", str(s), "--explain", "--seed", "1"])
                    commands.append(["odds", str(s), "--budget", str(ODDS_BUDGET)])
            results = []
            for cmd in commands:
                code = self.call(cmd)
                results.append((cmd, code))
                if code in (3, "timeout", "crash"):
                    break
                if code == 2 and cmd[0] in ("check", "load"):
                    break
            return results
        finally:
            # the original back, with its own modification time: the loaded ruleset stays cached,
            # and the mutant's own load is dropped (so memory does not grow with the run)
            target.write_bytes(saved)
            os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            for key in set(self.api._CACHE) - cached:
                del self.api._CACHE[key]

    def call(self, cmd: list[str]):
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = self.load(cmd[1]) if cmd[0] == "load" else self.main(cmd)
        except TimedOut:
            return "timeout"
        except SystemExit as e:          # argparse
            code = e.code if isinstance(e.code, int) else 2
        except BaseException as e:       # anything escaping the command is an internal error
            self.last_error = f"{type(e).__name__}: {e}"
            return 3
        if code == 3:
            self.last_error = err.getvalue()[-2000:]
        return code


    @staticmethod
    def load(ruleset: str) -> int:
        """The ruleset read, checked and compiled as `umpire check` does it (exit 2 if invalid)."""
        from interpreter.api import load_ruleset
        from interpreter.errors import UmpireError
        try:
            load_ruleset(ruleset, use_cache=False)
        except UmpireError as e:
            return e.exit_code
        return 0


def run_worker(seed: int, count: int, timeout: float, save: str | None, memory_limit: int,
               kinds: tuple = KINDS, progress: bool = False) -> dict:
    """Run ``count`` mutants; returns counts, failures and this process's peak memory."""
    before = resource.getrlimit(resource.RLIMIT_AS)
    if memory_limit:   # the soft limit only, put back at the end (an in-process run must not leave it behind)
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, before[1]))
    try:
        return _run_worker(seed, count, timeout, save, kinds, progress)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, before)


def _run_worker(seed: int, count: int, timeout: float, save: str | None, kinds: tuple, progress: bool) -> dict:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    signal.signal(signal.SIGPROF, _alarm)
    rng = random.Random(seed)
    files = [(k, p, p.read_text(encoding="utf-8")) for k, p in shipped_files() if k in kinds]
    stats = {"mutants": 0, "internal": 0, "timeouts": 0, "slowest": 0.0, "exit_codes": {}, "by_kind": {},
             "cpu_by_kind": {}, "failures": []}
    with tempfile.TemporaryDirectory(prefix="umpire-fuzz-") as tmp:
        worker = Worker(Path(tmp))
        try:
            _run_mutants(worker, files, count, rng, timeout, save, progress, seed, stats)
        finally:
            worker.close()
    stats["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return stats


def _run_mutants(worker, files, count, rng, timeout, save, progress, seed, stats) -> None:
    """Run ``count`` mutants through ``worker``, counting into ``stats``."""
    for n in range(count):
        kind, path, original = files[n % len(files)] if n < len(files) else rng.choice(files)
        text = mutate(original, rng)
        start, cpu = time.perf_counter(), time.process_time()
        signal.setitimer(signal.ITIMER_PROF, timeout)
        try:
            results = worker.run(kind, path, text)
        except TimedOut:
            results = [(["?"], "timeout")]
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        elapsed = time.perf_counter() - start
        stats["cpu_by_kind"][kind] = stats["cpu_by_kind"].get(kind, 0.0) + time.process_time() - cpu
        stats["slowest"] = max(stats["slowest"], elapsed)
        stats["mutants"] += 1
        stats["by_kind"][kind] = stats["by_kind"].get(kind, 0) + 1
        for cmd, code in results:
            stats["exit_codes"][str(code)] = stats["exit_codes"].get(str(code), 0) + 1
        if progress and (n + 1) % 500 == 0:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(json.dumps({"worker": seed, "mutants": n + 1, "internal": stats["internal"],
                              "timeouts": stats["timeouts"], "slowest_seconds": round(stats["slowest"], 2),
                              "peak_rss_mb": round(peak, 1), "exit_codes": stats["exit_codes"],
                              "cpu_seconds": round(sum(stats["cpu_by_kind"].values()), 1)}),
                  file=sys.stderr, flush=True)
        bad = [(cmd, code) for cmd, code in results if code in (3, "timeout")]
        if bad:
            cmd, code = bad[0]
            stats["internal" if code == 3 else "timeouts"] += 1
            failure = {"file": str(path.relative_to(ROOT)), "command": cmd[0], "code": code,
                       "error": getattr(worker, "last_error", "")[-500:], "seconds": round(elapsed, 2)}
            if save:
                Path(save).mkdir(parents=True, exist_ok=True)
                name = f"{seed}-{n}-{path.name}"
                (Path(save) / name).write_text(text, encoding="utf-8", errors="surrogatepass")
                failure["saved"] = str(Path(save) / name)
            stats["failures"].append(failure)


def fuzz(count: int, jobs: int = 1, seed: int = 0, timeout: float = 5.0, save: str | None = None,
         memory_limit: int = 2 << 30, kinds: tuple = KINDS, progress: bool = False) -> dict:
    """Run ``count`` mutants over ``jobs`` processes and sum their reports."""
    start = time.time()
    if jobs <= 1:
        parts = [run_worker(seed, count, timeout, save, memory_limit, kinds, progress)]
    else:
        import multiprocessing
        share = [count // jobs + (1 if i < count % jobs else 0) for i in range(jobs)]
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            parts = pool.starmap(run_worker, [(seed * 1000 + i, share[i], timeout, save, memory_limit, kinds, progress)
                                              for i in range(jobs)])
    total = {"mutants": 0, "internal": 0, "timeouts": 0, "slowest_seconds": 0.0, "exit_codes": {}, "by_kind": {},
             "cpu_by_kind": {}, "failures": [], "peak_rss_mb": 0.0}
    for p in parts:
        total["mutants"] += p["mutants"]
        total["internal"] += p["internal"]
        total["timeouts"] += p["timeouts"]
        total["slowest_seconds"] = round(max(total["slowest_seconds"], p["slowest"]), 2)
        total["peak_rss_mb"] = round(max(total["peak_rss_mb"], p["peak_rss_mb"]), 1)
        total["failures"] += p["failures"]
        for key in ("exit_codes", "by_kind", "cpu_by_kind"):
            for k, v in p[key].items():
                total[key][k] = total[key].get(k, 0) + v
    total["cpu_by_kind"] = {k: round(v, 1) for k, v in total["cpu_by_kind"].items()}
    total["wall_seconds"] = round(time.time() - start, 1)
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--mutants", type=int, default=1000)
    ap.add_argument("-j", "--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=5.0,
                    help="CPU seconds one mutant may use (CPU time, so other work on the machine does not count)")
    ap.add_argument("--save", help="folder to save failing mutants in")
    ap.add_argument("--kind", action="append", choices=KINDS, help="only mutants of these kinds of file")
    args = ap.parse_args()
    report = fuzz(args.mutants, args.jobs, args.seed, args.timeout, args.save, kinds=tuple(args.kind or KINDS),
                  progress=True)
    print(json.dumps(report, indent=2))
    return 1 if report["internal"] or report["timeouts"] else 0


if __name__ == "__main__":
    sys.exit(main())
