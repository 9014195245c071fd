"""The plugin's commands: ``hermes fts status|optimize-storage|search|sync`` (our
command line on Hermes' active profile, ``status`` with what the plugin serves)
and the ``/fts`` slash command."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._env import ignored_settings
from ..index.slowed import search_slowed_by, slowed_why
from . import host as hermes_host
from . import serving

__all__ = [
    "CLI_COMMANDS",
    "OPTIMIZE_HINT",
    "format_status",
    "handle_cli",
    "run_cli",
    "serving_status",
    "setup_cli",
    "slash_command",
]

CLI_COMMANDS = ("status", "optimize-storage", "search", "sync")
OPTIMIZE_HINT = "hermes fts optimize-storage"


def serving_status() -> dict[str, Any]:
    """Everything ``hermes fts status`` and ``/fts`` report about the plugin."""
    home = serving.hermes_home()
    out: dict[str, Any] = {
        "engine": serving.ENGINE,
        "serves_session_search": serving.REGISTRATION.middleware,
        "grant": serving.REGISTRATION.grant,
        "override_refused": serving.REGISTRATION.override_refused,
        "hermes_home": str(home),
        "store": str(home / "state.db"),
        "config": hermes_host.plugin_status(home),
    }
    with serving.STORES.lock:
        try:
            state = serving.STORES.get(home / "state.db").index_state()
            out["cjk_available"] = bool(state.get("cjk_available"))
            slowed = search_slowed_by(state)
            out["indexes_ready"] = not slowed
            if slowed:
                out["indexes_slowed"] = slowed_why(slowed)
            out["answers"] = "hermes-fts" if out["cjk_available"] else "Hermes' built-in"
        except serving.Decline as exc:
            out["answers"] = "Hermes' built-in"
            out["why_builtin"] = str(exc)
        except Exception as exc:  # noqa: BLE001 - status must always print
            out["answers"] = "Hermes' built-in"
            out["why_builtin"] = f"unexpected failure: {exc}"
    if out.get("cjk_available") is False:
        out["why_builtin"] = "the cjk_unicode61 extension is not available in this process"
    if serving.REGISTRATION.host_only:
        out["answers"] = "Hermes' built-in"
        out["why_builtin"] = serving.host_only_reason(serving.REGISTRATION.host_only)
    return out


def format_status(status: dict[str, Any]) -> str:
    lines = [f"Hermes plugin ({status['engine']}):"]
    if status["serves_session_search"]:
        lines.append(f"  session_search: served by hermes-fts ({status['grant']})")
    else:
        lines.append("  session_search: not served (the plugin registered no middleware)")
    if status.get("override_refused"):
        lines.append(
            f"  schema override: not granted; run `hermes plugins enable "
            f"{hermes_host.PLUGIN_NAME} {hermes_host.GRANT_FLAG}`"
        )
    lines.append(f"  store: {status['store']}")
    lines.append(
        f"  answers now: {status['answers']}"
        + (f" ({status['why_builtin']})" if status.get("why_builtin") else "")
    )
    if status.get("indexes_ready") is False:
        # What the codes mean (a damaged or broken index is neither unbuilt nor incomplete).
        why = status.get("indexes_slowed") or "not built or incomplete"
        lines.append(f"  indexes: {why}; run `{OPTIMIZE_HINT}`")
    return "\n".join(lines)


_SLASH_USAGE = (
    "/fts shows hermes-fts' status in this session and takes no arguments "
    "(`/fts status` is the same); in a shell, `hermes fts " + "|".join(CLI_COMMANDS) + "` "
    "runs those commands on this profile's store."
)


def slash_command(raw_args: str = "") -> str:
    """``/fts``: the plugin's status inside a session.  Any other argument than
    ``status`` is answered with the usage: the status alone read as if it were done."""
    words = str(raw_args or "").split()
    if words in (["help"], ["-h"], ["--help"]):
        return _SLASH_USAGE
    if words not in ([], ["status"]):
        return f"/fts does not take {' '.join(words)!r}. {_SLASH_USAGE}"
    try:
        ignored = [f"  ignored: {problem}" for problem in ignored_settings()]
        return "\n".join([format_status(serving_status()), *ignored])
    except Exception as exc:  # noqa: BLE001 - a slash command answers, never raises
        return f"hermes-fts status failed: {exc}"


def setup_cli(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "hermes-fts commands on the active Hermes profile's store; the same flags as "
        "`hermes-fts COMMAND` (`hermes fts COMMAND --help`)."
    )
    parser.add_argument(
        "fts_command", choices=CLI_COMMANDS, metavar="COMMAND", help=", ".join(CLI_COMMANDS)
    )
    rest = parser.add_argument("fts_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    # argparse counts a REMAINDER positional as required: `hermes fts` alone named it.
    rest.required = False


def run_cli(argv: list[str]) -> int:
    """``hermes fts ARGV``: our CLI on Hermes' active home, status extended with the plugin.

    The home goes in as an argument: Hermes runs agents in threads, so neither
    ``HERMES_HOME`` nor stdout is swapped under them.
    """
    from ..cli import main as cli_main

    home = serving.hermes_home()
    if argv[:1] != ["status"] or any(a in ("-h", "--help") for a in argv):
        return int(cli_main(argv, home=home, prog="hermes fts") or 0)
    plugin = serving_status()
    extra = {"hermes_plugin": plugin}
    rc = int(cli_main(argv, home=home, status_extra=extra, prog="hermes fts") or 0)
    if "--json" not in argv:
        print(format_status(plugin))
    return rc


def handle_cli(args: argparse.Namespace) -> None:
    rc = run_cli([args.fts_command, *args.fts_args])
    if rc:
        sys.exit(rc)
