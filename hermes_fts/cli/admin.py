"""``hermes-fts path|status|sync|optimize-storage``: looking after a store."""

from __future__ import annotations

import argparse
import sqlite3
from collections.abc import Callable
from typing import Any

from .. import loader
from .._env import cjk_extension_disabled, cjk_switch_value, hermes_home, ignored_settings
from .._sharing import RunBusy, run_lock, run_under_way
from .._store_problems import store_file_problem
from ..hermes import host as hermes_host
from ..index.slowed import (
    fix_command,
    optimize_why,
    search_slowed_by,
    slowed_why,
)
from ..store import (
    NoRoom,
    SessionStore,
    give_back_left_room,
    store_error,
)
from .output import bar, emit_json, human_bytes
from .progress import ProgressBar, say
from .registry import (
    CommandError,
    carry_everywhere,
    carry_store,
    command,
    command_pause,
    db_path,
    open_db,
    profile_option,
)
from .status_lines import backfill_line, left_room_line, time_table_lines
from .writing import confirm, refuse_profile, wait_note, writer_profile_option

# A store from which status shows its progress.
STATUS_PROGRESS_BYTES = 256 * 1024 * 1024


def _path_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--hermes",
        action="store_true",
        help="print a libfts5_cjk library for Hermes builds that read HERMES_FTS5_CJK_SO",
    )


@command("path", help="print the extension path for .load / load_extension", args=_path_args)
def cmd_path(args: argparse.Namespace) -> int:
    try:
        if args.hermes:
            path = str(hermes_host.hermes_drop_in_path())
        else:
            # A path to no library, or to one that does not load, would only fail
            # later, at .load; the cause is said here (the docs send users to path).
            loader.loadable_file()
            path = loader.extension_path()
    except (loader.ExtensionUnavailable, OSError) as exc:
        what = "the Hermes drop-in library" if args.hermes else "the library to load"
        raise CommandError(f"cannot provide {what}: {exc}") from exc
    if args.json:
        emit_json({"success": True, "path": path})
    else:
        print(path)
    return 0


_READ_ONLY_MOUNT = (
    "none here: the file system is mounted read-only, so the commands below that write "
    "(sync, optimize-storage) cannot run; remount it read-write, or copy the store to a "
    "disk that can be written"
)


@command(
    "status",
    help="show which indexes exist and are served, backlog and sizes",
    args=profile_option,
)
def cmd_status(args: argparse.Namespace) -> int:
    data = _status_data(args)
    # A disabled plugin has no `hermes fts` commands, so this is where users
    # see whether Hermes Agent itself uses hermes-fts.
    # Absolute, as the Store: line is: `--db state.db` named a bare "config.yaml".
    home = db_path(args).absolute().parent if args.db or args.profile else hermes_home()
    data["hermes_plugin"] = hermes_host.plugin_status(home)
    data["ignored_settings"] = ignored_settings()
    if args.json:
        # Every command it names runs on this store, as the text's lines do.
        emit_json(
            {"success": True, **carry_everywhere(args, data), **getattr(args, "status_extra", {})}
        )
        return 0

    def show(line: str) -> None:  # every `hermes-fts ...` it names: on this store
        print(carry_store(args, line))

    for line in _header_lines(data):
        show(line)
    # One scale for the text and every index, so the bars compare at a glance.
    text = data["text_bytes"] or 0
    scale = max([text] + [info["bytes"] or 0 for info in data["indexes"].values()]) or 1
    show(f"  {'text':22} {'':10} {human_bytes(text):28} {bar(text / scale)}")
    _print_indexes(data, scale, show)
    missing = sorted({table for tables in data["blocked_writes"].values() for table in tables})
    if missing:  # the one state of ours that breaks Hermes itself, not only our search
        are, them = ("is", "it") if len(missing) == 1 else ("are", "them")
        show(
            f"Writes FAIL: {', '.join(missing)} {are} missing but triggers of ours still "
            f"write {them}, so every message Hermes saves is refused; "
            "`hermes-fts optimize-storage` repairs it"
        )
    if data["fts_stale"]:
        show("FTS indexes are stale: search uses LIKE until `hermes-fts optimize-storage`.")
    pending = f"Pending CJK changes: {data['cjk_pending']:,}"
    if data["cjk_pending"]:
        # Written by a process without the extension (Hermes itself): every
        # query, Latin too without a word index, reads those rows by LIKE.
        pending += " (searches read them by a LIKE scan until `hermes-fts sync` applies them)"
    show(pending)
    show(backfill_line(data["backfill"], data["needs_optimize"]))
    if data["left_room"]:
        show(left_room_line(data["left_room"]))
    for line in time_table_lines(data["time_table"], data["messages"]):
        show(line)
    if "hermes_fts_rank_bounds" in data["damaged"]:
        show(
            f"Rank bounds: NOT used ({data['damaged']['hermes_fts_rank_bounds']}): common words "
            "are read whole; `hermes-fts optimize-storage` measures them again"
        )
    for line in _work_lines(data):
        show(line)
    return 0


