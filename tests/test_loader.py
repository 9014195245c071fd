"""Loading the extension into every kind of Python host.

Hosts other than the current interpreter's stdlib run in subprocesses: one
process may serve one SQLite library only (see hermes_fts.loader).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hermes_fts
from hermes_fts import loader

ROOT = Path(__file__).resolve().parent.parent


def run_python(code: str, python: str = sys.executable, env: dict | None = None, check=True):
    """Run ``code`` in a fresh interpreter with the source tree importable."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(ROOT)
    full_env.pop("HERMES_CJK_FTS", None)
    full_env.pop("HERMES_FTS_LIBRARY", None)
    full_env.update(env or {})
    proc = subprocess.run(
        [python, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"subprocess failed:\nSTDOUT:\n{proc.stdout}\nSTDERR:\n{proc.stderr}")
    return proc


CJK_ROUNDTRIP = """
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61')")
    conn.execute("INSERT INTO t VALUES ('修改youer服务端'), ('東京タワーに行った'), ('plain english')")
    hits = {
        q: [r[0] for r in conn.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid", (q,))]
        for q in ("服务", "youer", "タワー", "english", "务服")
    }
"""


def test_connect_on_this_python_uses_the_best_strategy():
    conn = hermes_fts.connect(":memory:")
    exec(textwrap.dedent(CJK_ROUNDTRIP), {"conn": conn}, ns := {})
    assert ns["hits"] == {"服务": [1], "youer": [1], "タワー": [2], "english": [3], "务服": []}
    expected = (
        "load_extension"
        if hasattr(sqlite3.Connection, "enable_load_extension")
        else "auto_extension"
    )
    assert loader.load_strategy() == expected


def test_load_on_a_connection_that_already_has_it_reports_present():
    conn = hermes_fts.connect(":memory:")
    assert hermes_fts.load(conn) == "present"


def test_probe_while_a_statement_is_still_reading():
    """SQLite drops no table while a statement of the connection reads: the probe
    raised "database table is locked", left its TEMP table behind, and every later
    probe on that connection then said the extension was missing."""
    conn = hermes_fts.connect(":memory:")
    conn.execute("CREATE TABLE t(a)")
    conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(5)])
    reading = conn.execute("SELECT a FROM t")
    assert reading.fetchone() == (0,)
    assert loader.has_extension(conn)
    assert loader.has_extension(conn)
    assert hermes_fts.load(conn) == "present"
    assert [r[0] for r in reading.fetchall()] == [1, 2, 3, 4]
    assert loader.has_extension(conn)


def test_probe_on_a_query_only_connection():
    """PRAGMA query_only refuses TEMP tables too: the probe called the extension
    missing, and load() went on to load it again."""
    conn = hermes_fts.connect(":memory:")
    conn.execute("PRAGMA query_only = 1")
    assert loader.has_extension(conn)
    assert hermes_fts.load(conn) == "present"
    assert conn.execute("PRAGMA query_only").fetchone() == (1,)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("CREATE TABLE t(a)")


def test_connect_readonly_refuses_writes(tmp_path):
    db = tmp_path / "ro.db"
    w = hermes_fts.connect(str(db))
    w.execute("CREATE TABLE x(a)")
    w.commit()
    w.close()
    ro = hermes_fts.connect(str(db), readonly=True)
    assert ro.execute("SELECT count(*) FROM x").fetchone() == (0,)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        ro.execute("INSERT INTO x VALUES (1)")


def test_extension_path_has_no_suffix_and_the_library_exists():
    path = hermes_fts.extension_path()
    assert not path.endswith((".so", ".dylib", ".dll"))
    assert os.path.isfile(path + loader.LIB_SUFFIX)


@pytest.mark.parametrize("value", ["0", "false", "OFF", " no "])
def test_off_switch_refuses_with_a_clear_message(monkeypatch, value):
    monkeypatch.setenv("HERMES_CJK_FTS", value)
    with pytest.raises(hermes_fts.ExtensionUnavailable, match="HERMES_CJK_FTS"):
        hermes_fts.connect(":memory:")
    with pytest.raises(hermes_fts.ExtensionUnavailable, match="HERMES_CJK_FTS"):
        hermes_fts.load(sqlite3.connect(":memory:"))
    with pytest.raises(hermes_fts.ExtensionUnavailable, match="HERMES_CJK_FTS"):
        hermes_fts.tokenize("中文")


def test_tokenize_gives_tokens_with_exact_byte_offsets():
    text = "修改youer服务端"
    tokens = hermes_fts.tokenize(text)
    assert [t.text for t in tokens] == ["修改", "youer", "服务", "务端"]
    raw = text.encode()
    assert [raw[t.start : t.end].decode() for t in tokens] == ["修改", "youer", "服务", "务端"]
    uni = hermes_fts.tokenize("中国人", unigrams=True)
    assert [(t.text, t.colocated) for t in uni] == [
        ("中国", False),
        ("中", True),
        ("国人", False),
        ("国", True),
        ("人", True),
    ]
    assert [t.text for t in hermes_fts.tokenize("中国人", unigrams=True, query=True)] == [
        "中国",
        "国人",
    ]
    with pytest.raises(ValueError, match="rejected"):
        hermes_fts.tokenize("x", "no_such_option", "1")


