"""The README's promises: its commands are the ones CI runs, its examples print what it says."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import hermes_fts

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
pytestmark = pytest.mark.skipif(not README.exists(), reason="needs the source checkout")


def first_commands() -> list[str]:
    block = README.read_text(encoding="utf-8").split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def test_readme_starts_with_the_demo_and_the_test_command():
    demo, tests = first_commands()
    assert demo.endswith("hermes-fts demo")
    assert tests.endswith("python -m pytest")


def test_ci_runs_the_readme_test_command_verbatim():
    _demo, tests = first_commands()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert tests in ci


def test_the_sqlite_shell_example_prints_what_the_readme_shows():
    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("the sqlite3 shell is not installed (apt-get install sqlite3)")
    text = README.read_text(encoding="utf-8")
    example = text.split("## Using the extension in the sqlite3 shell", 1)[1].split("```sh\n")[1]
    example = example.split("```", 1)[0]
    script, expected = [], []
    for line in example.splitlines():
        if line.startswith("sqlite> "):
            sql = re.sub(r"\s+--.*$", "", line[len("sqlite> "):])
            if sql.startswith(".load"):
                sql = ".load " + hermes_fts.extension_path()
            script.append(sql)
        elif script and not line.startswith("$"):
            expected.append(line)
    out = subprocess.run([shell, ":memory:"], input="\n".join(script) + "\n",
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == expected
