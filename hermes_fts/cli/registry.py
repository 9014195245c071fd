"""The one command registry of ``hermes-fts`` and the options every subcommand shares.

Adding a subcommand is one decorated function in ``admin``, ``history`` or
``demo``::

    @command("name", help="one line", args=lambda p: p.add_argument("--x"))
    def cmd_name(args: argparse.Namespace) -> int: ...

Every subcommand gets ``--db PATH`` and ``--json``, defined here once.  A
handler that cannot go on raises ``CommandError``; ``main`` prints every error
in one place.
"""

from __future__ import annotations

import argparse
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .._params import as_int
from ..store import SessionStore, default_db_path, open_store, store_error

Handler = Callable[[argparse.Namespace], int]
Configure = Callable[[argparse.ArgumentParser], Any]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    handler: Handler
    configure: Configure | None


COMMANDS: dict[str, Command] = {}


class CommandError(Exception):
    """A subcommand cannot go on: the message says what to pass instead; ``status`` exits."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def command(name: str, help: str, args: Configure | None = None) -> Callable[[Handler], Handler]:
    """Register the decorated function as subcommand ``name``."""

    def register(fn: Handler) -> Handler:
        if name in COMMANDS:
            raise ValueError(f"subcommand {name!r} is registered twice")
        COMMANDS[name] = Command(name, help, fn, args)
        return fn

    return register


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer in ``[low, high]``, else a usage error saying so.

    The command line refuses what the model-facing tool would clamp: a person
    who typed ``--limit abc`` wants to hear about it.
    """

    def parse(text: str) -> int:
        try:
            number = as_int(text.strip(), "value")
        except (TypeError, ValueError):
            number = None
        if number is None or not low <= number <= high:
            raise argparse.ArgumentTypeError(
                f"must be an integer from {low} to {high} (got {text!r})"
            )
        return number

    return parse


class UsageError(CommandError):
    """A command line argparse refuses (unknown option, bad value): ``main`` prints it."""


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are raised, so ``--json`` can report them."""

    def error(self, message: str) -> Any:  # argparse's hook; never returns
        if message.startswith("unrecognized arguments: -") or message.endswith("required: query"):
            message += "; a query that starts with '-' goes after `--` (hermes-fts search -- -word)"
        raise UsageError(f"{self.prog}: {message}")


def role_list(choices: tuple[str, ...]) -> Callable[[str], str]:
    """An argparse ``type``: comma-separated roles, each one of ``choices``."""

    def parse(text: str) -> str:
        roles = [part.strip().lower() for part in text.split(",") if part.strip()]
        for role in roles or [text]:
            if role not in choices:
                raise argparse.ArgumentTypeError(
                    f"invalid role {role!r}; choose from {', '.join(choices)} (comma-separated)"
                )
        return ",".join(roles)

    return parse


def common_options() -> Parser:
    """The parent parser holding ``--db`` and ``--json``."""
    common = Parser(add_help=False)
    common.add_argument(
        "--db", type=Path, default=None, help="session store (default: $HERMES_HOME/state.db)"
    )
    common.add_argument("--json", action="store_true", help="machine-readable output")
    return common


def build_parser() -> argparse.ArgumentParser:
    """The ``hermes-fts`` parser over every registered subcommand, in registration order."""
    common = common_options()
    parser = Parser(
        prog="hermes-fts", description="Full-text search for Hermes-style session stores."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for cmd in COMMANDS.values():
        p = sub.add_parser(cmd.name, help=cmd.help, parents=[common], description=cmd.help)
        if cmd.configure is not None:
            cmd.configure(p)
        p.set_defaults(_handler=cmd.handler)
    return parser


def db_path(args: argparse.Namespace) -> Path:
    """The store ``--db`` names, else the default ``$HERMES_HOME/state.db``."""
    return Path(args.db).expanduser() if args.db else default_db_path()


@contextmanager
def open_db(
    args: argparse.Namespace, *, readonly: bool, check_writable: bool = False
) -> Iterator[SessionStore]:
    """The existing session store ``--db`` names, closed after the block.

    Raises ``StoreError`` saying what is wrong, also for a failure inside the
    block that the circumstances caused (locked, read-only, disk full).
    ``check_writable`` refuses, before a read-only open, a store this user
    could not write.
    """
    path = db_path(args)
    with open_store(path, readonly=readonly, check_writable=check_writable) as store:
        try:
            yield store
        except sqlite3.OperationalError as exc:
            raise store_error(path, exc) from exc
