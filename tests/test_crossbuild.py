"""Every platform's library, cross-built here by .ci/build-wheels, checked and run.

The eight wheels are built once per session with csrc/cross_build.py (what
``.ci/build-wheels`` runs).  The toolchain (ziglang + setuptools, pinned) is
installed into a cached venv by the build itself (~/.cache/hermes-fts).

For every target: the wheel's files and tag, the library's file format and
architecture, its exported symbols (exactly the entry points), what it links
(no libpython, no SQLite, only the platform C runtime), the C allocator
rule, and the deployment target.  Then what can run here does run:

* manylinux x86_64: this machine's sqlite3 shell;
* manylinux aarch64: Debian's arm64 sqlite3 under qemu-aarch64-static;
* win_amd64: a Windows sqlite3 shell (SQLite's amalgamation, from the
  sqlean.py sdist on PyPI, built with the same zig cc) under wine64;
* musllinux x86_64 / aarch64: a musl sqlite3 shell built the same way, on
  Debian's musl runtime (natively / under qemu with the arm64 musl package);

and each must answer a CJK MATCH and cjk_highlight exactly as the native build.

Host tools come from Debian: llvm (llvm-nm, llvm-readobj, llvm-objdump),
qemu-user-static, wine64, musl.  .ci/run installs them.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from _csrc import CSRC, ROOT, config

pytestmark = [
    pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="the cross build runs on Linux"
    ),
    pytest.mark.skipif(config is None, reason="needs the source checkout (csrc/)"),
]


def _load_cross_build() -> ModuleType | None:
    path = CSRC / "cross_build.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("hermes_cross_build", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


xb = _load_cross_build()
TARGET_NAMES = [t.name for t in xb.TARGETS] if xb else []
CACHE = xb.default_toolchain_dir().parent if xb else Path()

# What the CJK comparison runs in every host; the version is cut before the
# SQLite part, which differs between hosts.
COMPARE_SQL = """\
CREATE VIRTUAL TABLE t USING fts5(x, tokenize='cjk_unicode61');
INSERT INTO t VALUES ('我是中国人民'), ('修改youer服务端'), ('東京タワーに行く'), ('ｶﾞｷﾞ ＡＢＣ');
SELECT rowid, cjk_highlight(t, 0, '[', ']') FROM t WHERE t MATCH '中国' ORDER BY rowid;
SELECT rowid, cjk_highlight(t, 0, '[', ']') FROM t WHERE t MATCH '服务' ORDER BY rowid;
SELECT rowid, cjk_highlight(t, 0, '<', '>') FROM t WHERE t MATCH 'タワー' ORDER BY rowid;
SELECT rowid FROM t WHERE t MATCH 'ガギ';
SELECT rowid FROM t WHERE t MATCH 'abc';
SELECT count(*) FROM t WHERE t MATCH '国中';
SELECT substr(cjk_unicode61_version(), 1, instr(cjk_unicode61_version(), ';') - 1);
"""
EXPECTED_LINES = ["1|我是[中国]人民", "2|修改youer[服务]端", "3|東京<タワー>に行く", "4", "4", "0"]


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", **kwargs)
    assert proc.returncode == 0, f"{cmd} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _llvm(tool: str) -> str:
    for name in [tool] + [f"{tool}-{v}" for v in range(20, 13, -1)]:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(f"{tool} not found (apt-get install -y llvm; .ci/run installs it)")


# ------------------------------------------------------------------ fixtures


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The eight wheels, the native template wheel, and each extracted library."""
    if shutil.which("cc") is None or not Path("/usr/include/sqlite3ext.h").is_file():
        pytest.skip(
            "needs a C compiler and libsqlite3-dev (apt-get install -y build-essential "
            "libsqlite3-dev)"
        )
    out = tmp_path_factory.mktemp("wheelhouse")
    work = tmp_path_factory.mktemp("xbuild")
    wheels = xb.build_all(out, work_dir=work)
    (template,) = (work / "template").glob("*.whl")
    libs = {}
    for name, wheel in wheels.items():
        target = xb.TARGETS_BY_NAME[name]
        with zipfile.ZipFile(wheel) as zf:
            libs[name] = Path(
                zf.extract(f"hermes_fts/{target.library_filename}", work / "extracted" / name)
            )
    return {"wheels": wheels, "template": template, "libs": libs, "work": work}


