"""``hermes-fts`` on real terminals (a pseudo-terminal from ``pty``) of every kind:
narrow ones, whose progress line must fit in a row to be redrawn in place,
``TERM=dumb`` ones (Emacs' shell), which show escape sequences as text; and a
question cut short by Ctrl-C."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from _support import needs_extension, shell_backlog

from hermes_fts.store import SessionStore

ROOT = Path(__file__).resolve().parents[1]

pytestmark = needs_extension


def _on_a_terminal(
    argv: list[str], columns: int = 80, stdout_too: bool = False, **env: str
) -> tuple[int, str]:
    """``hermes-fts ARGV`` with stderr (and with ``stdout_too`` stdout) on a
    pseudo-terminal ``columns`` wide: the exit status and what the terminal got."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    environ.pop("COLUMNS", None)
    environ.pop("NO_COLOR", None)
    done = subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", *argv],
        stdin=subprocess.DEVNULL,
        stdout=follower if stdout_too else subprocess.DEVNULL,
        stderr=follower,
        env=environ,
        timeout=300,
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal has no writer left
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    return done.returncode, seen.decode("utf-8", "replace")


@pytest.fixture()
def backlog(tmp_path: Path) -> Path:
    db = tmp_path / "state.db"
    shell_backlog(db, 3_000)  # more than sync's 500: it shows its progress
    return db


@pytest.mark.parametrize("columns", [20, 40, 60])
def test_a_redrawn_progress_line_fits_a_narrow_terminal(backlog: Path, columns: int) -> None:
    """A line wider than the terminal wraps, and ESC [K erases only its last row:
    each redraw left the rows above it on the screen."""
    status, seen = _on_a_terminal(["--db", str(backlog), "sync"], columns)
    assert status == 0, seen
    drawn = seen.split("\r\x1b[K")[1:]
    assert drawn, seen
    for line in drawn:
        line = line.split("\r")[0].split("\n")[0]
        assert len(line) < columns, (columns, line)
    assert "Applying" in drawn[-1] and "100%" in drawn[-1]


def test_a_dumb_terminal_gets_plain_progress_lines(backlog: Path) -> None:
    """``TERM=dumb``: progress as plain lines, with no ESC [K shown as text."""
    status, seen = _on_a_terminal(["--db", str(backlog), "sync"], TERM="dumb")
    assert status == 0, seen
    assert "\x1b" not in seen, repr(seen[:500])
    assert re.search(r"Applying .*100%", seen), seen


def test_a_dumb_terminal_gets_matches_bracketed_not_coloured(backlog: Path) -> None:
    with SessionStore(backlog):  # applies the backlog: the search shows no progress
        pass
    argv = ["--db", str(backlog), "search", "东京", "--limit", "1"]
    status, seen = _on_a_terminal(argv, stdout_too=True, TERM="dumb")
    assert status == 0, seen
    assert "\x1b" not in seen, repr(seen[:500])
    assert "first [東京] deploy" in seen


@pytest.mark.parametrize("term", ["xterm", "dumb"])
def test_a_match_cut_at_the_snippet_line_ends_there(tmp_path: Path, term: str) -> None:
    """A snippet line is cut at 200 characters; a match longer than that (a token
    glued to a word) lost its closing mark, so the match's colour ran on to the
    shell's prompt, or a ``[`` was never closed."""
    db = tmp_path / "state.db"
    with SessionStore(db) as st:
        st.add_session("s", "cli")
        st.add_message("s", "user", "the token deploy" + "x" * 300 + " leaked")
    status, seen = _on_a_terminal(
        ["--db", str(db), "search", "deploy*", "--detail", "index"], stdout_too=True, TERM=term
    )
    assert status == 0, seen
    line = next(line for line in seen.splitlines() if "deployxx" in line)
    if term == "dumb":
        assert line.count("[") == line.count("]") == 1 and line.endswith("x]\u2026"), line
    else:
        assert line.count("\x1b[1;33m") == 1 and line.endswith("x\x1b[0m\u2026"), repr(line)
    assert 200 <= len(re.sub(r"\x1b\[[0-9;]*m|[\[\]]", "", line.strip())) <= 201


@pytest.mark.parametrize("argv", [["remove"], ["optimize-storage"]])
def test_ctrl_c_at_the_question_ends_its_line(backlog: Path, argv: list[str]) -> None:
    """Ctrl-C while the question waits for an answer: the error line began right after
    the question (`Remove them? [y/N] Error: interrupted`)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes_fts.cli", "--db", str(backlog), *argv],
        stdin=subprocess.PIPE,  # open, and nothing typed: the question waits
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        restore_signals=True,
    )
    try:
        assert proc.stderr is not None
        asked = b""
        while b"[y/N] " not in asked:
            chunk = proc.stderr.read1(4096)
            assert chunk, asked
            asked += chunk
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    said = (asked + rest).decode()
    assert proc.returncode == 130, said
    assert "[y/N] \nError: interrupted" in said, said
    assert "Traceback" not in said
