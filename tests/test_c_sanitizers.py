"""The C code under AddressSanitizer + UndefinedBehaviorSanitizer.

Three bounded runs, each a real failure detector (exit code and sanitizer
reports are checked):

1. the setup.py sanitizer build (HERMES_FTS_SANITIZE=1) loaded into the
   sqlite3 shell with the ASan/UBSan runtimes preloaded, fed random bytes;
2. csrc/fuzz/fuzz_tokenizer.c as a standalone driver (gcc, no libFuzzer)
   running a few thousand pseudo-random inputs plus a 1 MB one;
3. the same harness under libFuzzer for a few seconds when clang exists.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _csrc import CSRC, ROOT, config, needs_csrc, sanitized_driver, sources

HARNESS = CSRC / "fuzz" / "fuzz_tokenizer.c"
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error", "SUMMARY:")

pytestmark = [
    pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="sanitizer runs are Linux-only"
    ),
    needs_csrc,
]


def _sanitizer_env() -> dict[str, str]:
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "abort_on_error=0:halt_on_error=1:detect_leaks=1"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    return env


def _assert_clean(proc: subprocess.CompletedProcess) -> None:
    report = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, report[-4000:]
    for marker in SANITIZER_MARKERS:
        assert marker not in report, report[-4000:]


def _have_sqlite_dev() -> bool:
    return Path("/usr/include/sqlite3.h").exists()


def _random_inputs(n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    pieces = [
        s.encode()
        for s in ("中国", "人民", "ｶﾞ", "ﾞ", "ＡＢＣ", "タワー", "한국", "・", " ", "x", '"', "'")
    ]
    pieces += [s.encode() for s in ("ラーメン", "らーめん", "ヾ")]  # kana 1
    pieces += [s.encode() for s in ("國", "広", "\uf900")]  # Han variants, a compat ideograph
    pieces += [s.encode() for s in ("🫠", "🏻", "₽", "deploy")]  # symbols 1
    # compose 1: marks, jamo and voiced marks after letters, kana and syllables
    pieces += [s.encode() for s in ("e", "\u0301", "\u0306", "\u1100", "\u1161", "\u11a8")]
    pieces += [s.encode() for s in ("\u3099", "\u309a", "\uac00", "\u304b", "\u0b47", "\u0b3e")]
    # letters 1: accented Greek, ё, Hebrew points, Arabic harakat and tatweel
    pieces += [
        s.encode() for s in ("ά", "ё", "ש", "\u05c1", "\u05b8", "ب", "\u064e", "\u0640", "ﬃ")
    ]
    # selectors 1: a standard and an ideographic variation selector, and a cut one
    pieces += [s.encode() for s in ("\ufe00", "\U000e0100", "葛")] + [b"\xf3\xa0\x84"]
    pieces += [b"\xff", b"\xe4\xb8", b"\xed\xa0\x80", b"\xc0\xaf", b"\x00", b"\x80"]
    out = []
    for _ in range(n):
        parts = [
            rng.choice(pieces)
            if rng.random() < 0.7
            else bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 5)))
            for _ in range(rng.randint(0, 16))
        ]
        out.append(b"".join(parts))
    return out


def test_setup_py_sanitizer_build_in_sqlite_shell(tmp_path: Path) -> None:
    shell = shutil.which("sqlite3")
    gcc = shutil.which("gcc")
    if shell is None or gcc is None:
        pytest.skip("needs gcc and the sqlite3 shell")
    env = dict(os.environ, HERMES_FTS_SANITIZE="1", HERMES_FTS_WERROR="1")
    subprocess.run(
        [
            sys.executable,
            "setup.py",
            "-q",
            "build_ext",
            "--build-lib",
            str(tmp_path / "lib"),
            "--build-temp",
            str(tmp_path / "tmp"),
        ],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    lib = next((tmp_path / "lib" / "hermes_fts").glob("cjk_unicode61.*"))
    runtimes = []
    for name in ("libasan.so", "libubsan.so"):
        path = subprocess.run(
            [gcc, f"-print-file-name={name}"], capture_output=True, text=True
        ).stdout.strip()
        if not os.path.isabs(path) or not os.path.exists(path):
            pytest.skip(f"{name} not found")
        runtimes.append(path)

    lines = [
        f".load {lib.with_suffix('')}",
        "CREATE VIRTUAL TABLE a USING fts5(x, y, tokenize='cjk_unicode61');",
        "CREATE VIRTUAL TABLE b USING fts5(x, "
        "tokenize='cjk_unicode61 unigrams 1 remove_diacritics 2 variants 1 glue 1 kana 1 symbols 1 "
        "compose 1 letters 1 selectors 1');",
    ]
    for data in _random_inputs(300, seed=7):
        h = data.hex()
        needle = data[: 1 + len(data) // 3].hex()
        lines += [
            f"SELECT length(cjk_tokens(x'{h}')), "
            f"length(cjk_tokens_query(x'{h}', 'unigrams', '1')), "
            f"length(cjk_tokens_query(x'{h}', 'variants', '1')), "
            f"length(cjk_tokens(x'{h}', 'glue', '1')), length(cjk_fold(x'{h}')), "
            f"length(cjk_tokens(x'{h}', 'kana', '1')), cjk_fold_find(x'{h}', x'{needle}'), "
            f"length(cjk_tokens(x'{h}', 'compose', '1', 'glue', '1')), "
            f"length(cjk_tokens(x'{h}', 'letters', '1', 'glue', '1')), "
            f"length(cjk_tokens(x'{h}', 'selectors', '1', 'unigrams', '1')), "
            f"cjk_fold_find(CAST(x'{h}' AS TEXT), CAST(x'{needle}' AS TEXT));",
            f"INSERT INTO a VALUES (CAST(x'{h}' AS TEXT), CAST(x'{needle}' AS TEXT));",
            f"INSERT INTO b VALUES (CAST(x'{h}' AS TEXT));",
        ]
    lines += [
        "SELECT count(*) FROM a WHERE a MATCH '中国';",
        "SELECT length(cjk_highlight(a, 0, '[', ']')), "
        "length(cjk_snippet(a, -1, '[', ']', '…', 7)) "
        "FROM a WHERE a MATCH '中国 OR 人民 OR abc';",
        "SELECT length(cjk_highlight(b, 0, '[', ']')), length(cjk_snippet(b, 0, '<', '>', '.', 3)) "
        "FROM b WHERE b MATCH '国 OR ガ OR 한 OR らー';",
        "SELECT cjk_few_snippet(a, rank, 3, -1, '<', '>', '.', 3), "
        "cjk_few_snippet(a, rank, rowid % 5, 0, '', '', '', 1) FROM a WHERE a MATCH '中国';",
        "SELECT cjk_few_snippet(b, rank, 1000, -1, '[', ']', '...', 2) FROM b WHERE b MATCH '国 OR ガ';",
        # row_evidence.c: terms held and bm25 with given statistics, or one saturation
        "SELECT hermes_fts_held(a), hermes_fts_bm25(a, 7.5, 1.2, 0.4, 3.0), "
        "hermes_fts_bm25(a, 0), hermes_fts_bm25(a, 9.0) FROM a WHERE a MATCH '中国 OR 人民 OR abc';",
        "SELECT hermes_fts_held(b), hermes_fts_bm25(b, -1) FROM b WHERE b MATCH '\"国 ガ\" OR 한';",
        # block peaks of a NaN saturation (infinity times a scale of 0) and of infinity
        "SELECT hex(hermes_fts_block_peaks(0, 1e999, 1, 0)), hex(hermes_fts_block_peaks(0, 1e999, 1, 1));",
        "INSERT INTO a(a) VALUES ('integrity-check');",
        "INSERT INTO b(b) VALUES ('integrity-check');",
        "SELECT 'done';",
    ]
    env = _sanitizer_env()
    env["ASAN_OPTIONS"] += ":detect_leaks=0"  # the shell itself is not leak-clean at exit
    env["LD_PRELOAD"] = " ".join(runtimes)
    proc = subprocess.run(
        [shell, "-batch", "-bail", ":memory:"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        errors="replace",
        env=env,
        timeout=300,
    )
    _assert_clean(proc)
    assert "010000|0100FF" in proc.stdout  # one row each: the NaN's peak is 0, infinity's 255
    assert proc.stdout.strip().endswith("done")


def test_standalone_driver_asan_ubsan(tmp_path: Path) -> None:
    exe = sanitized_driver(HARNESS, tmp_path / "driver", "-DHERMES_FUZZ_STANDALONE")
    proc = subprocess.run(
        [str(exe), "1500", "11"],
        capture_output=True,
        text=True,
        errors="replace",
        env=_sanitizer_env(),
        timeout=300,
    )
    _assert_clean(proc)
    assert proc.stdout.startswith("ok 1502 inputs")


def test_libfuzzer_bounded_run(tmp_path: Path) -> None:
    clang = shutil.which("clang")
    if clang is None or not _have_sqlite_dev():
        pytest.skip("libFuzzer run needs clang (apt-get install -y clang) and libsqlite3-dev")
    exe = tmp_path / "fuzz_tokenizer"
    build = subprocess.run(
        [
            clang,
            "-g",
            "-O1",
            "-fsanitize=fuzzer,address,undefined",
            "-fno-sanitize-recover=undefined",
            config.VERSION_DEFINE,
            f"-I{CSRC}",
            str(HARNESS),
            *sources(),
            "-lsqlite3",
            "-o",
            str(exe),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if build.returncode != 0 and "fuzzer" in build.stderr:
        pytest.skip(
            "clang without its libFuzzer runtime (apt-get install -y libclang-rt-dev): "
            + build.stderr[-300:]
        )
    assert build.returncode == 0, build.stderr
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, data in enumerate(_random_inputs(20, seed=3)):
        (corpus / f"seed{i}").write_bytes(data)
    proc = subprocess.run(
        [str(exe), "-max_total_time=8", "-max_len=4096", "-seed=1", str(corpus)],
        capture_output=True,
        text=True,
        errors="replace",
        env=_sanitizer_env(),
        timeout=300,
    )
    _assert_clean(proc)