def _target(name: str):
    return xb.TARGETS_BY_NAME[name]


# -------------------------------------------------------------- the wheels


def test_build_wheels_script_runs_the_cross_build() -> None:
    script = (ROOT / ".ci" / "build-wheels").read_text(encoding="utf-8")
    assert "csrc/cross_build.py" in script
    assert os.access(ROOT / ".ci" / "build-wheels", os.X_OK)
    assert sorted(TARGET_NAMES) == sorted(
        [
            "manylinux_2_17_x86_64",
            "manylinux_2_17_aarch64",
            "musllinux_1_2_x86_64",
            "musllinux_1_2_aarch64",
            "macosx_10_13_x86_64",
            "macosx_11_0_arm64",
            "win_amd64",
            "win_arm64",
        ]
    )


@pytest.mark.parametrize("name", TARGET_NAMES)
def test_wheel_has_the_template_files_one_library_and_its_tag(built: dict, name: str) -> None:
    target = _target(name)
    wheel = built["wheels"][name]
    assert re.fullmatch(
        rf"hermes_fts-[^-]+-py3-none-{re.escape(target.wheel_tag)}\.whl", wheel.name
    )
    assert name in target.wheel_tag.split(".")
    with zipfile.ZipFile(built["template"]) as zf:
        template = {i.filename: zf.read(i) for i in zf.infolist()}
    with zipfile.ZipFile(wheel) as zf:
        assert zf.testzip() is None
        files = {i.filename: zf.read(i) for i in zf.infolist()}
    libs = [n for n in files if n.startswith("hermes_fts/cjk_unicode61")]
    assert libs == [f"hermes_fts/{target.library_filename}"]
    same = {n for n in template if not n.startswith("hermes_fts/cjk_unicode61")}
    assert set(files) - set(libs) == same
    for n in same:
        if not n.endswith(("/WHEEL", "/RECORD")):
            assert files[n] == template[n], n
    (wheel_meta,) = [v for n, v in files.items() if n.endswith(".dist-info/WHEEL")]
    tags = re.findall(r"^Tag: (.+)$", wheel_meta.decode(), re.M)
    assert tags == [f"py3-none-{p}" for p in target.wheel_tag.split(".")]
    assert "Root-Is-Purelib: false" in wheel_meta.decode()
    (record,) = [v for n, v in files.items() if n.endswith(".dist-info/RECORD")]
    recorded = {line.split(",")[0] for line in record.decode().splitlines()}
    assert recorded == set(files)


def test_manylinux_tag_is_what_auditwheel_gives_the_native_build(built: dict) -> None:
    auditwheel = shutil.which("auditwheel")
    if auditwheel is None:
        pytest.skip("auditwheel not installed (in the dev extra)")
    out = built["work"] / "repaired"
    _run([auditwheel, "repair", "-w", str(out), str(built["template"])])
    (repaired,) = out.glob("*.whl")
    plat = repaired.name.rsplit("-", 1)[1][: -len(".whl")]
    assert plat == _target("manylinux_2_17_x86_64").wheel_tag


def test_cibuildwheel_config_builds_the_same_targets() -> None:
    tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python 3.11")
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    cibw = cfg["tool"]["cibuildwheel"]
    assert "musllinux" not in cibw.get("skip", ""), "musllinux wheels are built natively too"
    overrides = {o["select"]: o for o in cibw.get("overrides", [])}
    # The deployment target decides the macOS tag: the same as the cross build's.
    for select, name in (
        ("*-macosx_x86_64", "macosx_10_13_x86_64"),
        ("*-macosx_arm64", "macosx_11_0_arm64"),
    ):
        major, minor = re.match(r"macosx_(\d+)_(\d+)_", name).groups()  # type: ignore[union-attr]
        assert overrides[select]["environment"]["MACOSX_DEPLOYMENT_TARGET"] == f"{major}.{minor}"
    assert "apk add" in overrides["*-musllinux_*"]["before-all"]
    assert "arm64-windows" in overrides["*-win_arm64"]["before-all"]
    workflow = (ROOT / ".github" / "workflows" / "wheels.yml").read_text(encoding="utf-8")
    runners = re.search(r"os: \[([^\]]+)\]", workflow)
    assert runners, "wheels.yml has no os matrix"
    assert {r.strip() for r in runners.group(1).split(",")} == {
        "ubuntu-latest",
        "ubuntu-24.04-arm",
        "macos-15-intel",
        "macos-14",
        "windows-latest",
        "windows-11-arm",
    }


