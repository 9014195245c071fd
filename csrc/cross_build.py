"""Cross-build the cjk_unicode61 library and a py3-none wheel for every platform.

Used by ``.ci/build-wheels OUTDIR`` and by tests/test_crossbuild.py.  The C
side is plain ISO C11 with no dependency but SQLite's two headers, so one
cross compiler (``zig cc``, from the ``ziglang`` wheel on PyPI) builds every
target from this Linux machine in seconds.

Each wheel is the wheel setuptools builds from this tree (same files, same
metadata, same build flags from csrc/build_config.py) with the library
replaced by the target's and the tag set to the target's, the same tag that
cibuildwheel (with auditwheel on Linux) gives the native build.

Plain standard-library Python, run with the interpreter that has ziglang
installed (``--zig-python``) or any other.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# Pinned so every run (CI, a developer, the tests) uses the same compiler; the
# venv also builds the template wheel, so it needs the setuptools pyproject asks for.
TOOLCHAIN_REQUIREMENTS = ("ziglang==0.17.1", "setuptools>=77", "wheel")


def _load_build_config() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hermes_build_config", HERE / "build_config.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


config = _load_build_config()


@dataclass(frozen=True)
class Target:
    """One platform the library is built for."""

    name: str  # the platform tag the issue and the README use
    wheel_tag: str  # the platform part of the wheel file name (may be compressed: a.b)
    zig_target: str  # zig cc -target
    platform: str  # sys.platform of the target (decides the suffix)
    binary_format: str  # "elf" | "macho" | "pe"
    machine: str  # "x86_64" | "aarch64"
    libc: str  # "glibc" | "musl" | "macos" | "ucrt"

    @property
    def library_filename(self) -> str:
        return config.library_filename(self.platform)


# manylinux: glibc 2.17 symbol versions, tagged as auditwheel tags the native
# build.  macOS: the deployment targets cibuildwheel uses.  Windows: the UCRT.
TARGETS: tuple[Target, ...] = (
    Target(
        "manylinux_2_17_x86_64",
        "manylinux2014_x86_64.manylinux_2_17_x86_64",
        "x86_64-linux-gnu.2.17",
        "linux",
        "elf",
        "x86_64",
        "glibc",
    ),
    Target(
        "manylinux_2_17_aarch64",
        "manylinux2014_aarch64.manylinux_2_17_aarch64",
        "aarch64-linux-gnu.2.17",
        "linux",
        "elf",
        "aarch64",
        "glibc",
    ),
    Target(
        "musllinux_1_2_x86_64",
        "musllinux_1_2_x86_64",
        "x86_64-linux-musl",
        "linux",
        "elf",
        "x86_64",
        "musl",
    ),
    Target(
        "musllinux_1_2_aarch64",
        "musllinux_1_2_aarch64",
        "aarch64-linux-musl",
        "linux",
        "elf",
        "aarch64",
        "musl",
    ),
    Target(
        "macosx_10_13_x86_64",
        "macosx_10_13_x86_64",
        "x86_64-macos.10.13",
        "darwin",
        "macho",
        "x86_64",
        "macos",
    ),
    Target(
        "macosx_11_0_arm64",
        "macosx_11_0_arm64",
        "aarch64-macos.11.0",
        "darwin",
        "macho",
        "aarch64",
        "macos",
    ),
    Target("win_amd64", "win_amd64", "x86_64-windows-gnu", "win32", "pe", "x86_64", "ucrt"),
    Target("win_arm64", "win_arm64", "aarch64-windows-gnu", "win32", "pe", "aarch64", "ucrt"),
)
TARGETS_BY_NAME = {t.name: t for t in TARGETS}

# The SQLite headers are the only thing the C code includes beyond libc.
SQLITE_HEADERS = ("sqlite3.h", "sqlite3ext.h")


class BuildError(RuntimeError):
    """A step of the cross build failed; the message says which and why."""


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if proc.returncode != 0:
        raise BuildError(
            f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n"
            f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return proc


# ---------------------------------------------------------------- toolchain


def default_toolchain_dir() -> Path:
    """A per-user cache that survives between runs (zig also keeps its cache there)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hermes-fts" / "toolchain"


