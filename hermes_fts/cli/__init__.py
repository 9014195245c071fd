"""``hermes-fts`` command line: a thin layer over the Python API.

One registry (``registry.command``), one ``main``, and ``--db``/``--json``
defined once for every subcommand.  The subcommands live by topic:
``admin`` (path, status, sync, optimize-storage, bench), ``history`` (search,
read, scroll, browse: the ``session_search`` tool on a terminal) and ``demo``.
"""

from __future__ import annotations

import sqlite3
import sys

from ..store import StoreError

# Importing the command modules registers their subcommands, in this order.
from . import admin, demo, history  # noqa: F401
from .progress import ProgressBar
from .registry import CommandError, build_parser

__all__ = ["ProgressBar", "build_parser", "main"]


def store_error_text(exc: StoreError) -> str:
    """The error line for a store that cannot be opened; hints at --db only for a wrong path."""
    return f"{exc}; pass the Hermes state.db as --db PATH" if exc.wrong_path else str(exc)


def main(argv: list[str] | None = None) -> int:
    """Run ``hermes-fts`` with ``argv`` (default: the process arguments); the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args._handler(args))
    except CommandError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return exc.status
    except StoreError as exc:
        print(f"Error: {store_error_text(exc)}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    except sqlite3.DatabaseError as exc:
        print(
            f"Error: the store cannot be used ({exc}); check that --db names an intact "
            "Hermes state.db (`hermes-fts status --db PATH`)",
            file=sys.stderr,
        )
        return 1
    except BrokenPipeError:
        return 0
