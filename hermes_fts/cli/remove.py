"""``hermes-fts remove``: taking hermes-fts out of a store before uninstalling it."""

from __future__ import annotations

import argparse
from typing import Any

from .._sharing import RunBusy, run_lock
from ..hermes import host as hermes_host
from .output import emit_json, human_bytes
from .progress import say
from .registry import CommandError, command, db_path, open_db
from .writing import confirm, refuse_profile, wait_note, writer_profile_option


def _remove_args(p: argparse.ArgumentParser) -> None:
    writer_profile_option(p)
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")


@command(
    "remove",
    help="remove what hermes-fts added to the store (before uninstalling)",
    args=_remove_args,
)
def cmd_remove(args: argparse.Namespace) -> int:
    refuse_profile(args)
    path = db_path(args)
    # The plugin would go on answering by slow scans, asking for what builds them again.
    plugin = hermes_host.plugin_status(path.parent)
    if plugin["enabled"] and not plugin["disabled"]:
        raise CommandError(
            f"the Hermes plugin is enabled in {plugin['config']}: it would go on answering "
            f"session_search by slow exact scans, each answer asking for `hermes fts "
            f"optimize-storage`, which builds hermes-fts' objects again; disable it first "
            f"(`hermes plugins disable {hermes_host.PLUGIN_NAME}`). Nothing was removed.",
            2,
        )
    if args.json and not args.yes:
        raise CommandError("remove --json needs --yes (it cannot ask for confirmation)")
    try:
        with run_lock(path):  # not while optimize-storage builds what this drops
            with open_db(args, readonly=True, check_writable=True) as store:
                found = store.search_objects()
            if not found["names"]:
                return _removed(args, {"removed": {}, "names": [], "freed_bytes": 0})
            _confirm_remove(args, found)
            wait_note(args)
            # The backlog is not applied: it would fill, for minutes, what this drops.
            with open_db(args, readonly=False, apply_pending=False) as store:
                return _removed(args, store.remove_search_objects())
    except RunBusy as exc:
        raise CommandError(str(exc), 2) from None


def _confirm_remove(args: argparse.Namespace, found: dict[str, Any]) -> None:
    """Say what goes and ask, unless ``--yes``; raises CommandError for a no."""
    size = found["freed_bytes"]
    say(
        f"This removes hermes-fts' {len(found['names'])} objects from {db_path(args)}"
        + (f" ({human_bytes(size)})" if size else "")
        + ": its search indexes, the tables its triggers write and the triggers. "
        "Hermes' own tables, indexes and messages stay.",
        args.json,
    )
    answer = True if args.yes else confirm("Remove them? [y/N] ")
    if not answer:
        why = " (no answer came: the input ended); pass --yes to run without asking"
        raise CommandError(f"cancelled; nothing was changed{why if answer is None else ''}", 1)


def _removed(args: argparse.Namespace, done: dict[str, Any]) -> int:
    """Print what ``remove`` dropped (``SessionStore.remove_search_objects``)."""
    if args.json:
        emit_json({"success": True, **done})
        return 0
    if not done["names"]:
        print("hermes-fts has nothing in this store; nothing was changed.")
        return 0
    plural = {"index": "indexes"}
    kinds = ", ".join(
        f"{n} {kind if n == 1 else plural.get(kind, kind + 's')}"
        for kind, n in done["removed"].items()
    )
    print(f"Removed {len(done['names'])} hermes-fts objects ({kinds}).")
    if done["freed_bytes"]:
        print(
            f"{human_bytes(done['freed_bytes'])} are free pages inside the file now; "
            "`VACUUM` with Hermes stopped gives them back to the disk."
        )
    return 0
