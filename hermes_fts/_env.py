"""Every ``HERMES_*`` environment variable the package reads, and how it is parsed.

One place, so each switch has one spelling and one meaning:

``HERMES_HOME``             folder of ``state.db`` and ``profiles/`` (default ``~/.hermes``)
``HERMES_CJK_FTS``          ``0``/``false``/``off``/``no`` switches the extension off
``HERMES_TRIGRAM_FTS``      ``1``/``true``/``on``/``yes`` keeps the trigram index (opt-in);
                            ``0``/... also stops serving one an older version built
``HERMES_WORD_FTS``         ``1``/``true``/``on``/``yes`` keeps the word index (opt-in);
                            ``0``/... also stops serving one an older version built
``HERMES_FTS_LIBRARY``      a hermes-fts library file to load instead of the bundled one
                            (never Hermes' own ``HERMES_FTS5_CJK_SO``: that one is Hermes')
``HERMES_SEARCH_SLOW_MS``   searches slower than this are logged (default 1000)
``HERMES_SEARCH_LOG_QUERY`` ``1``/``true``/``yes``/``on`` adds the query text to that log line

A value none of these reads (``HERMES_CJK_FTS=disabled``, ``HERMES_SEARCH_SLOW_MS=abc``)
counts as unset; it is logged once (a WARNING) and ``ignored_settings`` names it
for ``status``.  A leaf module: it imports nothing from the package.
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

__all__ = [
    "cjk_extension_disabled",
    "cjk_switch_value",
    "extension_override",
    "default_db_path",
    "hermes_home",
    "hermes_root",
    "ignored_settings",
    "log_search_query",
    "search_slow_ms",
    "switched_off",
    "switched_on",
    "trigram_enabled",
    "trigram_forced",
    "word_enabled",
    "word_forced",
]

_OFF_VALUES = frozenset({"0", "false", "off", "no"})
_ON_VALUES = frozenset({"1", "true", "on", "yes"})
SLOW_MS_DEFAULT = 1000.0
_SWITCH_VALUES = _OFF_VALUES | _ON_VALUES
# What each on/off variable does unset, which a value it cannot read is taken as.
_UNSET = {
    "HERMES_CJK_FTS": "the extension on",
    "HERMES_TRIGRAM_FTS": "no trigram index kept",
    "HERMES_WORD_FTS": "no word index kept",
    "HERMES_SEARCH_LOG_QUERY": "no query text logged",
}

log = logging.getLogger(__name__)
_warned: set[tuple[str, str]] = set()


def _value(name: str) -> str:
    return os.environ.get(name, "").strip()


def _ignored(name: str, problem: str) -> None:
    """Log a value read as unset, once per value: it is read on every search."""
    key = (name, os.environ.get(name, ""))
    if key not in _warned:
        _warned.add(key)
        log.warning("hermes-fts: %s", problem)


def _switch_problem(name: str, value: str) -> str | None:
    if not value or value.lower() in _SWITCH_VALUES:
        return None
    return (
        f"{name}={value!r} is neither on (1, true, on, yes) nor off (0, false, off, no); "
        f"read as unset: {_UNSET[name]}"
    )


def _switch(name: str) -> str:
    """The switch's value in lower case, ``""`` for one it cannot read."""
    value = _value(name)
    problem = _switch_problem(name, value)
    if problem:
        _ignored(name, problem)
        return ""
    return value.lower()


def switched_off(name: str) -> bool:
    """True when an on/off variable says 0, false, off or no (unset means on)."""
    return _switch(name) in _OFF_VALUES


def switched_on(name: str) -> bool:
    """True when an opt-in variable says 1, true, on or yes (unset means off)."""
    return _switch(name) in _ON_VALUES


def hermes_home() -> Path:
    """``$HERMES_HOME`` or ``~/.hermes``."""
    value = _value("HERMES_HOME")
    return Path(value).expanduser() if value else Path.home() / ".hermes"


def default_db_path() -> Path:
    """The store Hermes Agent uses: ``$HERMES_HOME/state.db``."""
    return hermes_home() / "state.db"


