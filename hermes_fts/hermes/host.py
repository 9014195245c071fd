"""What hermes-fts knows about a Hermes Agent install, without importing Hermes.

Two questions the ``hermes-fts`` command answers for people running Hermes Agent:

* ``plugin_status(hermes_home)``: is our plugin enabled in that home's
  ``config.yaml``, and with which grant?  A disabled plugin registers no
  ``hermes fts`` command, so only ``hermes-fts status`` can say so.
* ``hermes_drop_in_path()``: a ``libfts5_cjk`` file for Hermes builds that load a
  native CJK tokenizer through ``HERMES_FTS5_CJK_SO``.  Those builds call
  ``load_extension(path)`` without an entry-point name, so SQLite derives
  ``sqlite3_ftscjk_init`` from the file name; our library answers to it.

Hermes keeps ``config.yaml`` in YAML.  PyYAML is in Hermes' environment but not
a dependency of ours, so without it a small reader handles the block and flow
forms Hermes writes; anything else is reported as unreadable, never guessed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from .. import loader
from .config import (  # noqa: F401 - re-exported: hermes_host is the public face
    GRANT_FLAG,
    PLUGIN_NAME,
    ConfigUnreadable,
    config_section,
    plugin_status,
)

ENTRY_POINT_GROUP = "hermes_agent.plugins"
DROP_IN_NAME = "libfts5_cjk"


def format_plugin_status(status: dict[str, Any]) -> str:
    """One line for ``hermes-fts status``: ``status`` is ``plugin_status(home)``."""
    config = status["config"]
    enable = f"`hermes plugins enable {PLUGIN_NAME} {GRANT_FLAG}`"
    if status["error"]:
        return f"Hermes plugin: unknown ({status['error']})"
    if status["serves_session_search"]:
        line = f"Hermes plugin: enabled in {config}; serves session_search ({status['grant']})"
        if not status["allow_tool_override"]:
            line += f"; {enable} shows the model hermes-fts' schema"
        return line
    if status["disabled"]:
        return f"Hermes plugin: disabled in {config}; {enable} turns it on"
    return f"Hermes plugin: not enabled in {config}; run {enable}"


# --------------------------------------------------------------------------- drop-in library


def bundled_library() -> Path:
    """The library shipped in this package (never the ``HERMES_FTS5_CJK_SO`` override)."""
    return Path(loader.__file__).resolve().parent / (loader.LIB_NAME + loader.LIB_SUFFIX)


def _cache_root() -> Path:
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = str(Path.home() / "Library" / "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "hermes-fts"


def _points_to(link: Path, target: Path) -> bool:
    try:
        return link.is_symlink() and link.resolve() == target.resolve()
    except OSError:
        return False


def _same_copy(copy: Path, source: Path) -> bool:
    try:
        a, b = copy.stat(), source.stat()
    except OSError:
        return False
    return not copy.is_symlink() and a.st_size == b.st_size and a.st_mtime_ns == b.st_mtime_ns


def hermes_drop_in_path(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Create (or refresh) ``libfts5_cjk.<suffix>`` and return its absolute path.

    The file lives in a per-install folder of the user cache
    (``~/.cache/hermes-fts/<hash of the package folder>/``), so two virtual
    environments never share one.  It is a symlink to the bundled library, so a
    reinstall of hermes-fts is picked up without exporting a new path; where
    symlinks are not allowed it is a copy, refreshed when the library changes.
    Raises ``loader.ExtensionUnavailable`` when the bundled library is missing and
    ``OSError`` when the cache folder cannot be written.
    """
    source = bundled_library()
    if not source.is_file():
        raise loader.ExtensionUnavailable(
            f"the cjk_unicode61 library was not found at {source}; reinstall hermes-fts "
            "(pip install --force-reinstall hermes-fts)"
        )
    folder_key = hashlib.sha256(str(source.parent).encode("utf-8")).hexdigest()[:12]
    folder = Path(cache_dir) if cache_dir is not None else _cache_root() / folder_key
    folder.mkdir(parents=True, exist_ok=True)
    target = (folder / (DROP_IN_NAME + loader.LIB_SUFFIX)).absolute()
    if _points_to(target, source) or _same_copy(target, source):
        return target
    staging = folder / f".{DROP_IN_NAME}.{os.getpid()}.tmp"
    try:
        staging.unlink()
    except FileNotFoundError:
        pass
    try:
        os.symlink(source, staging)
    except (OSError, NotImplementedError):
        shutil.copy2(source, staging)
    os.replace(staging, target)  # atomic: a running Hermes never sees half a file
    return target
