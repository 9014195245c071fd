"""``hermes-fts browse`` lines its columns up on a terminal: a September date is
wider than the 28 columns the first column had, a source can be longer than 9
characters, a message count longer than 5 digits, and a CJK title takes two
columns a character (60 characters of one were 120 columns)."""

from __future__ import annotations

import unicodedata
from datetime import datetime
from pathlib import Path

import pytest
from _tool_fixtures import conversation

from hermes_fts.cli import main
from hermes_fts.store import SessionStore


def _columns(text: str) -> int:
    return sum(
        2 if unicodedata.east_asian_width(ch) in "WF" else 0 if unicodedata.combining(ch) else 1
        for ch in text
    )


def test_browse_columns_line_up(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "state.db"
    september = datetime(2025, 9, 24, 22, 15).timestamp()
    with SessionStore(db) as st:
        title = "部署到东京服务器的计划" * 10
        conversation(st, "cjk", [("user", "你好")], title=title, start=september)
        conversation(st, "ha", [("user", "lights")], source="homeassistant", start=september - 60)
        st.add_session("many", "cli", started_at=september - 120, title="a long chat")
        st.add_messages(
            {"session_id": "many", "role": "user", "content": f"m{i}", "timestamp": september - 120}
            for i in range(123_456)
        )
    assert main(["--db", str(db), "browse"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header, rows = lines[1], lines[2::2]
    links = lines[3::2]
    assert len(rows) == 3 and all(link.strip().startswith("@session:") for link in links)
    title_at = header.index("title / preview")
    source_at = header.index("source")
    for row in rows:
        date, rest = row[:source_at], row[source_at:]
        assert date.startswith("September") and date.endswith(" ") and _columns(date) == source_at
        # The title starts under its header, and a long one stops at 60 columns.
        before, title_cell = row[:title_at], row[title_at:]
        assert before.endswith("  ") and _columns(before) == title_at, row
        assert _columns(title_cell) <= 60
        assert rest.split()[0] in ("cli", "homeassistant")
    assert "123,456" in rows[2] or "123456" in rows[2]
    for link in links:
        assert len(link) - len(link.lstrip()) == title_at
    assert rows[0][title_at:].startswith("部署到东京") and rows[0].endswith("\u2026")
