"""Hermes Agent's ``config.yaml``, read without importing Hermes (a leaf module).

``plugin_status(hermes_home)``: is our plugin enabled in that home's
``config.yaml``, and with which grant?

Hermes keeps ``config.yaml`` in YAML.  PyYAML is in Hermes' environment but not
a dependency of ours, so without it a small reader handles the block and flow
forms Hermes writes; anything else is reported as unreadable, never guessed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

PLUGIN_NAME = "hermes-fts"
GRANT_FLAG = "--allow-tool-override"
OVERRIDE_CAPABILITY = "tools.override"  # the same grant in newer Hermes' capability list


class ConfigUnreadable(ValueError):
    """config.yaml uses YAML this module's reader does not understand."""


_INTEGER = re.compile(r"[-+]?[0-9]+")


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
    if _INTEGER.fullmatch(text):  # a number, as PyYAML reads it: 0 is false, "0" true
        return int(text)
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
    whatever YAML it uses, is never read.  A key given twice is its last one, as
    PyYAML, which Hermes reads it with, takes it (a block pasted at the end)."""
    out: list[tuple[int, str]] = []
    inside = False
    for indent, text in lines:
        if indent == 0 and not text.startswith("-"):
            inside = text.partition(":")[0].strip().strip("'\"") == key
            if inside:
                out = [(indent, text)]
        elif inside:
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
            # PyYAML's message spans lines (the text, a caret under it); status has one.
            raise ConfigUnreadable(" ".join(str(exc).split())) from exc
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
        "config": str(path),
        "enabled": False,
        "disabled": False,
        "allow_tool_override": False,
        "serves_session_search": False,
        "grant": None,
        "error": None,
        "hint": None,
    }
    try:
        # utf-8-sig: a byte-order mark (Windows editors) is no part of the first key,
        # as PyYAML, which Hermes reads it with, takes it.
        plugins = config_section(path.read_text(encoding="utf-8-sig"), "plugins")
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
    out["allow_tool_override"] = _override_granted(entry)
    out["serves_session_search"] = out["enabled"] and not out["disabled"]
    if out["serves_session_search"]:
        out["grant"] = (
            "schema override" if out["allow_tool_override"] else "execution middleware only"
        )
    if not out["serves_session_search"] or not out["allow_tool_override"]:
        out["hint"] = f"hermes plugins enable {PLUGIN_NAME} {GRANT_FLAG}"
    return out


def _override_granted(entry: Any) -> bool:
    """Whether a ``plugins.entries`` entry grants the tool override: 0.19's
    ``allow_tool_override``, or the ``granted_capabilities`` list of newer
    Hermes builds, which grants it alone there.  Any true value grants it, as
    Hermes reads it (``bool``): 1 and "no" do, 0 does not."""
    if not isinstance(entry, dict):
        return False
    granted = entry.get("granted_capabilities")
    capabilities = granted if isinstance(granted, list) else []
    return bool(entry.get("allow_tool_override")) or OVERRIDE_CAPABILITY in capabilities
