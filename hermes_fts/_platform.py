"""Platform facts about the cjk_unicode61 library file.

One place for the file name the build writes and the loader looks for:
``cjk_unicode61`` plus the platform's shared-library suffix, never a ``lib``
prefix.  setup.py and the cross-build script load this file by path (it
imports nothing from the package), so builds and the loader cannot disagree.
"""

from __future__ import annotations

import sys

LIB_NAME = "cjk_unicode61"

# sys.platform prefix -> suffix; everything else (Linux, the BSDs, musl) is ELF.
_SUFFIXES = {"win32": ".dll", "cygwin": ".dll", "darwin": ".dylib"}
ELF_SUFFIX = ".so"
ALL_SUFFIXES = (ELF_SUFFIX, ".dylib", ".dll")


def library_suffix(platform: str | None = None) -> str:
    """Shared-library suffix for ``platform`` (a ``sys.platform`` value)."""
    return _SUFFIXES.get(sys.platform if platform is None else platform, ELF_SUFFIX)


def library_filename(platform: str | None = None) -> str:
    """File name of the library on ``platform``: ``cjk_unicode61.so`` and so on."""
    return LIB_NAME + library_suffix(platform)


def strip_library_suffix(path: str) -> str:
    """``path`` without a shared-library suffix of any platform."""
    for suffix in ALL_SUFFIXES:
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path
