"""Build csrc/ into hermes_fts/cjk_unicode61.{so,dylib,dll}.

The library is a plain SQLite loadable extension, not a CPython module: it
never includes Python.h, never links libpython, and exports only the SQLite
entry points.  Wheels are therefore tagged py3-none-<platform>.  Sources,
flags, the version define and the entry points come from csrc/build_config.py,
which the cross-build script (.ci/build-wheels) uses as well.
"""

import importlib.util
import os
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CompileError

try:  # setuptools >= 70.1 ships bdist_wheel itself
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover - older toolchains
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "hermes_build_config", os.path.join(HERE, "csrc", "build_config.py")
)
assert _spec is not None and _spec.loader is not None
config = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(config)


SQLITE_HEADERS_MISSING = """\
error: hermes-fts builds its CJK tokenizer against SQLite's C headers (sqlite3.h,
sqlite3ext.h), and the compiler finds none on this machine. Install them, then
run pip again:
  Debian, Ubuntu:  apt-get install libsqlite3-dev
  Fedora, RHEL:    dnf install sqlite-devel
  Alpine:          apk add sqlite-dev
  macOS:           brew install sqlite (or the Xcode command line tools)
or point the compiler at them: CFLAGS=-I/path/to/sqlite/include"""


class BuildLoadable(build_ext):
    """build_ext that produces a plain shared library with a platform suffix."""

    def get_ext_filename(self, fullname):
        # Called with the full dotted name and with its last part alone.
        return os.path.join(*fullname.split(".")) + config.library_suffix(sys.platform)

    def get_export_symbols(self, ext):
        return config.ENTRY_POINTS

    def build_extensions(self):
        # Some Pythons (pyenv) put their own -rpath in LDSHARED; a library that
        # the sqlite3 shell loads must not carry a path to a Python install.
        linker = getattr(self.compiler, "linker_so", None)
        if isinstance(linker, list):
            self.compiler.linker_so = [a for a in linker if not a.startswith("-Wl,-rpath")]
        self._check_sqlite_headers()
        super().build_extensions()

    def _check_sqlite_headers(self):
        """Stop with what to install when the compiler finds no SQLite headers: the
        compiler's own error, deep in pip's output, named one file and no package."""
        with tempfile.TemporaryDirectory() as tmp:
            probe = os.path.join(tmp, "sqlite_headers.c")
            with open(probe, "w") as f:
                f.write("#include <sqlite3.h>\n#include <sqlite3ext.h>\nint probe;\n")
            try:
                self.compiler.compile([probe], output_dir=tmp, include_dirs=self.include_dirs)
            except CompileError:
                raise SystemExit(SQLITE_HEADERS_MISSING) from None

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


werror = bool(os.environ.get("HERMES_FTS_WERROR"))
link_args: list = []
if sys.platform == "win32":
    compile_args = config.MSVC_CFLAGS + (config.MSVC_WERROR if werror else [])
else:
    compile_args = config.GNU_CFLAGS + (config.GNU_WERROR if werror else [])
    if os.environ.get("HERMES_FTS_SANITIZE"):
        # The sanitizer runtimes are preloaded by the test driver.
        compile_args += config.SANITIZE_CFLAGS
    elif sys.platform.startswith("linux"):
        link_args = config.ELF_LDFLAGS

extension = Extension(
    "hermes_fts." + config.LIB_NAME,
    sources=config.SOURCES,
    depends=config.HEADERS,
    include_dirs=["csrc"],
    define_macros=[config.VERSION_MACRO],
    extra_compile_args=compile_args,
    extra_link_args=link_args,
)

setup(
    ext_modules=[extension],
    cmdclass={"build_ext": BuildLoadable, "bdist_wheel": PlatformNoneWheel},
)
