"""A token callback that stops the tokenizer (tests/token_stop_driver.c).

FTS5's contract: when xToken returns anything but SQLITE_OK, xTokenize makes no
further callbacks and returns that value.  The driver links the C sources (under
ASan/UBSan) and counts the callbacks made after one asked to stop.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _csrc import needs_csrc, sanitized_driver

DRIVER = Path(__file__).resolve().parent / "token_stop_driver.c"
SQLITE_DONE = 101

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="builds with gcc"),
    needs_csrc,
]


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sanitized_driver(DRIVER, tmp_path_factory.mktemp("stop") / "driver")


def _run(driver: Path, text: str, stop_after: int, *args: str) -> tuple[int, int]:
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:halt_on_error=1")
    proc = subprocess.run(
        [str(driver), text, str(stop_after), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    seen, rc = proc.stdout.split()
    return int(seen), int(rc)


@pytest.mark.parametrize(
    "text, args",
    [
        ("alpha beta 中国 gamma delta", ()),  # stops inside a word segment
        ("ＡＬＰＨＡ ｂｅｔａ 中国 gamma", ()),  # ... of a width-folded one
        ("配置think.toml文件 more words", ("glue", "1")),  # ... with glue marks
        ("e\u0301te ete 中国 ete", ("compose", "1", "letters", "1")),
    ],
)
def test_a_callback_that_stops_gets_no_more_tokens(driver: Path, text: str, args) -> None:
    for stop_after in (1, 2):
        assert _run(driver, text, stop_after, *args) == (stop_after, SQLITE_DONE)


def test_a_callback_that_never_stops_sees_every_token(driver: Path) -> None:
    assert _run(driver, "alpha beta 中国人 gamma", 1000) == (5, 0)
