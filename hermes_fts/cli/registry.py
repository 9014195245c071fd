"""The one command registry of ``hermes-fts`` and the options every subcommand shares.

Adding a subcommand is a line in ``SUBCOMMANDS`` (its module and one-line
help) and one decorated function in that module::

    @command("name", args=lambda p: p.add_argument("--x"))
    def cmd_name(args: argparse.Namespace) -> int: ...

A module is imported only when one of its subcommands runs, so ``--help`` and
``--version`` start without the store stack.  Every subcommand gets ``--db
PATH`` and ``--json``, defined here once (they may also come before the
subcommand).  A handler that cannot go on raises ``CommandError``; ``main``
prints every error in one place.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Container
from contextlib import contextmanager

from .._version import __version__

# typing.TYPE_CHECKING without importing typing: ``--help`` and ``--version``
# import this module, and they need neither typing nor the store.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any

    from ..store import SessionStore

Handler = Callable[[argparse.Namespace], int]
Configure = Callable[[argparse.ArgumentParser], "Any"]


class Command:
    """One registered subcommand: its name, help line, handler and own options."""

    __slots__ = ("configure", "handler", "help", "name")

    def __init__(self, name: str, help: str, handler: Handler, configure: Configure | None) -> None:
        self.name, self.help, self.handler, self.configure = name, help, handler, configure


# Every subcommand, in the order ``--help`` lists them: the module that defines it
# (imported when the subcommand runs) and its one-line help.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "path": ("admin", "print the extension path for .load / load_extension"),
    "status": ("admin", "show which indexes exist and are served, backlog and sizes"),
    "sync": ("admin", "apply CJK index changes written by processes without the extension"),
    "optimize-storage": ("admin", "check/repair/build the search indexes and compact the file"),
    "remove": ("remove", "remove what hermes-fts added to the store (before uninstalling)"),
    "bench": ("timing", "time the indexes against a LIKE scan on this store (read-only)"),
    "search": ("history", "full-text search over past conversations"),
    "read": ("history", "show one session (first 20 + last 10 messages when long)"),
    "scroll": ("history", "show the messages around one message of a session"),
    "browse": ("history", "list the most recently active sessions, page by page"),
    "demo": ("demo", "build a small multilingual demo store and search it"),
}
COMMANDS: dict[str, Command] = {}


class CommandError(Exception):
    """A subcommand cannot go on: the message says what to pass instead; ``status`` exits."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def command(
    name: str, help: str | None = None, args: Configure | None = None
) -> Callable[[Handler], Handler]:
    """Register the decorated function as subcommand ``name`` of ``SUBCOMMANDS``;
    ``help``, when given, must be the line ``SUBCOMMANDS`` lists."""

    def register(fn: Handler) -> Handler:
        if name in COMMANDS:
            raise ValueError(f"subcommand {name!r} is registered twice")
        listed = SUBCOMMANDS.get(name)
        if listed is None or help not in (None, listed[1]):
            raise ValueError(f"subcommand {name!r} differs from its SUBCOMMANDS line")
        COMMANDS[name] = Command(name, listed[1], fn, args)
        return fn

    return register