def _header_lines(data: dict[str, Any]) -> list[str]:
    """``status``' lines before the indexes: the store, the settings and the extension."""
    wal = f" + {human_bytes(data['wal_bytes'])} WAL" if data["wal_bytes"] else ""
    lines = [
        f"Store:    {data['db']}  ({human_bytes(data['db_bytes'])}{wal}, "
        f"{data['messages']:,} messages, {human_bytes(data['text_bytes'])} of text)"
    ]
    if data["read_only_mount"]:
        lines.append(f"Writes:   {_READ_ONLY_MOUNT}")
    if data["run_under_way"]:
        lines.append(
            f"Running:  {data['run_under_way']} is at work; what it has left to do is below"
        )
    lines += [f"Ignored:  {problem}" for problem in data["ignored_settings"]]
    lines.append(f"SQLite:   {data['sqlite_version']}")
    lines.append(f"Hermes:   {hermes_host.format_plugin_status(data['hermes_plugin'])}")
    ext = data["extension"]
    if ext["disabled"]:
        how = "disabled by HERMES_CJK_FTS"
    else:
        how = ext["strategy"] if ext["loaded"] else f"not loaded: {ext.get('error') or '?'}"
    lines.append(f"Extension: cjk_unicode61 {'loaded' if ext['loaded'] else 'missing'} ({how})")
    return lines


def _status_data(args: argparse.Namespace) -> dict[str, Any]:
    # Read-only: status must never change the file it reports on.
    with open_db(args, readonly=True) as store:
        # Its scans of the text and indexes read the whole file: on a large
        # store, seconds when it is not in the page cache.
        big = store.path is not None and store.disk_bytes() >= STATUS_PROGRESS_BYTES
        progress = ProgressBar(json_lines=args.json) if big else None
        try:
            return store.status(progress)
        finally:
            if progress is not None:
                progress.close()


def _work_lines(data: dict[str, Any]) -> list[str]:
    """What slows searches, then everything optimize-storage has to do (the JSON's
    ``needs_optimize``, each in words), when there is any."""
    lines = [line] if (line := _slowed_line(data)) else []
    if data["needs_optimize"]:
        why = optimize_why(data["needs_optimize"])
        lines.append(f"Optimize: {why}; `hermes-fts optimize-storage` does it")
    return lines


def _slowed_line(data: dict[str, Any] | list[str]) -> str | None:
    """The line saying why searches take slower exact routes and what fixes it, the
    same codes and command the tool's and the plugin's notes use; None when none do.
    ``data``: status' document, or the codes (``SessionStore.slowed_by``)."""
    codes = data if isinstance(data, list) else search_slowed_by(data)
    if not codes:
        return None
    why = slowed_why(codes)
    return f"Searches: slower exact routes, since {why}; run `hermes-fts {fix_command(codes)}`"


