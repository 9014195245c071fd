"""A store's ``needs_optimize`` codes (``lifecycle.optimize_reasons``) in the words
every report uses, and which of them slow a search or leave rows out:
``status``' ``Searches:`` and ``Optimize:`` lines, the tool's note and the plugin's;
and what every answer says while the CJK extension is switched off."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from .. import _env
from .schema import BASE, CJK, TRIGRAM

__all__ = [
    "PENDING_SLOW",
    "SEARCH_SLOWED",
    "SLOWED_WORDS",
    "backfills_dropped",
    "fix_command",
    "missed_until_rebuilt",
    "optimize_why",
    "search_slowed_by",
    "slowed_why",
    "switched_off_notes",
]


# Reasons ``optimize-storage`` has work to do, as codes a program can read.
# ``SEARCH_SLOWED``: those that leave a search on slower exact routes; the
# others (an opt-in index to build or drop, the time table, pending CJK rows
# a writer applies) change no answer and no route the CJK index serves.
# ``word_missing`` slows only a store that opted in to the word index.
SEARCH_SLOWED = frozenset(
    {
        "fts_stale",
        "backfill",
        "old_layout",
        "word_missing",
        "word_outdated",
        "cjk_missing",
        "cjk_stale",
        "cjk_broken",
        "cjk_unlogged",
        "cjk_outdated",
    }
)


# Rows waiting for the CJK index are read by a LIKE scan of just them on every
# search that cannot apply them (a read-only open, the Hermes plugin): from this
# many on, that scan is a cost worth a note; ``sync`` applies them.
PENDING_SLOW = 1000


def search_slowed_by(state: dict[str, Any]) -> list[str]:
    """The ``needs_optimize`` codes of ``state`` (``index_state``) that slow a search,
    and ``cjk_pending`` once ``PENDING_SLOW`` rows wait for the CJK index."""
    codes = [code for code in state.get("needs_optimize", ()) if code in SEARCH_SLOWED]
    if int(state.get("cjk_pending") or 0) >= PENDING_SLOW:
        codes.append("cjk_pending")
    return codes


# What each ``search_slowed_by`` code means, in the words status, the tool and the
# plugin use (the JSON's ``needs_optimize`` keeps the codes).
SLOWED_WORDS = {
    "fts_stale": "an index is under repair",
    "backfill": "the indexes are not filled yet",
    "old_layout": "objects an older hermes-fts made under Hermes' names are still there",
    "word_missing": "the word index (HERMES_WORD_FTS=1) is not built",
    "word_outdated": "the word index has an earlier layout",
    "cjk_missing": "the CJK index is not built",
    "cjk_stale": "the CJK index is under repair",
    "cjk_broken": "tables or triggers the CJK index needs were dropped",
    "cjk_unlogged": "messages are missing from the CJK index and from its change log",
    "cjk_outdated": "the CJK index was built with older options",
    "cjk_pending": "many messages wait for the CJK index",
}


def slowed_why(codes: Collection[str]) -> str:
    """``codes`` (``search_slowed_by``) in words, each with its code."""
    return "; ".join(f"{SLOWED_WORDS.get(code, code)} ({code})" for code in codes)


# The other codes: work optimize-storage does that no search waits for.
OPTIMIZE_WORDS = {
    **SLOWED_WORDS,
    "writes_blocked": "triggers of ours write tables that are gone",
    "damaged": "a served index is damaged, so searches may miss rows",
    "word_to_drop": "the word index is no longer kept",
    "trigram_to_build": "the trigram index (HERMES_TRIGRAM_FTS=1) is not built",
    "trigram_to_drop": "the trigram index is no longer kept",
    "trigram_outdated": "the trigram index has an earlier layout",
    "trigram_stale": "the trigram index is under repair",
    "time_table": "the time table is not complete",
    "rank_bounds": "rank bounds lag behind the CJK index",
    "compaction": "a run's VACUUM is left to do (it stopped, or Hermes had the store open)",
    "read_indexes": "indexes of ours are missing, so reads and applying changes are slower",
    "cjk_pending": "messages wait for the CJK index",  # any, where a search minds many
}


def optimize_why(codes: Collection[str]) -> str:
    """Every ``needs_optimize`` code of ``codes`` in words, each with its code."""
    return "; ".join(f"{OPTIMIZE_WORDS.get(code, code)} ({code})" for code in codes)


def missed_until_rebuilt(state: dict[str, Any]) -> str | None:
    """What searches do not find until ``optimize-storage`` rebuilds the CJK index,
    if anything (``state``: ``index_state``).  Every other outdated option only
    slows a search; an index built before ``symbols 1``, ``remove_diacritics 2``,
    ``compose 1``, ``letters 1`` or ``selectors 1`` misses rows."""
    cjk = state.get(CJK) or {}
    missed = []
    if cjk.get("symbols") is False:
        missed.append("a word glued to an emoji newer than Unicode 6.1 (deploy🫠) is not found")
    if cjk.get("diacritics") is False:
        missed.append("a word with two diacritics on a letter (Việt) is not found without them")
    if cjk.get("compose") is False:
        missed.append(
            "Hangul or kana written decomposed (a macOS file name's 한국어) is not found as typed"
        )
    if cjk.get("letters") is False:
        missed.append(
            "a word is not found without its accents, vowel points or ligatures (αλφα, еще, "
            "שלום, finance)"
        )
    if cjk.get("selectors") is False:
        missed.append("a CJK word written with a variation selector (葛󠄀飾) is not found as 葛飾")
    return ", and ".join(missed) or None


def backfills_dropped(backfill: dict[str, Any], needs: Collection[str]) -> bool:
    """Whether every index ``backfill`` (``backfill_progress``) fills is one the next
    run drops, its ``needs_optimize`` code ``word_to_drop`` or ``trigram_to_drop``."""
    codes = {BASE: "word_to_drop", TRIGRAM: "trigram_to_drop"}
    return all(codes.get(index) in needs for index in backfill.get("indexes", {}))


def fix_command(codes: Collection[str]) -> str:
    """The subcommand that removes what ``codes`` (``search_slowed_by``) name: ``sync``
    when only rows wait for the CJK index, ``optimize-storage`` otherwise."""
    return "sync" if set(codes) == {"cjk_pending"} else "optimize-storage"


def switched_off_notes(state: dict[str, Any]) -> tuple[str, ...]:
    """What a search without the CJK extension cannot do, said on every answer
    while ``HERMES_CJK_FTS`` switches it off or the library does not load
    (docs/USAGE.md promises it): its answers differ, where a log line is all a
    caller of the API or a --json reader would otherwise get."""
    if _env.cjk_extension_disabled():
        why = f"is switched off (HERMES_CJK_FTS={_env.cjk_switch_value()})"
    elif state.get("cjk_available", True):
        return ()
    else:
        why = "did not load (`hermes-fts path` says why)"
    scan = (
        ""
        if state[BASE]["served"]
        else "; with no word index kept (HERMES_WORD_FTS=1 keeps one), every query "
        "is answered by a LIKE scan, slower, which folds ASCII case only: cafe does "
        "not find Café, nor zurich ZÜRICH"
    )
    return (
        f"the CJK extension {why}: "
        "CJK text is matched as written, without width or Han variant folding "
        "(陽朔 does not find 阳朔), and a Latin word glued to CJK text (staging服务器) "
        f"may not be found by that word{scan}",
    )
