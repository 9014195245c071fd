"""Platform facts about the cjk_unicode61 library file.

One place for the file name the build writes and the loader looks for:
``cjk_unicode61`` plus the platform's shared-library suffix, never a ``lib``
prefix.  setup.py and the cross-build script load this file by path (it
imports nothing from the package), so builds and the loader cannot disagree.
It also knows where each platform's Python keeps its SQLite library.
"""

from __future__ import annotations

import os
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


# Where each platform's Python keeps the SQLite library its ``_sqlite3`` module
# runs on.  The loader tries these in order and takes the first one that
# exports SQLite's functions and reports the same version as the module.
HOMEBREW_SQLITE = (
    "/opt/homebrew/opt/sqlite/lib/libsqlite3.dylib",  # Apple silicon
    "/usr/local/opt/sqlite/lib/libsqlite3.dylib",  # Intel
)
STATIC_SQLITE_WORKAROUND = (
    "pip install sqlean.py (or apsw) and open connections with it, or use a Python "
    "whose sqlite3 module allows enable_load_extension"
)


def sqlite_library_candidates(
    module_file: str, prefixes: tuple[str, ...], platform: str | None = None
) -> list[str]:
    """Files (or loader names) that may hold the SQLite of the ``_sqlite3`` module.

    ``module_file`` is ``_sqlite3.__file__``; ``prefixes`` are ``sys.prefix`` and
    ``sys.base_prefix``.  On ELF and Mach-O, looking a symbol up through the
    module's own handle also searches the libraries it links, so the module comes
    first; it also covers a statically linked SQLite whose symbols are exported.
    """
    platform = sys.platform if platform is None else platform
    module_dir = os.path.dirname(module_file)
    unique_prefixes = list(dict.fromkeys(prefixes))
    if platform in ("win32", "cygwin"):
        # GetProcAddress does not search dependencies: python.org and the Store
        # builds keep sqlite3.dll beside _sqlite3.pyd (the DLLs folder).
        found = [os.path.join(module_dir, "sqlite3.dll")]
        found += [os.path.join(p, "DLLs", "sqlite3.dll") for p in unique_prefixes]
        return list(dict.fromkeys(found + ["sqlite3.dll"]))
    found = [module_file]
    if platform == "darwin":
        # python.org and framework builds keep it in the prefix's lib/, Homebrew's
        # Python links Homebrew's keg-only sqlite; the system one comes last.
        for prefix in unique_prefixes:
            found += [
                os.path.join(prefix, "lib", "libsqlite3.0.dylib"),
                os.path.join(prefix, "lib", "libsqlite3.dylib"),
            ]
        found += [*HOMEBREW_SQLITE, "/usr/lib/libsqlite3.dylib"]
    else:
        # glibc and musl (Alpine) alike: the prefix's own copy (conda, some
        # relocatable builds), then the dynamic loader's search by soname.
        for prefix in unique_prefixes:
            found.append(os.path.join(prefix, "lib", "libsqlite3.so.0"))
        found.append("libsqlite3.so.0")
    return list(dict.fromkeys(found))


_PT_LOAD = 1
# e_machine values of the platforms a wheel or a cross build may come from.
_MACHINES = {
    3: "x86",
    8: "MIPS",
    21: "PowerPC64",
    22: "s390x",
    40: "ARM",
    62: "x86-64",
    183: "AArch64",
    243: "RISC-V",
    258: "LoongArch",
}


def _elf_ident(path: str) -> tuple[int, int, int] | None:
    """An ELF file's class (1: 32-bit, 2: 64-bit), byte order and machine, or None."""
    import struct

    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return None
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    (machine,) = struct.unpack_from("<H" if head[5] == 1 else ">H", head, 18)
    return head[4], head[5], machine


def _describe(ident: tuple[int, int, int]) -> str:
    bits, order, machine = ident
    name = _MACHINES.get(machine, f"ELF machine {machine}")
    return f"{name}, {32 * bits}-bit{', big-endian' if order == 2 else ''}"


def built_elsewhere(path: str, reference: str | None = None) -> str | None:
    """Why the ELF library at ``path`` was built for another machine than the ELF
    file ``reference`` (this interpreter), or None.

    glibc skips such a file and reports "No such file or directory", as if the
    file that is there were missing.
    """
    mine = _elf_ident(reference or sys.executable)
    theirs = _elf_ident(path)
    if mine is None or theirs is None or mine == theirs:
        return None
    return f"{path} is built for {_describe(theirs)}; this Python runs on {_describe(mine)}"


def cut_short(path: str) -> str | None:
    """Why the ELF library at ``path`` is cut short, or None (whole, or not ELF).

    glibc maps every loadable segment the program headers name, even one that
    runs past the end of a truncated copy; the first touch of the missing pages
    kills the process with SIGBUS instead of failing the load.  A file too short
    for its own headers is refused by the loader itself, so it passes here.
    """
    import struct

    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] not in (1, 2):
                return None
            wide = head[4] == 2
            order = "<" if head[5] == 1 else ">"
            if wide:
                (phoff,) = struct.unpack_from(order + "Q", head, 32)
                phentsize, phnum = struct.unpack_from(order + "HH", head, 54)
            else:
                (phoff,) = struct.unpack_from(order + "I", head, 28)
                phentsize, phnum = struct.unpack_from(order + "HH", head, 42)
            f.seek(phoff)
            table = f.read(phentsize * phnum)
    except OSError:  # unreadable: the loader's own error says so
        return None
    entry = order + ("IIQQQQ" if wide else "IIIII")
    if len(table) < phentsize * phnum or phentsize < struct.calcsize(entry):
        return None
    need = 0
    for i in range(phnum):
        fields = struct.unpack_from(entry, table, i * phentsize)
        # ELF64: type, flags, offset, vaddr, paddr, filesz; ELF32 has no flags there
        kind, offset, filesz = fields[0], fields[2 if wide else 1], fields[-1]
        if kind == _PT_LOAD:
            need = max(need, offset + filesz)
    if need <= size:
        return None
    return f"{path} is cut short: {size} bytes, where its own headers need {need}"
