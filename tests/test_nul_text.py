"""Stored text holding a NUL character (a tool's binary output, a pasted file).

FTS5 hands the tokenizer a column's bytes by length, so the CJK index reads
the words on both sides of a NUL; SQLite's LIKE and a MATCH text stop at the
first NUL, as C strings do.  Every path must still read such a row as the
index does.
"""

from __future__ import annotations

from pathlib import Path

from _support import needs_extension

from hermes_fts.store import SessionStore

pytestmark = needs_extension


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
