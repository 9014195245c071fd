"""Issue 35 benchmark: how long ``hermes-fts`` takes to start, and the memory it takes.

Each command is a fresh process, as a person runs it: the ``hermes-fts``
console script installed next to this interpreter (``python -m
hermes_fts.cli`` where there is none), this checkout first on the path.
``--version`` and ``--help`` import no store, search or tool module; a
one-word search on the benchmark store shows what a command that needs
them costs.  The interpreter's own start (``python -S -c pass``, ``python
-c pass``) and ``import hermes_fts`` are timed next to them, their runs
interleaved round by round so that the machine's load hits all alike.
Bytecode is compiled once into a private cache, as an installed wheel has
it, never into the checkout.  A second table splits one search's time into
its steps, timed from inside the interpreter (wall and CPU): importing the
CLI, parsing (which imports the store stack), loading the extension,
opening the store, the search, the tool's shaping, and the rest.  Reported,
never asserted.

``HERMES_BENCH_START_BASELINE=PYTHON`` times the same commands on another
install of hermes-fts, the one that interpreter (of a venv) imports, with its
own console script, in the same rounds: before and after in one run.

    python -m pytest benchmarks/test_bench_cli_start.py --bench-size 20k
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks import corpus

REPO = Path(__file__).resolve().parents[1]
TABLE = "hermes-fts start, a fresh process per run (issue 35)"
ROUNDS = 15

# Spawns each command and reports its wall time and peak RSS.  A child's peak
# RSS starts at its parent's (exec keeps the larger), so a small launcher of
# its own spawns them, never pytest; it imports nothing beyond the builtins.
# A line in: the PYTHONPATH (empty: none), then the command's words, NUL-separated.
_LAUNCHER = r"""
import os, sys, time
for line in sys.stdin:
    path, *argv = line.rstrip("\n").split("\0")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if path:
        env["PYTHONPATH"] = path
    null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_WRONLY, 0) for fd in (1, 2)]
    started = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=null)
    _pid, status, usage = os.wait4(pid, 0)
    wall_ms = (time.perf_counter() - started) * 1000.0
    print(wall_ms, usage.ru_maxrss, os.waitstatus_to_exitcode(status), flush=True)
"""


class Launcher:
    """Runs commands one at a time: wall milliseconds and peak RSS in MB (None
    where the platform has no ``posix_spawn``/``wait4``; then timed from here)."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env, self.cwd = env, cwd
        self.proc: subprocess.Popen[str] | None = None
        if hasattr(os, "posix_spawn") and hasattr(os, "wait4"):
            self.proc = subprocess.Popen(
                [sys.executable, "-S", "-c", _LAUNCHER],
                env=env,
                cwd=str(cwd),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )

    def run(self, path: str, argv: list[str]) -> tuple[float, float | None]:
        env = {k: v for k, v in self.env.items() if k != "PYTHONPATH"}
        if path:
            env["PYTHONPATH"] = path
        rss_mb: float | None = None
        if self.proc is None or self.proc.stdin is None or self.proc.stdout is None:
            started = time.perf_counter()
            code = subprocess.run(argv, env=env, cwd=str(self.cwd), capture_output=True).returncode
            wall_ms = (time.perf_counter() - started) * 1000.0
        else:
            self.proc.stdin.write("\0".join([path, *argv]) + "\n")
            self.proc.stdin.flush()
            wall, rss, status = self.proc.stdout.readline().split()
            wall_ms, code = float(wall), int(status)
            # ru_maxrss is in KB on Linux, in bytes on macOS.
            rss_mb = int(rss) / (2**20 if sys.platform == "darwin" else 2**10)
        if code != 0:
            failed = subprocess.run(
                argv, env=env, cwd=str(self.cwd), capture_output=True, text=True
            )
            pytest.fail(f"{argv} exited {code}: {failed.stderr}")
        return wall_ms, rss_mb

    def close(self) -> None:
        if self.proc is not None:
            self.proc.communicate("")


