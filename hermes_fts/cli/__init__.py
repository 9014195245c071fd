"""``hermes-fts`` command line: a thin layer over the Python API.

One registry (``registry.SUBCOMMANDS``), one ``main``, and ``--db``/``--json``
defined once for every subcommand.  The subcommands live by topic:
``admin`` (path, status, sync, optimize-storage, bench), ``history`` (search,
read, scroll, browse: the ``session_search`` tool on a terminal) and ``demo``;
a command line imports only the module of the subcommand it runs.
"""

from __future__ import annotations

import errno
import os
import signal
import sys

# typing.TYPE_CHECKING without importing typing: a command line imports only
# what its subcommand needs, and ``--version`` nothing beyond this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, NoReturn

    from ..store import StoreError
    from .progress import ProgressBar
    from .registry import build_parser

__all__ = ["ProgressBar", "build_parser", "main", "run"]


def __getattr__(name: str) -> Any:
    """``ProgressBar`` and ``build_parser``, imported on first use."""
    if name == "ProgressBar":
        from .progress import ProgressBar

        return ProgressBar
    if name == "build_parser":
        from .registry import build_parser

        return build_parser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# errno of a write refused for room: a full disk, a quota, a file size limit.
_NO_ROOM = frozenset(
    code for code in (getattr(errno, n, None) for n in ("ENOSPC", "EDQUOT", "EFBIG")) if code
)
_OUTPUT_FAILED: list[OSError] = []  # the failure _output_failed reported


def store_error_text(exc: StoreError) -> str:
    """The error line for a store that cannot be opened; hints at --db only for a wrong path."""
    return f"{exc}; pass the Hermes state.db as --db PATH" if exc.wrong_path else str(exc)


def _wants_json(argv: list[str]) -> bool:
    """Whether ``--json`` was given, looked up before (or without) a successful parse;
    as argparse reads it, abbreviated too (``--js``: no other option starts ``--j``)."""
    words = argv[: argv.index("--")] if "--" in argv else argv
    return any(len(word) >= 3 and "--json".startswith(word) for word in words)


def _fail(message: str, status: int, as_json: bool) -> int:
    """Report an error: one JSON document on stdout with ``--json``, else a line on stderr."""
    if as_json:
        from .output import emit_json, end_open

        try:
            # A document written as it is read (`read --full`) ends with the error.
            if not end_open(message):
                emit_json({"success": False, "error": message})
        except OSError as exc:
            if exc.errno not in _NO_ROOM:
                raise
            # The error, where it can be read; the command's failure keeps its status.
            _OUTPUT_FAILED.append(exc)
            message += f" (the JSON document could not be written: {exc.strerror or exc})"
            _say_error(message)
    else:
        _say_error(message)
    return status


def _say_error(message: str) -> None:
    """The error line on stderr; one that cannot be written (its reader went away)
    leaves the exit status to say it."""
    try:
        print(f"Error: {message}", file=sys.stderr, flush=True)
    except OSError:
        pass


def main(
    argv: list[str] | None = None,
    *,
    home: Path | None = None,
    status_extra: dict[str, Any] | None = None,
    own_process: bool = False,
    prog: str = "hermes-fts",
) -> int:
    """Run ``hermes-fts`` with ``argv`` (default: the process arguments); the exit status.

    ``home``: the Hermes home whose state.db to work on instead of ``$HERMES_HOME``'s
    (``--db`` and ``--profile`` still win); ``status_extra``: keys laid over
    ``status --json``'s document.  The Hermes plugin passes both, so it never changes
    the process' environment or stdout.  ``own_process``: the process runs this
    command alone (the console script), so no other connection of it can be
    waiting for the store's write lock.  ``prog``: the command as its usage lines
    and errors name it (``hermes fts`` under Hermes).
    """
    words = _as_typed(list(sys.argv[1:] if argv is None else argv))
    if words == ["--version"]:
        _version()
    as_json = _wants_json(words)
    if own_process:  # a host process (Hermes) keeps its own logging
        from .progress import say_library_warnings

        say_library_warnings(as_json, lambda: bool(_CTRL_C))
    try:
        return _parse_and_run(words, as_json, home, status_extra, own_process, prog)
    except KeyboardInterrupt:
        # Ctrl-C before the subcommand ran: while its modules were still being
        # imported, which a slow or cold start makes long enough to hit.
        return _fail(_interrupted(), 130, as_json)


