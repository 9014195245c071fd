"""``status``' lines for what a run left to finish or to give back: the backfill, the
time table, and the disk room a killed run still holds."""

from __future__ import annotations

from typing import Any

from ..index.slowed import backfills_dropped
from .output import bar, human_bytes

__all__ = ["backfill_line", "left_room_line", "time_table_lines"]


def backfill_line(bf: dict[str, Any] | None, needs: list[str]) -> str:
    """``status``' Backfill line: how far the builds got and what finishes them."""
    if not bf:
        return "Backfill: none pending"
    if backfills_dropped(bf, needs):
        # A build cut short after its opt-out: the next run drops it, never finishes it.
        return (
            f"Backfill: {bf['percent']}% of an index no longer kept; "
            "`hermes-fts optimize-storage` drops it"
        )
    return (
        f"Backfill: {bf['percent']}% {bar(bf['percent'] / 100)} "
        f"({bf['indexed']:,}/{bf['total']:,}); run `hermes-fts optimize-storage` to finish"
    )


def time_table_lines(tt: dict[str, Any], messages: int) -> list[str]:
    """The time table's state (``time_table.state`` plus ``rows``) for people; a fill
    in the ``messages`` it has copied, since its window's ids need not be dense."""
    status = tt["status"]
    if tt.get("damaged"):
        lines = [
            f"Time table: DAMAGED ({tt['damaged']}): time sorts and time bounds may miss "
            "rows; `hermes-fts optimize-storage` refills it"
        ]
    elif status == "complete":
        lines = [
            f"Time table: complete, {tt['rows'] or 0:,} rows "
            "(time sorts on very common terms walk it)"
        ]
    elif status == "absent":
        lines = ["Time table: none (`hermes-fts optimize-storage` adds it for time sorts)"]
    elif status == "filling":
        done = tt["filled_messages"] or 0
        percent = min(100, int(100 * done / messages)) if messages else 100
        lines = [
            f"Time table: filling {percent}% {bar(percent / 100)} "
            f"({done:,}/{messages:,} messages); run `hermes-fts optimize-storage` to finish"
        ]
    else:
        lines = [f"Time table: NOT used ({status}); `hermes-fts optimize-storage` refills it"]
    if tt["old_index"]:
        lines.append(
            "Old time index on messages(timestamp): `hermes-fts optimize-storage` "
            "drops it (Hermes Agent's own search would walk it)"
        )
    return lines


def left_room_line(room: dict[str, Any]) -> str:
    """The room a run killed outright left (``status``' ``left_room``): it is taken
    from the disk Hermes saves messages to until a write open gives it back."""
    return (
        f"Disk room: {human_bytes(room['bytes'])} still held in {room['file']} by an "
        "optimize-storage or sync that was killed; `hermes-fts sync` gives it back"
    )