def _print_indexes(data: dict[str, Any], scale: int, show: Callable[[str], None]) -> None:
    """One line per index of ``status`` (size against the text, served or why not)."""
    for name, info in data["indexes"].items():
        if not info["exists"]:
            show(f"  {name:22} absent   {info['reason']}")
            continue
        size = f"{human_bytes(info['bytes'] or 0)} = {info['x_text'] or 0:.2f}x text"
        served = "served" if info["served"] else "NOT served"
        chart = bar((info["bytes"] or 0) / scale)
        show(f"  {name:22} {served:10} {size:28} {chart} {info['reason']}")
        if name in data["not_kept"]:  # built by an older version, or opted out since
            show(
                f"  {'':22} not kept: {data['not_kept'][name]['why']}; "
                "`hermes-fts optimize-storage` drops it"
            )
        if info.get("variants") is not None:  # the CJK index: built with `variants 1`?
            folds = (
                "folded"
                if info["variants"]
                else "not folded: `hermes-fts optimize-storage` rebuilds the index"
            )
            show(f"  {'':22} Han variants {folds}")
        for option, missed in _OLDER_OPTIONS:  # the CJK index built before the option
            if info.get(option) is False:
                show(f"  {'':22} {missed}; `hermes-fts optimize-storage` rebuilds the index")


# What a CJK index built before each tokenizer option misses (``index_state``'s key).
_OLDER_OPTIONS = (
    ("kana", "kana not folded: searches with kana use a LIKE scan"),
    ("symbols", "newer emoji read as letters: a word glued to one (deploy🫠) is not found"),
    ("diacritics", "letters with two diacritics not folded: viet does not find Việt"),
    ("compose", "decomposed Hangul and kana not composed: 한국어 does not find it written as jamo"),
    ("letters", "Greek accents, ё and vowel points not folded: αλφα does not find άλφα"),
    ("selectors", "variation selectors split CJK words: 葛飾 does not find 葛󠄀飾"),
    ("glue", "no glue marks: word searches find Latin glued to CJK by a slower look"),
)


@command(
    "sync",
    help="apply CJK index changes written by processes without the extension",
    args=writer_profile_option,
)
def cmd_sync(args: argparse.Namespace) -> int:
    refuse_profile(args)
    wait_note(args)
    # A backlog of more than one batch shows its progress, at the open and in sync().
    progress = ProgressBar(json_lines=args.json)
    try:
        return _sync(args, progress)
    except KeyboardInterrupt:
        progress.close()
        # Each batch is its own transaction: those applied stay, the one cut short
        # is rolled back, and the rest waits for the next sync.
        with open_db(args, readonly=True) as store:
            left = store.index_state()["cjk_pending"]
        message = (
            f"interrupted; the changes applied so far are kept and {left:,} are left "
            "pending (searches find them by a LIKE scan); run `hermes-fts sync` again "
            "to apply them"
        )
        return _sync_stopped(args, "interrupted", left, message, 130)
    finally:
        progress.close()


def _sync_stopped(
    args: argparse.Namespace, reason: str, left: int, message: str, status: int
) -> int:
    """A sync that stopped with ``left`` changes pending: one JSON document, or the error."""
    if not args.json:
        raise CommandError(message, status)
    doc = {"success": False, "reason": reason, "pending": left}
    emit_json({**doc, "error": carry_store(args, message)})
    return status


def _sync(args: argparse.Namespace, progress: ProgressBar) -> int:
    with open_db(args, readonly=False, progress=progress) as store:
        try:
            try:
                applied = store.sync()  # with what the open applied
            finally:
                progress.close()  # before a line of stdout follows the bar's
        except NoRoom as exc:
            # The rest waits (a LIKE scan finds it) rather than take Hermes' last room.
            left = store.index_state()["cjk_pending"]
            message = (
                f"stopped to keep the disk's last room for Hermes ({exc}); {left:,} change(s) "
                "left pending, searches find them by a LIKE scan. Free some space and run "
                "`hermes-fts sync` again."
            )
            return _sync_stopped(args, "disk_full", left, message, 1)
        left = store.index_state()["cjk_pending"]
        stuck = _without_extension(store, left) if left else None
        if stuck:
            return _sync_stopped(args, "no_extension", left, carry_store(args, stuck), 1)
        # What sync cannot do (a CJK index it just created over existing messages
        # is a backfill): said as status says it, so "0 left" is not read as done.
        slowed = store.slowed_by()
    if args.json:
        # "success" as every other command's document has it, failed syncs' too
        doc = {"success": True, "applied": applied, "pending": left}
        emit_json({**doc, **({"slowed_by": slowed} if slowed else {})})
    else:
        print(f"Applied {applied:,} pending change(s); {left:,} left.")
        line = _slowed_line(slowed)
        if line:
            print(carry_store(args, line))
    return 0