def test_cibuildwheel_identifiers_cover_every_target() -> None:
    tool = shutil.which("cibuildwheel")
    if tool is None:
        pytest.skip("cibuildwheel is not installed (dev extra; it needs Python >= 3.11)")
    found = set()
    for platform, arch in (
        ("linux", "x86_64"),
        ("linux", "aarch64"),
        ("macos", "x86_64"),
        ("macos", "arm64"),
        ("windows", "AMD64"),
        ("windows", "ARM64"),
    ):
        proc = _run(
            [tool, "--print-build-identifiers", "--platform", platform, "--archs", arch, str(ROOT)],
            cwd=str(ROOT),
        )
        found |= {i.split("-", 1)[1] for i in proc.stdout.split()}
    assert {
        "manylinux_x86_64",
        "manylinux_aarch64",
        "musllinux_x86_64",
        "musllinux_aarch64",
        "macosx_x86_64",
        "macosx_arm64",
        "win_amd64",
        "win_arm64",
    } <= found, found


# ------------------------------------------------------- the libraries


# Magic, machine field offset/format and the machine value, per format/arch.
ELF_MACHINES = {"x86_64": 62, "aarch64": 183}
MACHO_CPUS = {"x86_64": 0x01000007, "aarch64": 0x0100000C}
PE_MACHINES = {"x86_64": 0x8664, "aarch64": 0xAA64}


def _format_and_machine(data: bytes) -> tuple[str, object]:
    if data[:4] == b"\x7fELF":
        assert data[4] == 2 and data[5] == 1, "64-bit little-endian ELF"
        (etype, machine) = struct.unpack_from("<HH", data, 16)
        assert etype == 3, "ET_DYN (a shared object)"
        return "elf", machine
    if data[:4] == b"\xcf\xfa\xed\xfe":
        cpu, _sub, filetype = struct.unpack_from("<iiI", data, 4)
        assert filetype == 6, "MH_DYLIB"
        return "macho", cpu
    if data[:2] == b"MZ":
        (pe_off,) = struct.unpack_from("<I", data, 0x3C)
        assert data[pe_off : pe_off + 4] == b"PE\0\0"
        machine, _n, _t, _p, _s, _opt, characteristics = struct.unpack_from(
            "<HHIIIHH", data, pe_off + 4
        )
        assert characteristics & 0x2000, "IMAGE_FILE_DLL"
        return "pe", machine
    return "unknown", None


@pytest.mark.parametrize("name", TARGET_NAMES)
def test_file_format_and_architecture(built: dict, name: str) -> None:
    target = _target(name)
    fmt, machine = _format_and_machine(built["libs"][name].read_bytes())
    assert fmt == target.binary_format
    expected = {"elf": ELF_MACHINES, "macho": MACHO_CPUS, "pe": PE_MACHINES}[fmt][target.machine]
    assert machine == expected


def _exports(lib: Path, fmt: str) -> set[str]:
    if fmt == "pe":
        out = _run([_llvm("llvm-readobj"), "--coff-exports", str(lib)]).stdout
        return set(re.findall(r"^\s*Name: (\S+)$", out, re.M))
    args = ["--dynamic"] if fmt == "elf" else []
    out = _run([_llvm("llvm-nm"), *args, "--extern-only", "--defined-only", str(lib)]).stdout
    names = {line.split()[-1] for line in out.splitlines() if line.strip()}
    if fmt == "macho":
        # The linker's own image markers, not code: every dylib has them.
        names = {n[1:] for n in names if n.startswith("_")} - {"_mh_dylib_header", "__dso_handle"}
    return names


