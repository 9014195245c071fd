"""Build csrc/ into hermes_fts/cjk_unicode61.{so,dylib,dll}.

The library is a plain SQLite loadable extension, not a CPython module: it
never includes Python.h, never links libpython, and exports only the SQLite
entry points.  Wheels are therefore tagged py3-none-<platform>.
"""

import os
import sys
from glob import glob

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

try:  # setuptools >= 70.1 ships bdist_wheel itself
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover - older toolchains
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

ENTRY_POINTS = [
    "sqlite3_cjkunicode_init",
    "sqlite3_ftscjk_init",
    "sqlite3_fts5_cjk_init",
    "hermes_fts_auto_init",
]

if sys.platform == "win32":
    LIB_SUFFIX = ".dll"
elif sys.platform == "darwin":
    LIB_SUFFIX = ".dylib"
else:
    LIB_SUFFIX = ".so"


class BuildLoadable(build_ext):
    """build_ext that produces a plain shared library with a platform suffix."""

    def get_ext_filename(self, fullname):
        return os.path.join(*fullname.split(".")) + LIB_SUFFIX

    def get_export_symbols(self, ext):
        return ENTRY_POINTS

    def build_extensions(self):
        # Some Pythons (pyenv) put their own -rpath in LDSHARED; a library that
        # the sqlite3 shell loads must not carry a path to a Python install.
        linker = getattr(self.compiler, "linker_so", None)
        if isinstance(linker, list):
            self.compiler.linker_so = [a for a in linker if not a.startswith("-Wl,-rpath")]
        super().build_extensions()

    def get_libraries(self, ext):
        # Never link libpython: the library must load in the sqlite3 shell too.
        return list(ext.libraries)


class PlatformNoneWheel(bdist_wheel):
    """One wheel per platform for every Python 3: the library has no CPython ABI."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _python, _abi, plat = super().get_tag()
        return "py3", "none", plat


link_args: list = []
if sys.platform == "win32":
    compile_args = ["/O2", "/W3"]
    if os.environ.get("HERMES_FTS_WERROR"):
        compile_args.append("/WX")
else:
    compile_args = ["-std=c11", "-O2", "-fvisibility=hidden", "-Wall", "-Wextra"]
    if os.environ.get("HERMES_FTS_WERROR"):
        compile_args.append("-Werror")
    if os.environ.get("HERMES_FTS_SANITIZE"):
        # The sanitizer runtimes are preloaded by the test driver.
        compile_args += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g"]
    elif sys.platform.startswith("linux"):
        # Fail at link time, not at .load time, on any unresolved symbol.
        link_args = ["-Wl,-z,defs"]

extension = Extension(
    "hermes_fts.cjk_unicode61",
    sources=sorted(glob("csrc/*.c")),
    depends=sorted(glob("csrc/*.h")),
    include_dirs=["csrc"],
    extra_compile_args=compile_args,
    extra_link_args=link_args,
)

setup(
    ext_modules=[extension],
    cmdclass={"build_ext": BuildLoadable, "bdist_wheel": PlatformNoneWheel},
)
