"""SQLite hosts for the C-extension tests (imported by test_tokenizer/test_aux).

Two hosts:

* ``stdlib``: ``hermes_fts.connect()`` on this Python's sqlite3 module (SQLite
  3.40.1 here, loaded through the auto-extension) -- what the product uses.
* ``apsw``: a newer SQLite (3.54) bundled in APSW.  It loads a *copy* of the
  library from a temp dir: the extension keeps SQLite's API table in a
  process-wide pointer, so one loaded copy must serve one SQLite library only.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import unicodedata
from pathlib import Path
from typing import Any

import pytest

import hermes_fts
from hermes_fts._cjk_ranges import is_cjk
from hermes_fts.loader import LIB_SUFFIX

try:
    import apsw
except ImportError:  # pragma: no cover - apsw is in the test extras
    apsw = None

DB_ERRORS: tuple[type[BaseException], ...] = (sqlite3.Error,) + ((apsw.Error,) if apsw else ())
LIBRARY = Path(hermes_fts.extension_path() + LIB_SUFFIX)


class Db:
    """A thin uniform wrapper over a stdlib or APSW connection."""

    def __init__(self, conn: Any, host: str) -> None:
        self.conn = conn
        self.host = host

    def all(self, sql: str, params: Any = ()) -> list[tuple]:
        return [tuple(r) for r in self.conn.execute(sql, params).fetchall()]

    def value(self, sql: str, params: Any = ()) -> Any:
        return self.all(sql, params)[0][0]

    def run(self, sql: str, params: Any = ()) -> None:
        self.conn.execute(sql, params).fetchall()

    @property
    def sqlite_version(self) -> tuple[int, ...]:
        return tuple(int(x) for x in self.value("SELECT sqlite_version()").split("."))

    def tokens(self, text: Any, *args: str, query: bool = False) -> list[dict]:
        fn = "cjk_tokens_query" if query else "cjk_tokens"
        marks = "".join(", ?" for _ in args)
        return json.loads(self.value(f"SELECT {fn}(?{marks})", [text, *args]))

    def terms(self, text: Any, *args: str, query: bool = False) -> list[str]:
        """Positional token texts (colocated ones left out)."""
        return [t["token"] for t in self.tokens(text, *args, query=query) if not t["colocated"]]


_apsw_copy: dict[str, Path] = {}


def _apsw_library(tmp_root: Path) -> Path:
    if "path" not in _apsw_copy:
        target = tmp_root / ("cjk_unicode61" + LIB_SUFFIX)
        shutil.copyfile(LIBRARY, target)
        _apsw_copy["path"] = target
    return _apsw_copy["path"]


def open_db(host: str, tmp_root: Path) -> Db:
    if host == "stdlib":
        return Db(hermes_fts.connect(":memory:"), host)
    if apsw is None:
        pytest.skip("apsw is not installed (pip install apsw)")
    conn = apsw.Connection(":memory:")
    conn.enable_load_extension(True)
    lib = _apsw_library(tmp_root)
    conn.load_extension(str(lib.with_suffix("")))
    return Db(conn, host)


HOSTS = ["stdlib", "apsw"]


def host_db(host: str, tmp_path_factory: pytest.TempPathFactory) -> Db:
    """Body of the test modules' ``db``/``sdb`` fixtures."""
    root = tmp_path_factory.getbasetemp() / "apsw_lib"
    root.mkdir(exist_ok=True)
    return open_db(host, root)


def fold(text: str) -> str:
    """Reference width folding written from the spec (CJKWidthFilter)."""
    out: list[str] = []
    for ch in text:
        cp = ord(ch)
        if 0xFF01 <= cp <= 0xFF5E:
            out.append(chr(cp - 0xFEE0))
        elif 0xFF65 <= cp <= 0xFF9F:
            folded = unicodedata.normalize("NFKC", ch)
            if cp in (0xFF9E, 0xFF9F) and out and 0x30A1 <= ord(out[-1]) <= 0x30FA:
                composed = unicodedata.normalize("NFC", out[-1] + folded)
                if len(composed) == 1:
                    out[-1] = composed
                    continue
            out.append(folded)
        else:
            out.append(ch)
    return "".join(out)


def assert_exact_offsets(text: str, tokens: list[dict]) -> None:
    """Every token's [start, end) folds back to the token text."""
    raw = text.encode("utf-8")
    for t in tokens:
        piece = fold(raw[t["start"] : t["end"]].decode("utf-8"))
        if all(is_cjk(ord(c)) for c in piece):
            assert piece == t["token"], (t, piece)
        else:
            assert piece.lower() == t["token"], (t, piece)
