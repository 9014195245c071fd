"""Fixtures shared by the suites that drive the real Hermes Agent 0.19.0, and the
property tests' settings."""

from __future__ import annotations

import os
from pathlib import Path

import _hermes_env as he
import pytest
from hypothesis import settings

# CI runs the property tests on a fixed seed, so a run is repeatable; anywhere
# else every run explores new examples (a bug one finds gets an @example).
if os.environ.get("CI"):
    settings.register_profile("hermes-fts-ci", derandomize=True, database=None)
    settings.load_profile("hermes-fts-ci")


@pytest.fixture(scope="session")
def hermes_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with hermes-agent 0.19.0 and this checkout, built once per run."""
    keep = os.environ.get("HERMES_FTS_TEST_VENV", "").strip()
    folder = Path(keep) if keep else tmp_path_factory.getbasetemp() / "hermes-venv"
    try:
        return he.ensure_venv(folder)
    except (he.HermesUnavailable, OSError) as exc:
        pytest.skip(f"hermes-agent 0.19.0 cannot be installed here: {exc}")