def load_command(name: str) -> Command:
    """Subcommand ``name``, its module imported on first use."""
    if name not in COMMANDS:
        import gc
        from importlib import import_module

        # Importing the store stack makes objects that live as long as the
        # process (modules, classes, functions, compiled patterns): the cycle
        # collector, run again and again meanwhile, would find next to nothing.
        enabled = gc.isenabled()
        gc.disable()
        try:
            import_module(f".{SUBCOMMANDS[name][0]}", __package__)
        finally:
            if enabled:
                gc.enable()
    return COMMANDS[name]


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer in ``[low, high]``, else a usage error saying so.

    The command line refuses what the model-facing tool would clamp: a person
    who typed ``--limit abc`` wants to hear about it.
    """

    def parse(text: str) -> int:
        from .._params import as_int, digits_hint

        try:
            number = as_int(text.strip(), "value")
        except (TypeError, ValueError):
            number = None
        if number is None or not low <= number <= high:
            raise argparse.ArgumentTypeError(
                f"must be an integer from {low} to {high}{digits_hint(text)} (got {text!r})"
            )
        return number

    return parse


class UsageError(CommandError):
    """A command line argparse refuses (unknown option, bad value): ``main`` prints it."""


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are raised, so ``--json`` can report them."""

    chosen: str | None = None  # the subcommand the command line chose (top-level parser)
    words: list[str] = []  # the words this parser reads, for the value a usage error names
    before: list[str] = []  # the words before the chosen subcommand's name
    as_json = False  # the command line has --json: --help prints its one JSON document
    command = "hermes-fts"  # how hints name the command (`hermes fts` under Hermes)

    def print_help(self, file: Any = None) -> None:
        if self.as_json and file is None:
            from .output import emit_json

            emit_json({"help": self.format_help()})
            return
        super().print_help(file)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.words = [str(word) for word in args] if args is not None else []
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> Any:  # argparse's hook; never returns
        name = self.chosen or self.prog.rsplit(" ", 1)[-1]
        if name in _POSITIONAL_TEXT and (
            message.startswith(("unrecognized arguments: -", _HELP_GLUED))
            or "the following arguments are required: " in message
        ):
            message += self._dash_hint(name)
        elif message.endswith("required: COMMAND"):
            # argparse names the missing command first: an unknown option is the mistake.
            unknown = [w for w in self.words if w.startswith("-") and w != "--"]
            unknown = [w for w in unknown if w.split("=")[0] not in self._option_string_actions]
            if unknown:
                message = f"unrecognized arguments: {' '.join(unknown)}; a command comes first"
            message += f"; `{self.command} --help` lists them"
        elif message.startswith("argument --") and message.endswith("expected one argument"):
            option = message.split()[1].rstrip(":")
            message += _missing_value_hint(option, self.words, self._option_string_actions)
        raise UsageError(f"{self.prog}: {message}")

    def _dash_hint(self, name: str) -> str:
        """The user's own command (``name``: search, read, scroll) with its words after
        ``--``, when one of them starts with '-': a query word, or a session id
        (``-deploy`` alone, once shown, is a query that is refused)."""
        import shlex

        sub = self if self.chosen is None else _sub_parser(self, name)
        rest = self.words if self.chosen is None else self.words[len(self.before) + 1 :]
        options: list[str] = []
        query: list[str] = []
        words = iter(rest)
        for word in words:
            if word == "--":
                query += words
                break
            action = sub._option_string_actions.get(word.split("=")[0])
            if not word.startswith("-") or action is None:
                query.append(word)
                continue
            options.append(word)
            if action.nargs != 0 and "=" not in word:
                options += [next(words, "")]
        if not any(word.startswith("-") for word in query):
            return ""
        slots = [a.nargs for a in sub._actions if not a.option_strings]
        if "+" not in slots and len(query) > len(slots):
            return ""  # more words than the command takes: a mistyped option, no session id
        line = shlex.join([*self.command.split(), *sub.before, name, *options, "--", *query])
        return f"; {_POSITIONAL_TEXT[name]} that starts with '-' goes after `--` ({line})"


# The subcommands whose words (a query, a session id) may start with '-', as argparse
# reads an option: what such a word is, for the hint that puts it after `--`.
_POSITIONAL_TEXT = {"search": "a query", "read": "a session id", "scroll": "a session id"}
# argparse's error for a word that starts with -h (`-hello`): -h given a value.
_HELP_GLUED = "argument -h/--help: ignored explicit argument"


def _sub_parser(parser: argparse.ArgumentParser, name: str) -> Parser:
    """The subparser of subcommand ``name`` of the top-level ``parser``."""
    action = next(a for a in parser._actions if isinstance(a, _Subcommands))
    return action.choices[name]


def _missing_value_hint(option: str, words: list[str], options: Container[str]) -> str:
    """What to write when ``option`` got no value: none was given (the next word is
    another of the ``options``), or argparse read the value, which starts with '-',
    as an option."""
    flags = option.split("/")
    value = next((words[i + 1] for i, word in enumerate(words[:-1]) if word in flags), None)
    if value in (None, "--") or not value.startswith("-") or value.split("=")[0] in options:
        return f"; give it a value ({flags[0]} VALUE)"
    if flags[0] in ("--after", "--before"):  # a time back from now is written 7d, not -7d
        back = value.lstrip("-") or "7d"
        return f"; a time back from now is written without '-' ({flags[0]} {back})"
    return f"; a value that starts with '-' is written with '=' ({flags[0]}={value})"


class _Subcommands(argparse._SubParsersAction):
    """Subparsers whose options are added when their subcommand is chosen, so a
    command line imports only the module of the subcommand it runs."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        name = values[0] if values else None
        if name in self.choices:
            _configure(name, self.choices[name])
            if isinstance(parser, Parser):
                parser.chosen = name
                parser.before = parser.words[: len(parser.words) - len(values)]
                self.choices[name].before = parser.before
        super().__call__(parser, namespace, values, option_string)


def _configure(name: str, parser: argparse.ArgumentParser) -> None:
    """Add subcommand ``name``'s own options and handler to its ``parser`` (once)."""
    if parser.get_default("_handler") is not None:
        return
    cmd = load_command(name)
    if cmd.configure is not None:
        cmd.configure(parser)
    parser.set_defaults(_handler=cmd.handler)


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