def hermes_root() -> Path:
    """The folder Hermes Agent anchors its profiles at.

    Under ``hermes -p NAME`` Hermes sets ``HERMES_HOME`` to
    ``<root>/profiles/NAME``; profile ``default`` is ``<root>/state.db`` and
    profile ``NAME`` is ``<root>/profiles/NAME/state.db``, whichever profile is
    active.  A ``HERMES_HOME`` inside ``~/.hermes`` has ``~/.hermes`` as its
    root; elsewhere (a container volume) it is its own root unless it is
    itself a profile folder.
    """
    native = Path.home() / ".hermes"
    value = _value("HERMES_HOME")
    if not value:
        return native
    home = Path(value).expanduser()
    try:
        home.resolve().relative_to(native.resolve())
        return native
    except (ValueError, OSError):
        pass
    return home.parent.parent if home.parent.name == "profiles" else home


def cjk_extension_disabled() -> bool:
    """``HERMES_CJK_FTS`` switches the cjk_unicode61 extension off."""
    return switched_off("HERMES_CJK_FTS")


def cjk_switch_value() -> str | None:
    """The raw ``HERMES_CJK_FTS`` value, for messages that quote it."""
    return os.environ.get("HERMES_CJK_FTS")


def trigram_enabled() -> bool:
    """``HERMES_TRIGRAM_FTS`` not switched off: an existing trigram index is served."""
    return not switched_off("HERMES_TRIGRAM_FTS")


def trigram_forced() -> bool:
    """``HERMES_TRIGRAM_FTS`` explicitly on: the store keeps a trigram index (opt-in)."""
    return switched_on("HERMES_TRIGRAM_FTS")


def word_enabled() -> bool:
    """``HERMES_WORD_FTS`` not switched off: an existing word index is served."""
    return not switched_off("HERMES_WORD_FTS")


def word_forced() -> bool:
    """``HERMES_WORD_FTS`` explicitly on: the store keeps a word index (opt-in)."""
    return switched_on("HERMES_WORD_FTS")


def extension_override() -> str | None:
    """``HERMES_FTS_LIBRARY`` with ``~`` expanded, as an absolute path, or None when
    unset.  A name without a folder is a file here, as the checks for it read it:
    the loader (dlopen) would look for it in the system's library folders instead."""
    value = _value("HERMES_FTS_LIBRARY")
    return os.path.abspath(os.path.expanduser(value)) if value else None


def _slow_ms(raw: str) -> float | None:
    """``raw`` as milliseconds, or None when it is no number of them (``inf``: never)."""
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if value >= 0 and not math.isnan(value) else None


def _slow_ms_problem(raw: str) -> str:
    return (
        f"HERMES_SEARCH_SLOW_MS={raw!r} is not a number of milliseconds, 0 or more; "
        f"used the default {SLOW_MS_DEFAULT:.0f}"
    )


def search_slow_ms() -> float:
    """``HERMES_SEARCH_SLOW_MS``; a missing, unparsable or negative value gives the default."""
    raw = _value("HERMES_SEARCH_SLOW_MS")
    if not raw:  # the usual case, asked after every search: no exception to raise
        return SLOW_MS_DEFAULT
    value = _slow_ms(raw)
    if value is None:
        _ignored("HERMES_SEARCH_SLOW_MS", _slow_ms_problem(raw))
        return SLOW_MS_DEFAULT
    return value


def log_search_query() -> bool:
    """``HERMES_SEARCH_LOG_QUERY``: put the query text into the slow-search log line."""
    return switched_on("HERMES_SEARCH_LOG_QUERY")


def ignored_settings() -> list[str]:
    """What each variable set to a value none of them reads is read as, for ``status``."""
    problems = [_switch_problem(name, _value(name)) for name in _UNSET]
    slow = _value("HERMES_SEARCH_SLOW_MS")
    if slow and _slow_ms(slow) is None:
        problems.append(_slow_ms_problem(slow))
    return [problem for problem in problems if problem]
