"""The pending table applied after a Hermes turn (``hermes/upkeep.py``), without Hermes:
the plugin's hook itself runs against the real hermes-agent in
``tests/test_hermes_plugin.py``."""

from __future__ import annotations

import logging
import shutil
import subprocess
from pathlib import Path

import pytest
from _support import needs_extension

from hermes_fts.hermes import upkeep
from hermes_fts.store import SessionStore

pytestmark = needs_extension


def _hermes_wrote(path: Path, texts: list[str]) -> None:
    """Messages written by a process without the extension (the sqlite3 shell)."""
    script = "".join(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES ('s1', 'user', '{text}', {1_700_000_000 + n});"
        for n, text in enumerate(texts)
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), script], check=True, timeout=60)


def test_a_run_applies_what_waits_and_the_index_answers(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
    _hermes_wrote(path, ["the zebrafish tank leaks", "水族箱漏水了"])
    with SessionStore(path, readonly=True) as before:
        assert before.index_state()["cjk_pending"] == 2
    thread = upkeep.apply_after_turn(path)
    assert thread is not None and not thread.daemon
    thread.join(timeout=60)
    assert not upkeep.running()
    with SessionStore(path, readonly=True) as after:
        assert after.index_state()["cjk_pending"] == 0
        for word in ("zebrafish", "漏水"):
            found = after.search(word)
            assert found.route == "fts_cjk" and len(found.rows) == 1, (word, found)


def test_a_failed_run_is_told_once_and_raises_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"not a database, " * 512)
    caplog.set_level(logging.DEBUG, logger=upkeep.__name__)
    for _ in range(2):
        thread = upkeep.apply_after_turn(path)
        assert thread is not None
        thread.join(timeout=60)
    told = [r for r in caplog.records if "left pending CJK changes for later" in r.getMessage()]
    assert [r.levelno for r in told] == [logging.INFO, logging.DEBUG], told
    assert path.read_bytes() == b"not a database, " * 512  # nothing written