def _as_typed(words: list[str]) -> list[str]:
    """``words`` with text typed in UTF-8 read as UTF-8.  Under a locale Python reads
    as ASCII (``LC_ALL=C`` with ``PYTHONUTF8=0``) its bytes reach argv as surrogate
    escapes, which a query or session id refuses as no text.  ``--db``'s value stays
    as the OS decoded it: a path must encode back to the same file."""
    out: list[str] = []
    path_next = options = False
    for word in words:
        keep = path_next or (not options and word.startswith("--db="))
        path_next = not options and word == "--db"
        options = options or word == "--"
        if keep or not any("\udc80" <= ch <= "\udcff" for ch in word):
            out.append(word)
            continue
        try:
            out.append(os.fsencode(word).decode("utf-8"))
        except (UnicodeError, TypeError):
            out.append(word)  # bytes that are not UTF-8: refused as not text
    return out


def _parse_and_run(
    words: list[str],
    as_json: bool,
    home: Path | None,
    status_extra: dict[str, Any] | None,
    own_process: bool,
    prog: str,
) -> int:
    from .registry import CommandError, build_parser

    try:
        args = build_parser(as_json=as_json, prog=prog).parse_args(words)
    except CommandError as exc:
        return _fail(str(exc), exc.status, as_json)
    if home is not None and args.db is None and getattr(args, "profile", None) is None:
        from pathlib import Path

        args.db = Path(home) / "state.db"
    args.status_extra = status_extra or {}
    args.own_process = own_process
    return _run(args, as_json)


# Set once Ctrl-C came: a KeyboardInterrupt raised inside a SQL function of ours
# (the LIKE scan's tests are Python) reaches us as a statement that failed.
_CTRL_C: list[int] = []


def _remember_ctrl_c() -> None:
    """Ctrl-C raises KeyboardInterrupt as before, and is remembered (``_CTRL_C``);
    a first one while the ``--json`` document is written lets it end whole."""

    def ctrl_c(signum: int, _frame: object) -> None:
        _CTRL_C.append(signum)
        output = sys.modules.get(f"{__name__}.output")
        if len(_CTRL_C) == 1 and output is not None and output.WRITING_JSON:
            # What is being written goes out whole: a document the command had
            # done, then it exits; a piece of one written as it is read, then it stops.
            output.WAITED.append(signum)
            return
        raise KeyboardInterrupt

    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, ctrl_c)
    # SIGTERM (`timeout`, `kill`, a service stop) and SIGHUP (a closed terminal) killed
    # a run outright, leaving its room file and its resume message: they stop it as Ctrl-C.
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is signal.SIG_DFL:
            signal.signal(number, ctrl_c)


def _interrupted() -> str:
    """The error of an interrupted command, naming what stopped it (SIGTERM is no Ctrl-C).
    Every write is a transaction of its own, rolled back when cut short: the store is whole."""
    came = _CTRL_C[0] if _CTRL_C else signal.SIGINT
    named = "Ctrl-C" if came == signal.SIGINT else signal.Signals(came).name
    return f"interrupted ({named}); no change was left half done"


def _signal_status(status: int) -> int:
    """130, an interrupted command's status, as the shell's for the signal that came."""
    if status == 130 and _CTRL_C:
        return 128 + _CTRL_C[0]
    return status


