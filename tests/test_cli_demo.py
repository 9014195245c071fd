"""``hermes-fts demo``: every line shows the row that proves what the line claims."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from hermes_fts.cli import main
from hermes_fts.store import open_store
from hermes_fts.tool import session_search

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("demo") / "demo.db"


@pytest.fixture(scope="module")
def report(demo_db: Path) -> dict[str, dict[str, Any]]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["demo", "--db", str(demo_db), "--json"]) == 0
    data = json.loads(buffer.getvalue())
    by_query = {item["query"]: item for item in data["searches"]}
    for item in by_query.values():
        assert item["payload"]["success"] is True, item
    return by_query


def _results(report: dict[str, dict[str, Any]], query: str) -> list[dict[str, Any]]:
    results = report[query]["payload"]["results"]
    assert results, query
    return results


@pytest.mark.parametrize(
    ("query", "title"),
    [
        ("部署", "部署脚本权限问题"),
        ("設定ファイル", "設定ファイルの YAML 移行"),
        ("백업", "데이터베이스 백업 자동화"),
        ("migration", "Orders table migration"),
        ("deploy.sh", "部署脚本权限问题"),
        ("nginx", "nginx https 跳转"),
    ],
)
def test_word_lines_mark_the_word_in_its_conversation(report, query, title):
    first = _results(report, query)[0]
    assert first["title"] == title
    assert f">>>{query}<<<" in first["snippet"]


def test_single_character_is_found_inside_longer_text(report):
    for res in _results(report, "猫"):
        before, marked, after = res["snippet"].partition(">>>猫<<<")
        assert marked and before.strip() and after.strip(), res["snippet"]


def test_glued_line_shows_the_glued_message(report):
    first = _results(report, "nginx配置")[0]
    assert first["matched_role"] == "user"
    # Han characters run straight into the Latin word: no space the tokenizer could use
    assert "修改>>>nginx配置<<<" in first["snippet"]


def test_or_line_finds_both_scripts(report):
    snippets = [res["snippet"] for res in _results(report, "备份 OR 백업")]
    assert any(">>>备份<<<" in s for s in snippets)
    assert any(">>>백업<<<" in s for s in snippets)


def test_full_width_query_finds_plain_letters(report):
    first = _results(report, "ｍｉｇｒａｔｉｏｎ")[0]
    assert first["title"] == "Orders table migration"
    assert ">>>migration<<<" in first["snippet"]  # stored text is plain ASCII


def test_time_bounded_line_keeps_only_earlier_hits(report, demo_db):
    item = report["backup"]
    assert item["before"] == "2026-01-10" and "--before 2026-01-10" in item["command"]
    # The demo kept its store (--db): the command shown reruns the search on it.
    assert item["command"].endswith(f"--before 2026-01-10 --db {demo_db}"), item["command"]
    payload = item["payload"]
    bound = datetime.fromisoformat("2026-01-10").timestamp()
    assert payload["filters"] == {"before": bound}
    titles = [res["title"] for res in _results(report, "backup")]
    assert titles == ["每日数据库备份 / nightly backup"]
    # without the bound, later conversations match too
    with open_store(demo_db, readonly=True) as store:
        unbounded = session_search(store, query="backup", limit=10)
    later = {res["title"] for res in unbounded["results"]} - set(titles)
    assert later, unbounded


def test_simplified_query_finds_traditional_text(report):
    first = _results(report, "台北 高铁")[0]
    assert first["title"] == "臺北到高雄的高鐵"
    # the stored text is Traditional, and the highlight marks it as written
    assert ">>>臺北<<<" in first["snippet"] and ">>>高鐵<<<" in first["snippet"]
    assert "台北" not in first["snippet"] and "高铁" not in first["snippet"]


def test_without_the_extension_the_demo_says_why_its_folding_lines_find_nothing(
    tmp_path: Path,
) -> None:
    """HERMES_CJK_FTS=0: the header said only "NOT loaded: CJK queries use LIKE", and
    '台北 高铁' printed "No matching sessions" under "Simplified query finds
    Traditional text", with nothing saying why."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "HERMES_CJK_FTS": "0", "PYTHONPATH": str(Path(__file__).parents[1])}
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "demo", "--db", str(tmp_path / "d.db")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    head, *rest = proc.stdout.split("\n\n")
    assert "NOT loaded (switched off by HERMES_CJK_FTS=0)" in head, head
    folding = next(block for block in rest if "'台北 高铁'" in block)
    assert "0 session(s)" in folding and "note: the CJK extension is switched off" in folding


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_demo_ended_by_a_signal_leaves_no_temporary_store(tmp_path: Path, signum: int) -> None:
    """`timeout 1 hermes-fts demo`, or the terminal closed: SIGTERM and SIGHUP skip
    every finally, so the temporary folder and its store stayed in the temp dir."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes_fts.cli", "demo"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(temp)},
    )
    try:
        deadline = time.monotonic() + 60
        while not list(temp.glob("hermes-fts-demo-*/state.db")):
            assert proc.poll() is None, "the demo ended before the signal"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode in (0, 128 + signum), err  # or it ended first
    assert b"Traceback" not in err, err
    assert list(temp.iterdir()) == []