def test_missing_library_override_fails_with_advice(tmp_path):
    proc = run_python(
        """
        import hermes_fts
        try:
            hermes_fts.connect(":memory:")
        except hermes_fts.ExtensionUnavailable as e:
            print("ERR", e)
        """,
        env={"HERMES_FTS_LIBRARY": str(tmp_path / "nope" / "libfts5_cjk.so")},
    )
    assert "ERR" in proc.stdout and "not found" in proc.stdout
    assert "HERMES_FTS_LIBRARY" in proc.stdout


def test_override_serves_hermes_agents_library_name(tmp_path):
    """HERMES_FTS_LIBRARY may name the library as Hermes Agent does (libfts5_cjk.so)."""
    copy = tmp_path / ("libfts5_cjk" + loader.LIB_SUFFIX)
    shutil.copy(hermes_fts.extension_path() + loader.LIB_SUFFIX, copy)
    proc = run_python(
        """
        import hermes_fts
        conn = hermes_fts.connect(":memory:")
        print(conn.execute("SELECT cjk_tokens('服务端')").fetchone()[0])
        """,
        env={"HERMES_FTS_LIBRARY": str(copy)},
    )
    assert [t["token"] for t in json.loads(proc.stdout)] == ["服务", "务端"]


def test_override_may_name_a_library_in_the_current_folder(tmp_path):
    """HERMES_FTS_LIBRARY=mylib.so names the file in the current folder, as the check
    that it exists reads it, not a library the system's loader looks for elsewhere."""
    shutil.copy(hermes_fts.extension_path() + loader.LIB_SUFFIX, tmp_path / "mylib.so")
    full_env = {k: v for k, v in os.environ.items() if k != "HERMES_CJK_FTS"}
    full_env.update(PYTHONPATH=str(ROOT), HERMES_FTS_LIBRARY="mylib.so")
    code = """
        import hermes_fts
        conn = hermes_fts.connect(":memory:")
        print(conn.execute("SELECT cjk_tokens('服务端')").fetchone()[0])
        """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert [t["token"] for t in json.loads(proc.stdout)] == ["服务", "务端"]


def test_stdlib_connection_opened_before_install_gets_a_clear_error():
    proc = run_python(
        """
        import sqlite3, hermes_fts
        early = sqlite3.connect(":memory:")
        if hasattr(early, "enable_load_extension"):
            print("SKIP")
        else:
            try:
                hermes_fts.load(early)
            except hermes_fts.ExtensionUnavailable as e:
                print("ERR", e)
            late = sqlite3.connect(":memory:")
            print("late", hermes_fts.load(late))
        """
    )
    if "SKIP" in proc.stdout:
        pytest.skip("this Python loads extensions into open connections")
    assert "ERR" in proc.stdout and "hermes_fts.connect" in proc.stdout
    assert "late present" in proc.stdout


SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.mark.skipif(not os.path.exists(SYSTEM_PYTHON), reason="no Debian system python3")
@pytest.mark.skipif(not (ROOT / "hermes_fts").is_dir(), reason="needs the source checkout")
def test_system_python_with_enable_load_extension_switches_it_off_again():
    proc = run_python(
        """
        import sqlite3, hermes_fts
        conn = sqlite3.connect(":memory:")
        print("strategy", hermes_fts.load(conn))
        """
        + textwrap.indent(textwrap.dedent(CJK_ROUNDTRIP), "        ")
        + """
        print("hits", hits["服务"], hits["youer"])
        try:
            conn.execute("SELECT load_extension('x')")
        except sqlite3.OperationalError as e:
            print("sql-load", e)
        """,
        python=SYSTEM_PYTHON,
    )
    assert "strategy load_extension" in proc.stdout
    assert "hits [1] [1]" in proc.stdout
    assert "sql-load not authorized" in proc.stdout


NEWER_HOSTS = {
    "sqlean": "import sqlean as mod\nconn = mod.connect(':memory:')",
    "pysqlite3": "from pysqlite3 import dbapi2 as mod\nconn = mod.connect(':memory:')",
    "apsw": "import apsw as mod\nconn = apsw_conn = mod.Connection(':memory:')",
}