class Install:
    """An interpreter and the hermes-fts it imports: this checkout first on its path,
    or (``path`` empty) what is installed for it."""

    def __init__(self, python: str, path: str) -> None:
        self.python, self.path = python, path

    def cli(self) -> list[str]:
        """The console script pip installed beside the interpreter, else ``-m``."""
        folder = Path(self.python).parent
        for name in ("hermes-fts", "hermes-fts.exe"):
            if (folder / name).is_file():
                return [str(folder / name)]
        return [self.python, "-m", "hermes_fts.cli"]


def _installs() -> dict[str, Install]:
    found = {"this checkout": Install(sys.executable, str(REPO))}
    baseline = os.environ.get("HERMES_BENCH_START_BASELINE")
    if baseline:
        found["baseline"] = Install(baseline, "")
    return found


def _commands(store: Path, install: Install) -> dict[str, list[str]]:
    cli = install.cli()
    word = corpus.term_samples("latin_word", bands=["common"], per_band=1)["common"][0]
    cjk = corpus.term_samples("zh2", bands=["common"], per_band=1)["common"][0]
    py = install.python
    return {
        "python -S -c pass": [py, "-S", "-c", "pass"],
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import hermes_fts'": [py, "-c", "import hermes_fts"],
        "hermes-fts --version": [*cli, "--version"],
        "hermes-fts --help": [*cli, "--help"],
        f"hermes-fts search {word}": [*cli, "--db", str(store), "search", word],
        f"hermes-fts search {cjk}": [*cli, "--db", str(store), "search", cjk],
    }


def test_cli_start(request, bench_report, bench_store, tmp_path):
    env = {**os.environ, "HERMES_HOME": str(tmp_path)}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    installs = _installs()
    commands = {label: _commands(bench_store, install) for label, install in installs.items()}
    runs = [(label, name) for label in installs for name in commands[label]]
    rounds = 1 if request.config.getoption("benchmark_disable", False) else ROUNDS
    walls: dict[tuple[str, str], list[float]] = {run: [] for run in runs}
    peaks: dict[tuple[str, str], float] = {}
    launcher = Launcher(env, tmp_path)
    try:
        for label, name in runs:  # warm-up: writes the bytecode cache
            launcher.run(installs[label].path, commands[label][name])
        for _ in range(rounds):
            for run in runs:
                label, name = run
                wall_ms, rss_mb = launcher.run(installs[label].path, commands[label][name])
                walls[run].append(wall_ms)
                if rss_mb is not None:
                    peaks[run] = max(peaks.get(run, 0.0), rss_mb)
    finally:
        launcher.close()
    for label, name in runs:
        median = statistics.median(walls[label, name])
        base = statistics.median(walls[label, "python -c pass"])
        row = {"command": name, "median ms": f"{median:.0f}"}
        if len(installs) > 1:
            row = {"install": label, **row}
        row["x python -c pass"] = f"{median / base:.2f}"
        peak = peaks.get((label, name))
        row["peak RSS MB"] = "" if peak is None else f"{peak:.1f}"
        bench_report.add(TABLE, row)