def _path(text: str) -> Path:
    """An argparse ``type``: ``--db``'s path (pathlib imported when one is given)."""
    if not text:  # `--db "$DB"` with DB unset: Path("") is the current folder
        raise argparse.ArgumentTypeError("the path is empty; name a file, or leave --db out")
    from pathlib import Path

    return Path(text)


# What --db means where it is not the store to read (the default everywhere else).
_DB_HELP = {
    "demo": "a new file to keep the demo store in (default: a temporary folder)",
    "path": "not used: path reads no store",
}


def common_options(parser: argparse.ArgumentParser, top: bool, name: str = "") -> None:
    """``--db`` and ``--json``, for ``parser`` (subcommand ``name``): the top level holds
    their defaults, and a subcommand sets them only when given (``SUPPRESS``), so
    either place works."""
    parser.add_argument(
        "--db",
        type=_path,
        metavar="PATH",
        default=None if top else argparse.SUPPRESS,
        help=_DB_HELP.get(name, "session store (default: $HERMES_HOME/state.db)"),
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="machine-readable output",
    )


class _Version(argparse.Action):
    """``--version``: argparse's line, or with ``--json`` (anywhere on the command
    line, so the caller says) the one JSON document every ``--json`` prints."""

    def __init__(self, option_strings: list[str], dest: str, as_json: bool = False) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS)
        self.help = "show the version and exit"
        self.as_json = as_json

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        if self.as_json:
            from .output import emit_json, version_document

            emit_json(version_document())
        else:
            print(f"hermes-fts {__version__}")
        parser.exit()


def build_parser(
    configure_all: bool = False, as_json: bool = False, prog: str = "hermes-fts"
) -> argparse.ArgumentParser:
    """The ``hermes-fts`` parser over every subcommand, in ``SUBCOMMANDS`` order.

    A subcommand's own options are added when the command line chooses it;
    ``configure_all`` adds them all now (importing every command module).
    ``as_json``: the command line has ``--json``, for what ``--version`` prints;
    ``prog``: the command's name in usage lines and errors.
    """
    parser = Parser(prog=prog, description="Full-text search for Hermes-style session stores.")
    parser.as_json = as_json
    parser.command = prog
    parser.register("action", "parsers", _Subcommands)
    parser.add_argument("--version", action=_Version, as_json=as_json)
    common_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (_module, line) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=line, description=line)
        p.as_json = as_json
        p.command = prog
        common_options(p, top=False, name=name)
        if configure_all:
            _configure(name, p)
    return parser


def _profile_name(text: str) -> str:
    from ..tool.errors import ToolError
    from ..tool.profiles import validate_profile

    try:
        return validate_profile(text)
    except ToolError:
        raise argparse.ArgumentTypeError(
            f"invalid profile name {text!r}: use 1-64 letters, digits, '_' or '-'"
        ) from None


def profile_option(parser: argparse.ArgumentParser) -> None:
    """``--profile NAME``: another profile's store, read-only (the subcommands that
    only read: history's, status and bench)."""
    parser.add_argument(
        "--profile",
        type=_profile_name,
        metavar="NAME",
        default=None,
        help="read another profile's store ($HERMES_HOME/profiles/NAME), read-only",
    )


def profile_store(profile: str) -> str:
    """The store of ``profile`` as errors name it: the default profile's is the root's."""
    from ..tool.profiles import DEFAULT_PROFILE

    if profile == DEFAULT_PROFILE:
        return "$HERMES_HOME/state.db"
    return f"$HERMES_HOME/profiles/{profile}/state.db"


def db_path(args: argparse.Namespace) -> Path:
    """The store ``--db`` names, else ``--profile``'s, else the default
    ``$HERMES_HOME/state.db``; raises ``CommandError`` for both, or a profile
    without a store."""
    from pathlib import Path

    from .._env import default_db_path

    profile = getattr(args, "profile", None)
    if profile is None:
        return Path(args.db).expanduser() if args.db else default_db_path()
    if args.db:
        raise CommandError(
            f"--profile {profile} reads {profile_store(profile)} "
            f"and --db names another store ({args.db}): pass one of them"
        )
    from ..tool.errors import ToolError
    from ..tool.profiles import profile_db_path

    try:
        return profile_db_path(profile)
    except ToolError as exc:
        raise CommandError(exc.person) from exc