@pytest.mark.parametrize("host", sorted(NEWER_HOSTS))
def test_newer_sqlite_hosts_load_through_load_extension(host):
    module = {"sqlean": "sqlean", "pysqlite3": "pysqlite3", "apsw": "apsw"}[host]
    probe = run_python(f"import {module}", check=False)
    if probe.returncode != 0:
        pytest.skip(f"{module} is not installed (pip install '.[test]' brings it)")
    code = (
        NEWER_HOSTS[host]
        + textwrap.dedent(
            """
        import hermes_fts
        print("strategy", hermes_fts.load(conn))
        print("again", hermes_fts.load(conn))
        version = conn.execute("SELECT cjk_unicode61_version()").fetchone()[0]
        print("version", version)
        """
        )
        + textwrap.dedent(CJK_ROUNDTRIP)
        + "\nprint('hits', hits['服务'], hits['タワー'], hits['务服'])\n"
    )
    proc = run_python(code)
    assert "strategy load_extension" in proc.stdout
    assert "again present" in proc.stdout
    assert "hits [1] [2] []" in proc.stdout
    line = next(x for x in proc.stdout.splitlines() if x.startswith("version"))
    assert "3.40" not in line  # really a different, newer SQLite


@pytest.mark.parametrize("host", sorted(NEWER_HOSTS))
def test_a_library_that_will_not_load_is_named_with_its_own_cause(host, tmp_path):
    """SQLite retries a file that fails with its suffix added again and reported that
    try: a truncated library read "bad.so.so: cannot open shared object file: No
    such file or directory", as if a file that is there were missing."""
    module = {"sqlean": "sqlean", "pysqlite3": "pysqlite3", "apsw": "apsw"}[host]
    if run_python(f"import {module}", check=False).returncode != 0:
        pytest.skip(f"{module} is not installed (pip install '.[test]' brings it)")
    bad = tmp_path / f"cjk_unicode61{loader.LIB_SUFFIX}"
    bad.write_bytes(b"not a library\n")
    proc = run_python(
        NEWER_HOSTS[host]
        + textwrap.dedent(
            """
        import hermes_fts
        try:
            hermes_fts.load(conn)
        except hermes_fts.ExtensionUnavailable as e:
            print("ERR", e)
        """
        ),
        env={"HERMES_FTS_LIBRARY": str(bad)},
    )
    assert proc.stdout.startswith(f"ERR loading {bad} failed"), proc.stdout
    assert f"{bad}{loader.LIB_SUFFIX}" not in proc.stdout and "No such file" not in proc.stdout
    if sys.platform.startswith("linux"):  # the system loader's own words
        assert "file too short" in proc.stdout, proc.stdout


def test_two_sqlite_libraries_in_one_process_are_refused():
    probe = run_python("import sqlean", check=False)
    if probe.returncode != 0:
        pytest.skip("sqlean.py is not installed")
    proc = run_python(
        """
        import sqlean, hermes_fts
        hermes_fts.connect(":memory:")
        try:
            hermes_fts.load(sqlean.connect(":memory:"))
        except hermes_fts.ExtensionUnavailable as e:
            print("ERR", e)
        """
    )
    assert "ERR" in proc.stdout and "one SQLite library" in proc.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_auto_extension_library_stays_mapped_when_its_handle_is_dropped():
    # Connections can outlive the library's handle at interpreter exit; the library
    # must stay mapped under their tokenizers (a crash at exit otherwise).
    out = run_python(
        """
        import gc, sqlite3
        from hermes_fts import loader
        loader.install()
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='hermes_fts_cjk')")
        path = loader.library_file()
        loader._native.clear()
        gc.collect()
        maps = open("/proc/self/maps").read()
        conn.execute("INSERT INTO t VALUES ('我们明天去东京')")
        print(path in maps, conn.execute("SELECT count(*) FROM t WHERE t MATCH '东京'").fetchone()[0])
        """
    )
    assert out.stdout.split() == ["True", "1"]


def test_hermes_variable_never_redirects_our_loader(tmp_path):
    """HERMES_FTS5_CJK_SO is Hermes' own library: ours loads the bundled one regardless."""
    proc = run_python(
        """
        import hermes_fts
        conn = hermes_fts.connect(":memory:")
        print(conn.execute("SELECT cjk_unicode61_version()").fetchone()[0])
        """,
        env={"HERMES_FTS5_CJK_SO": str(tmp_path / "nope" / "libfts5_cjk.so")},
    )
    assert proc.stdout.startswith("hermes-fts "), proc.stderr


def test_public_name_is_claimed_only_where_free():
    """Our tables use hermes_fts_cjk; cjk_unicode61 is registered for the caller's own
    tables, and never on the store's connections (they may write Hermes' own index)."""
    conn = hermes_fts.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE ours USING fts5(x, tokenize='hermes_fts_cjk')")
    conn.execute("CREATE VIRTUAL TABLE public USING fts5(x, tokenize='cjk_unicode61')")
    assert loader.claim_public_name(conn) is True
    private = hermes_fts.connect(":memory:", public_name=False)
    private.execute("CREATE VIRTUAL TABLE ours USING fts5(x, tokenize='hermes_fts_cjk')")
    with pytest.raises(sqlite3.OperationalError, match="no such tokenizer: cjk_unicode61"):
        private.execute("CREATE VIRTUAL TABLE public USING fts5(x, tokenize='cjk_unicode61')")
