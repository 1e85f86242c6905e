"""The on-disk load cache: a second process on unchanged files skips YAML, schemas and parsing.

What is stored, each entry named by a BLAKE2b key of everything it depends on:

* a loaded ruleset (the checked model, its checker warnings and the facts the
  compiler derives from the whole ruleset), keyed by the path and content of
  every file of the ruleset and of every overlay;
* a schema-valid YAML document (a situation or test file: its data and the
  position of every value), keyed by its path and content and the kind of
  file it was validated as;
* the fact that a situation's inputs passed their procedure's schema, keyed
  by the ruleset's key, the procedure and the inputs.

Every key also covers the *environment*: Umpire's version, the cache format,
the Python version and the content of Umpire's own code, grammar and schemas,
so an upgrade or an edit to the interpreter never reads an older entry.
Contents are hashed, never trusted by modification time. The one shortcut is
for Umpire's own hundred-odd files, whose reading and hashing was a twenty-fifth
of a warm ``resolve``: the hash of their contents is kept as an entry of its own
(kind ``environment``), keyed by each file's path, device, inode, size,
modification and status-change times, and a later start finding every one of
those unchanged reads the hash instead of the files. A write to a file always
moves its status-change time, which no tool can set back (``touch`` and
``cp -p`` set the others); and a record is not used for a file changed within
two seconds of its hashing (it could change again within the same clock tick,
as git treats a "racily clean" file). The user's rulesets and situations are
always hashed by content.

An entry is one file: a header line (format, kind, key, file table, BLAKE2b digest
of the body) and a JSON body (loading/codec.py: data only, no pickle). The header carries a MAC
(BLAKE2b keyed by a random per-user secret, ``secret.key`` in the folder, 0600), so only
entries this user's Umpire wrote are read: one planted or edited by anyone who cannot read the
secret is a miss. The folder is created 0700 and refused (the command runs without the cache,
with a warning) when it belongs to another user or its group or others may write it. A
missing, truncated, corrupt or foreign entry fails its checks and is rebuilt;
entries are written to a temporary file in the same folder and renamed into
place, so a reader never sees half an entry and two writers cannot mix
theirs. A folder that cannot be created or written leaves Umpire working,
only without the cache. Nothing here raises to the caller.

``UMPIRE_CACHE_DIR`` chooses the folder (default ``$XDG_CACHE_HOME/umpire``,
else ``~/.cache/umpire``); ``UMPIRE_CACHE=off`` (or ``umpire --no-cache``)
turns the cache off.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

from .. import __version__
from ..reading import shipped
from ..reading.source import read_regular

try:        # the stdlib's own C modules: ``hashlib`` and ``hmac`` would load OpenSSL (``_hashlib``) at every start
    from _blake2 import blake2b
    from _operator import _compare_digest as compare_digest
except ImportError:     # a Python built without them
    from hashlib import blake2b
    from hmac import compare_digest  # type: ignore[no-redef]

FORMAT = 10
"""Changes whenever the layout of an entry or of the encoded model changes (2: entries carry a MAC; 3: a procedure's
fields are stored apart from the model, like its body; 4: a document's position tables are lines of their own, read
when a position is first asked for, and plain data is stored as plain JSON; 5: a stored document's written maps
passed the map schema too; 6: keys, checksums and MACs are BLAKE2b, the MAC keyed by the secret; 7: the file table starts with the ruleset's
files, and a procedure notes the files its body's positions name; 8: a document's position tables are keyed by path,
read a lookup at a time; 9: a long branch body is a text of its own, decoded when first read; 10: a result code
keeps its pattern only, its regular expression made when first used)."""

MAX_ENTRY_BYTES = 64_000_000
"""Largest entry read back (a shipped ruleset's entry is well under 5 MB)."""

MAX_FOLDER_BYTES = 200_000_000
MAX_FOLDER_ENTRIES = 20_000
"""When a new ruleset entry would leave more than this in the folder, the least recently used entries go."""

KINDS = ("ruleset", "document", "valid", "environment")

_OFF_WORDS = {"off", "0", "no", "false"}
_disabled_here = False   # set by the command line's --no-cache for the current command


def set_disabled(disabled: bool) -> bool:
    """Turn the cache off for this process whatever the environment says (or stop doing so); returns the
    previous setting, to put back."""
    global _disabled_here
    previous, _disabled_here = _disabled_here, disabled
    return previous


def folder() -> Path | None:
    """The cache folder, or None when the cache is turned off or its folder is refused (``refusal``)."""
    if _disabled_here or os.environ.get("UMPIRE_CACHE", "").strip().lower() in _OFF_WORDS:
        return None
    base = location()
    if base is None or refusal(base) is not None:
        return None
    return base


def own_folder() -> Path | None:
    """The cache folder, created (mode 700) when missing, or None when the cache is off or the folder refused."""
    base = folder()
    if base is None:
        return None
    try:
        if not base.is_dir():
            base.parent.mkdir(parents=True, exist_ok=True)
            base.mkdir(mode=0o700, exist_ok=True)
            _refusals.pop(str(base), None)
    except OSError:
        return None
    return base if refusal(base) is None else None


def grammar_tables_file() -> str | None:
    """The file in the user's own cache folder where lark keeps the procedure grammar's LALR tables (it reads them
    back with pickle: never a folder anyone else may write), or None when there is no such folder."""
    base = own_folder()
    return str(base / f"grammar-tables-{__version__}.lark") if base is not None else None


shipped.grammar_tables = grammar_tables_file


SECRET_NAME = "secret.key"
"""The per-user secret in the cache folder (0600, random): every entry carries a MAC keyed by it."""

_refusals: dict = {}     # folder -> why it is not used (None: it is fine), once per process
_secrets: dict = {}      # folder -> its secret, once read


def refusal(base: Path) -> str | None:
    """Why the folder may not be used as this user's cache, or None if it may (or does not exist yet).

    Refused: a folder owned by another user, or one that the group or others may write (they could plant or
    swap entries), or something that is not a folder. Said once on standard error; Umpire then works without
    the cache."""
    key = str(base)
    if key in _refusals:
        return _refusals[key]
    why = None
    try:
        st = os.stat(base)
    except OSError:
        return None          # missing (created 0700 by the first write, checked again then) or unreachable
    else:
        if not stat.S_ISDIR(st.st_mode):
            why = "is not a folder"
        elif hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            why = f"belongs to another user (uid {st.st_uid})"
        elif st.st_mode & 0o022:
            why = (f"may be written by {'its group' if st.st_mode & 0o020 else 'other users'} "
                   f"(mode {stat.S_IMODE(st.st_mode):o})")
    _refusals[key] = why
    if why is not None:
        print(f"umpire: warning: the load cache folder {base} {why}, so it is not used (the command runs without "
              f"the cache); make it yours with mode 700 (chmod 700 '{base}'), or set UMPIRE_CACHE_DIR to another "
              "folder", file=sys.stderr)
    return why


def _secret(base: Path, create: bool) -> bytes | None:
    """The folder's secret (created 0600 when ``create`` and missing), or None when there is none to trust:
    a secret that is not a regular file of this user's, readable only by them, is never used."""
    found = _secrets.get(str(base))
    if found is not None:
        return found
    path = base / SECRET_NAME
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    for _ in range(2):
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            if not create:
                return None
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            except FileExistsError:
                continue            # another process made it first: read theirs
            except OSError:
                return None
            try:
                secret = os.urandom(32)
                os.write(fd, secret)
            finally:
                os.close(fd)
            _secrets[str(base)] = secret
            return secret
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if (not stat.S_ISREG(st.st_mode) or st.st_mode & 0o077
                    or (hasattr(os, "geteuid") and st.st_uid != os.geteuid())):
                return None
            secret = os.read(fd, 64)
        except OSError:
            return None
        finally:
            os.close(fd)
        if len(secret) != 32:
            return None
        _secrets[str(base)] = secret
        return secret
    return None


def digest(data: bytes) -> str:
    """The checksum of an entry's body, as its header holds it."""
    return blake2b(data, digest_size=32).hexdigest()


def _mac(secret: bytes, header: dict) -> str:
    """The MAC of an entry's header (which holds the digest of its body, so it covers the whole entry): BLAKE2b
    keyed by the folder's secret (BLAKE2's own keyed mode, a MAC without HMAC's nesting)."""
    fields = {k: v for k, v in header.items() if k != "mac"}
    return blake2b(json.dumps(fields, sort_keys=True, separators=(",", ":")).encode("utf-8", "surrogatepass"),
                   digest_size=32, key=secret, person=b"umpire-mac").hexdigest()


_LOCATIONS: dict = {}     # the environment variables location() reads -> its answer


def location() -> Path | None:
    """Where the cache folder is (or would be), on or off; None without a home folder to put it in."""
    env = os.environ
    asked = (env.get("UMPIRE_CACHE_DIR"), env.get("XDG_CACHE_HOME"), env.get("HOME"))
    if asked in _LOCATIONS:
        return _LOCATIONS[asked]
    if len(_LOCATIONS) >= 64:
        _LOCATIONS.clear()
    found = _LOCATIONS[asked] = _location()
    return found


def _location() -> Path | None:
    chosen = os.environ.get("UMPIRE_CACHE_DIR")
    if chosen:
        return Path(chosen)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "umpire"
    home = os.path.expanduser("~")
    if not home or home == "~":
        return None
    return Path(home) / ".cache" / "umpire"


_PACKAGE = Path(__file__).resolve().parents[1]
_ENVIRONMENT: str | None = None


def environment_key() -> str:
    """A hash of everything besides the user's files that decides what a load gives: every ``.py`` file of the
    package, at any depth, and every file of the shipped data folders, by name and content (read back from
    the ``environment`` entry while the files are the very ones hashed: the module's docstring)."""
    global _ENVIRONMENT
    if _ENVIRONMENT is None:
        head = f"umpire {__version__} cache {FORMAT} python {sys.version}"
        sources = _files_below(str(_PACKAGE), ".py", True)
        for extra in shipped.FOLDERS:  # the packaged copy when installed, else the checkout's folder
            sources += _files_below(str(shipped.folder(extra, _PACKAGE)), "", False)
        seen = _as_they_stand(head, sources)
        found = _hashed_before(*seen) if seen is not None else None
        if found is None:
            started = _now_ns()
            h = blake2b(head.encode(), digest_size=32)
            for path, name in sources:
                _update(h, name, _own_bytes(path))
            found = h.hexdigest()
            if seen is not None:
                write("environment", seen[0], [], json.dumps({"environment": found, "hashed_at": started}))
        _ENVIRONMENT = found
    return _ENVIRONMENT


_now_ns = time.time_ns
RACY_NS = 2_000_000_000
"""A file changed less than this before its hash was taken could change again unseen (within the same clock
tick): a record of it is not used."""


def _as_they_stand(head: str, sources: list[tuple[str, str]]) -> tuple[str, int] | None:
    """(a key of these files as they stand: the path, device, inode, size, modification and status-change times
    of each; the newest of those times), or None when one is not a regular file (then they are hashed)."""
    h = blake2b(head.encode(), digest_size=32, person=b"umpire-stat")
    newest = 0
    for path, _name in sources:
        try:
            st = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        h.update(b"%d:%s %d %d %d %d %d\n" % (len(path), path.encode("utf-8", "surrogateescape"), st.st_dev,
                                             st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
    return h.hexdigest(), newest


def _hashed_before(key: str, newest: int) -> str | None:
    """The hash of the contents recorded for exactly these files, if it was taken RACY_NS or more after the newest
    of their changes; else None."""
    found = read("environment", key)
    if found is None:
        return None
    try:
        record = json.loads(found[1])
        env, at = record["environment"], record["hashed_at"]
    except (ValueError, KeyError, TypeError):
        return None
    if not (isinstance(env, str) and len(env) == 64 and isinstance(at, int)) or newest > at - RACY_NS:
        return None
    return env


def _files_below(top: str, suffix: str, deep: bool) -> list[tuple[str, str]]:
    """(path, name) of the entries of ``top`` whose names end in ``suffix`` (and, when ``deep``, of its folders',
    at any depth but ``__pycache__``, symbolic links to folders not followed), in sorted order of path: one
    directory read per folder, no stat of each file (what is not a readable file is hashed as such by ``_own_bytes``)."""
    found = []
    try:
        with os.scandir(top) as it:
            for e in it:
                if deep and e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        found += _files_below(e.path, suffix, deep)
                elif e.name.endswith(suffix):
                    found.append((e.path, e.name))
    except OSError:
        pass
    found.sort()
    return found


def _own_bytes(path: str) -> bytes:
    """The content of one of Umpire's own files, or ``b"?"`` if it is not a regular file that can be read."""
    try:
        return read_regular(path, 1 << 26)
    except OSError:
        return b"?"


def _update(h, name: str, data: bytes) -> None:
    name_bytes = name.encode("utf-8", "surrogateescape")
    h.update(b"%d:" % len(name_bytes) + name_bytes + b"%d:" % len(data))
    h.update(data)


_KIND_HASHERS: dict = {}     # (kind, environment key) -> a hasher fed with them: each key starts from a copy


def content_key(kind: str, named_texts) -> str:
    """The key of an entry that depends on these (name, text) pairs, in order, and the environment."""
    env = environment_key()
    start = _KIND_HASHERS.get((kind, env))
    if start is None:
        if len(_KIND_HASHERS) >= 64:
            _KIND_HASHERS.clear()
        start = _KIND_HASHERS[(kind, env)] = blake2b(digest_size=32)
        _update(start, kind, env.encode())
    h = start.copy()
    for name, text in named_texts:
        _update(h, name, text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


# ---- entries ------------------------------------------------------------------------------

def _entry_path(base: Path, kind: str, key: str) -> Path:
    return base / f"{kind}-{key}.json"


def read(kind: str, key: str) -> tuple[list[str], str, list[bytes]] | None:
    """The (file table, main text, extra lines) stored under ``key``, or None if there is no sound entry."""
    base = folder()
    if base is None:
        return None
    try:
        path = _entry_path(base, kind, key)
        raw = read_regular(path, MAX_ENTRY_BYTES)    # a FIFO or device at an entry's name is no entry
        if kind == "ruleset":
            _mark_used(path)
        if len(raw) > MAX_ENTRY_BYTES:
            return None
        head, sep, body = raw.partition(b"\n")
        if not sep:
            return None
        header = json.loads(head)
        if (not isinstance(header, dict) or header.get("umpire_cache") != FORMAT or header.get("kind") != kind
                or header.get("key") != key or header.get("blake2b") != digest(body)):
            return None
        secret = _secret(base, create=False)
        if secret is None or not isinstance(header.get("mac"), str) or \
                not compare_digest(header["mac"], _mac(secret, header)):
            return None     # not written by this user's Umpire: whatever it says, it is not used
        files = header.get("files")
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            return None
        lines = body.split(b"\n")
        if len(lines) != header.get("lines"):
            return None
        return files, lines[0].decode("utf-8"), lines[1:]
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def write(kind: str, key: str, files: list[str], main: str, extra: list[str] | tuple = ()) -> bool:
    """Store an entry atomically (temporary file in the same folder, then rename); False if it could not be.

    ``main`` and each of ``extra`` are one line each (JSON texts, which never hold a line break).
    """
    base = own_folder()
    if base is None:
        return False
    import tempfile
    tmp = None
    try:
        secret = _secret(base, create=True)
        if secret is None:
            return False
        lines = [main, *extra]
        if any("\n" in line for line in lines):
            return False
        data = "\n".join(lines).encode("utf-8", "surrogatepass")
        fields = {"umpire_cache": FORMAT, "kind": kind, "key": key, "files": files,
                  "lines": len(lines), "blake2b": digest(data)}
        fields["mac"] = _mac(secret, fields)
        header = json.dumps(fields, separators=(",", ":"))
        fd, tmp = tempfile.mkstemp(prefix=f".{kind}-", suffix=".tmp", dir=base)
        with os.fdopen(fd, "wb") as f:
            f.write(header.encode("utf-8", "surrogatepass") + b"\n" + data)
        os.replace(tmp, _entry_path(base, kind, key))
        if kind == "ruleset":        # a new ruleset entry: the rare, large write, when the folder is tidied
            prune(base)
        return True
    except (OSError, ValueError, UnicodeError):
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False


def _mark_used(path: Path) -> None:
    """Touch a ruleset entry when read, so pruning drops the least recently *used* ones first."""
    try:
        os.utime(path)
    except OSError:
        pass


def entries(base: Path | None = None) -> list[tuple[Path, os.stat_result]]:
    """Every cache entry in the folder (only files Umpire names: ``<kind>-<64 hex>.json``), oldest use first."""
    base = location() if base is None else base
    if base is None:
        return []
    found = []
    try:
        with os.scandir(base) as it:
            for e in it:
                kind, _, rest = e.name.partition("-")
                if kind in KINDS and len(rest) == 69 and rest.endswith(".json") and e.is_file(follow_symlinks=False):
                    try:
                        found.append((Path(e.path), e.stat(follow_symlinks=False)))
                    except OSError:
                        pass
    except OSError:
        return []
    found.sort(key=lambda f: f[1].st_mtime_ns)
    return found


def prune(base: Path, max_bytes: int | None = None, max_entries: int | None = None) -> int:
    """Remove the least recently used entries until the folder is within its bounds; returns how many went.
    Leftover temporary files of writers that died (over an hour old) go too."""
    max_bytes = MAX_FOLDER_BYTES if max_bytes is None else max_bytes
    max_entries = MAX_FOLDER_ENTRIES if max_entries is None else max_entries
    found = entries(base)
    total = sum(st.st_size for _, st in found)
    removed = 0
    for path, st in found:
        if total <= max_bytes and len(found) - removed <= max_entries:
            break
        try:
            path.unlink()
            removed += 1
            total -= st.st_size
        except OSError:
            pass
    _remove_stale_temporaries(base)
    return removed


def _remove_stale_temporaries(base: Path) -> None:
    import time
    try:
        with os.scandir(base) as it:
            for e in it:
                if e.name.startswith(tuple(f".{k}-" for k in KINDS)) and e.name.endswith(".tmp"):
                    try:
                        if time.time() - e.stat(follow_symlinks=False).st_mtime > 3600:
                            os.unlink(e.path)
                    except OSError:
                        pass
    except OSError:
        pass


def clear() -> tuple[int, int]:
    """Remove every entry and the grammar's tables (and nothing else) from the cache folder; returns (entries,
    bytes) removed."""
    count = size = 0
    base = location()
    tables = [(p, p.stat()) for p in base.glob("grammar-tables-*.lark") if p.is_file()] if base is not None else []
    for path, st in entries() + tables:
        try:
            path.unlink()
            count += 1
            size += st.st_size
        except OSError:
            pass
    return count, size


# ---- what is stored ---------------------------------------------------------------------------

def ruleset_key(root: Path, sources: list[tuple[str, str]], overlays: tuple) -> str:
    """The key of a ruleset read from ``sources`` ((path, content) of its files in load order, then of
    its ``overlays``): the paths count too, since positions in the model name them."""
    return content_key("ruleset", [("root", str(root)), ("overlays", "\n".join(overlays))] + sources)


def load_ruleset_entry(key: str):
    """(ruleset, warnings) stored under ``key``, or None."""
    found = read("ruleset", key)
    if found is None:
        return None
    from ..model.ruleset import Ruleset
    from .codec import LazyProcedure, loads
    try:
        stored = loads(*found)
        ruleset, warnings = stored["ruleset"], stored["warnings"]
        if not isinstance(ruleset, Ruleset) or not isinstance(warnings, list) or \
                not all(isinstance(p, LazyProcedure) for p in ruleset.procedures.values()):
            return None
        return ruleset, warnings
    except Exception:  # a malformed entry is a miss, whatever its shape
        return None


def save_ruleset_entry(key: str, ruleset, warnings: list) -> bool:
    from .codec import dumps
    try:
        files, main, bodies = dumps({"ruleset": ruleset, "warnings": list(warnings)}, ruleset.files)
    except Exception:   # something in the model is not plain data: work without the cache
        return False
    return write("ruleset", key, files, main, bodies)


_DOCUMENTS: dict = {}      # key -> Document already read in this process (documents are never changed)
_DOCUMENTS_KEPT = 512


def forget() -> None:
    """Drop what this process keeps in memory (as a new process would start); what it learnt is saved."""
    _DOCUMENTS.clear()
    save_passed()
    _PASSED.clear()


def valid_document(path, kind: str, text: str | None = None):
    """A YAML file as a positioned Document that passed the ``kind`` schema (from the cache when it can).

    Text given directly (not read from a file, e.g. typed in the workbench) is never stored.
    """
    from ..reading.source import read_text
    if text is not None or folder() is None:
        return _read_valid(path, kind, text)
    text = read_text(path)
    key = content_key("document", [("kind", kind), (str(path), text)])
    doc = _DOCUMENTS.get(key)
    if doc is not None:
        return doc
    found = read("document", key)
    if found is not None:
        doc = _document_from(found, str(path), text)
    if doc is None:
        doc = _read_valid(path, kind, text)
        _save_document(key, doc)
    if len(_DOCUMENTS) >= _DOCUMENTS_KEPT:
        _DOCUMENTS.clear()
    _DOCUMENTS[key] = doc
    doc.cache_key = key      # what its content is known by: a value in it can be named by this key and its path
    return doc


def _read_valid(path, kind: str, text: str | None):
    from ..reading.schema import validate, validate_written_maps
    from ..reading.source import load_yaml
    doc = load_yaml(path, text)
    validate(doc, kind)
    validate_written_maps(doc, kind)
    return doc


def _document_from(found, file: str, text: str):
    from .codec import load_document
    try:
        doc = load_document(file, text, found[1], [line.decode("utf-8") for line in found[2]])
    except Exception:   # a malformed entry is a miss
        return None
    doc.maps_valid = True       # stored only after _read_valid: its written maps passed the map schema
    return doc


def _save_document(key: str, doc) -> None:
    from .codec import dump_document
    try:
        main, tables = dump_document(doc)
    except Exception:
        return
    write("document", key, [], main, tables)


def checked_once(what: str, ruleset_key: str | None, value, check, doc=None, path: tuple = ()) -> None:
    """Run ``check()`` (which raises if ``value`` is wrong) unless it passed before for the same ruleset and value.

    The values that passed are kept as one entry per ruleset (a set of their keys), read once per process and
    written back when the process ends: ``umpire test`` of a ruleset's cases reads one entry, not one a case.
    A value that is the one at ``path`` in ``doc``, a document read by ``valid_document`` from a file, is named by
    the document's key and that path, without encoding it.
    """
    base = folder()
    if ruleset_key is None or base is None:
        check()
        return
    key = _place_key(what, ruleset_key, value, doc, path) if doc is not None else None
    if key is None:
        key = value_key(what, ruleset_key, value)
    if key is None:
        check()
        return
    known = _passed(base, ruleset_key)
    if key in known:
        return
    check()
    if len(known) >= PASSED_KEPT:
        known.clear()
    known.add(key)
    if not _PASSED_UNSAVED:
        import atexit
        atexit.register(save_passed)
    _PASSED_UNSAVED.add((base, ruleset_key))


def _place_key(what: str, ruleset_key: str, value, doc, path: tuple) -> str | None:
    """The key of the value at ``path`` in ``doc`` when ``value`` is that very value and the document's content
    is known by its key (documents are never changed); else None."""
    doc_key = getattr(doc, "cache_key", None)
    if doc_key is None:
        return None
    here = doc.data
    for p in path:
        try:
            here = here[p]
        except (KeyError, IndexError, TypeError):
            return None
    if here is not value:
        return None
    return content_key("valid", [("what", what), ("ruleset", ruleset_key), ("document", doc_key),
                                 ("path", json.dumps(list(path)))])


def value_key(what: str, ruleset_key: str, value) -> str | None:
    """The key under which ``value`` passing its ``what`` check for this ruleset is remembered (None: ``value``
    cannot be stored as data). Plain JSON data (a situation's inputs, as YAML gives them) is written as plain
    JSON, marked ``P`` (no stored value's text starts so), anything else as the codec stores it."""
    from .codec import dumps, plain
    if plain(value):
        files: list[str] = []
        body = "P" + json.dumps(value, separators=(",", ":"), allow_nan=True)
    else:
        try:
            files, body, _ = dumps(value)
        except Exception:
            return None
    return content_key("valid", [("what", what), ("ruleset", ruleset_key), ("files", "\n".join(files)),
                                 ("value", body)])


PASSED_KEPT = 50_000       # value keys kept per ruleset before its set starts again
_PASSED: dict = {}          # (folder, ruleset key) -> keys of the values that passed their check
_PASSED_UNSAVED: set = set()


def _passed(base: Path, ruleset_key: str) -> set:
    known = _PASSED.get((base, ruleset_key))
    if known is None:
        known = _PASSED[(base, ruleset_key)] = set(_stored_passed(ruleset_key))
    return known


def _stored_passed(ruleset_key: str) -> list:
    """The value keys the ruleset's entry holds (none when there is no sound entry)."""
    found = read("valid", ruleset_key)
    try:
        keys = json.loads(found[1]) if found is not None else []
    except ValueError:
        return []
    return keys if isinstance(keys, list) and all(isinstance(k, str) for k in keys) else []


def save_passed() -> None:
    """Write back each ruleset's set of values that passed, with what another process has written since."""
    for base, ruleset_key in sorted(_PASSED_UNSAVED, key=str):
        if folder() != base:        # the folder was changed (a test's): what was learnt there stays unsaved
            continue
        known = _PASSED[(base, ruleset_key)]
        other = _stored_passed(ruleset_key)
        if len(known) + len(other) <= PASSED_KEPT:
            known.update(other)
        write("valid", ruleset_key, [], json.dumps(sorted(known)))
    _PASSED_UNSAVED.clear()