@pytest.mark.parametrize("name", TARGET_NAMES)
def test_exports_exactly_the_entry_points(built: dict, name: str) -> None:
    target = _target(name)
    assert _exports(built["libs"][name], target.binary_format) == set(config.ENTRY_POINTS)


def _linked_libraries(lib: Path, fmt: str) -> list[str]:
    if fmt == "elf":
        out = _run([_llvm("llvm-readobj"), "--needed-libs", str(lib)]).stdout
        block = out.split("NeededLibraries [", 1)[1].split("]", 1)[0]
        return block.split()
    if fmt == "macho":
        out = _run([_llvm("llvm-objdump"), "--macho", "--dylibs-used", str(lib)]).stdout
        paths = [line.split()[0] for line in out.splitlines()[1:] if line.strip()]
        # The first entry is the library's own install name (LC_ID_DYLIB).
        assert paths[0] == lib.name, paths
        return paths[1:]
    out = _run([_llvm("llvm-objdump"), "-p", str(lib)]).stdout
    return re.findall(r"DLL Name: (\S+)", out)


@pytest.mark.parametrize("name", TARGET_NAMES)
def test_links_no_libpython_and_no_sqlite(built: dict, name: str) -> None:
    linked = _linked_libraries(built["libs"][name], _target(name).binary_format)
    assert linked
    assert not [n for n in linked if "python" in n.lower() or "sqlite" in n.lower()], linked


# The platform C runtime, and nothing else, per libc.
def _is_c_runtime(libc: str, machine: str, dep: str) -> bool:
    if libc == "glibc":
        return dep == "libc.so.6"
    if libc == "musl":  # zig names musl "libc.so"; Alpine's gcc names the loader
        return dep in ("libc.so", f"libc.musl-{machine}.so.1")
    if libc == "macos":
        return dep == "/usr/lib/libSystem.B.dylib"
    # Windows: the Universal CRT's API sets, and KERNEL32 for the DLL startup code.
    return dep.lower().startswith("api-ms-win-crt-") or dep.upper() == "KERNEL32.DLL"


# The only libc functions the C code may call: memory comes from SQLite.
LIBC_FUNCTIONS = {"memcpy", "memset", "qsort", "strlen"}


@pytest.mark.parametrize("name", TARGET_NAMES)
def test_imports_only_the_c_runtime(built: dict, name: str) -> None:
    target = _target(name)
    lib = built["libs"][name]
    linked = _linked_libraries(lib, target.binary_format)
    assert all(_is_c_runtime(target.libc, target.machine, d) for d in linked), linked
    if target.binary_format == "pe":
        return  # the MinGW startup code imports its own CRT functions; the DLLs are the rule
    args = ["--dynamic"] if target.binary_format == "elf" else []
    out = _run([_llvm("llvm-nm"), *args, "--undefined-only", str(lib)]).stdout
    undefined = {line.split()[-1] for line in out.splitlines() if line.strip()}
    functions = set()
    for sym in undefined:
        base, _, version = sym.partition("@")
        if target.binary_format == "macho":
            base = base[1:] if base.startswith("_") else base
            if base in ("dyld_stub_binder", "bzero", "__bzero"):  # the linker's, memset's
                continue
        elif base.startswith(("_ITM_", "__cxa_finalize", "__gmon_start__")):
            continue  # weak hooks of the ELF startup files
        if target.libc == "glibc":
            # manylinux_2_17: no symbol version newer than glibc 2.17.
            assert version.startswith("GLIBC_"), sym
            assert tuple(map(int, version[6:].split("."))) <= (2, 17), sym
        functions.add(base)
    assert functions <= LIBC_FUNCTIONS, functions - LIBC_FUNCTIONS
    assert not functions & {"malloc", "calloc", "realloc", "free"}


def _macho_min_os(lib: Path) -> str:
    out = _run([_llvm("llvm-objdump"), "--macho", "--private-headers", str(lib)]).stdout
    m = re.search(r"cmd LC_VERSION_MIN_MACOSX.*?\n\s*version (\S+)", out, re.S) or re.search(
        r"cmd LC_BUILD_VERSION.*?\n\s*minos (\S+)", out, re.S
    )
    assert m, out[:2000]
    return m.group(1)


