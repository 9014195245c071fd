"""The loader on every platform: the library's file name and where SQLite lives.

What differs between platforms is simulated here by monkeypatching the
platform facts (``sys.platform``, the package folder, ``_sqlite3.__file__``,
the candidate list); the libraries opened are real ones of this machine.
Cases that change process-wide state run in a fresh interpreter.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hermes_fts
from hermes_fts import _platform, loader

ROOT = Path(__file__).resolve().parent.parent
PLATFORM_FILES = {
    "linux": "cjk_unicode61.so",
    "darwin": "cjk_unicode61.dylib",
    "win32": "cjk_unicode61.dll",
}


@pytest.mark.parametrize("platform", sorted(PLATFORM_FILES))
def test_library_file_name_has_the_suffix_and_no_lib_prefix(platform: str) -> None:
    assert _platform.library_filename(platform) == PLATFORM_FILES[platform]


@pytest.mark.parametrize("platform", sorted(PLATFORM_FILES))
def test_loader_finds_the_bundled_library_on_every_platform(
    platform: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "hermes_fts"
    package.mkdir()
    # Decoys: the other platforms' files and a lib-prefixed name.
    for name in [*PLATFORM_FILES.values(), "lib" + PLATFORM_FILES[platform]]:
        (package / name).write_bytes(b"\0")
    monkeypatch.delenv("HERMES_FTS_LIBRARY", raising=False)
    monkeypatch.setattr(loader, "__file__", str(package / "loader.py"))
    monkeypatch.setattr(sys, "platform", platform)
    assert loader.library_file() == str(package / PLATFORM_FILES[platform])
    assert loader.extension_path() == str(package / "cjk_unicode61")


@pytest.mark.parametrize("suffix", [".so", ".dylib", ".dll"])
def test_override_path_loses_any_platforms_suffix(
    suffix: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HERMES_FTS_LIBRARY", str(tmp_path / f"libfts5_cjk{suffix}"))
    assert loader.extension_path() == str(tmp_path / "libfts5_cjk")


def test_windows_looks_beside_sqlite3_pyd_first() -> None:
    module = os.path.join("C:/Python312", "DLLs", "_sqlite3.pyd")
    found = _platform.sqlite_library_candidates(
        module, ("C:/venv", "C:/Python312"), platform="win32"
    )
    assert found[0] == os.path.join("C:/Python312", "DLLs", "sqlite3.dll")
    assert os.path.join("C:/venv", "DLLs", "sqlite3.dll") in found
    assert found[-1] == "sqlite3.dll"  # then the DLL search order
    assert all(c.endswith("sqlite3.dll") for c in found)
    assert len(found) == len(set(found))


def test_macos_knows_python_org_and_homebrew() -> None:
    prefix = "/Library/Frameworks/Python.framework/Versions/3.12"
    module = f"{prefix}/lib/python3.12/lib-dynload/_sqlite3.cpython-312-darwin.so"
    found = _platform.sqlite_library_candidates(module, (prefix, prefix), platform="darwin")
    assert found[0] == module  # dlsym on its handle searches what it links
    assert f"{prefix}/lib/libsqlite3.0.dylib" in found  # python.org installer
    assert "/opt/homebrew/opt/sqlite/lib/libsqlite3.dylib" in found  # Homebrew, Apple silicon
    assert "/usr/local/opt/sqlite/lib/libsqlite3.dylib" in found  # Homebrew, Intel
    assert found[-1] == "/usr/lib/libsqlite3.dylib"
    assert not [c for c in found if c.endswith((".so.0", ".dll"))]


@pytest.mark.parametrize("prefix", ["/usr", "/usr/local"])  # Debian's and Alpine's layout
def test_linux_and_musl_try_the_module_then_the_soname(prefix: str) -> None:
    module = f"{prefix}/lib/python3.12/lib-dynload/_sqlite3.cpython-312-x86_64-linux-musl.so"
    found = _platform.sqlite_library_candidates(module, (prefix,), platform="linux")
    assert found == [module, f"{prefix}/lib/libsqlite3.so.0", "libsqlite3.so.0"]


def _fresh_python(code: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_CJK_FTS", "HERMES_FTS_LIBRARY")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _symbolless_module(tmp_path: Path) -> Path:
    """A real shared object that exports no SQLite function: a statically linked,
    symbol-hiding _sqlite3 looks exactly like this to dlsym."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the simulation uses an ELF shared object")
    lib = Path(hermes_fts.extension_path() + loader.LIB_SUFFIX)
    fake = tmp_path / "_sqlite3.cpython-static.so"
    shutil.copyfile(lib, fake)
    return fake


SIMULATE = """
    import sqlite3, _sqlite3
    import hermes_fts
    from hermes_fts import loader
    _sqlite3.__file__ = {module!r}
    real = loader.sqlite_library_candidates
    loader.sqlite_library_candidates = lambda m, p: {candidates}
    try:
        print("strategy", hermes_fts.install())
    except hermes_fts.ExtensionUnavailable as exc:
        print("unavailable", exc)
    print("has", loader.has_extension(sqlite3.connect(":memory:")))
"""


def test_static_sqlite_without_exports_fails_clearly_and_names_the_workaround(
    tmp_path: Path,
) -> None:
    fake = _symbolless_module(tmp_path)
    proc = _fresh_python(SIMULATE.format(module=str(fake), candidates="[m]"))
    assert proc.returncode == 0, proc.stderr  # never a crash
    assert "unavailable SQLite is linked statically into" in proc.stdout, proc.stdout
    assert "does not export SQLite's functions" in proc.stdout
    assert "pip install sqlean.py" in proc.stdout
    assert "has False" in proc.stdout


def test_module_without_exports_falls_back_to_the_library_it_runs_on(tmp_path: Path) -> None:
    # This Python's _sqlite3 links libsqlite3.so.0: the soname candidate is the
    # very library its connections use, so registration must work through it.
    fake = _symbolless_module(tmp_path)
    proc = _fresh_python(SIMULATE.format(module=str(fake), candidates="real(m, p)"))
    assert proc.returncode == 0, proc.stderr
    assert "strategy auto_extension" in proc.stdout, proc.stdout
    assert "has True" in proc.stdout


def test_another_sqlite_version_is_refused(tmp_path: Path) -> None:
    try:
        import sqlean.dbapi2  # noqa: F401 - loads sqlean's own _sqlite3 module
    except ImportError:
        pytest.skip("sqlean.py is not installed (in the test extra)")
    other = next(
        m.__file__
        for n, m in sys.modules.items()
        if n.startswith("sqlean") and n.endswith("_sqlite3")
    )
    import sqlean.dbapi2 as sqlean_dbapi

    if sqlean_dbapi.sqlite_version == __import__("sqlite3").sqlite_version:
        pytest.skip("sqlean.py runs the same SQLite version as this Python")
    proc = _fresh_python(SIMULATE.format(module=str(other), candidates="[m]"))
    assert proc.returncode == 0, proc.stderr
    assert f"SQLite {sqlean_dbapi.sqlite_version}, the module runs" in proc.stdout, proc.stdout
    assert "has False" in proc.stdout
