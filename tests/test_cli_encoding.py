"""``hermes-fts`` on a terminal whose encoding is not UTF-8 (a Latin-1 or ASCII
locale, a Windows code page): CJK results, errors and ``--json`` print without
a traceback, ``--json`` stays one valid JSON document with every character.

``PYTHONIOENCODING`` gives the real process the encoding such a locale gives it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _support import needs_extension

from hermes_fts.store import SessionStore

ROOT = Path(__file__).resolve().parents[1]

pytestmark = needs_extension


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("enc") / "state.db"
    with SessionStore(path) as store:
        store.add_session("s1", "cli", title="桂林 trip ラーメン")
        store.add_message("s1", "user", "我们去桂林旅游 and eat ラーメン 🍜")
        store.add_message("s1", "assistant", "好的，桂林很美")
    return path


def _run(db: Path, encoding: str, *argv: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": encoding}
    env.pop("PYTHONUTF8", None)
    return subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", "--db", str(db), *argv],
        capture_output=True,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize("encoding", ["latin-1", "ascii", "cp1252"])
@pytest.mark.parametrize(
    "argv", [["search", "桂林"], ["read", "s1"], ["browse"], ["scroll", "s1", "1"]]
)
def test_text_output_on_a_terminal_that_cannot_show_cjk(
    db: Path, encoding: str, argv: list[str]
) -> None:
    proc = _run(db, encoding, *argv)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(encoding, "replace")
    assert proc.returncode == 0
    out = proc.stdout.decode(encoding)
    assert "s1" in out and "?" in out  # what the terminal cannot show, as ?


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
@pytest.mark.parametrize("argv", [["search", "桂林"], ["read", "s1"], ["browse"]])
def test_json_is_one_document_with_every_character(
    db: Path, encoding: str, argv: list[str]
) -> None:
    proc = _run(db, encoding, "--json", *argv)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout.decode(encoding))
    utf8 = json.loads(_run(db, "utf-8", "--json", *argv).stdout.decode("utf-8"))
    doc.pop("elapsed_ms", None), utf8.pop("elapsed_ms", None)
    assert doc == utf8  # escaped, not lost


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
def test_an_error_naming_cjk_text_is_printed(db: Path, encoding: str) -> None:
    proc = _run(db, encoding, "read", "桂林")
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.decode(encoding).startswith("Error: session ?? not found")
    proc = _run(db, encoding, "--json", "read", "桂林")
    assert proc.returncode == 1 and proc.stderr == b""
    assert json.loads(proc.stdout.decode(encoding))["error"].startswith("session 桂林 not found")


def _run_c_locale(*argv: str) -> subprocess.CompletedProcess[bytes]:
    """The command under the C locale with UTF-8 mode off: Python's file names are ASCII
    (the bytes past it as surrogate escapes), as in a cron job or a bare container."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LC_ALL": "C", "PYTHONUTF8": "0"}
    env.pop("PYTHONIOENCODING", None)
    return subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", *argv], capture_output=True, env=env, timeout=120
    )


@pytest.mark.parametrize(
    "argv", [["status"], ["search", "deploy"], ["read", "s1"], ["sync"], ["--json", "status"]]
)
def test_a_store_in_a_folder_named_in_cjk_under_the_c_locale(
    tmp_path: Path, argv: list[str]
) -> None:
    folder = tmp_path / "数据 备份"
    folder.mkdir()
    with SessionStore(folder / "state.db") as store:
        store.add_session("s1", "cli", title="trip")
        store.add_message("s1", "user", "deploy 桂林")
    proc = _run_c_locale("--db", str(folder / "state.db"), *argv)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode("ascii", "replace")
    assert proc.returncode == 0, proc.stderr
    assert b"s1" in proc.stdout or b"state.db" in proc.stdout or b"Applied" in proc.stdout


@pytest.mark.parametrize("db_flag", ["--db", "--db="])
def test_cjk_typed_under_the_c_locale_is_searched_as_typed(tmp_path: Path, db_flag: str) -> None:
    """The terminal sends UTF-8 while Python reads argv as ASCII: the query and the
    session id are the text typed, and the store's path (CJK too) still opens."""
    folder = tmp_path / "数据"
    folder.mkdir()
    db = folder / "state.db"
    with SessionStore(db) as store:
        store.add_session("会话 1", "cli", title="trip")
        store.add_message("会话 1", "user", "我们去桂林旅游")
    store_args = [db_flag + str(db)] if db_flag.endswith("=") else [db_flag, str(db)]
    found = _run_c_locale(*store_args, "--json", "search", "桂林")
    assert found.returncode == 0, found.stdout
    doc = json.loads(found.stdout.decode("ascii"))
    assert doc["query"] == "桂林" and doc["results"][0]["session_id"] == "会话 1"
    shown = _run_c_locale(*store_args, "read", "会话 1")
    assert shown.returncode == 0 and b"Traceback" not in shown.stderr, shown.stderr
    assert "??????" in shown.stdout.decode("ascii")  # 我们去 and the rest, as ?


def test_json_notes_on_stderr_keep_every_character(tmp_path: Path) -> None:
    """``remove --yes --json`` names the store in a note event on stderr: under an ASCII
    encoding the folder's CJK name came out as ``??``."""
    folder = tmp_path / "数据"
    folder.mkdir()
    with SessionStore(folder / "state.db") as store:
        store.add_session("s1", "cli")
    proc = _run(folder / "state.db", "ascii", "--json", "remove", "--yes")
    assert proc.returncode == 0, proc.stderr
    notes = [json.loads(line) for line in proc.stderr.decode("ascii").splitlines()]
    assert str(folder / "state.db") in notes[0]["message"], notes


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_a_big_json_document_is_written_as_it_is_encoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    """``read --full --json`` of a 400,000-message session (126 MB): the document was
    held whole as text, as the list of tokens joined into it, and as bytes, and
    the command took 1.2 GB; on a UTF-8 stdout it is now written a megabyte at a
    time, the same document byte for byte (a lone surrogate as its escape)."""
    from hermes_fts.cli import output

    payload = {
        "success": True,
        "messages": [{"id": n, "content": f"部署 {n} \ud800 " + "x" * 300} for n in range(20_000)],
    }
    writes: list[int] = []
    real_write = os.write

    def write(fd: int, data: bytes) -> int:
        writes.append(len(data))
        return real_write(fd, data)

    path = tmp_path / "out.json"
    with open(path, "w", encoding=encoding) as stdout:
        monkeypatch.setattr(sys, "stdout", stdout)
        monkeypatch.setattr(output.os, "write", write)
        output.emit_json(payload)
    data = path.read_bytes()
    assert json.loads(data.decode(encoding)) == payload
    if encoding == "utf-8":
        assert len(data) > 6 * 2**20 and max(writes) < 2 * 2**20
        expected = json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
        assert data == expected.encode("utf-8", "backslashreplace")
