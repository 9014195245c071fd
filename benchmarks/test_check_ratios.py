"""benchmarks/check_ratios.py gates on ratios from pytest-benchmark JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import check_ratios

SCRIPT = Path(check_ratios.__file__)


def _doc(*entries: tuple[str, Any]) -> dict[str, Any]:
    return {
        "machine_info": {},
        "benchmarks": [
            {
                "name": f"test_search[{cls}-{i}]",
                "group": f"search {cls}",
                "stats": {"min": 0.001, "mean": 0.002},
                "extra_info": {"query_class": cls, "ratio_vs_like": ratio},
            }
            for i, (cls, ratio) in enumerate(entries)
        ]
        + [
            {
                "name": "test_insert[zh-trigram]",
                "group": "insert zh",
                "stats": {},
                "extra_info": {"index_bytes": 10},
            }
        ],
    }


def _run(tmp_path: Path, doc: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(path), *args], capture_output=True, text=True
    )


def test_passes_when_every_class_beats_the_threshold(tmp_path: Path) -> None:
    proc = _run(tmp_path, _doc(("zh2", 40.0), ("zh2", 10.0), ("ko", 8.0)), "--min-ratio", "5")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "zh2" in proc.stdout and "ko" in proc.stdout


def test_fails_when_one_class_falls_under(tmp_path: Path) -> None:
    proc = _run(tmp_path, _doc(("zh2", 40.0), ("cjk1", 1.2)), "--min-ratio", "3")
    assert proc.returncode == 1
    assert "cjk1" in proc.stdout and "TOO SLOW" in proc.stdout


def test_class_threshold_overrides_default(tmp_path: Path) -> None:
    doc = _doc(("zh2", 40.0), ("cjk1", 1.2))
    assert _run(tmp_path, doc, "--min-ratio", "3", "--class-min", "cjk1=1").returncode == 0
    assert _run(tmp_path, doc, "--min-ratio", "3", "--class-min", "zh2=50").returncode == 1


def test_aggregate_choices(tmp_path: Path) -> None:
    doc = _doc(("zh2", 100.0), ("zh2", 1.0))  # geomean 10, median 50.5, min 1
    assert _run(tmp_path, doc, "--min-ratio", "5").returncode == 0
    assert _run(tmp_path, doc, "--min-ratio", "5", "--aggregate", "min").returncode == 1
    assert _run(tmp_path, doc, "--min-ratio", "20", "--aggregate", "median").returncode == 0


def test_no_entries_needs_allow_missing(tmp_path: Path) -> None:
    doc = _doc()
    proc = _run(tmp_path, doc)
    assert proc.returncode == 2
    assert "ratio_vs_like" in proc.stdout
    proc = _run(tmp_path, doc, "--allow-missing")
    assert proc.returncode == 0
    assert "no benchmark" in proc.stdout and "--allow-missing" in proc.stdout


@pytest.mark.parametrize("bad", ["fast", 0, -1.0])
def test_bad_ratio_values_are_reported(tmp_path: Path, bad: Any) -> None:
    proc = _run(tmp_path, _doc(("zh2", bad)))
    assert proc.returncode == 2
    assert "ratio_vs_like" in proc.stderr


def test_unreadable_input(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "missing.json")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "missing.json" in proc.stderr


def test_class_falls_back_to_group() -> None:
    doc = {"benchmarks": [{"name": "x", "group": "search zh2", "extra_info": {"ratio_vs_like": 3}}]}
    assert check_ratios.ratios_by_class([doc]) == {"search zh2": [3.0]}


def test_empty_json_says_why(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    path.write_text("", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(path), "--allow-missing"], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "--benchmark-disable" in proc.stderr
