"""Issue 35 benchmark: how long ``hermes-fts`` takes to start.

``hermes-fts --version`` and ``--help`` import no store, search or tool module
(each subcommand's module is imported when it runs), and ``hermes-fts browse``
on a small store shows what a subcommand that needs them costs.  Each is a
fresh interpreter (``python -m hermes_fts.cli``), timed with the interpreter's
own start (``python -c pass``) next to it.  Reported, never asserted.

    python -m pytest benchmarks/test_bench_cli_start.py --benchmark-group-by=group
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_fts.store import SessionStore

REPO = Path(__file__).resolve().parents[1]
TABLE = "hermes-fts start, a fresh interpreter per run (issue 35)"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cli-start")
    with SessionStore(folder / "state.db") as store:
        store.add_session("s1", source="cli", started_at=1_700_000_000.0)
        store.add_message("s1", "user", "deploy the service")
    return folder


@pytest.mark.parametrize(
    "argv",
    [
        ["-c", "pass"],
        ["-m", "hermes_fts.cli", "--version"],
        ["-m", "hermes_fts.cli", "--help"],
        ["-m", "hermes_fts.cli", "browse", "--json"],
    ],
    ids=["python", "version", "help", "browse"],
)
def test_cli_start(benchmark, bench_report, home, argv):
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONPATH": str(REPO)}

    def start() -> None:
        subprocess.run(
            [sys.executable, *argv], env=env, cwd=str(home), check=True, capture_output=True
        )

    benchmark.group = "cli start"
    benchmark.pedantic(start, rounds=15, warmup_rounds=1)
    if not benchmark.stats:  # --benchmark-disable (CI's smoke run): nothing measured
        return
    median_ms = benchmark.stats.stats.median * 1000.0
    benchmark.extra_info["median_ms"] = round(median_ms, 1)
    bench_report.add(TABLE, {"command": " ".join(argv), "median ms": f"{median_ms:.0f}"})
