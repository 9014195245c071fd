"""The library in the real sqlite3 shell, and its exported surface."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hermes_fts
from hermes_fts.loader import LIB_SUFFIX

LIB = Path(hermes_fts.extension_path() + LIB_SUFFIX)
ENTRY_POINTS = {
    "sqlite3_cjkunicode_init",
    "sqlite3_ftscjk_init",
    "sqlite3_fts5_cjk_init",
    "hermes_fts_auto_init",
}
SHELL = shutil.which("sqlite3")

DEMO = """
CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61 unigrams 1');
INSERT INTO t VALUES ('修改youer服务端'), ('我是中国人民'), ('天 气');
SELECT rowid, cjk_highlight(t, 0, '[', ']') FROM t WHERE t MATCH '中国人';
SELECT rowid FROM t WHERE t MATCH 'youer';
SELECT count(*) FROM t WHERE t MATCH '天气';
SELECT json_extract(cjk_tokens('東京タワー'), '$[3].token');
"""
DEMO_OUT = ["2|我是[中国人]民", "1", "0", "ワー"]


def run_shell(script: str) -> subprocess.CompletedProcess:
    if SHELL is None:
        pytest.skip("sqlite3 shell not installed (apt-get install -y sqlite3)")
    return subprocess.run(
        [SHELL, "-batch", "-bail", ":memory:"],
        input=script,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "entry",
    [
        "",
        "sqlite3_cjkunicode_init",
        "sqlite3_ftscjk_init",
        "sqlite3_fts5_cjk_init",
        "hermes_fts_auto_init",
    ],
)
def test_dot_load_every_entry_point(entry: str) -> None:
    claim = ""
    if entry == "hermes_fts_auto_init":
        # It runs on a host's own connections, so it leaves the public name alone
        # unless asked: the host's tables may use another library's cjk_unicode61.
        proc = run_shell(f".load {LIB.with_suffix('')} {entry}\n{DEMO}")
        assert "no such tokenizer: cjk_unicode61" in proc.stderr
        claim = ".output /dev/null\nSELECT cjk_unicode61_claim();\n.output stdout\n"
    proc = run_shell(f".load {LIB.with_suffix('')} {entry}\n{claim}{DEMO}")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:4] == DEMO_OUT


def test_dot_load_as_libfts5_cjk(tmp_path: Path) -> None:
    # Hermes Agent loads libfts5_cjk.so; SQLite derives sqlite3_ftscjk_init from that name
    target = tmp_path / ("libfts5_cjk" + LIB_SUFFIX)
    shutil.copyfile(LIB, target)
    proc = run_shell(f".load {target}\n{DEMO}")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:4] == DEMO_OUT


def test_sql_load_extension_twice() -> None:
    """SQLite refuses to redefine a function while a statement runs, and
    SELECT load_extension() is one: loading the library a second time that way
    failed with "cannot register hermes_fts_block_peaks (database is locked)"."""
    load = f"SELECT load_extension('{LIB.with_suffix('')}');\n"
    proc = run_shell(
        f".load {LIB.with_suffix('')}\n.output /dev/null\n{load}{load}.output stdout\n{DEMO}"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:4] == DEMO_OUT


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="builds with gcc")
def test_sql_load_over_another_build_names_the_cause(tmp_path: Path) -> None:
    """Over another build's functions the repeat load must fail (SQLite redefines
    none while a statement runs), and it said only "database is locked"."""
    from _csrc import CSRC, config, needs_csrc, sources

    gcc = shutil.which("gcc")
    if gcc is None or needs_csrc.args[0]:
        pytest.skip("needs gcc and the source checkout")
    other = tmp_path / ("cjk_unicode61" + LIB_SUFFIX)
    subprocess.run(
        [gcc, "-shared", "-fPIC", "-O0", "-DHERMES_FTS_VERSION=0.0.1", f"-I{CSRC}"]
        + [*sources(), "-o", str(other)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert config.VERSION != "0.0.1"
    proc = run_shell(
        f".load {other.with_suffix('')}\nSELECT load_extension('{LIB.with_suffix('')}');\n"
    )
    assert proc.returncode != 0
    assert "another build of the library" in proc.stderr, proc.stderr
    assert "new connection" in proc.stderr
    assert "database is locked" not in proc.stderr


def test_saturation_of_a_row_no_match_found() -> None:
    """`SELECT hermes_fts_saturation(t, 1.0, NULL) FROM t`, with no MATCH (a scan, a
    rowid lookup), crashed the shell with a segmentation fault: SQLite 3.40's xRowid
    reads the query's expression, which such a cursor has none of.  No phrase
    saturates nothing."""
    proc = run_shell(
        f".load {LIB.with_suffix('')}\n"
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61');\n"
        "INSERT INTO t VALUES ('中国 hello'), ('hello');\n"
        "SELECT rowid, hermes_fts_saturation(t, 1.0, NULL) FROM t;\n"
        "SELECT rowid, hermes_fts_saturation(t, 1.0, x'0100000001000000') FROM t WHERE rowid = 2;\n"
        "SELECT rowid, round(hermes_fts_saturation(t, 1.0, NULL), 6) FROM t WHERE t MATCH 'hello';\n"
    )
    assert proc.returncode == 0, proc.stderr
    # f = 1 in each matching row; D = 2 and 1 tokens: 2.2 / (1 + 1.2 * (0.25 + 0.75 * D))
    assert proc.stdout.split() == ["1|0.0", "2|0.0", "2|0.0", "1|0.709677", "2|1.0"]


def test_dot_load_unknown_entry_fails() -> None:
    proc = run_shell(f".load {LIB.with_suffix('')} sqlite3_nosuch_init\nSELECT 1;")
    assert proc.returncode != 0


def test_version_in_shell() -> None:
    proc = run_shell(
        f".load {LIB.with_suffix('')}\nSELECT cjk_unicode61_version(), sqlite_version();"
    )
    version, sqlite_version = proc.stdout.strip().split("|")
    assert version == f"hermes-fts {hermes_fts.__version__}; fts5 api v1; sqlite {sqlite_version}"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF tools")
def test_exports_only_entry_points() -> None:
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("binutils nm not installed")
    out = subprocess.run(
        [nm, "-D", "--defined-only", str(LIB)], capture_output=True, text=True, check=True
    )
    symbols = {line.split()[-1] for line in out.stdout.splitlines() if line.strip()}
    assert symbols == ENTRY_POINTS


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF tools")
def test_no_libpython_dependency() -> None:
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("binutils readelf not installed")
    out = subprocess.run(
        [readelf, "-d", str(LIB)], capture_output=True, text=True, check=True
    ).stdout
    needed = [line for line in out.splitlines() if "(NEEDED)" in line]
    assert needed and not any("python" in line for line in needed)


def test_auto_init_without_api_is_a_no_op(tmp_path: Path) -> None:
    # SQLite may call an auto-extension with no API table; it must not touch anything.
    copy = tmp_path / ("probe" + LIB_SUFFIX)  # private copy: its own sqlite3_api pointer
    shutil.copyfile(LIB, copy)
    lib = ctypes.CDLL(str(copy))
    fn = lib.hermes_fts_auto_init
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    assert fn(None, None, None) == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF tools")
def test_memory_comes_only_from_sqlite() -> None:
    # Every allocation goes through sqlite3_malloc64/sqlite3_free (the API
    # table), so the library must not import libc's allocator at all.
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("binutils nm not installed")
    out = subprocess.run(
        [nm, "-D", "--undefined-only", str(LIB)], capture_output=True, text=True, check=True
    ).stdout
    imported = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}
    assert "memcpy" in imported  # the listing works
    assert not imported & {"malloc", "calloc", "realloc", "free", "strdup"}, imported
