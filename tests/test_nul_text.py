"""Stored text holding a NUL character (a tool's binary output, a pasted file).

FTS5 hands the tokenizer a column's bytes by length, so the CJK index reads
the words on both sides of a NUL; SQLite's LIKE and a MATCH text stop at the
first NUL, as C strings do.  Every path must still read such a row as the
index does.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from _support import needs_extension

from hermes_fts.store import SessionStore

pytestmark = [
    needs_extension,
    pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 shell"),
]


def test_a_nul_in_a_message_is_not_index_damage(tmp_path: Path) -> None:
    # The health probe asked the index for the message's first words, NUL and
    # all: FTS5 called the phrase unterminated, status said the index was
    # damaged and every optimize-storage rebuilt it.
    with SessionStore(tmp_path / "state.db") as st:
        st.add_session("s1", "cli")
        st.add_message("s1", "user", "deploy\x00東京 rollout")
        st.add_message("s1", "user", "seed 東京")
        assert "damaged" not in st.status()["needs_optimize"]
        st.optimize_storage(vacuum=False)
        assert "damaged" not in st.status()["needs_optimize"]
        assert not st.optimize_needed()


# 東京 NUL 部署, and deploy NUL 東京: words on both sides of a NUL.
NUL_ROWS = ("e69db1e4baac00e983a8e7bdb2", "6465706c6f7900e69db1e4baac")


def _ids(st: SessionStore, query: str, route: str) -> list[int]:
    found = st.search(query, route=route, limit=50)
    assert found.route == route, found.route
    return sorted(r["id"] for r in found.rows)


@pytest.mark.parametrize("query", ["部署", "東京", "署", '"東京 部署"', "NEAR(東京 部署, 2)"])
def test_words_after_a_nul_are_found_on_every_route(tmp_path: Path, query: str) -> None:
    # The sqlite3 shell writes the rows, as Hermes does: they wait for the CJK
    # index, which a read-only store answers by LIKE; LIKE read up to the NUL.
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        st.add_session("s1", "cli")
        st.add_message("s1", "user", "seed")
    script = "".join(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        f"VALUES('s1', 'user', CAST(x'{row}' AS TEXT), 1700000001);"
        for row in NUL_ROWS
    )
    subprocess.run([str(shutil.which("sqlite3")), str(path), script], check=True, timeout=60)
    with SessionStore(path, readonly=True) as waiting:
        assert waiting.index_state()["cjk_pending"] == len(NUL_ROWS)
        pending = _ids(waiting, query, "fts_cjk")
        scanned = _ids(waiting, query, "like_scan")
    with SessionStore(path) as st:
        st.optimize_storage(vacuum=False)
        indexed = _ids(st, query, "fts_cjk")
    assert indexed  # the index reads past the NUL
    assert pending == scanned == indexed, query