def _optimize_args(p: argparse.ArgumentParser) -> None:
    writer_profile_option(p)
    p.add_argument(
        "--no-vacuum",
        action="store_true",
        # The merge goes too: deleted text's words stay in the CJK index until a full run.
        help="skip the final index merge and VACUUM (deleted messages' words may stay in "
        "the index, freed pages in the file, until a run without it)",
    )
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="say what a run would add, build, fill and drop, how long and the free space it "
        "needs; change nothing",
    )


@command(
    "optimize-storage",
    help="check/repair/build the search indexes and compact the file",
    args=_optimize_args,
)
def cmd_optimize_storage(args: argparse.Namespace) -> int:
    refuse_profile(args)
    # Every check (permissions, free space, consent) runs on a read-only open,
    # before the read-write open that may already write (pending rows, WAL mode).
    if args.dry_run:
        with open_db(args, readonly=True) as store:
            plan = store.optimize_estimate(not args.no_vacuum)
        # A run refuses a store this user cannot write: the plan says so up front.
        problem = store_file_problem(db_path(args), readonly=False, may_create=False, tables=False)
        running = run_under_way(db_path(args))  # and refuses a second run at once
        refused = problem.message if problem else running and f"{running} is at work on it"
        return _dry_run({**plan, "refused": refused or None}, args.json)
    try:
        # Held from the checks to the end, so a second run is refused before it asks.
        with run_lock(db_path(args)):
            return _checked_run(args)
    except RunBusy as exc:
        raise CommandError(str(exc), 2) from None


def _checked_run(args: argparse.Namespace) -> int:
    # Under the run lock a room file is a killed run's: free room for the check.
    give_back_left_room(db_path(args))
    with open_db(args, readonly=True, check_writable=True) as store:
        vacuum = _preflight(store, args)
    if vacuum is None:
        return 0
    wait_note(args)
    progress = ProgressBar(json_lines=args.json)
    try:
        # The pending backlog waits for the run, which applies it with its room for
        # Hermes held: applied at the open, a disk filled meanwhile left no room
        # to checkpoint it and the WAL kept its pages.
        with open_db(args, readonly=False, progress=progress, apply_pending=False) as store:
            return _optimize(store, args, vacuum, progress)
    except KeyboardInterrupt:  # in the run, its pending apply included
        progress.close()
        raise CommandError(
            "interrupted. No data was lost; run `hermes-fts optimize-storage` again to resume.",
            130,
        ) from None


def _dry_run(plan: dict[str, Any], as_json: bool) -> int:
    """Print what ``optimize-storage`` would do (``SessionStore.optimize_estimate``)."""
    if as_json:
        emit_json({"success": True, "dry_run": True, **plan})
        return 0
    added = plan["adds_bytes"]
    change = f"{'add' if added >= 0 else 'give back'} about {human_bytes(abs(added))}"
    print(f"Dry run: nothing was changed. optimize-storage would {change} to the file")
    builds, drops = (", ".join(plan[k]) or "nothing" for k in ("builds", "drops"))
    fills = ", ".join(f.replace("_", " ") for f in plan["fills"]) or "nothing"
    print(f"  build: {builds}; fill: {fills}; drop: {drops}")
    if plan["applies"]:
        print(f"  apply: the changes of {plan['applies']:,} messages other writers left")
    print(f"  take about {_duration(plan['seconds'])}")
    fits = "fits" if plan["fits"] else "does NOT fit"
    print(
        f"  need up to {human_bytes(plan['peak_free_bytes'])} free at its peak; "
        f"free disk: {human_bytes(plan['free_bytes'])} ({fits})"
    )
    said = ("vacuum_left", "not compacted"), ("temp_room", "the VACUUM does NOT fit")
    for key, what in (*said, ("refused", "a run would be refused")):
        if plan.get(key):
            print(f"  {what}: {plan[key]}")
    return 0


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{max(seconds, 1):.0f} s"
    minutes = seconds / 60
    return f"{minutes:.0f} min" if minutes < 90 else f"{minutes / 60:.1f} h"


