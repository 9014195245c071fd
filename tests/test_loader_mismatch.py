"""A library that is not the one this package needs: cut short, a directory, an
older hermes-fts build, a copy under another name.  Each host gets an error that
says what is wrong; none may crash the process.

Every case runs in its own interpreter: a library that crashes the loader takes
the process with it, and one process serves one SQLite library.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _csrc import CSRC, config, needs_csrc
from test_loader import NEWER_HOSTS, run_python

from hermes_fts import loader
from hermes_fts.index import schema
from hermes_fts.store import SessionStore

# Open a connection of each host and try to give it the extension; print what it said.
HOST_LOADS = {
    "stdlib": "import sqlite3 as mod\nconn = None",
    **NEWER_HOSTS,
}
TRY_LOAD = """
import hermes_fts
try:
    print("OK", hermes_fts.load(conn) if conn is not None else hermes_fts.connect(":memory:"))
except hermes_fts.ExtensionUnavailable as e:
    print("ERR", e)
"""


def load_with(host: str, library: Path) -> str:
    """What loading ``library`` into a connection of ``host`` printed; the process
    must end on its own (a signal fails the test)."""
    module = {"stdlib": "sqlite3", "sqlean": "sqlean", "pysqlite3": "pysqlite3", "apsw": "apsw"}
    if run_python(f"import {module[host]}", check=False).returncode != 0:
        pytest.skip(f"{module[host]} is not installed (pip install '.[test]' brings it)")
    proc = run_python(
        HOST_LOADS[host] + textwrap.dedent(TRY_LOAD),
        env={"HERMES_FTS_LIBRARY": str(library)},
        check=False,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    return proc.stdout.strip()


def path_command(library: Path) -> tuple[int, str]:
    """``hermes-fts path`` with ``library``: its exit status and stderr."""
    proc = run_python(
        "import sys; from hermes_fts.cli import run; sys.argv[1:] = ['path']; run()",
        env={"HERMES_FTS_LIBRARY": str(library)},
        check=False,
    )
    return proc.returncode, proc.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc maps ELF segments")
@pytest.mark.parametrize("host", sorted(HOST_LOADS))
def test_a_cut_short_library_is_refused_not_a_crash(host, tmp_path):
    """A library copied only in part (a full disk, an interrupted download): glibc
    mapped its segments past the end of the file and the process died of SIGBUS,
    in every host and in `hermes-fts path`, before any error could be said."""
    whole = Path(loader.library_file()).read_bytes()
    short = tmp_path / f"cjk_unicode61{loader.LIB_SUFFIX}"
    short.write_bytes(whole[:4096])  # the headers, none of the segments they name
    said = load_with(host, short)
    assert said.startswith("ERR") and f"{short} is cut short: 4096 bytes" in said, said
    status, err = path_command(short)
    assert status == 2 and "is cut short" in err, err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF libraries")
@pytest.mark.parametrize("host", sorted(HOST_LOADS))
def test_a_library_for_another_machine_is_named_as_such(host, tmp_path):
    """An AArch64 build (a cross-built wheel's library) on x86-64, or the reverse:
    glibc skips it and said "cannot open shared object file: No such file or
    directory" of a file that is there."""
    data = bytearray(Path(loader.library_file()).read_bytes())
    ours = int.from_bytes(data[18:20], "little")
    other = 62 if ours == 183 else 183  # x86-64 <-> AArch64
    data[18:20] = other.to_bytes(2, "little")
    foreign = tmp_path / f"cjk_unicode61{loader.LIB_SUFFIX}"
    foreign.write_bytes(bytes(data))
    said = load_with(host, foreign)
    assert said.startswith(f"ERR {foreign} is built for "), said
    assert "this Python runs on" in said and "No such file" not in said, said
    status, err = path_command(foreign)
    assert status == 2 and "is built for" in err and "No such file" not in err, err


def test_whole_files_are_not_cut_short():
    """The check refuses only what the loader would map past the end of the file."""
    assert loader.cut_short(loader.library_file()) is None
    assert loader.cut_short(sys.executable) is None
    assert loader.built_elsewhere(loader.library_file()) is None


@pytest.mark.parametrize("host", sorted(HOST_LOADS))
def test_a_library_variable_naming_a_directory_says_so(host, tmp_path):
    """HERMES_FTS_LIBRARY naming a folder read "the cjk_unicode61 library was not
    found at <the folder>" and advised reinstalling hermes-fts, which changes nothing:
    the variable is what is wrong."""
    folder = tmp_path / f"cjk_unicode61{loader.LIB_SUFFIX}"
    folder.mkdir()
    for named in (folder, tmp_path):
        said = load_with(host, named)
        assert said.startswith(f"ERR HERMES_FTS_LIBRARY names {named}, a directory"), said
        assert "unset it" in said and "Reinstall" not in said, said
    status, err = path_command(tmp_path / "gone.so")
    assert status == 2 and "HERMES_FTS_LIBRARY names a library that was not found at" in err
    assert "unset it" in err and "Reinstall" not in err, err


@pytest.fixture(scope="module")
def older_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's library built as one from before the ``letters`` option:
    the tokenizer does not know that option (it goes to unicode61, which refuses it)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if config is None or compiler is None:
        pytest.skip("needs the source checkout and a C compiler")
    src = tmp_path_factory.mktemp("older-src")
    for file in [*CSRC.glob("*.c"), *CSRC.glob("*.h")]:
        shutil.copy(file, src / file.name)
    tokenizer = src / "tokenizer.c"
    text = tokenizer.read_text(encoding="utf-8")
    assert 'LETTERS_OPTION = "letters";' in text
    tokenizer.write_text(text.replace('LETTERS_OPTION = "letters";', 'LETTERS_OPTION = "-";'))
    target = tmp_path_factory.mktemp("older") / f"cjk_unicode61{loader.LIB_SUFFIX}"
    build = subprocess.run(
        [compiler, "-shared", "-fPIC", "-O0", f"-I{src}", config.VERSION_DEFINE]
        + [str(c) for c in sorted(src.glob("*.c"))]
        + ["-o", str(target)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if build.returncode != 0:
        pytest.skip(f"the library does not build here (SQLite headers?): {build.stderr[-500:]}")
    return target


def test_the_probe_knows_every_option_of_the_index():
    """has_extension probes INDEX_OPTIONS: each tokenizer option of the CJK index
    but unicode61's own must be there, or an older library passes the probe."""
    options = schema.CJK_TOKENIZE.split()[1::2]
    assert set(options) - {"remove_diacritics"} == set(loader.INDEX_OPTIONS)


@needs_csrc
@pytest.mark.parametrize("host", sorted(HOST_LOADS))
def test_an_older_library_is_refused_naming_what_it_lacks(host, older_library):
    """An older build in HERMES_FTS_LIBRARY: apsw, sqlean.py and pysqlite3 reported it
    loaded, and the stdlib blamed a missing FTS5 or a second SQLite copy."""
    said = load_with(host, older_library)
    assert said.startswith(f"ERR {older_library} cannot serve hermes-fts"), said
    assert "does not know the option(s) letters" in said and "HERMES_FTS_LIBRARY" in said
    status, err = path_command(older_library)
    assert status == 2 and "does not know the option(s) letters" in err, err


@needs_csrc
def test_a_store_searched_with_an_older_library_falls_back_and_says_why(older_library, tmp_path):
    """A store indexed by this version, searched with an older library: every search
    failed with "error in tokenizer constructor" (and a traceback), and status
    called the index damaged."""
    db = tmp_path / "state.db"
    with SessionStore(db) as store:
        store.add_session("s1")
        store.add_message("s1", "user", "我们明天去东京部署服务")

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        return run_python(
            "import sys; from hermes_fts.cli import run; sys.argv[1:] = "
            f"{[*argv, '--db', str(db), '--json']!r}; run()",
            env={"HERMES_FTS_LIBRARY": str(older_library)},
            check=False,
        )

    found = cli("search", "部署")
    assert found.returncode == 0 and "Traceback" not in found.stderr, found.stderr[-2000:]
    answer = json.loads(found.stdout)
    assert answer["count"] == 1, answer
    assert any("did not load" in n for n in answer.get("query_notes", [])), answer
    ext = json.loads(cli("status").stdout)["extension"]
    assert ext["loaded"] is False and "does not know the option(s) letters" in ext["error"]


@pytest.mark.parametrize("host", sorted(HOST_LOADS))
def test_a_copy_under_another_name_loads_on_every_host(host, tmp_path):
    """HERMES_FTS_LIBRARY at a renamed copy (cjk_unicode61-old.so, kept beside a new
    build): SQLite looked for sqlite3_cjkunicodeold_init, derived from the file
    name, so apsw, sqlean.py and pysqlite3 refused it where the stdlib loaded it."""
    copy = tmp_path / f"cjk_unicode61-old{loader.LIB_SUFFIX}"
    shutil.copy(loader.library_file(), copy)
    said = load_with(host, copy)
    assert said.split()[0] == "OK", said