@pytest.mark.parametrize("name", [n for n in TARGET_NAMES if n.startswith("macosx")])
def test_macos_minimum_version_matches_the_tag(built: dict, name: str) -> None:
    major, minor = re.match(r"macosx_(\d+)_(\d+)_", name).groups()  # type: ignore[union-attr]
    assert _macho_min_os(built["libs"][name]) == f"{major}.{minor}"


# ------------------------------------------------------------ C11, no extensions


def test_every_target_compiles_as_strict_c11(built: dict) -> None:
    # The build itself is the proof (it ran with these flags); this pins them.
    for target in xb.TARGETS:
        flags = xb.compile_flags(target)
        assert {"-std=c11", "-pedantic-errors", "-Werror", "-Wvla"} <= set(flags)
        assert config.VERSION_DEFINE in flags
    assert set(built["libs"]) == set(TARGET_NAMES)


@pytest.mark.parametrize(
    "snippet",
    [
        "int f(int n) { return ({ int x = n; x; }); }",  # statement expression (GNU)
        "int f(int n) { int a[n]; a[0] = n; return a[0]; }",  # VLA: MSVC has none
        "int f(void) { return 0b101; }",  # binary literal (not C11)
        "int f(int *p) { typeof(p) q = p; return *q; }",  # typeof (GNU before C23)
    ],
)
def test_the_flags_reject_compiler_extensions(built: dict, snippet: str, tmp_path: Path) -> None:
    src = tmp_path / "ext.c"
    src.write_text(snippet + "\n", encoding="utf-8")
    zig = xb.zig_cc(xb.ensure_toolchain())
    target = _target("win_amd64")
    flags = [f for f in xb.compile_flags(target) if f not in ("-shared", "-s")]
    cmd = [*zig, "-target", target.zig_target, "-c", str(src), "-o", str(tmp_path / "o.obj")]
    lenient = subprocess.run(cmd, capture_output=True, text=True, env=xb.zig_env())
    assert lenient.returncode == 0, lenient.stderr  # the compiler accepts it as an extension
    strict = subprocess.run(
        cmd[:-3] + flags + cmd[-3:], capture_output=True, text=True, env=xb.zig_env()
    )
    assert strict.returncode != 0, "the build flags let a compiler extension through"


# ------------------------------------------------------------ running them


