"""``read`` shows a session as ``scroll`` does: messages the user took back
(rewound: ``active = 0, compacted = 0``) are no part of it, in the first and last
messages, with ``--full`` and in ``message_count``; the turns a compaction
archived (``active = 0, compacted = 1``) stay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _tool_fixtures import T0, chat, conversation

from hermes_fts import session_search
from hermes_fts.cli import main
from hermes_fts.store import SessionStore


@pytest.fixture
def db(tmp_path: Path) -> tuple[Path, list[int], set[int]]:
    path = tmp_path / "state.db"
    with SessionStore(path) as st:
        ids = conversation(st, "s", chat(40), start=T0)
        rewound = {ids[2], ids[3], ids[-2]}
        for mid in rewound:
            st.set_message_flags(mid, active=False, compacted=False)
        st.set_message_flags(ids[5], active=False, compacted=True)  # archived: shown
    return path, ids, rewound


def test_read_leaves_out_what_was_rewound(db: tuple[Path, list[int], set[int]]) -> None:
    path, ids, rewound = db
    kept = [mid for mid in ids if mid not in rewound]
    with SessionStore(path, readonly=True) as st:
        page = session_search(st, session_id="s")
        assert page["message_count"] == len(kept)
        assert [m["id"] for m in page["messages"]] == kept[:20] + kept[-10:]
        scrolled = session_search(st, session_id="s", around_message_id=ids[4], window=3)
        assert [m["id"] for m in scrolled["messages"]] == kept[:6]


def test_read_full_leaves_out_what_was_rewound(
    db: tuple[Path, list[int], set[int]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, ids, rewound = db
    assert main(["--db", str(path), "--json", "read", "s", "--full"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [m["id"] for m in doc["messages"]] == [mid for mid in ids if mid not in rewound]
    assert doc["message_count"] == len(ids) - len(rewound)