def ensure_toolchain(toolchain_dir: Path | None = None) -> Path:
    """The toolchain venv's python, installing the pinned requirements if needed."""
    toolchain_dir = toolchain_dir or default_toolchain_dir()
    venv = toolchain_dir / "venv"
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    marker = venv / "hermes-toolchain.txt"
    wanted = "\n".join(TOOLCHAIN_REQUIREMENTS) + "\n"
    if not marker.exists() or marker.read_text(encoding="utf-8") != wanted:
        if not python.exists():
            _run([sys.executable, "-m", "venv", str(venv)])
        _run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                *TOOLCHAIN_REQUIREMENTS,
            ]
        )
        marker.write_text(wanted, encoding="utf-8")
    return python


def zig_cc(python: Path) -> list[str]:
    """``zig cc`` of the toolchain venv, as a command list."""
    return [str(python), "-m", "ziglang", "cc"]


def zig_env(toolchain_dir: Path | None = None) -> dict[str, str]:
    """Environment for zig: its caches next to the toolchain, not in the source tree."""
    toolchain_dir = toolchain_dir or default_toolchain_dir()
    env = dict(os.environ)
    env.setdefault("ZIG_GLOBAL_CACHE_DIR", str(toolchain_dir / "zig-cache"))
    env.setdefault("ZIG_LOCAL_CACHE_DIR", str(toolchain_dir / "zig-cache"))
    return env


def sqlite_include_dir(dest: Path, source: Path | None = None) -> Path:
    """A directory holding only SQLite's two headers (no host libc headers leak in).

    The headers come from Debian's libsqlite3-dev (``/usr/include``) unless
    ``source`` names another directory.
    """
    source = source or Path(os.environ.get("HERMES_SQLITE_INCLUDE", "/usr/include"))
    dest.mkdir(parents=True, exist_ok=True)
    for name in SQLITE_HEADERS:
        if not (source / name).is_file():
            raise BuildError(
                f"{source / name} not found: install SQLite's headers "
                "(apt-get install -y libsqlite3-dev) or set HERMES_SQLITE_INCLUDE"
            )
        shutil.copyfile(source / name, dest / name)
    return dest


# ------------------------------------------------------------------ library


def compile_flags(target: Target) -> list[str]:
    """Exactly setup.py's GNU flags with -Werror, plus what a release shared library needs."""
    flags = [*config.GNU_CFLAGS, *config.GNU_WERROR, config.VERSION_DEFINE]
    # -pedantic-errors: any compiler extension fails the build, so MSVC takes the code too.
    flags.append("-pedantic-errors")
    link = ["-shared", "-s"]
    if target.binary_format == "elf":
        link += config.ELF_LDFLAGS
    elif target.binary_format == "macho":
        # The install name is the bare file name: nothing links against the
        # library, and it must not carry a path of this build machine.
        link.append(f"-Wl,-install_name,{target.library_filename}")
    return flags + link


