"""Deleted means gone, as far as SQLite allows (issue 10, item 5).

Two stores hold the same history written by the real Hermes Agent 0.19.0
(``_coex_driver.py seed``): ``control`` is never touched by hermes-fts,
``ours`` is optimized by it.  A session with distinctive text (a Latin
sentence, a CJK sentence, both also inside tool-call arguments, and a long
tool row) is written by the agent on both, then removed by the agent's own
``delete_session`` and ``vacuum()``.  The raw bytes of each file (and its
``-wal``) are searched for the text:

* right after the agent's delete, ours holds no copy the control does not,
  except in ``hermes_fts_cjk_pending``: the old text the CJK index needs to
  delete the row's tokens, which the agent's process cannot do without our
  tokenizer (docs/DESIGN.md §5.3, the exposure window), and in our word
  index's older segments, which Hermes' own vacuum does not merge (unicode61
  keeps a CJK run as one token);
* after the next hermes-fts write (``sync``) or ``optimize-storage``, no copy
  is left anywhere, even where this SQLite build does not overwrite deleted
  content by default.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import _hermes_env as he
import pytest

from hermes_fts import loader
from hermes_fts.index import schema
from hermes_fts.store import SessionStore

DRIVER = Path(__file__).with_name("_coex_driver.py")
ROOT = Path(__file__).resolve().parent.parent

LATIN = "Quixotic zebras juggle seventeen amber lanterns nightly"
CJK = "秘密的紫色大象在月光下跳舞"
IN_ARGS = "Veritas obscura flumen tacitum"

# The agent's own code: write the secret session, or delete it and VACUUM.
AGENT = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from hermes_state import SessionDB
    latin, cjk, in_args = sys.argv[3:6]
    db = SessionDB(Path(sys.argv[2]))
    if sys.argv[1] == "write":
        db.create_session("secret", "cli")
        db.append_message("secret", "user", content=f"{latin} {cjk}")
        call = {"id": "c1", "type": "function", "function": {
            "name": "web_search", "arguments": json.dumps({"q": f"{in_args} {cjk}"})}}
        db.append_message("secret", "assistant", content="ok", tool_calls=[call])
        db.append_message("secret", "tool", content=f"{cjk} {latin} output " * 300,
                          tool_name="terminal")
    else:
        db.delete_session("secret")
        db.vacuum()
    db.close()
    print("{}")
""")


def needles() -> dict[str, bytes]:
    """Each secret as it sits in the file.  The agent stores tool-call arguments as a
    JSON string inside JSON, so CJK there is a ``\\uXXXX`` escape, escaped once more."""
    in_args_cjk = json.dumps(json.dumps(CJK)[1:-1])[1:-1]
    return {
        "latin": LATIN.encode(),
        "cjk": CJK.encode(),
        "in_args": IN_ARGS.encode(),
        "cjk_in_args": in_args_cjk.encode(),
    }


def raw_copies(db: Path) -> dict[str, int]:
    """How often each needle occurs in the raw bytes of the file and its -wal."""
    blobs = [p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists()]
    return {name: sum(b.count(n) for b in blobs) for name, n in needles().items()}


