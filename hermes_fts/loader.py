"""Bring the cjk_unicode61 extension into SQLite connections, on any Python.

Strategy order for ``load(conn)``, most direct first:

1. ``present``         the connection already has the extension;
2. ``load_extension``  the connection can load extensions (stdlib builds that
                       allow it, pysqlite3, sqlean.py, apsw); switched off again;
3. ``auto_extension``  the stdlib module without ``enable_load_extension``:
                       register the library process-wide with
                       ``sqlite3_auto_extension`` on the very SQLite library the
                       ``sqlite3`` module uses (through the stdlib's ctypes),
                       checked with a probe connection;
4. ``ExtensionUnavailable`` with a message that says what to do.

One process binds the library to one SQLite library only: the extension keeps
SQLite's API table in a process-wide pointer, so serving two different SQLite
builds from one copy would call one library's routines with the other's
objects.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import sys
import threading
from typing import Any, NamedTuple

from . import _env
from ._platform import (
    LIB_NAME,
    STATIC_SQLITE_WORKAROUND,
    built_elsewhere,
    cut_short,
    library_suffix,
    sqlite_library_candidates,
    strip_library_suffix,
)
from ._sqlite import connect_readonly
from ._version import __version__

__all__ = [
    "ExtensionUnavailable",
    "LibraryMismatch",
    "Token",
    "connect",
    "extension_path",
    "has_extension",
    "install",
    "load",
    "load_strategy",
    "tokenize",
]

LIB_SUFFIX = library_suffix()  # this platform's; the rule lives in _platform

_PROBE_SQL = "SELECT cjk_unicode61_version()"
_TOKENIZER = "hermes_fts_cjk"
# What SQLite derives from the file name cjk_unicode61 (csrc/hermes_fts.h).
_ENTRY_POINT = "sqlite3_cjkunicode_init"
# Our tokenizer options that the CJK index names (index.schema.CJK_TOKENIZE says
# what each does): a library older than one of them cannot open that index.
INDEX_OPTIONS = tuple("unigrams variants glue kana symbols compose letters selectors".split())
_probe_ids = itertools.count()  # names of the TEMP tables _tokenizes creates


class ExtensionUnavailable(RuntimeError):
    """The cjk_unicode61 extension cannot be used; the message says what to do."""


class LibraryMismatch(ExtensionUnavailable):
    """The library loaded but is not one this hermes-fts can use (another library, an
    older build): the library is what to change, whatever the SQLite host."""


class Token(NamedTuple):
    text: str
    start: int  # UTF-8 byte offset into the original text
    end: int
    colocated: bool


def extension_path() -> str:
    """Path of the library without its suffix, for ``.load`` and ``load_extension``.

    ``HERMES_FTS_LIBRARY`` overrides the bundled library (suffix stripped, so
    SQLite derives the entry point from the file name as usual).
    """
    override = _env.extension_override()
    if override:
        return strip_library_suffix(override)
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), LIB_NAME)


def library_file() -> str:
    """The library file itself (``extension_path`` plus its suffix, if it has one);
    raises ``ExtensionUnavailable`` naming what to do when it is not there."""
    base = extension_path()
    suffix = library_suffix()  # at call time: the platform the process runs on
    for candidate in (base + suffix, base):
        if os.path.isfile(candidate):
            elsewhere = built_elsewhere(candidate)
            if elsewhere:  # the system loader would call it missing
                raise ExtensionUnavailable(
                    f"{elsewhere}: install the wheel for this platform, or build the "
                    "library here (pip install --force-reinstall hermes-fts)"
                )
            # Checked before any loader maps it: a cut-short copy crashes the process.
            short = cut_short(candidate)
            if short:
                raise ExtensionUnavailable(
                    f"{short}; copy or build it again, or reinstall hermes-fts "
                    "(pip install --force-reinstall hermes-fts)"
                )
            return candidate
    override = _env.extension_override()
    if override:  # the variable is what to fix: a reinstall changes nothing
        what = (
            f"{override}, a directory, not a library file"
            if os.path.isdir(override)
            else f"a library that was not found at {override}"
        )
        raise ExtensionUnavailable(
            f"HERMES_FTS_LIBRARY names {what}: point it at a cjk_unicode61{suffix} "
            "library file, or unset it to use the bundled one"
        )
    raise ExtensionUnavailable(
        f"the cjk_unicode61 library was not found at {base + suffix}. "
        "Reinstall hermes-fts from a wheel (pip install --force-reinstall hermes-fts), "
        "or build it in a source checkout with `python setup.py build_ext --inplace`; "
        "HERMES_FTS_LIBRARY may point to a library built elsewhere."
    )


def _check_enabled() -> None:
    if _env.cjk_extension_disabled():
        raise ExtensionUnavailable(
            "the cjk_unicode61 extension is switched off by HERMES_CJK_FTS="
            f"{_env.cjk_switch_value()!r}; unset it to enable CJK search"
        )


# --------------------------------------------------------------------------
# Which SQLite library a connection runs on, and the one-library rule.

_lock = threading.RLock()
_bound_host: str | None = None  # identity of the SQLite library the extension serves
_strategy: str | None = None  # how the extension reached the last connection


def _host_identity(conn: Any) -> str:
    """A stable name for the SQLite library behind ``conn``."""
    module = type(conn).__module__.split(".")[0]
    if module == "sqlite3":  # the stdlib: its C part is the _sqlite3 module
        import _sqlite3

        return getattr(_sqlite3, "__file__", None) or "builtin:_sqlite3"
    mod = sys.modules.get(module)
    ext_mod = sys.modules.get(module + "._sqlite3") or mod
    return getattr(ext_mod, "__file__", None) or module


def _bind(host: str) -> None:
    global _bound_host
    with _lock:
        if _bound_host is not None and _bound_host != host:
            raise ExtensionUnavailable(
                "cjk_unicode61 is already serving the SQLite library of "
                f"{_bound_host}; one process can serve one SQLite library only "
                f"(asked for {host}). Use one sqlite3 module per process, or run "
                "the other host in a separate process."
            )
        _bound_host = host


def _answers(conn: Any, sql: str) -> bool:
    """Whether ``conn`` runs ``sql``: the probe for a function a library may lack."""
    try:
        conn.execute(sql).fetchall()
    except Exception:  # each host raises its own error class for "no such function"
        return False
    return True


def has_extension(conn: Any) -> bool:
    """True when ``conn`` has our tokenizer (``hermes_fts_cjk``), with every option
    the CJK index names, and helpers.  A TEMP table never touches the database
    file, so a read-only connection can probe too."""
    return _tokenizes(conn, " ".join(f"{option} 1" for option in INDEX_OPTIONS))


def _tokenizes(conn: Any, options: str) -> bool:
    """Whether ``conn`` has the version function and builds our tokenizer with ``options``."""
    if not _answers(conn, _PROBE_SQL):
        return False
    # query_only refuses TEMP tables too; the probe keeps nothing it writes.
    query_only = conn.execute("PRAGMA query_only").fetchone()[0]
    if query_only:
        conn.execute("PRAGMA query_only = 0")
    try:
        return _builds_probe_table(conn, options)
    finally:
        if query_only:
            conn.execute("PRAGMA query_only = 1")


def _builds_probe_table(conn: Any, options: str) -> bool:
    """Whether a TEMP table with our tokenizer and ``options`` can be created on ``conn``."""
    # A name of its own each time: a probe table left behind never fails a later probe.
    table = f"temp.hermes_fts_probe_{next(_probe_ids)}"
    try:
        conn.execute(
            f"CREATE VIRTUAL TABLE {table} USING fts5(x, tokenize='{_TOKENIZER} {options}')"
        )
    except Exception:
        return False
    try:
        conn.execute(f"DROP TABLE {table}")
    except Exception:
        # SQLite drops no table while a statement of the connection is still reading
        # ("database table is locked"); the answer stands, and TEMP ends with the connection.
        pass
    return True


def _mismatch(conn: Any, path: str) -> LibraryMismatch:
    """What the library at ``path``, loaded on ``conn``, lacks, as the error to raise."""
    if not _answers(conn, _PROBE_SQL):
        lacks = "it has no cjk_unicode61_version(), so it is not a hermes-fts library"
    elif not _tokenizes(conn, ""):
        lacks = f"it has no {_TOKENIZER} tokenizer, so it is an older hermes-fts build"
    else:
        unknown = [o for o in INDEX_OPTIONS if not _tokenizes(conn, f"{o} 1")]
        lacks = (
            f"its tokenizer does not know the option(s) {', '.join(unknown)} that the "
            "search index uses, so it is an older hermes-fts build"
        )
    fix = (
        "Unset HERMES_FTS_LIBRARY to use the bundled library, or point it at a build of "
        "this version"
        if _env.extension_override()
        else "Reinstall hermes-fts (pip install --force-reinstall hermes-fts), or rebuild it"
    )
    return LibraryMismatch(
        f"{path} cannot serve hermes-fts {__version__}: {lacks}. {fix} "
        "(`python setup.py build_ext --inplace` in a source checkout)"
    )


def has_fold(conn: Any) -> bool:
    """True when ``conn`` has ``cjk_fold()`` and ``cjk_fold_find()``; a library
    older than ``kana 1`` (whose ``cjk_fold`` leaves kana alone) lacks the latter.

    ``HERMES_FTS_LIBRARY`` may point to such a library, so the store checks once
    per connection before it folds LIKE comparisons (the pattern is folded by
    ``plan.fold_text``, which must be the library's fold).
    """
    return _answers(conn, "SELECT cjk_fold(''), cjk_fold_find('', '')")


def has_few_snippet(conn: Any, table: str) -> bool:
    """True when ``conn`` has ``cjk_few_snippet()``; a library older than it lacks it.

    FTS5 finds an auxiliary function only in a query on one of its tables, so
    the check prepares one on the FTS5 table ``table`` (it reads no row).
    """
    return _answers(
        conn, f"SELECT cjk_few_snippet({table}, 0, 0, -1, '', '', '', 1) FROM {table} WHERE 0"
    )


def has_row_evidence(conn: Any, table: str) -> bool:
    """True when ``conn`` has ``hermes_fts_held()`` and ``hermes_fts_bm25()`` (a library
    older than them lacks them), checked like ``has_few_snippet``."""
    return _answers(
        conn,
        f"SELECT hermes_fts_held({table}), hermes_fts_bm25({table}, 1.0) FROM {table} WHERE 0",
    )


def has_saturation(conn: Any, table: str) -> bool:
    """True when ``conn`` has ``hermes_fts_saturation()`` and ``hermes_fts_block_peaks()``
    (rank bounds with row sizes read once, grouped in C; a library older than them
    lacks them), checked like ``has_few_snippet``."""
    return _answers(
        conn, f"SELECT hermes_fts_saturation({table}, 1.0, x'') FROM {table} WHERE 0"
    ) and _answers(conn, "SELECT hermes_fts_block_peaks(0, 0.0, 1, 1.0) WHERE 0")


def load_strategy() -> str | None:
    """How the extension reached the most recent connection (for ``status``)."""
    return _strategy


def claim_public_name(conn: Any) -> bool:
    """Register the tokenizer as ``cjk_unicode61`` on ``conn`` too, where no library has.

    Our own tables use ``hermes_fts_cjk``; the public name is for the caller's
    tables.  False when another library (Hermes' own libfts5_cjk) owns it, or
    the loaded library predates the claim."""
    try:
        return bool(conn.execute("SELECT cjk_unicode61_claim()").fetchone()[0])
    except Exception:  # each host raises its own error class for "no such function"
        return False


def load(conn: Any, public_name: bool = True) -> str:
    """Make the tokenizer and its helpers available on ``conn``; return the strategy.

    ``public_name``: also as ``cjk_unicode61`` (``claim_public_name``)."""
    strategy = _load(conn)
    if public_name:
        claim_public_name(conn)
    return strategy


def _load(conn: Any) -> str:
    global _strategy
    _check_enabled()
    if has_extension(conn):
        _strategy = _strategy or "present"
        return "present"
    host = _host_identity(conn)
    if hasattr(conn, "enable_load_extension"):
        path = library_file()
        _bind(host)
        conn.enable_load_extension(True)
        try:
            # The entry point by name: SQLite derives one from the file name, which a
            # copy under another name (cjk_unicode61-old.so) does not export.  Only
            # the SQL function takes it on every host.
            conn.execute("SELECT load_extension(?, ?)", (path, _ENTRY_POINT)).fetchall()
        except Exception as exc:
            why = _load_failure(path, exc)
            raise ExtensionUnavailable(f"loading {path} failed: {why}") from exc
        finally:
            # Never leave SQL-level load_extension() switched on for the caller.
            conn.enable_load_extension(False)
        if not has_extension(conn):  # loaded, but not a library this version can use
            raise _mismatch(conn, path)
        _strategy = "load_extension"
        return _strategy
    if isinstance(conn, sqlite3.Connection):
        install()
        raise ExtensionUnavailable(
            "this Python's sqlite3 module cannot load extensions into an open "
            "connection; hermes_fts.install() has now registered the extension for "
            "every connection opened from here on. Open the connection again, or use "
            "hermes_fts.connect(path)."
        )
    raise ExtensionUnavailable(
        f"{type(conn).__module__}.{type(conn).__name__} cannot load SQLite extensions; "
        "use the stdlib sqlite3 module with hermes_fts.connect(), or apsw / sqlean.py"
    )


def loadable_file() -> str:
    """``library_file``, once the system loader has opened it and a SQLite has taken
    it; raises ``ExtensionUnavailable`` with the cause (a truncated file, another
    platform's build, an older one), which ``.load`` in any SQLite would meet too."""
    path = library_file()
    try:
        lib = _ctypes().CDLL(path)
    except OSError as exc:
        raise ExtensionUnavailable(f"{path} does not load: {exc}") from exc
    if not hasattr(lib, "hermes_fts_auto_init"):
        raise LibraryMismatch(
            f"{path} is not a hermes-fts library (it does not export hermes_fts_auto_init); "
            "unset HERMES_FTS_LIBRARY to use the bundled library"
        )
    try:  # an older build loads, and only a SQLite can tell what it lacks
        connect(":memory:", public_name=False).close()
    except LibraryMismatch:
        raise
    except ExtensionUnavailable:
        pass  # this Python's SQLite cannot take it, which says nothing of the library
    return path


def _load_failure(path: str, exc: BaseException) -> str:
    """Why ``load_extension(path)`` failed.  SQLite retries a file that will not load
    with the suffix added again and reports that try ("x.so.so: No such file"),
    which hides the cause (a truncated file, another platform's build): then the
    system loader's own word on ``path``."""
    said = f"{type(exc).__name__}: {exc}"
    suffix = library_suffix()
    if not suffix or path + suffix not in str(exc):
        return said
    try:
        _ctypes().CDLL(path)
    except (OSError, ExtensionUnavailable) as cause:
        return str(cause)
    return said


# --------------------------------------------------------------------------
# ctypes auto-extension for the stdlib module without enable_load_extension.

# Kept for the life of the process: connections keep pointers into the
# library, so it must never be unloaded (ctypes never dlcloses on its own).
_native: dict = {}


def _ctypes() -> Any:
    """The stdlib's ctypes, imported only when the auto-extension is needed."""
    try:
        import ctypes
    except ImportError as exc:  # a Python built without libffi
        raise ExtensionUnavailable(
            f"this Python has no ctypes module ({exc}), so the extension cannot be "
            f"registered with its sqlite3 module; {STATIC_SQLITE_WORKAROUND}"
        ) from exc
    return ctypes


def _stdlib_sqlite_library(ctypes: Any) -> tuple[Any, str]:
    """Open the SQLite library that the stdlib ``_sqlite3`` module runs on.

    Returns the library and its version.  Tries every place this
    platform's Python keeps it; a candidate counts only when it exports
    SQLite's functions and reports the module's own SQLite version.
    """
    import _sqlite3

    module_file = getattr(_sqlite3, "__file__", None)
    if not module_file:
        raise ExtensionUnavailable(
            "the sqlite3 module is built into this Python, so its SQLite cannot be "
            f"reached; {STATIC_SQLITE_WORKAROUND}"
        )
    tried: list[str] = []
    module_lacks_symbols = False
    for candidate in sqlite_library_candidates(module_file, (sys.prefix, sys.base_prefix)):
        if os.path.isabs(candidate) and not os.path.exists(candidate):
            continue
        try:
            lib = ctypes.CDLL(candidate)
        except OSError as exc:
            tried.append(f"{candidate}: {exc}")
            continue
        try:
            libversion = lib.sqlite3_libversion
            for name in ("sqlite3_auto_extension", "sqlite3_cancel_auto_extension"):
                fn = getattr(lib, name)
                fn.argtypes, fn.restype = [ctypes.c_void_p], ctypes.c_int
        except AttributeError:
            module_lacks_symbols = module_lacks_symbols or candidate == module_file
            tried.append(f"{candidate}: does not export SQLite's functions")
            continue
        libversion.argtypes, libversion.restype = [], ctypes.c_char_p
        version = libversion().decode()
        if version != sqlite3.sqlite_version:
            tried.append(f"{candidate}: SQLite {version}, the module runs {sqlite3.sqlite_version}")
            continue
        return lib, version
    if module_lacks_symbols:
        reason = (
            f"SQLite is linked statically into {module_file} and its functions are not "
            "exported, so the extension cannot be registered with it"
        )
    else:
        reason = "the SQLite library of the sqlite3 module was not found"
    raise ExtensionUnavailable(
        f"{reason} (tried: {'; '.join(tried) or 'nothing'}); {STATIC_SQLITE_WORKAROUND}"
    )


def _entry_point(ctypes: Any, path: str) -> tuple[Any, Any]:
    """The library at ``path``, never to be unloaded, and its auto-extension entry point."""
    # NODELETE: connections may outlive this handle at interpreter exit
    # (module globals are cleared first); unmapping the library under
    # their tokenizers would crash the process.
    mode = getattr(os, "RTLD_NOW", 0) | getattr(os, "RTLD_NODELETE", 0)
    try:
        ext_lib = ctypes.CDLL(path, mode=mode)
        entry = ctypes.c_void_p(ctypes.cast(ext_lib.hermes_fts_auto_init, ctypes.c_void_p).value)
    except (OSError, AttributeError) as exc:
        raise ExtensionUnavailable(
            f"{path} cannot be used as an auto-extension ({exc}); it must be a "
            "hermes-fts build exporting hermes_fts_auto_init"
        ) from exc
    return ext_lib, entry


def install() -> str:
    """Register the extension for every stdlib connection opened from now on."""
    global _strategy
    _check_enabled()
    with _lock:
        if "entry" in _native:
            return "auto_extension"
        ctypes = _ctypes()
        sqlite_lib, _version = _stdlib_sqlite_library(ctypes)
        probe = sqlite3.connect(":memory:")
        try:
            options = {row[0] for row in probe.execute("PRAGMA compile_options")}
        finally:
            probe.close()
        if "OMIT_LOAD_EXTENSION" in options:
            raise ExtensionUnavailable(
                "this SQLite was built with SQLITE_OMIT_LOAD_EXTENSION; "
                "use apsw or sqlean.py (pip install sqlean.py)"
            )
        import _sqlite3

        host = getattr(_sqlite3, "__file__", None) or "builtin:_sqlite3"
        _bind(host)
        path = library_file()
        ext_lib, entry = _entry_point(ctypes, path)
        rc = sqlite_lib.sqlite3_auto_extension(entry)
        if rc != 0:
            raise ExtensionUnavailable(f"sqlite3_auto_extension failed with code {rc}")
        probe = sqlite3.connect(":memory:")
        try:
            # Our version function answers: the library arrived, and it is what is wrong.
            mismatch = None if has_extension(probe) else _mismatch(probe, path)
            arrived = _answers(probe, _PROBE_SQL)
        finally:
            probe.close()
        if mismatch is not None:
            sqlite_lib.sqlite3_cancel_auto_extension(entry)
            if arrived:
                raise mismatch
            raise ExtensionUnavailable(
                "the extension was registered but a new connection does not have it "
                "(FTS5 missing from this SQLite, or a second copy of SQLite of the same "
                f"version); {STATIC_SQLITE_WORKAROUND}"
            )
        _native.update(sqlite=sqlite_lib, ext=ext_lib, entry=entry)
        _strategy = "auto_extension"
        return _strategy


# --------------------------------------------------------------------------
# Public conveniences.


def connect(
    path: str, readonly: bool = False, public_name: bool = True, **kwargs: Any
) -> sqlite3.Connection:
    """A stdlib sqlite3 connection with cjk_unicode61; raises ExtensionUnavailable.

    ``readonly=True`` opens a read-only URI, so nothing is ever written; an
    immutable one when nobody can be writing the file (``_sqlite.connect_readonly``).
    ``public_name``: as for ``load``.  The store passes False: a connection
    that writes an agent's store must not tokenize Hermes' own CJK index.
    """
    global _strategy
    _check_enabled()
    loadable = hasattr(sqlite3.Connection, "enable_load_extension")
    if not loadable:
        install()
    conn = connect_readonly(path, **kwargs) if readonly else sqlite3.connect(str(path), **kwargs)
    try:
        # A file that cannot be read (a full disk with no room for the -shm, a
        # lock) fails the probes below too: its own error, not "no extension".
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        if loadable:
            load(conn, public_name)
            return conn
        if not has_extension(conn):
            raise ExtensionUnavailable("the auto-extension did not reach the new connection")
        _strategy = "auto_extension"
        if public_name:
            claim_public_name(conn)
    except BaseException:
        conn.close()
        raise
    return conn


_local = threading.local()


def tokenize(text: str, *args: str, unigrams: bool = False, query: bool = False) -> list[Token]:
    """Tokens of ``text`` exactly as cjk_unicode61 makes them in FTS5.

    ``args`` are tokenizer arguments (e.g. ``"remove_diacritics", "2"``);
    ``query=True`` tokenizes as a MATCH query does (never any unigram synonyms).
    Runs in a private in-memory connection of this thread.
    """
    if not isinstance(text, str):  # None or bytes failed inside as an AttributeError
        raise TypeError(f"tokenize takes text, not {type(text).__name__}")
    _check_enabled()
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = connect(":memory:", check_same_thread=True)
        _local.conn = conn
    targs = list(args) + (["unigrams", "1"] if unigrams else [])
    fn = "cjk_tokens_query" if query else "cjk_tokens"
    placeholders = "".join(", ?" for _ in targs)
    value: str | bytes = text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate cannot be strict UTF-8.  Pass its 3-byte encoding,
        # as another SQLite client would store it; the tokenizer treats those
        # invalid bytes as a separator (byte offsets count them).
        value = text.encode("utf-8", "surrogatepass")
    try:
        (raw,) = conn.execute(
            f"SELECT {fn}(CAST(? AS TEXT){placeholders})", [value, *targs]
        ).fetchone()
    except sqlite3.Error as exc:
        raise ValueError(f"cjk_unicode61 rejected the arguments {targs!r}: {exc}") from exc
    return [
        Token(t["token"], int(t["start"]), int(t["end"]), bool(t["colocated"]))
        for t in json.loads(raw)
    ]
