"""What starting imports (docs/DESIGN.md §2, §8): ``import hermes_fts``,
``hermes-fts --version`` and ``--help`` load no SQLite, store, search, index or
tool module, and a subcommand loads its own module only.  Each case runs in a
fresh interpreter and reads ``sys.modules``; nothing here is timed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# What a search needs and a start must not load.
STORE_STACK = (
    "sqlite3",
    "cffi",
    "ctypes",
    "hermes_fts.loader",
    "hermes_fts._sqlite",
    "hermes_fts.store",
    "hermes_fts.transcript",
    "hermes_fts.listing",
    "hermes_fts.search",
    "hermes_fts.index",
    "hermes_fts.tool",
    "hermes_fts.hermes",
)
COMMAND_MODULES = ("hermes_fts.cli.admin", "hermes_fts.cli.history", "hermes_fts.cli.demo")


def _probe(body: str) -> tuple[set[str], str]:
    """Run ``body`` in a fresh interpreter; the modules it loaded, and what it printed."""
    code = (
        "import io, json, sys\n"
        "before = set(sys.modules)\n"
        "out = io.StringIO()\n"
        "real, sys.stdout = sys.stdout, out\n"
        f"{body}\n"
        "sys.stdout = real\n"
        "print(json.dumps([sorted(set(sys.modules) - before), out.getvalue()]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    loaded, printed = json.loads(proc.stdout.splitlines()[-1])
    return set(loaded), printed


def _cli(argv: list[str]) -> str:
    return (
        "from hermes_fts.cli import main\n"
        "try:\n"
        f"    status = main({argv!r})\n"
        "except SystemExit as exc:\n"
        "    status = exc.code\n"
        "assert status == 0, status\n"
    )


def _of(loaded: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in loaded if any(m == p or m.startswith(p + ".") for p in prefixes))


def test_import_hermes_fts_loads_only_the_version():
    loaded, _ = _probe("import hermes_fts")
    assert _of(loaded, ("hermes_fts",)) == ["hermes_fts", "hermes_fts._version"]
    assert not _of(loaded, STORE_STACK) and "typing" not in loaded


def test_the_facade_still_gives_every_public_name():
    loaded, printed = _probe(
        "import hermes_fts\n"
        "print(all(getattr(hermes_fts, n) is not None for n in hermes_fts.__all__))\n"
        "print(set(hermes_fts.__all__) <= set(dir(hermes_fts)))\n"
        "print(hermes_fts.connect is __import__('hermes_fts.loader').loader.connect)"
    )
    assert printed.split() == ["True", "True", "True"]
    assert "hermes_fts.store" in loaded


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_version_and_help_load_no_store_and_no_command(argv):
    loaded, printed = _probe(_cli(argv))
    assert not _of(loaded, STORE_STACK), _of(loaded, STORE_STACK)
    assert not _of(loaded, COMMAND_MODULES)
    assert printed.startswith("hermes-fts " if argv == ["--version"] else "usage: hermes-fts")


def test_version_alone_skips_argparse_and_prints_what_argparse_prints():
    alone, printed = _probe(_cli(["--version"]))
    parsed, via_argparse = _probe(_cli(["--db", "state.db", "--version"]))
    assert "argparse" not in alone and "argparse" in parsed
    assert printed == via_argparse == f"hermes-fts {_version()}\n"


@pytest.mark.parametrize("argv", [["--json", "--version"], ["--version", "--json"]])
def test_version_with_json_loads_no_store_either(argv):
    loaded, printed = _probe(_cli(argv))
    assert not _of(loaded, STORE_STACK) and not _of(loaded, COMMAND_MODULES)
    assert json.loads(printed)["version"] == _version()


def test_a_subcommand_help_loads_its_own_module_only():
    loaded, printed = _probe(_cli(["search", "--help"]))
    assert printed.startswith("usage: hermes-fts search")
    assert _of(loaded, COMMAND_MODULES) == ["hermes_fts.cli.history"]


def _version() -> str:
    from hermes_fts._version import __version__

    return __version__


def _store(path: Path, sessions: int) -> None:
    from hermes_fts.store import SessionStore

    with SessionStore(path) as store:
        for n in range(sessions):
            sid = f"s{n:03d}"
            store.add_session(sid, source="cli", started_at=1_700_000_000.0 + n, title=f"talk {n}")
            store.add_message(sid, "user", f"deploy the service, attempt {n} " + "x" * 400)


def _console(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    """``python -m hermes_fts.cli``: the console script's ``run``, through pipes,
    its output buffered as a person's shell has it."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HERMES_HOME": str(home)}
    env.pop("PYTHONUNBUFFERED", None)
    return subprocess.run(
        [sys.executable, "-m", "hermes_fts.cli", *args],
        capture_output=True,
        text=True,
        cwd=str(home),
        env=env,
        timeout=120,
    )


def test_the_console_script_writes_all_it_prints_and_exits_with_mains_status(tmp_path):
    # ``run`` ends the process without tearing the interpreter down: what
    # is still buffered must reach the pipe, and the status must be main's.
    _store(tmp_path / "state.db", 60)
    proc = _console(["browse", "--json", "--limit", "100"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["results"]) == 60
    proc = _console(["browse", "--limit", "100"], tmp_path)  # line by line
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("@session:default/s") == 60
    assert proc.stdout.endswith("@session:default/s000\n")
    proc = _console(["--db", str(tmp_path / "none.db"), "search", "deploy"], tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("Error: no session store at ")
    proc = _console(["read", "no-such-session"], tmp_path)
    assert proc.returncode == 1 and proc.stderr.startswith("Error: ")


def test_python_dash_m_hermes_fts_is_the_command(tmp_path):
    """``python -m hermes_fts`` (a venv whose scripts folder is not on PATH) said
    "'hermes_fts' is a package and cannot be directly executed"."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HERMES_HOME": str(tmp_path)}
    _store(tmp_path / "state.db", 3)

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hermes_fts", *argv],
            capture_output=True,
            text=True,
            cwd=str(tmp_path),
            env=env,
            timeout=120,
        )

    proc = run("--version")
    assert proc.returncode == 0 and proc.stdout == _console(["--version"], tmp_path).stdout
    proc = run("browse", "--json")
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["results"]) == 3