def build_library(
    target: Target,
    out_dir: Path,
    cc: list[str],
    include_dir: Path,
    env: dict[str, str] | None = None,
) -> Path:
    """Compile csrc/ for ``target`` into ``out_dir/<library file name>``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    output = out_dir / target.library_filename
    cmd = [
        *cc,
        "-target",
        target.zig_target,
        *compile_flags(target),
        f"-I{include_dir}",
        f"-I{HERE}",
        *[str(ROOT / s) for s in config.SOURCES],
        "-o",
        str(output),
    ]
    _run(cmd, env=env)
    if not output.is_file():
        raise BuildError(f"zig cc reported success but wrote no {output}")
    return output


# -------------------------------------------------------------------- wheel


def build_template_wheel(out_dir: Path, python: Path) -> Path:
    """The wheel setuptools builds from this tree for the machine it runs on."""
    out_dir.mkdir(parents=True, exist_ok=True)
    _run(
        [
            str(python),
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "--wheel-dir",
            str(out_dir),
            str(ROOT),
        ],
    )
    wheels = sorted(out_dir.glob("hermes_fts-*.whl"))
    if len(wheels) != 1:
        raise BuildError(f"expected one wheel in {out_dir}, found {[w.name for w in wheels]}")
    return wheels[0]


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _is_library(name: str) -> bool:
    return name.startswith(f"hermes_fts/{config.LIB_NAME}.")


def retag_wheel(template: Path, library: Path, target: Target, out_dir: Path) -> Path:
    """``template`` with its library replaced by ``library`` and tagged for ``target``."""
    dist, version = template.name.split("-")[:2]
    wheel_path = out_dir / f"{dist}-{version}-py3-none-{target.wheel_tag}.whl"
    dist_info = f"{dist}-{version}.dist-info"
    tags = [f"py3-none-{plat}" for plat in target.wheel_tag.split(".")]
    records: list[str] = []
    out_dir.mkdir(parents=True, exist_ok=True)
    with (
        zipfile.ZipFile(template) as src,
        zipfile.ZipFile(wheel_path, "w", compression=zipfile.ZIP_DEFLATED) as dst,
    ):
        template_lib = None
        for info in src.infolist():
            name = info.filename
            if name == f"{dist_info}/RECORD":
                continue
            if _is_library(name):
                template_lib = info
                continue
            data = src.read(info)
            if name == f"{dist_info}/WHEEL":
                lines = [ln for ln in data.decode().splitlines() if not ln.startswith("Tag:")]
                lines += [f"Tag: {tag}" for tag in tags]
                data = ("\n".join(lines) + "\n").encode()
            dst.writestr(info, data)
            records.append(f"{name},{_record_hash(data)},{len(data)}")
        if template_lib is None:
            raise BuildError(f"{template.name} holds no hermes_fts/{config.LIB_NAME}.* library")
        lib_info = zipfile.ZipInfo(f"hermes_fts/{target.library_filename}", template_lib.date_time)
        lib_info.external_attr = 0o755 << 16
        lib_info.compress_type = zipfile.ZIP_DEFLATED
        data = library.read_bytes()
        dst.writestr(lib_info, data)
        records.append(f"{lib_info.filename},{_record_hash(data)},{len(data)}")
        records.append(f"{dist_info}/RECORD,,")
        dst.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")
    return wheel_path


def build_all(
    out_dir: Path,
    targets: tuple[Target, ...] = TARGETS,
    toolchain_dir: Path | None = None,
    work_dir: Path | None = None,
) -> dict[str, Path]:
    """Build every target's library and wheel; returns {target name: wheel path}."""
    python = ensure_toolchain(toolchain_dir)
    env = zig_env(toolchain_dir)
    with tempfile.TemporaryDirectory(prefix="hermes-xbuild-") as tmp_name:
        tmp = work_dir or Path(tmp_name)
        include_dir = sqlite_include_dir(tmp / "include")
        template = build_template_wheel(tmp / "template", python)
        wheels = {}
        for target in targets:
            library = build_library(
                target, tmp / "lib" / target.name, zig_cc(python), include_dir, env
            )
            wheels[target.name] = retag_wheel(template, library, target, out_dir)
        return wheels


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path, help="where the wheels go")
    parser.add_argument(
        "--target",
        action="append",
        choices=sorted(TARGETS_BY_NAME),
        help="build only this target (repeatable); default: all eight",
    )
    parser.add_argument(
        "--toolchain-dir",
        type=Path,
        default=None,
        help=f"venv + zig cache (default {default_toolchain_dir()})",
    )
    args = parser.parse_args(argv)
    targets = tuple(TARGETS_BY_NAME[n] for n in args.target) if args.target else TARGETS
    try:
        wheels = build_all(args.outdir.resolve(), targets, args.toolchain_dir)
    except BuildError as exc:
        print(f"build-wheels: {exc}", file=sys.stderr)
        return 1
    for name, path in wheels.items():
        print(f"{name:24} {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