def _preflight(store: SessionStore, args: argparse.Namespace) -> bool | None:
    """Whether to VACUUM, once every check has passed; None when there is nothing to do.

    Raises CommandError for a refusal.  ``store`` is open read-only.
    """
    vacuum = not args.no_vacuum
    if not vacuum and not store.optimize_has_work() and not store.damaged_indexes():
        if args.json:
            emit_json({"success": True, "ok": True, "nothing_to_do": True})
        else:
            print("Search indexes are complete — nothing to do.")
        return None
    if args.json and not args.yes:
        # A script cannot answer a prompt; it must say yes up front.
        raise CommandError("optimize-storage --json needs --yes (it cannot ask for confirmation)")
    main, wal = store.file_sizes()
    room = store.optimize_room(vacuum)
    wal_note = f" (+ {human_bytes(wal)} WAL)" if wal else ""
    say(
        f"Database: {human_bytes(main)}{wal_note}; needs up to {human_bytes(room['need'])} "
        f"free; free disk: {human_bytes(room['free'])}",
        args.json,
        **room,
    )
    if room["free"] < room["need"]:
        raise CommandError(_no_room_text(room, vacuum, store.optimize_room(False)), 1)
    # On another disk, VACUUM's copy failed after the whole build, said to be this disk's.
    short = store.vacuum_temp_shortfall(room["temp_need"])
    if short is not None:
        raise CommandError(
            f"not enough room for the VACUUM: {short}. Nothing was changed. "
            "`--no-vacuum` needs no temporary copy.",
            1,
        )
    if main > 500 * 1024 * 1024:
        say(
            "This may take a while. It runs in the foreground, is safe to interrupt "
            "with Ctrl-C and resumes where it stopped.",
            args.json,
        )
    answer = True if args.yes else confirm("Proceed? [y/N] ")
    if answer is None:  # a script or a pipe: say how it runs without the question
        raise CommandError(
            "cancelled; nothing was changed (no answer came: the input ended); pass --yes "
            "to run without asking",
            1,
        )
    if not answer:
        raise CommandError("cancelled; nothing was changed", 1)
    return vacuum


def _no_room_text(room: dict[str, int], vacuum: bool, without: dict[str, int]) -> str:
    """Why a run is refused for disk room, and what would fit."""
    parts = f"{human_bytes(room['build'])} for the indexes"
    if vacuum:
        parts += f", {human_bytes(room['vacuum'])} for the merge and VACUUM"
    text = (
        f"not enough free disk space: optimize-storage needs about {human_bytes(room['need'])} "
        f"at its peak ({parts}, {human_bytes(room['reserve'])} left for Hermes), "
        f"the disk has {human_bytes(room['free'])}. Nothing was changed."
    )
    if vacuum and without["free"] >= without["need"]:
        text += " `--no-vacuum` fits."
    return text


