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

A leaf module: it imports nothing from the package.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "cjk_extension_disabled",
    "cjk_switch_value",
    "extension_override",
    "default_db_path",
    "hermes_home",
    "hermes_root",
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


def _value(name: str) -> str:
    return os.environ.get(name, "").strip()


def switched_off(name: str) -> bool:
    """True when an on/off variable says 0, false, off or no (unset means on)."""
    return _value(name).lower() in _OFF_VALUES


def switched_on(name: str) -> bool:
    """True when an opt-in variable says 1, true, on or yes (unset means off)."""
    return _value(name).lower() in _ON_VALUES


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


def search_slow_ms() -> float:
    """``HERMES_SEARCH_SLOW_MS``; a missing, unparsable or negative value gives the default."""
    raw = _value("HERMES_SEARCH_SLOW_MS")
    if not raw:  # the usual case, asked after every search: no exception to raise
        return SLOW_MS_DEFAULT
    try:
        value = float(raw)
    except ValueError:
        return SLOW_MS_DEFAULT
    return value if value >= 0 else SLOW_MS_DEFAULT


def log_search_query() -> bool:
    """``HERMES_SEARCH_LOG_QUERY``: put the query text into the slow-search log line."""
    return switched_on("HERMES_SEARCH_LOG_QUERY")
