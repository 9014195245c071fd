"""What the commands that write a store share: the question before a change, the
refusal of ``--profile`` (profiles are only read), and the note that another
process holds the write lock the open will wait for."""

from __future__ import annotations

import argparse
import sys

from ..store import BUSY_TIMEOUT_S, write_lock_held
from .progress import say, try_write
from .registry import CommandError, db_path


def confirm(prompt: str) -> bool | None:
    """Ask on stderr (stdout stays the command's output): the answer, or None when
    none came (the input ended, or no one can read the question), which is a no."""
    try:
        if not try_write(sys.stderr, prompt):
            return None  # a question no one can read has no answer
        answer = sys.stdin.readline() if sys.stdin else ""  # None: no stdin at all (<&-)
    except KeyboardInterrupt:  # the question was (being) written: end its line
        try_write(sys.stderr, "\n")  # the error line starts a line, not after the prompt
        raise
    if not answer:
        try_write(sys.stderr, "\n")
        return None  # no terminal, no consent
    return answer.strip().lower() in ("y", "yes")


def wait_note(args: argparse.Namespace) -> None:
    """Before a write open: say so when another process holds the write lock, which
    the open then waits for (up to BUSY_TIMEOUT_S) before it gives up."""
    path = db_path(args)
    if write_lock_held(path):
        say(
            f"Another process is writing {path}; waiting up to {BUSY_TIMEOUT_S:.0f} s "
            "for its write lock…",
            args.json,
            waiting="write_lock",
            timeout_s=BUSY_TIMEOUT_S,
        )


def writer_profile_option(p: argparse.ArgumentParser) -> None:
    """``--profile`` on a subcommand that writes: refused by ``refuse_profile``
    with the ``--db`` to pass, where argparse would only say it is unknown."""
    p.add_argument(
        "--profile",
        metavar="NAME",
        default=None,
        help="not taken (--profile only reads); pass the profile's state.db as --db",
    )


def refuse_profile(args: argparse.Namespace) -> None:
    if args.profile is None:
        return
    import shlex

    path = shlex.quote(str(db_path(args)))  # a profile without a store is refused here
    raise CommandError(
        f"{args.command} writes the store, and --profile only reads one; pass the "
        f"profile's store as --db: `hermes-fts {args.command} --db {path}`"
    )