# One search in a fresh interpreter, its phases timed from inside: the
# internals it wraps are the command's own steps, named in PHASES.
_PHASES_CHILD = r"""
import io, json, sys, time
clock = {"wall": time.perf_counter, "cpu": time.process_time}
t0 = {k: f() for k, f in clock.items()}
marks, spent, inside = {}, {}, []
def mark(name):
    marks[name] = {k: f() - t0[k] for k, f in clock.items()}
def timed(key, fn):
    # Counted as key, and as key@step: the step it was called inside.
    def wrapper(*args, **kwargs):
        start = {k: f() for k, f in clock.items()}
        keys = [key] + ([key + "@" + inside[-1]] if inside else [])
        inside.append(key)
        try:
            return fn(*args, **kwargs)
        finally:
            inside.pop()
            for name in keys:
                total = spent.setdefault(name, {"wall": 0.0, "cpu": 0.0})
                for k, f in clock.items():
                    total[k] += f() - start[k]
    return wrapper
from hermes_fts.cli import main, registry
mark("cli")
load_command = registry.load_command
def loaded(name):
    command = load_command(name)
    mark("stack")
    from hermes_fts import loader, store
    from hermes_fts.cli import history
    from hermes_fts.index import lifecycle
    from hermes_fts.search import run
    loader.install = timed("install", loader.install)
    store.SessionStore.search = timed("search", store.SessionStore.search)
    if hasattr(lifecycle, "StateCache"):
        lifecycle.StateCache.state = timed("state", lifecycle.StateCache.state)
    if hasattr(run, "plan_search"):
        run.plan_search = timed("plan", run.plan_search)
    history.open_store = timed("open", history.open_store)
    history.run_call = timed("tool", history.run_call)
    return command
registry.load_command = loaded
out, sys.stdout = sys.stdout, io.StringIO()
main(sys.argv[1:])
sys.stdout = out
mark("end")
print(json.dumps({"marks": marks, "spent": spent}))
"""
PHASES = (
    ("import hermes_fts.cli", "cli"),
    ("parse, importing the store stack", "stack"),
    ("load the extension", "install"),
    ("open the store", "open"),
    ("index state (in store.search)", "state"),
    ("planning (plan_search)", "plan"),
    ("the query, snippets, rows (the rest of store.search)", "search"),
    ("tool: lineages, context, payload", "tool"),
    ("the rest: arguments, printing", "print"),
)
PHASES_TABLE = "where one search's time goes, from inside the interpreter (issue 35)"


def _phases(run: dict[str, dict[str, dict[str, float]]], clock: str) -> dict[str, float]:
    """Milliseconds per phase of one instrumented run."""
    marks, spent = run["marks"], run["spent"]

    def took(key: str) -> float:
        return spent.get(key, {}).get(clock, 0.0)

    ms = {
        "cli": marks["cli"][clock],
        "stack": marks["stack"][clock] - marks["cli"][clock],
        "install": took("install"),
        "open": took("open") - took("install"),
        "state": took("state@search"),
        "plan": took("plan@search") + took("plan@tool"),
        "search": took("search") - took("state@search") - took("plan@search"),
        "tool": took("tool") - took("search") - took("plan@tool"),
    }
    ms["print"] = marks["end"][clock] - marks["stack"][clock] - took("open") - took("tool")
    return {k: v * 1000.0 for k, v in ms.items()}


def test_search_phases(request, bench_report, bench_store, tmp_path):
    env = {**os.environ, "HERMES_HOME": str(tmp_path)}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    word = corpus.term_samples("latin_word", bands=["common"], per_band=1)["common"][0]
    argv = ["--db", str(bench_store), "search", word]
    rounds = 1 if request.config.getoption("benchmark_disable", False) else ROUNDS
    runs: dict[str, list[dict[str, float]]] = {}
    installs = _installs()
    for n in range(rounds + 1):  # the first writes the bytecode cache
        for label, install in installs.items():
            env.pop("PYTHONPATH", None)
            if install.path:
                env["PYTHONPATH"] = install.path
            proc = subprocess.run(
                [install.python, "-c", _PHASES_CHILD, *argv],
                env=env,
                cwd=str(tmp_path),
                capture_output=True,
                text=True,
            )
            assert proc.returncode == 0, proc.stderr
            if n:
                runs.setdefault(label, []).append(json.loads(proc.stdout.splitlines()[-1]))
    for name, key in PHASES:
        row: dict[str, str] = {"phase": name}
        for label in installs:
            for clock in ("wall", "cpu"):
                ms = statistics.median(_phases(r, clock)[key] for r in runs[label])
                head = f"{clock} ms" if len(installs) == 1 else f"{label} {clock} ms"
                row[head] = f"{ms:.1f}"
        bench_report.add(PHASES_TABLE, row)
