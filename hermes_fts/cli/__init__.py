"""``hermes-fts`` command line: a thin layer over the Python API.

One registry (``registry.command``), one ``main``, and ``--db``/``--json``
defined once for every subcommand.  The subcommands live by topic:
``admin`` (path, status, sync, optimize-storage, bench), ``history`` (search,
read, scroll, browse: the ``session_search`` tool on a terminal) and ``demo``.
"""

from __future__ import annotations

import sqlite3
import sys

# Importing the command modules registers their subcommands, in this order.
from . import admin, demo, history  # noqa: F401
from .progress import ProgressBar
from .registry import build_parser
from .stores import StoreError

__all__ = ["ProgressBar", "build_parser", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run ``hermes-fts`` with ``argv`` (default: the process arguments); the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args._handler(args))
    except (FileNotFoundError, StoreError) as exc:
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
