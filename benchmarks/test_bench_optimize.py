"""optimize-storage's cost on a store Hermes wrote: CPU, wall time, peak memory, per step.

The store is a copy of the generated one with every search object removed
(ours and Hermes'), as a new user's Hermes-written ``state.db`` is before
hermes-fts first runs.  ``optimize-storage`` then runs in a subprocess of its
own, so its CPU time and peak RSS are the run's alone, with the default
pacing (chunks sized to ``TXN_TARGET_S``, ``MIN_PAUSE`` between them), once
pausing always (the API's default, the Hermes plugin) and once as the
``hermes-fts`` command runs it (pausing only while another process has the
store open: here none).  The steps are timed from the progress events.
Nothing is asserted on time.

    python -m pytest benchmarks/test_bench_optimize.py --bench-size 200k -s
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import corpus
from benchmarks.test_bench_storage import _strip_ours

TABLE = "optimize-storage on a store Hermes wrote (default pacing, one run)"
ROOT = Path(__file__).resolve().parents[1]

# Run in a subprocess: CPU and peak RSS of that process, seconds per step.
RUN = """
import json, resource, sys, time
from hermes_fts._sharing import pause_when_shared
from hermes_fts.store import SessionStore
steps, last = {}, [None, time.perf_counter(), time.process_time()]
def progress(event):
    if event["phase"] != last[0]:
        now, cpu = time.perf_counter(), time.process_time()
        if last[0] is not None:
            wall0, cpu0 = steps.get(last[0], (0.0, 0.0))
            steps[last[0]] = (wall0 + now - last[1], cpu0 + cpu - last[2])
        last[:] = [event["phase"], now, cpu]
start, cpu = time.perf_counter(), time.process_time()
with SessionStore(sys.argv[1]) as store:
    pause = pause_when_shared(sys.argv[1]) if sys.argv[2] == "command" else time.sleep
    ok = store.optimize_storage(progress=progress, sleep=pause)["ok"]
usage = resource.getrusage(resource.RUSAGE_SELF)
# VmHWM: this process image's peak (ru_maxrss keeps the forking parent's).
try:
    with open("/proc/self/status") as status:
        peak = [int(x.split()[1]) for x in status if x.startswith("VmHWM:")]
except OSError:  # not Linux
    peak = []
peak = peak or [usage.ru_maxrss]
print(json.dumps({"ok": ok, "wall": time.perf_counter() - start,
                  "cpu": usage.ru_utime + usage.ru_stime, "rss_kb": peak[0],
                  "steps": steps}))
"""


@pytest.mark.parametrize("pauses", ["always", "command"])
def test_optimize_storage_cost(
    pauses: str,
    bench_size: int,
    bench_seed: int,
    bench_report: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    db = tmp_path_factory.mktemp("optimize") / "state.db"
    shutil.copyfile(corpus.cached_store(bench_size, bench_seed), db)
    _strip_ours(db)
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(db), pauses],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=3600,
    )
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout.strip().splitlines()[-1])
    assert run["ok"]
    bench_report.add(
        TABLE,
        {
            "messages": bench_size,
            "pauses": pauses,
            "CPU s": round(run["cpu"], 1),
            "wall s": round(run["wall"], 1),
            "peak RSS MB": round(run["rss_kb"] / 1024, 1),
            **{
                f"{step} wall / CPU s": f"{wall:.1f} / {cpu:.1f}"
                for step, (wall, cpu) in run["steps"].items()
                if step not in ("repair",)
            },
        },
    )
