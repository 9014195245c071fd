"""How the cjk_unicode61 library is built: the one description every build uses.

setup.py, the cross-build script (.ci/build-wheels), the sanitizer, fuzz and
shell tests all take the version define, the sources, the flags and the list
of exported entry points from here, so no build path can drift from another.

Plain standard-library Python, loaded by file path (``load()`` below or
``importlib``): it must work before the package is built or installed.
"""

from __future__ import annotations

import ast
import re
import runpy
from pathlib import Path

CSRC = Path(__file__).resolve().parent
ROOT = CSRC.parent
PACKAGE = ROOT / "hermes_fts"
PUBLIC_HEADER = CSRC / "hermes_fts.h"


def read_version() -> str:
    """``__version__`` from hermes_fts/_version.py, without importing the package."""
    tree = ast.parse((PACKAGE / "_version.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    raise RuntimeError("hermes_fts/_version.py has no __version__ string")


VERSION = read_version()
# Unquoted on purpose: internal.h stringifies it, so no shell's or MSVC's
# quoting rules apply.  A version is one C preprocessing number (0.2.0, 1.0rc1).
if not re.fullmatch(r"[0-9][0-9A-Za-z.]*", VERSION):
    raise RuntimeError(f"version {VERSION!r} cannot be passed to C as a preprocessing number")
VERSION_MACRO = ("HERMES_FTS_VERSION", VERSION)
VERSION_DEFINE = f"-D{VERSION_MACRO[0]}={VERSION_MACRO[1]}"


def entry_points() -> list[str]:
    """The exported entry points, as declared in the public header (its order)."""
    text = PUBLIC_HEADER.read_text(encoding="utf-8")
    names = re.findall(r"^HERMES_FTS_API\s+int\s+(\w+)\s*\(", text, flags=re.M)
    if not names:
        raise RuntimeError(f"no HERMES_FTS_API entry points found in {PUBLIC_HEADER}")
    return names


ENTRY_POINTS = entry_points()
SOURCES = sorted(str(p.relative_to(ROOT).as_posix()) for p in CSRC.glob("*.c"))
HEADERS = sorted(str(p.relative_to(ROOT).as_posix()) for p in CSRC.glob("*.h"))

# GCC/Clang (and zig cc): strict ISO C11, everything but the entry points
# hidden.  -Wpedantic makes any compiler extension a warning, and a build
# error under HERMES_FTS_WERROR=1; -Wvla because MSVC has no variable-length
# arrays (optional in C11).  So MSVC builds the same code.
GNU_CFLAGS = [
    "-std=c11",
    "-Wpedantic",
    "-Wvla",
    "-O2",
    "-fvisibility=hidden",
    "-Wall",
    "-Wextra",
]
GNU_WERROR = ["-Werror"]
MSVC_CFLAGS = ["/O2", "/W3"]
MSVC_WERROR = ["/WX"]
# GCC's "undefined" leaves out float-cast-overflow (a NaN or huge double cast to an integer).
SANITIZE_CFLAGS = [
    "-fsanitize=address,undefined,float-cast-overflow",
    "-fno-omit-frame-pointer",
    "-g",
]
# Linux: fail at link time, not at .load time, on any unresolved symbol.
ELF_LDFLAGS = ["-Wl,-z,defs"]


def _platform_module() -> dict:
    return runpy.run_path(str(PACKAGE / "_platform.py"))


LIB_NAME = str(_platform_module()["LIB_NAME"])


def library_filename(platform: str) -> str:
    """``cjk_unicode61`` plus the suffix for ``platform`` (a ``sys.platform`` value)."""
    return str(_platform_module()["library_filename"](platform))


def library_suffix(platform: str) -> str:
    return str(_platform_module()["library_suffix"](platform))
