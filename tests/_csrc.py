"""The C build description (csrc/build_config.py) for tests that compile csrc/.

Loaded by path, exactly as setup.py loads it, so a test build uses the same
sources, version define and entry-point list as the real one.  ``config`` is
None in an installed-wheel run without the source checkout.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
CSRC = ROOT / "csrc"


def _load() -> ModuleType | None:
    path = CSRC / "build_config.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("hermes_build_config", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


config = _load()
needs_csrc = pytest.mark.skipif(
    config is None, reason="needs the source checkout (csrc/), not an installed wheel"
)


def sources() -> list[str]:
    """Absolute paths of the library's C sources."""
    assert config is not None
    return [str(ROOT / s) for s in config.SOURCES]


def sanitized_driver(driver: Path, exe: Path, *defines: str) -> Path:
    """``driver`` (a C ``main``) linked with the library's sources under ASan/UBSan,
    warnings as errors, into ``exe``; skips without gcc or SQLite's headers."""
    gcc = shutil.which("gcc")
    if gcc is None or not Path("/usr/include/sqlite3.h").exists():
        pytest.skip("needs gcc and libsqlite3-dev")
    assert config is not None
    subprocess.run(
        [
            gcc,
            "-std=c11",
            "-g",
            "-O1",
            "-fsanitize=address,undefined,float-cast-overflow",
            "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer",
            "-Wall",
            "-Wextra",
            "-Werror",
            *defines,
            config.VERSION_DEFINE,
            f"-I{CSRC}",
            str(driver),
            *sources(),
            "-lsqlite3",
            "-o",
            str(exe),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return exe
