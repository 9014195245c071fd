"""``hermes-fts browse`` deep in a long history: a page far down is read from the
store once, and is the same slice of the listing a single read of everything gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _tool_fixtures import T0, conversation

from hermes_fts.cli import main
from hermes_fts.store import SessionStore
from hermes_fts.tool import sessions

SESSIONS = 300
CONTINUED_EVERY = 10  # one session in ten continues the one before (compression)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("browse") / "state.db"
    with SessionStore(path) as store:
        for n in range(SESSIONS):
            continues = n % CONTINUED_EVERY == 1
            conversation(
                store,
                f"s{n:03d}",
                [("user", f"question {n}"), ("assistant", f"answer {n}")],
                start=T0 + 100 * n,
                session_key=f"k{n - 1 if continues else n}",
                parent=f"s{n - 1:03d}" if continues else None,
                end_reason="compression" if n % CONTINUED_EVERY == 0 else None,
            )
    return path


def _page(db: Path, capsys: pytest.CaptureFixture[str], offset: int) -> dict[str, Any]:
    assert (
        main(["--db", str(db), "--json", "browse", "--offset", str(offset), "--limit", "10"]) == 0
    )
    return json.loads(capsys.readouterr().out)


def test_a_deep_page_reads_the_listing_once(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing's first read was the page and 15 rows more: the conversations a
    continuation folds into (one session in ten on the 1M store) ran it short deep
    down, and the second read computed the whole listing again, and more (3.7 s and
    99 MB at offset 20,000 of the 1M store; now 2.0 s and 68 MB)."""
    real = SessionStore.sessions_by_activity
    reads: list[tuple[int, int]] = []

    def counted(self: SessionStore, *args: Any, **kwargs: Any) -> Any:
        reads.append((kwargs.get("limit", 0), kwargs.get("offset", 0)))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SessionStore, "sessions_by_activity", counted)
    got = _page(db, capsys, 200)
    assert len(reads) == 1, reads
    monkeypatch.setattr(sessions, "_BROWSE_EXTRA_ROWS", 10 * SESSIONS)  # everything at once
    reference = _page(db, capsys, 200)
    assert got["results"] == reference["results"]
    assert got["next_offset"] == reference["next_offset"] == 210
    listed = [r["session_id"] for r in got["results"]]
    # A continued conversation is listed once: by its latest session, not also its first.
    continued = [s for s in listed if int(s[1:]) % CONTINUED_EVERY == 1]
    assert len(listed) == 10 and continued
    assert not any(f"s{int(s[1:]) - 1:03d}" in listed for s in continued)