def _optimize(
    store: SessionStore, args: argparse.Namespace, vacuum: bool, progress: ProgressBar
) -> int:
    pause = command_pause(args, store.path or db_path(args))
    try:
        result = store.optimize_storage(progress=progress, vacuum=vacuum, sleep=pause)
    except sqlite3.Error as exc:
        progress.close()
        cause = store_error(store.path or db_path(args), exc)  # locked, disk full, ...
        raise CommandError(
            f"optimization failed: {cause}. No data was lost. Re-run to resume.", 1
        ) from exc
    progress.close()
    before, after = result.get("size_before", 0), result.get("size_after", 0)
    pending = store.index_state()["cjk_pending"]
    # Every other step ran; "optimized" would hide the index that did not.
    stuck = result.get("ok") and _without_extension(
        store, pending, f"{human_bytes(before)} → {human_bytes(after)}"
    )
    if args.json:
        stopped = {"reason": "no_extension", "error": stuck} if stuck else {}
        if not result.get("ok"):  # every failed document says why, as the text does
            stopped = {"error": carry_store(args, _failure_text(result))}
        emit_json({**result, "success": bool(result.get("ok")) and not stuck, **stopped})
        return 0 if result.get("ok") and not stuck else 1
    if not result.get("ok"):
        raise CommandError(_failure_text(result), 1)
    if stuck:
        raise CommandError(stuck, 1)
    delta = before - after
    change = f"reclaimed {human_bytes(delta)}" if delta >= 0 else f"grew by {human_bytes(-delta)}"
    print(f"✓ Search indexes optimized. {human_bytes(before)} → {human_bytes(after)} ({change}).")
    if result["wal_before"] or result["wal_after"]:
        print(
            f"  WAL file: {human_bytes(result['wal_before'])} → {human_bytes(result['wal_after'])}"
        )
    if result.get("vacuumed") and result["wal_after"] >= after // 2 > 0:
        # A reader's snapshot kept the checkpoint from copying VACUUM's copy back:
        # "reclaimed 0 B" beside a WAL the size of the store needs saying why.
        print(
            "  The compacted store is still in the WAL file: another process was reading "
            "the store, so it could not be copied back yet; it moves into the file at the "
            "next checkpoint after that read ends (SQLite makes one when the last "
            "connection closes)."
        )
    for index, why in result.get("repaired", {}).items():
        print(f"  Rebuilt {index}: it was damaged ({why}).")
    for index, words in result.get("rank_bounds_measured", {}).items():
        if words:  # USAGE promises the words measured; --json had them alone
            print(f"  Rank bounds: measured {words:,} frequent words of {index}.")
    if result.get("vacuum_left"):
        print(f"  Not compacted: {result['vacuum_left']}.")
    if result.get("check_left"):
        print(f"  Not fully checked: {result['check_left']}.")
    return 0


def _without_extension(store: SessionStore, pending: int, ran: str = "") -> str | None:
    """Why the CJK index, the one a search needs, is left unbuilt or behind: the
    extension is not in this process (None when it is).  ``ran``: what the
    command's other steps did."""
    if store.cjk_available:
        return None
    why = (
        f"switched off (HERMES_CJK_FTS={cjk_switch_value()})"
        if cjk_extension_disabled()
        else "not loaded in this process (`hermes-fts path` says why)"
    )
    return (
        f"the CJK index cannot be built or brought up to date: the cjk_unicode61 extension "
        f"is {why}"
        + (f"; {pending:,} change(s) wait for it" if pending else "")
        + ". While the index is not served, searches take the exact LIKE scan."
        + (f" The other steps ran ({ran})." if ran else "")
        + " Run this again where the extension loads."
    )


def _failure_text(result: dict[str, Any]) -> str:
    if result.get("reason") == "disk_full":
        # Said as measured after the clean-up: its checkpoint needs room the disk may lack.
        wal = result.get("wal_after") or 0
        truncated = (
            "and the WAL was truncated, so Hermes keeps writing"
            if not wal
            else f"but the WAL still holds {human_bytes(wal)} the clean-up could not move "
            "into the store (no room for it, or another process was reading); the next "
            "checkpoint with room moves it"
        )
        return (
            f"stopped to keep the disk's last room for Hermes: {result.get('detail')}. "
            "Nothing was lost: a rebuild's half-built copy was dropped, an index built in "
            f"place keeps what it holds and goes on from there next time, {truncated}. "
            "Free some space and run `hermes-fts optimize-storage` again."
        )
    return f"could not optimize: {result.get('reason')}"
