"""The wheel: its tag, its library, a second Python, and the CI workflow files.

Builds the sdist and a wheel from it once per session (about ten seconds),
then installs the wheel into a fresh venv of another Python version and runs
a CJK smoke test there.  Runs only from a source checkout; skipped in
cibuildwheel's test step (which tests the installed wheel instead).

Environment: HERMES_SECOND_PYTHON=/path/to/python picks the second
interpreter; HERMES_BUILD_NO_ISOLATION=1 builds without network access.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from _csrc import ROOT, config

import hermes_fts
from hermes_fts._platform import library_filename

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))

pytestmark = pytest.mark.skipif(
    not (ROOT / "setup.py").exists() or not (ROOT / "csrc").is_dir(),
    reason="not a source checkout (e.g. cibuildwheel's test step): nothing to build",
)


def _run(
    cmd: list[str], cwd: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env)
    if proc.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n"
            f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return proc


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``python -m build``: an sdist, and a wheel built from that sdist."""
    pytest.importorskip("build", reason="pip install build (in the 'dev' extra)")
    out = tmp_path_factory.mktemp("dist")
    cmd = [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)]
    if os.environ.get("HERMES_BUILD_NO_ISOLATION"):
        cmd.insert(3, "--no-isolation")
    _run(cmd)
    wheels = list(out.glob("*.whl"))
    sdists = list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, os.listdir(out)
    return {"wheel": wheels[0], "sdist": sdists[0]}