def copies_by_table(db: Path) -> dict[str, dict[str, int]]:
    """Per table (FTS shadow tables included), the needle occurrences its values hold."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    found: dict[str, dict[str, int]] = {}
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE "
                "'CREATE VIRTUAL TABLE%'"
            )
        ]
        for table in tables:
            counts = dict.fromkeys(needles(), 0)
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    if isinstance(value, str):
                        value = value.encode()
                    if isinstance(value, bytes):
                        for name, needle in needles().items():
                            counts[name] += value.count(needle)
            if any(counts.values()):
                found[table] = {k: v for k, v in counts.items() if v}
    finally:
        conn.close()
    return found


def agent(venv: Path, db: Path, *args: str) -> None:
    """Run Hermes' own code (``args`` after the interpreter) next to ``db``."""
    env = he.clean_env(db.parent / "home")
    proc = subprocess.run(
        [str(he.venv_python(venv)), *args], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr


def secret(venv: Path, command: str, db: Path) -> None:
    agent(venv, db, "-c", AGENT, command, str(db), LATIN, CJK, IN_ARGS)


def hermes_fts(*args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr


def checkpoint(db: Path) -> None:
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.close()


@pytest.fixture()
def pair(tmp_path: Path, hermes_venv: Path) -> tuple[Path, Path]:
    """``(ours, control)``: the same agent-written history twice."""
    ours, control = tmp_path / "state.db", tmp_path / "control.db"
    agent(hermes_venv, ours, str(DRIVER), "seed", str(ours))
    shutil.copy(ours, control)
    return ours, control


@pytest.mark.parametrize("written", ["before", "after"])
@pytest.mark.parametrize("next_write", ["sync", "optimize-storage"])
def test_deleted_text_leaves_no_residue_beyond_the_pending_window(
    pair: tuple[Path, Path], hermes_venv: Path, written: str, next_write: str
) -> None:
    """``written``: the secret session is written before or after optimize-storage."""
    ours, control = pair
    if written == "before":
        for db in pair:
            secret(hermes_venv, "write", db)
    hermes_fts("optimize-storage", "--yes", "--db", str(ours))
    if written == "after":
        for db in pair:
            secret(hermes_venv, "write", db)
    assert all(raw_copies(control).values())  # every needle is really in the file
    for db in pair:
        secret(hermes_venv, "forget", db)

    theirs, mine = raw_copies(control), raw_copies(ours)
    assert copies_by_table(control) == {}
    tables = copies_by_table(ours)
    # The window: the pending table holds the text, one copy per old value, and
    # the word index's older segments a CJK run as one token.
    assert set(tables) <= {schema.CJK_PENDING, f"{schema.BASE}_data"}, tables
    window = tables.get(schema.CJK_PENDING, {})
    if written == "before":
        assert window.get("latin", 0) >= 1 and window.get("cjk", 0) >= 1, window
    else:
        # Never applied to the CJK index, so there is nothing to delete from
        # it and the pending table keeps no old text at all.
        assert window == {}, window
    tokens = tables.get(f"{schema.BASE}_data", {})
    for name in needles():
        assert mine[name] <= theirs[name] + window.get(name, 0) + tokens.get(name, 0), (
            name,
            mine,
            theirs,
            window,
        )

    # The next hermes-fts write applies the pending rows and purges their text.
    hermes_fts(next_write, *(["--yes"] if next_write != "sync" else []), "--db", str(ours))
    checkpoint(ours)
    assert copies_by_table(ours) == {}
    assert raw_copies(ours) == dict.fromkeys(needles(), 0)
    if next_write == "optimize-storage":
        # Its merge also drops the deleted rows' tokens from the CJK index, which
        # otherwise stay in older segments (words and bigrams, never the text).
        assert token_copies(ours) == dict.fromkeys(TOKENS, 0)
        assert token_copies(control) == dict.fromkeys(TOKENS, 0)  # the agent's own vacuum()


# Words of the secret as FTS5 stores its terms (folded to lower case), and a bigram.
TOKENS = ("lanterns", "veritas", "tacitum", "紫色")


def token_copies(db: Path) -> dict[str, int]:
    blobs = [p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists()]
    return {t: sum(b.count(t.encode()) for b in blobs) for t in TOKENS}


def test_the_cjk_index_keeps_deleted_tokens_only_until_optimize_storage(
    pair: tuple[Path, Path], hermes_venv: Path
) -> None:
    """The remaining window, measured: after ``sync`` the text is gone but the CJK
    index's older segments may still hold its words until optimize-storage merges them."""
    ours, _control = pair
    secret(hermes_venv, "write", ours)
    hermes_fts("optimize-storage", "--yes", "--db", str(ours))
    secret(hermes_venv, "forget", ours)
    hermes_fts("sync", "--db", str(ours))
    checkpoint(ours)
    assert raw_copies(ours) == dict.fromkeys(needles(), 0)
    assert any(token_copies(ours).values())  # what the docs call the token window
    hermes_fts("optimize-storage", "--yes", "--db", str(ours))
    checkpoint(ours)
    assert token_copies(ours) == dict.fromkeys(TOKENS, 0)


def test_purged_text_is_overwritten_where_sqlite_keeps_deleted_bytes_by_default(
    pair: tuple[Path, Path], hermes_venv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many SQLite builds (macOS, python.org) leave deleted cells in place unless
    ``secure_delete`` is on; such a build is simulated by switching it off on every
    new connection.  Our writer still leaves no copy."""
    ours, _control = pair
    with SessionStore(ours) as store:
        assert store.optimize_storage(min_pause=0, vacuum=False)["ok"]
    secret(hermes_venv, "write", ours)
    hermes_fts("sync", "--db", str(ours))  # indexed, so the delete must log old text
    secret(hermes_venv, "forget", ours)
    assert copies_by_table(ours).keys() <= {schema.CJK_PENDING, f"{schema.BASE}_data"}

    real_connect = loader.connect

    def insecure_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real_connect(*args, **kwargs)
        conn.execute("PRAGMA secure_delete = OFF")
        return conn

    monkeypatch.setattr(loader, "connect", insecure_connect)
    with SessionStore(ours) as store:  # what `hermes-fts sync` runs
        store.sync()
        assert store.index_state()["cjk_pending"] == 0
    checkpoint(ours)
    assert raw_copies(ours) == dict.fromkeys(needles(), 0)
