"""``hermes-fts ... > file`` where the file cannot take the output (a full disk,
here ``/dev/full``): one error line on stderr saying so, exit status 1, no
traceback, with and without ``--json``; a command's own work is not undone."""

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
FULL = Path("/dev/full")
SAID = (
    "Error: the output could not be written (No space left on device); nothing else "
    "went wrong, so write it where there is room and run the command again\n"
)

pytestmark = [
    needs_extension,
    pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full"),
]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("full") / "state.db"
    with SessionStore(path) as store:
        store.add_session("s1", "cli", title="deploy notes")
        for n in range(300):  # more output than one buffer
            store.add_message("s1", "user", f"deploy step {n} 部署 " + "x" * 200)
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["status"],
        ["search", "deploy", "--limit", "100"],
        ["--json", "search", "deploy"],
        ["read", "s1", "--full"],
        ["--json", "read", "s1", "--full"],
        ["browse"],
        ["path"],
        ["--json", "sync"],
        ["--json", "read", "nope"],  # the error document itself
        ["--json", "search", "deploy", "--limit", "0"],
    ],
    ids=" ".join,
)
def test_output_to_a_full_disk_is_one_error_line(db: Path, argv: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open(FULL, "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "hermes_fts.cli", "--db", str(db), *argv],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
        )
    assert "Traceback" not in proc.stderr, proc.stderr
    if "nope" in argv or "0" in argv:
        # The command's own error, on stderr since its JSON document cannot be
        # written, with its own status (2: a usage error could not start).
        (line,) = proc.stderr.splitlines()
        assert line.startswith("Error: session nope not found" if "nope" in argv else "Error: ")
        assert "must be an integer from 1 to 100" in line or "nope" in argv, line
        assert line.endswith("(the JSON document could not be written: No space left on device)"), (
            line
        )
        assert proc.returncode == (1 if "nope" in argv else 2)
    else:
        assert proc.stderr == SAID, proc.stderr
        assert proc.returncode == 1


def _closed(db: Path, argv: list[str], redirect: str) -> subprocess.CompletedProcess[str]:
    """``hermes-fts --db DB ARGV`` started without the stream ``redirect`` closes
    (``>&-``, ``2>&-``): Python's sys.stdout or sys.stderr is then None."""
    return subprocess.run(
        ["sh", "-c", f'exec "$0" -m hermes_fts.cli "$@" {redirect}', sys.executable]
        + ["--db", str(db), *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )


@pytest.mark.parametrize(
    "argv",
    [["--json", "search", "deploy"], ["bench", "--per-band", "1", "--repeats", "1"]],
    ids=" ".join,
)
def test_a_closed_stdout_is_no_traceback(db: Path, argv: list[str]) -> None:
    # --json wrote through sys.stdout.encoding and bench asked sys.stdout.isatty().
    proc = _closed(db, argv, ">&-")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


def test_a_closed_stderr_keeps_its_lines_out_of_stdout(db: Path, tmp_path: Path) -> None:
    # print(file=None) writes to stdout: the error line, and optimize-storage's
    # notes in --json's own document.
    proc = _closed(db, ["search", "deploy", "--limit", "0"], "2>&-")
    assert proc.returncode == 2 and proc.stdout == ""
    copy = tmp_path / "state.db"
    copy.write_bytes(db.read_bytes())
    proc = _closed(copy, ["--json", "optimize-storage", "--yes"], "2>&-")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["success"] is True, proc.stdout
