"""The real Hermes Agent 0.19.0 for the benchmarks that time or size it.

It lives in its own venv, built by the test suite's ``tests/_hermes_env.py``
(``HERMES_FTS_TEST_VENV`` names one to reuse).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def hermes_env() -> Any:
    """``tests/_hermes_env.py`` as a module (the tests folder is not a package)."""
    spec = importlib.util.spec_from_file_location("_hermes_env", ROOT / "tests" / "_hermes_env.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hermes_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding hermes-agent 0.19.0; skips the benchmark when it cannot be installed."""
    he = hermes_env()
    keep = os.environ.get("HERMES_FTS_TEST_VENV", "").strip()
    venv = Path(keep) if keep else tmp_path_factory.getbasetemp() / "hermes-venv"
    try:
        he.ensure_venv(venv)
    except (he.HermesUnavailable, OSError) as exc:
        pytest.skip(f"hermes-agent 0.19.0 cannot be installed here: {exc}")
    return venv