def _run_shell(
    cmd: list[str], library: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> list[str]:
    script = f".load {library}\n{COMPARE_SQL}"
    proc = subprocess.run(
        cmd + ["-batch", "-bail", ":memory:"],
        input=script.encode(),
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )
    out = proc.stdout.decode("utf-8", "replace").replace("\r\n", "\n")
    assert proc.returncode == 0, f"{cmd}: {proc.stderr.decode('utf-8', 'replace')[-3000:]}\n{out}"
    return out.strip().split("\n")


@pytest.fixture(scope="session")
def native_answers() -> list[str]:
    """What this machine's sqlite3 shell and the in-tree (setup.py) build answer."""
    import hermes_fts

    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("sqlite3 shell not installed (apt-get install -y sqlite3)")
    lines = _run_shell([shell], hermes_fts.extension_path())
    assert lines[:-1] == EXPECTED_LINES
    assert lines[-1] == f"hermes-fts {hermes_fts.__version__}"
    return lines


def test_manylinux_x86_64_runs_in_the_native_shell(built: dict, native_answers: list[str]) -> None:
    lib = built["libs"]["manylinux_2_17_x86_64"]
    assert _run_shell([shutil.which("sqlite3") or "sqlite3"], str(lib.with_suffix(""))) == (
        native_answers
    )


# Debian's arm64 sqlite3 and what it needs to start, and the arm64 musl
# runtime, unpacked (not installed).
ARM64_PACKAGES = ("sqlite3", "libsqlite3-0", "libc6", "libreadline8", "libtinfo6", "zlib1g", "musl")


@pytest.fixture(scope="session")
def arm64_root() -> Path:
    """A directory tree with Debian's arm64 sqlite3 shell, for qemu-aarch64-static -L."""
    for tool in ("apt-get", "dpkg-deb", "qemu-aarch64-static"):
        if shutil.which(tool) is None:
            pytest.skip(
                f"{tool} not found (apt-get install -y qemu-user-static; .ci/run installs it)"
            )
    base = CACHE / "debian-arm64"
    root = base / "root"
    marker = root / "packages.txt"
    if marker.is_file() and marker.read_text(encoding="utf-8") == " ".join(ARM64_PACKAGES):
        return root
    shutil.rmtree(root, ignore_errors=True)
    # A private apt state with only arm64: the machine's dpkg is not touched.
    state, cache, debs = base / "state", base / "cache", base / "debs"
    for d in (state / "lists" / "partial", cache / "archives" / "partial", debs):
        d.mkdir(parents=True, exist_ok=True)
    (base / "status").touch()
    opts = [
        f"-o=Dir::State={state}",
        f"-o=Dir::State::status={base / 'status'}",
        f"-o=Dir::Cache={cache}",
        "-o=APT::Architecture=arm64",
        "-o=APT::Architectures::=arm64",
        "-o=Debug::NoLocking=1",
    ]
    _run(["apt-get", *opts, "-qq", "update"])
    _run(
        ["apt-get", *opts, "-qq", "download", *[f"{p}:arm64" for p in ARM64_PACKAGES]],
        cwd=str(debs),
    )
    tmp_root = base / "root.partial"
    shutil.rmtree(tmp_root, ignore_errors=True)
    for deb in sorted(debs.glob("*.deb")):
        _run(["dpkg-deb", "-x", str(deb), str(tmp_root)])
    (tmp_root / "packages.txt").write_text(" ".join(ARM64_PACKAGES), encoding="utf-8")
    tmp_root.rename(root)
    return root


def test_manylinux_aarch64_runs_under_qemu(
    built: dict, arm64_root: Path, native_answers: list[str]
) -> None:
    lib = built["libs"]["manylinux_2_17_aarch64"]
    shell = ["qemu-aarch64-static", "-L", str(arm64_root), str(arm64_root / "usr/bin/sqlite3")]
    version = _run(shell + ["-version"]).stdout
    assert version.startswith("3."), version
    assert _run_shell(shell, str(lib.with_suffix(""))) == native_answers


# SQLite's amalgamation and shell, as shipped in this sdist (the sqlean.py
# project appends its own init hook after the amalgamation's end marker).
AMALGAMATION_SDIST = "sqlean.py==3.50.4.5"
AMALGAMATION_END = b"/************************** End of sqlite3.c ******************************/"


def _wine() -> str:
    for cand in ("wine64", "/usr/lib/wine/wine64", "wine"):
        found = shutil.which(cand)
        if found:
            return found
    pytest.skip("wine64 not found (apt-get install -y wine64; .ci/run installs it)")


@pytest.fixture(scope="session")
def amalgamation() -> Path:
    """SQLite's sqlite3.c, shell.c and headers, as the upstream amalgamation."""
    import tarfile

    src = CACHE / "sqlite-amalgamation" / AMALGAMATION_SDIST.replace("==", "-")
    if (src / "sqlite3.c").is_file():
        return src
    python = xb.ensure_toolchain()
    sdists = src.parent / "sdist"
    _run(
        [
            str(python),
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--no-build-isolation",
            "-d",
            str(sdists),
            AMALGAMATION_SDIST,
        ]
    )
    (sdist,) = sdists.glob("*.tar.gz")
    partial = src.parent / "partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    with tarfile.open(sdist) as tf:
        for member in tf.getmembers():
            name = member.name.rsplit("/", 1)[-1]
            if member.name.endswith(f"/sqlite/{name}") and name in (
                "sqlite3.c",
                "shell.c",
                "sqlite3.h",
                "sqlite3ext.h",
            ):
                data = tf.extractfile(member).read()  # type: ignore[union-attr]
                if name == "sqlite3.c":
                    cut = data.index(AMALGAMATION_END) + len(AMALGAMATION_END)
                    data = data[:cut] + b"\n"
                (partial / name).write_bytes(data)
    partial.rename(src)
    return src


def _sqlite_shell(amalgamation: Path, zig_target: str, name: str, *flags: str) -> Path:
    """SQLite's shell for ``zig_target``, built once with the same zig cc."""
    exe = CACHE / "sqlite-shells" / zig_target / name
    if exe.is_file():
        return exe
    exe.parent.mkdir(parents=True, exist_ok=True)
    partial = exe.with_name("partial-" + name)
    _run(
        [
            *xb.zig_cc(xb.ensure_toolchain()),
            "-target",
            zig_target,
            *flags,
            "-DSQLITE_ENABLE_FTS5",
            f"-I{amalgamation}",
            str(amalgamation / "shell.c"),
            str(amalgamation / "sqlite3.c"),
            "-o",
            str(partial),
        ],
        env=xb.zig_env(),
    )
    partial.rename(exe)
    return exe


@pytest.fixture(scope="session")
def windows_shell(amalgamation: Path) -> Path:
    """sqlite3.exe for x86_64 Windows."""
    # -O0: a test host, and the amalgamation compiles several times faster.
    return _sqlite_shell(amalgamation, "x86_64-windows-gnu", "sqlite3.exe", "-O0")


def _musl_shell(amalgamation: Path, machine: str) -> Path:
    # Dynamically linked against musl, so it can dlopen the library (.load).
    # -O1: at -O0 the shell calls statx(), which Debian's musl 1.2.3 lacks.
    return _sqlite_shell(amalgamation, f"{machine}-linux-musl", "sqlite3", "-dynamic", "-O1")


def test_musllinux_x86_64_runs_in_a_musl_sqlite3(
    built: dict, amalgamation: Path, native_answers: list[str]
) -> None:
    if not Path("/lib/ld-musl-x86_64.so.1").exists():
        pytest.skip("the musl runtime is not installed (apt-get install -y musl)")
    shell = _musl_shell(amalgamation, "x86_64")
    lib = built["libs"]["musllinux_1_2_x86_64"]
    assert _run_shell([str(shell)], str(lib.with_suffix(""))) == native_answers


def test_musllinux_aarch64_runs_under_qemu(
    built: dict, amalgamation: Path, arm64_root: Path, native_answers: list[str]
) -> None:
    shell = _musl_shell(amalgamation, "aarch64")
    lib = built["libs"]["musllinux_1_2_aarch64"]
    cmd = ["qemu-aarch64-static", "-L", str(arm64_root), str(shell)]
    assert _run_shell(cmd, str(lib.with_suffix(""))) == native_answers


def test_win_amd64_runs_under_wine(
    built: dict, windows_shell: Path, native_answers: list[str], tmp_path: Path
) -> None:
    wine = _wine()
    shutil.copyfile(built["libs"]["win_amd64"], tmp_path / "cjk_unicode61.dll")
    env = dict(os.environ, WINEPREFIX=str(CACHE / "wineprefix"), WINEDEBUG="-all")
    answers = _run_shell([wine, str(windows_shell)], "./cjk_unicode61", cwd=tmp_path, env=env)
    assert answers == native_answers


@pytest.mark.parametrize("name", TARGET_NAMES)
def test_loader_finds_the_library_in_each_wheel(
    built: dict, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_fts import loader

    target = _target(name)
    with zipfile.ZipFile(built["wheels"][name]) as zf:
        zf.extractall(tmp_path)
    monkeypatch.delenv("HERMES_FTS_LIBRARY", raising=False)
    monkeypatch.setattr(loader, "__file__", str(tmp_path / "hermes_fts" / "loader.py"))
    monkeypatch.setattr(sys, "platform", target.platform)
    # The test plays the wheel's platform; the machine it runs on stays its own.
    monkeypatch.setattr(loader, "built_elsewhere", lambda path: None)
    found = Path(loader.library_file())
    assert found.parent == tmp_path / "hermes_fts" and found.is_file()
    assert _format_and_machine(found.read_bytes())[0] == target.binary_format