@pytest.fixture(scope="session")
def library(dists: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extension library extracted from the wheel."""
    out = tmp_path_factory.mktemp("lib")
    with zipfile.ZipFile(dists["wheel"]) as zf:
        names = [n for n in zf.namelist() if n.startswith("hermes_fts/cjk_unicode61")]
        assert names == [f"hermes_fts/{library_filename()}"], names
        return Path(zf.extract(names[0], out))


def test_wheel_is_tagged_py3_none_platform(dists: dict[str, Path]) -> None:
    wheel = dists["wheel"]
    m = re.fullmatch(r"hermes_fts-[^-]+-py3-none-(?P<plat>[^-]+)\.whl", wheel.name)
    assert m, f"{wheel.name}: expected py3-none-<platform>"
    assert m["plat"] != "any", "the wheel carries a native library; it must not be 'any'"
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/WHEEL")))
    text = meta.decode()
    assert "Root-Is-Purelib: false" in text
    assert re.findall(r"^Tag: (.+)$", text, re.M) == [f"py3-none-{m['plat']}"]


def test_wheel_contents(dists: dict[str, Path]) -> None:
    with zipfile.ZipFile(dists["wheel"]) as zf:
        names = set(zf.namelist())
    assert {"hermes_fts/__init__.py", "hermes_fts/py.typed"} <= names
    # Every module of the source tree, each subpackage included (pyproject lists them).
    source = Path(__file__).resolve().parent.parent
    modules = {p.relative_to(source).as_posix() for p in (source / "hermes_fts").rglob("*.py")}
    assert not modules - names, sorted(modules - names)
    assert not any(n.startswith(("tests/", "benchmarks/", "csrc/")) for n in names)
    assert not any(n.endswith((".c", ".h", ".o")) for n in names)
    # No CPython extension module: nothing with an ABI tag in its name.
    assert not any(re.search(r"\.(cpython|abi3|cp3\d+)", n) for n in names), names


def test_sdist_carries_the_c_sources(dists: dict[str, Path]) -> None:
    import tarfile

    with tarfile.open(dists["sdist"]) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    csrc = {p.relative_to(ROOT).as_posix() for p in (ROOT / "csrc").glob("*.[ch]")}
    assert csrc and csrc <= names, sorted(csrc - names)
    assert {"setup.py", "pyproject.toml"} <= names
    # The README links into docs/: the sdist carries every page it links.
    docs = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    assert docs and docs <= names, sorted(docs - names)


def test_sdist_carries_the_whole_test_suite(dists: dict[str, Path]) -> None:
    """The sdist held tests/test_*.py (setuptools adds them on its own) but not the
    helpers and golden files they import and read, so its tests failed to import."""
    import tarfile

    with tarfile.open(dists["sdist"]) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    suite = {
        p.relative_to(ROOT).as_posix()
        for pattern in ("*.py", "*.c", "golden/*.txt")
        for p in (ROOT / "tests").glob(pattern)
    }
    assert {"tests/conftest.py", "tests/_support.py"} <= suite
    assert suite <= names, sorted(suite - names)
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def _needed(lib: Path) -> list[str]:
    if sys.platform.startswith("linux"):
        if not shutil.which("readelf"):
            pytest.skip("readelf not installed (binutils)")
        out = _run(["readelf", "-d", str(lib)]).stdout
        return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    if sys.platform == "darwin":
        out = _run(["otool", "-L", str(lib)]).stdout
        return [line.split()[0] for line in out.splitlines()[1:] if line.strip()]
    pytest.skip(f"no dependency lister wired up for {sys.platform}")


def _include_dirs(cc: str) -> list[Path]:
    """The compiler's own ``#include <...>`` search list."""
    probe = subprocess.run([cc, "-xc", "-E", "-v", "-"], input="", capture_output=True, text=True)
    listed = probe.stderr.split("search starts here:")[-1].split("End of search list")[0]
    return [Path(line.strip()) for line in listed.splitlines() if line.strip()]


def test_a_build_without_sqlite_headers_says_what_to_install(tmp_path: Path) -> None:
    """Without SQLite's headers the build stopped with the compiler's own error about one
    missing file, deep in pip's output, naming no package to install."""
    cc = shutil.which("gcc")
    assert cc is not None, "gcc builds the library; install build-essential"
    dirs = _include_dirs(cc)
    assert any((d / "sqlite3ext.h").exists() for d in dirs), "libsqlite3-dev is installed"
    searched = []
    for d in dirs:  # the same folders, without the SQLite headers
        if (d / "sqlite3ext.h").exists() or (d / "sqlite3.h").exists():
            shadow = tmp_path / "include" / str(len(searched))
            shadow.mkdir(parents=True)
            for entry in d.iterdir():
                if not entry.name.startswith("sqlite3"):
                    (shadow / entry.name).symlink_to(entry)
            d = shadow
        searched += ["-isystem", str(d)]
    env = {**os.environ, "CC": " ".join([cc, "-nostdinc", *searched])}
    build = [sys.executable, "setup.py", "build_ext", "--build-lib", str(tmp_path / "lib")]
    build += ["--build-temp", str(tmp_path / "tmp")]
    proc = subprocess.run(build, cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode != 0, proc.stdout
    assert "SQLite's C headers (sqlite3.h,\nsqlite3ext.h)" in proc.stderr, proc.stderr
    assert "apt-get install libsqlite3-dev" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert not list((tmp_path / "lib").rglob("cjk_unicode61*")), "nothing was built"


def test_library_does_not_need_libpython(library: Path) -> None:
    needed = _needed(library)
    assert needed, "expected at least the C library"
    assert not [n for n in needed if "python" in n.lower()], needed
    assert not [n for n in needed if "sqlite" in n.lower()], (
        "the extension must call SQLite only through the API table it is given",
        needed,
    )


def _exported(lib: Path) -> set[str]:
    if sys.platform.startswith("linux"):
        if not shutil.which("nm"):
            pytest.skip("nm not installed (binutils)")
        out = _run(["nm", "-D", "--defined-only", str(lib)]).stdout
        return {
            line.split()[-1]
            for line in out.splitlines()
            if len(line.split()) == 3 and line.split()[1] in "TDBRVWtdbr"
        }
    if sys.platform == "darwin":
        out = _run(["nm", "-gU", str(lib)]).stdout
        return {line.split()[-1].lstrip("_") for line in out.splitlines() if line.strip()}
    pytest.skip(f"no symbol lister wired up for {sys.platform}")


def test_library_exports_only_the_entry_points(library: Path) -> None:
    assert config is not None
    assert _exported(library) == set(config.ENTRY_POINTS)


def test_one_version_in_pyproject_package_and_library() -> None:
    from setuptools.config.pyprojecttoml import read_configuration

    resolved = read_configuration(ROOT / "pyproject.toml", expand=True)["project"]["version"]
    conn = hermes_fts.connect(":memory:")
    try:
        (c_version,) = conn.execute("SELECT cjk_unicode61_version()").fetchone()
    finally:
        conn.close()
    assert c_version.split(";")[0] == f"hermes-fts {hermes_fts.__version__}"
    assert resolved == hermes_fts.__version__


def test_wheel_and_sdist_carry_the_version(dists: dict[str, Path]) -> None:
    for dist in dists.values():
        assert dist.name.startswith(f"hermes_fts-{hermes_fts.__version__}"), dist.name


@pytest.fixture(scope="session")
def repaired_wheel(dists: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``auditwheel repair`` output on Linux; the plain wheel elsewhere."""
    if not sys.platform.startswith("linux"):
        return dists["wheel"]
    if not shutil.which("auditwheel"):
        pytest.skip("auditwheel not installed (in the 'dev' extra)")
    out = tmp_path_factory.mktemp("wheelhouse")
    _run(["auditwheel", "repair", "-w", str(out), str(dists["wheel"])])
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="auditwheel is Linux-only")
def test_auditwheel_makes_a_manylinux_py3_none_wheel(repaired_wheel: Path) -> None:
    assert re.search(r"-py3-none-(\w+\.)*manylinux_2_\d+_\w+\.whl$", repaired_wheel.name), (
        repaired_wheel.name
    )


def _second_python() -> str | None:
    """Another CPython minor version than the one running the tests."""
    env = os.environ.get("HERMES_SECOND_PYTHON")
    if env:
        return env
    mine = f"{sys.version_info[0]}.{sys.version_info[1]}"
    candidates: list[str] = []
    pyenv_root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates += sorted(
        glob.glob(os.path.join(pyenv_root, "versions", "3.*", "bin", "python3")), reverse=True
    )
    for minor in range(14, 8, -1):
        found = shutil.which(f"python3.{minor}")
        if found:
            candidates.append(found)
    for cand in candidates:
        try:
            proc = subprocess.run(
                [cand, "-c", "import sys, venv, sqlite3; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        ver = proc.stdout.strip()
        if proc.returncode == 0 and ver != mine and tuple(map(int, ver.split("."))) >= (3, 9):
            return cand
    return None


SMOKE = r"""
import json, os, sqlite3, sys
import hermes_fts
here = os.path.dirname(hermes_fts.__file__)
assert os.path.realpath(here).startswith(os.path.realpath(sys.prefix)), here
conn = hermes_fts.connect(":memory:")
conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='cjk_unicode61')")
conn.executemany("INSERT INTO t(body) VALUES (?)",
                 [("修改youer服务端",), ("全文検索はSQLiteで動く",), ("한국어 검색 테스트",),
                  ("nothing here",)])
hits = {q: [r[0] for r in conn.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid", (q,))]
        for q in ("服务", "検索", "검색", "youer")}
print(json.dumps({"python": "%d.%d" % sys.version_info[:2], "sqlite": sqlite3.sqlite_version,
                  "path": hermes_fts.extension_path(), "hits": hits}))
"""


def test_installs_and_works_in_a_second_python(
    repaired_wheel: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    import json

    second = _second_python()
    if second is None:
        pytest.skip(
            "no second CPython >= 3.9 (other than "
            f"{sys.version_info[0]}.{sys.version_info[1]}) found; "
            "set HERMES_SECOND_PYTHON"
        )
    venv = tmp_path_factory.mktemp("venv2")
    _run([second, "-m", "venv", str(venv)])
    bindir = "Scripts" if sys.platform == "win32" else "bin"
    py = str(venv / bindir / ("python.exe" if sys.platform == "win32" else "python"))
    _run(
        [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(repaired_wheel)]
    )
    # Run from an empty directory so the source tree cannot shadow the install.
    work = tmp_path_factory.mktemp("outside")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HERMES_FTS_LIBRARY")}
    proc = _run([py, "-c", SMOKE], cwd=str(work), env=env)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["hits"] == {"服务": [1], "検索": [2], "검색": [3], "youer": [1]}, result
    assert result["python"] != f"{sys.version_info[0]}.{sys.version_info[1]}"

    # And the test suite passes there, against the installed wheel.
    _run(
        [
            py,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "pytest",
            "hypothesis",
        ]
    )
    shutil.copytree(
        Path(__file__).parent,
        work / "tests",
        ignore=shutil.ignore_patterns("__pycache__", "test_packaging.py"),
    )
    suite = [f"tests/{name}" for name in SECOND_PYTHON_SUITE]
    proc = _run(
        [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", *suite], cwd=str(work), env=env
    )
    assert re.search(r"\d+ passed", proc.stdout), proc.stdout[-2000:]


# The suites that exercise the installed library end to end; the rest need the
# source tree (sanitizer builds, generated tables) or this interpreter's extras.
SECOND_PYTHON_SUITE = (
    "test_loader.py",
    "test_tokenizer.py",
    "test_aux.py",
    "test_search.py",
    "test_store.py",
    "test_tool.py",
    "test_transcript.py",
)


# --------------------------------------------------------------------- workflows


def test_workflow_files_exist() -> None:
    assert {p.name for p in WORKFLOWS} >= {"tests.yml", "wheels.yml", "bench.yml"}


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=sysconfig.get_path("scripts"))
    if not found:
        pytest.skip(f"{name} is not installed (pip install {name}; .ci/run installs it)")
    return found


def test_workflows_match_the_github_schema() -> None:
    tool = _tool("check-jsonschema")
    _run([tool, "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)])


def test_workflows_pass_zizmor_offline() -> None:
    tool = _tool("zizmor")
    _run([tool, "--offline", str(ROOT / ".github" / "workflows")])


def test_every_action_is_pinned_to_a_commit() -> None:
    for wf in WORKFLOWS:
        for ref in re.findall(r"uses:\s*([^\s#]+)", wf.read_text(encoding="utf-8")):
            if ref.startswith("./"):
                continue
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), f"{wf.name}: {ref}"


def test_publishing_uses_trusted_publishing_only() -> None:
    text = (ROOT / ".github" / "workflows" / "wheels.yml").read_text(encoding="utf-8")
    assert "pypa/gh-action-pypi-publish@" in text
    assert "id-token: write" in text
    assert "password:" not in text and "secrets." not in text


def test_cibuildwheel_selects_cpython_39_to_314() -> None:
    tool = shutil.which("cibuildwheel") or shutil.which(
        "cibuildwheel", path=sysconfig.get_path("scripts")
    )
    if not tool:
        pytest.skip("cibuildwheel is not installed (it needs Python >= 3.11)")
    proc = _run(
        [tool, "--print-build-identifiers", "--platform", "linux", str(ROOT)], cwd=str(ROOT)
    )
    ids = proc.stdout.split()
    assert {i.split("-")[0] for i in ids} == {f"cp3{m}" for m in range(9, 15)}, ids
    assert {i.split("-", 1)[1] for i in ids} == {"manylinux_x86_64", "musllinux_x86_64"}