@contextmanager
def open_db(
    args: argparse.Namespace,
    *,
    readonly: bool,
    check_writable: bool = False,
    progress: Callable[[dict[str, Any]], None] | None = None,
    apply_pending: bool = True,
) -> Iterator[SessionStore]:
    """The existing session store ``--db`` names, closed after the block.

    Raises ``StoreError`` saying what is wrong, also for a failure inside the
    block that the circumstances caused (locked, read-only, disk full).
    ``check_writable`` refuses, before a read-only open, a store this user
    could not write.  ``progress``: the events of applying a pending backlog, which
    a write open applies unless ``apply_pending`` is False.
    """
    import sqlite3

    from ..store import open_store, store_error

    path = db_path(args)
    with open_store(
        path,
        readonly=readonly,
        check_writable=check_writable,
        progress=progress,
        pause=command_pause(args, path),
        apply_pending=apply_pending,
    ) as store:
        try:
            yield store
        except sqlite3.DatabaseError as exc:
            # Locked, read-only or full; or pages of the file damaged under the rows
            # read, said as an open that met them says it (restore or .recover).
            if isinstance(exc, sqlite3.OperationalError) or store.file_damaged(exc):
                # A reader's "disk is full" is SQLite's temporary folder, not the store's.
                raise store_error(path, exc, readonly=store.readonly or None) from exc
            raise


def command_pause(
    args: argparse.Namespace, path: str | os.PathLike[str]
) -> Callable[[float], None]:
    """The pause between a write's batches or chunks: alone in its process, the
    command pauses for other writers only while another process has the store open."""
    import time

    from .._sharing import pause_when_shared

    return pause_when_shared(path) if getattr(args, "own_process", False) else time.sleep


# The subcommands that read no store; of the others, those of cli/history.py
# and these take --profile as well as --db (a hint names them with the same store).
_NO_STORE = ("path", "demo")
_PROFILE_TOO = ("status", "bench")


def follow_up(args: Any, words: str) -> str:
    """``hermes-fts WORDS`` on the store this command line chose: with its ``--db``
    or ``--profile`` (a profile's file as ``--db`` for a subcommand without
    ``--profile``), so that a hint never sends the user to the default store."""
    flags = _store_flags(args, words.split(" ", 1)[0])
    if not flags or {"--db", "--profile"} & set(words.split()):
        return f"hermes-fts {words}"
    head, dashes, tail = words.partition(" -- ")  # flags after `--` would be query text
    return f"hermes-fts {head} {flags}{dashes}{tail}"


def carry_store(args: Any, text: str) -> str:
    """``text`` (an error, a note or a status line from any layer) with every
    `` `hermes-fts ...` `` command in it given the store selection (``follow_up``)."""
    if "`hermes-fts " not in text:
        return text
    import re  # only once a hint is written: --help and --version do without it

    return re.sub(r"`hermes-fts ([^`]*)`", lambda m: f"`{follow_up(args, m.group(1))}`", text)


def carry_notes(args: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """A ``--json`` payload of the tool with its notes carried (``carry_store``), as the
    text output prints them; the stored text it holds stays as stored."""
    out = dict(payload)
    if out.get("query_notes"):
        out["query_notes"] = [carry_store(args, note) for note in out["query_notes"]]
    if isinstance(out.get("index_rebuild"), dict) and out["index_rebuild"].get("note"):
        out["index_rebuild"] = {
            **out["index_rebuild"],
            "note": carry_store(args, out["index_rebuild"]["note"]),
        }
    return out


def carry_everywhere(args: Any, value: Any) -> Any:
    """``value``, a document of ours that holds no stored text (``status``), with every
    string in it carried (``carry_store``)."""
    if isinstance(value, str):
        return carry_store(args, value)
    if isinstance(value, dict):
        return {key: carry_everywhere(args, item) for key, item in value.items()}
    if isinstance(value, list):
        return [carry_everywhere(args, item) for item in value]
    return value


def _store_flags(args: Any, subcommand: str) -> str:
    if subcommand not in SUBCOMMANDS or subcommand in _NO_STORE:
        return ""
    profile = getattr(args, "profile", None)
    path = getattr(args, "db", None)
    if profile is not None:
        if SUBCOMMANDS[subcommand][0] == "history" or subcommand in _PROFILE_TOO:
            return f"--profile {profile}"
        from ..tool.errors import ToolError
        from ..tool.profiles import profile_db_path

        try:
            path = profile_db_path(profile)
        except ToolError:  # no such profile: the error said so, no command can fix it
            return ""
    if not path:
        return ""
    import shlex
    from pathlib import Path

    return f"--db {shlex.quote(str(Path(path).expanduser()))}"
