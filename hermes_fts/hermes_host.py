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
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from . import loader

PLUGIN_NAME = "hermes-fts"
ENTRY_POINT_GROUP = "hermes_agent.plugins"
DROP_IN_NAME = "libfts5_cjk"
GRANT_FLAG = "--allow-tool-override"


# --------------------------------------------------------------------------- config.yaml


class ConfigUnreadable(ValueError):
    """config.yaml uses YAML this module's reader does not understand."""


def _scalar(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    lowered = text.lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    if lowered in ("", "null", "~"):
        return None
    if text.startswith(("[", "{", "&", "*", "!", "|", ">")):
        raise ConfigUnreadable(f"unsupported YAML value {text!r}")
    return text


def _flow_list(text: str) -> list[Any]:
    inner = text.strip()[1:-1].strip()
    if not inner:
        return []
    if any(ch in inner for ch in "[]{}"):
        raise ConfigUnreadable("nested flow collections")
    return [_scalar(part) for part in inner.split(",")]


def _value(text: str) -> Any:
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        return _flow_list(text)
    if text == "{}":
        return {}
    return _scalar(text)


_COMMENT = re.compile(r"\s+#.*$")


def _lines(text: str) -> list[tuple[int, str]]:
    out = []
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#") or raw.strip() in ("---", "..."):
            continue
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise ConfigUnreadable("tab indentation")
        line = _COMMENT.sub("", raw.rstrip())
        out.append((len(line) - len(line.lstrip()), line.strip()))
    return out


def _block(lines: list[tuple[int, str]], pos: int, indent: int) -> tuple[Any, int]:
    """Parse the mapping or list starting at ``lines[pos]`` (indented ``indent``)."""
    if lines[pos][1].startswith("- ") or lines[pos][1] == "-":
        items: list[Any] = []
        while pos < len(lines) and lines[pos][0] == indent and lines[pos][1][:1] == "-":
            item = lines[pos][1][1:].strip()
            if not item or ":" in item and not item.startswith(("'", '"')):
                raise ConfigUnreadable("lists of mappings")
            items.append(_value(item))
            pos += 1
        return items, pos
    mapping: dict[str, Any] = {}
    while pos < len(lines) and lines[pos][0] == indent:
        text = lines[pos][1]
        if text.startswith("- "):
            raise ConfigUnreadable("a list where a key was expected")
        key, sep, rest = text.partition(":")
        if not sep or (rest and not rest.startswith(" ")):
            raise ConfigUnreadable(f"cannot read line {text!r}")
        key = str(_scalar(key))
        pos += 1
        if rest.strip():
            mapping[key] = _value(rest)
        elif pos < len(lines) and (
            lines[pos][0] > indent or (lines[pos][0] == indent and lines[pos][1][:1] == "-")
        ):
            mapping[key], pos = _block(lines, pos, lines[pos][0])
        else:
            mapping[key] = None
    return mapping, pos


def _top_level_section(lines: list[tuple[int, str]], key: str) -> list[tuple[int, str]]:
    """The lines of top-level ``key:`` (itself included), so the rest of the file,
    whatever YAML it uses, is never read."""
    out: list[tuple[int, str]] = []
    for indent, text in lines:
        if indent == 0 and not text.startswith("-"):
            if out:
                break
            if text.partition(":")[0].strip().strip("'\"") == key:
                out.append((indent, text))
        elif out:
            out.append((indent, text))
    return out


def config_section(text: str, key: str) -> Any:
    """Top-level ``key`` of ``config.yaml`` text (PyYAML when importable, else the subset
    reader on that section only); ``None`` when absent."""
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is not None:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigUnreadable(str(exc)) from exc
        if data is None:
            return None
        if not isinstance(data, dict):
            raise ConfigUnreadable("the top level is not a mapping")
        return data.get(key)
    section = _top_level_section(_lines(text), key)
    if not section:
        return None
    data, pos = _block(section, 0, 0)
    if pos != len(section):
        raise ConfigUnreadable(f"cannot read line {section[pos][1]!r}")
    return data.get(key)


def plugin_status(hermes_home: str | os.PathLike[str]) -> dict[str, Any]:
    """Whether ``config.yaml`` in ``hermes_home`` enables our plugin, and its grant.

    Keys: ``config`` (path), ``enabled``, ``disabled`` (explicit deny-list),
    ``allow_tool_override``, ``serves_session_search`` (Hermes will load the plugin,
    which then serves every agent ``session_search`` call), ``grant``
    (``"schema override"``, ``"execution middleware only"`` or ``None``),
    ``error`` (why the file could not be read, else ``None``) and ``hint``
    (the command to run next, or ``None``).
    """
    path = Path(hermes_home).expanduser() / "config.yaml"
    out: dict[str, Any] = {
        "config": str(path), "enabled": False, "disabled": False,
        "allow_tool_override": False, "serves_session_search": False,
        "grant": None, "error": None, "hint": None,
    }
    try:
        plugins = config_section(path.read_text(encoding="utf-8"), "plugins")
    except FileNotFoundError:
        plugins = None
    except (OSError, UnicodeDecodeError, ConfigUnreadable) as exc:
        out["error"] = f"cannot read {path}: {exc}"
        return out
    plugins = plugins if isinstance(plugins, dict) else {}
    enabled = plugins.get("enabled")
    disabled = plugins.get("disabled")
    entries = plugins.get("entries")
    entry = entries.get(PLUGIN_NAME) if isinstance(entries, dict) else None
    out["enabled"] = isinstance(enabled, list) and PLUGIN_NAME in enabled
    out["disabled"] = isinstance(disabled, list) and PLUGIN_NAME in disabled
    out["allow_tool_override"] = (isinstance(entry, dict)
                                  and entry.get("allow_tool_override") is True)
    out["serves_session_search"] = out["enabled"] and not out["disabled"]
    if out["serves_session_search"]:
        out["grant"] = ("schema override" if out["allow_tool_override"]
                        else "execution middleware only")
    if not out["serves_session_search"] or not out["allow_tool_override"]:
        out["hint"] = f"hermes plugins enable {PLUGIN_NAME} {GRANT_FLAG}"
    return out


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