def run() -> NoReturn:
    """The ``hermes-fts`` console script and ``python -m hermes_fts.cli``: ``main``,
    then the process ends without tearing the interpreter down.

    When ``main`` returns, every command has closed its store and written what
    it prints, so freeing each module and object one by one would change
    nothing anyone sees.  The standard streams are flushed first; an
    exception, or a stream that cannot be flushed, takes the usual exit,
    which reports it as always, except output refused for room (``> file``
    on a full disk), which is said once on stderr.
    """
    _streams_the_process_lacks()
    _text_the_terminal_can_show()
    _remember_ctrl_c()
    status = _signal_status(main(own_process=True))
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        sys.exit(status)
    except OSError as exc:  # what main printed last did not reach the file
        if exc.errno not in _NO_ROOM:
            sys.exit(status)
        if not _OUTPUT_FAILED:
            _output_failed(exc)
        os._exit(status or 1)  # a command's own failure keeps its status
    except BaseException:
        sys.exit(status)
    os._exit(status)


def _output_failed(exc: OSError) -> int:
    """Say on stderr, once and whatever ``--json``, that the output was not written; 1."""
    _OUTPUT_FAILED.append(exc)
    try:
        print(
            f"Error: the output could not be written ({exc.strerror or exc}); nothing "
            "else went wrong, so write it where there is room and run the command again",
            file=sys.stderr,
            flush=True,
        )
    except OSError:
        pass
    return 1


def _streams_the_process_lacks() -> None:
    """A standard stream the process was started without (``>&-``, ``2>&-``) is None,
    and print(file=None) writes to stdout: what it would carry goes to os.devnull
    instead, so no write fails and no stderr line lands in ``--json``'s document."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))


def _text_the_terminal_can_show() -> None:
    """On a terminal whose encoding is not UTF-8 (a Latin-1 or ASCII locale, a
    Windows code page), print what it cannot show as ``?`` rather than fail with
    UnicodeEncodeError; ``--json`` escapes it instead (``output.emit_json``)."""
    import codecs  # loaded with the interpreter's own streams

    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        try:
            utf8 = codecs.lookup(getattr(stream, "encoding", None) or "utf-8").name == "utf-8"
            if reconfigure is not None and not utf8:
                reconfigure(errors="replace")
        except (LookupError, TypeError, OSError, ValueError):
            pass


def _version() -> None:
    """``hermes-fts --version`` alone: argparse's answer and exit, without argparse
    (the same line, a failed write ignored as argparse ignores it)."""
    from .._version import __version__

    try:
        sys.stdout.write(f"hermes-fts {__version__}\n")
    except (AttributeError, OSError):
        pass
    sys.exit(0)


def _run(args: Any, as_json: bool) -> int:
    """Run the parsed subcommand; every error it raises printed in one place."""
    import sqlite3  # with the store stack: only once a subcommand runs

    from ..store import StoreError, failure_cause
    from .registry import CommandError, carry_store

    try:
        return int(args._handler(args))
    except CommandError as exc:
        message, status = str(exc), exc.status
        if _CTRL_C and status != 130:
            # Ctrl-C inside a SQL function of ours (the LIKE scan's tests) failed the
            # statement, which the search reported as its failure ("retry with ...").
            message, status = _interrupted(), 130
    except StoreError as exc:
        message, status = store_error_text(exc), 2
        if _CTRL_C:
            message, status = _interrupted(), 130
    except FileNotFoundError as exc:
        message, status = str(exc), 2
    except sqlite3.DatabaseError as exc:
        # A store opened through open_db reports its cause as a StoreError;
        # this is what is left (e.g. damage found while reading), with what to do.
        cause = failure_cause(exc)
        message = (
            f"cannot use the session store: {cause}"
            if cause
            else f"the session store cannot be used ({exc})"
        )
        status = 1
        if _CTRL_C:
            message, status = _interrupted(), 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        if exc.errno not in _NO_ROOM:
            raise
        # The store's own writes fail as sqlite3 errors: this is the output
        # (`> file` on a full disk or over quota), and stdout cannot say it.
        return _output_failed(exc)
    except KeyboardInterrupt:
        # Ctrl-C: every write is a transaction of its own, rolled back when cut
        # short, so the store is whole; a command that had more to say said it.
        message, status = _interrupted(), 130
    # A command an error names ("`hermes-fts read b1` shows its ids") reads this store.
    return _fail(carry_store(args, message), status, as_json)
