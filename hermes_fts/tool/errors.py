"""The tool's failures: each becomes ``{"success": False, "error": "..."}``.

The tool never raises for bad arguments; every module of the package raises
``ToolError`` with a message that says what to pass instead, and the entry
point turns it into the error payload.
"""

from __future__ import annotations

from typing import Any

_ERROR_MAX_CHARS = 2048
# How a failure of ours starts (not the arguments', not the store's state): the
# Hermes plugin hands such a call to Hermes' built-in.
INTERNAL_FAILURE = "session_search failed"


class ToolError(Exception):
    """A problem with the call; becomes ``{"success": False, "error": str(exc)}``.

    ``person``: the same problem worded for someone at the command line, whose
    arguments are flags (``--profile``), not the tool's parameters.
    """

    def __init__(self, message: str, person: str | None = None) -> None:
        super().__init__(message)
        self.person = person or message


class NotHere(ToolError):
    """The session is not in this store; other profiles may hold it."""


class NoStore(ToolError):
    """The store the call names is missing or cannot be opened (a profile's, the
    default): the command line could not start, exit status 2 (docs/USAGE.md)."""


class NoDefaultStore(NoStore):
    """No store was passed and ``$HERMES_HOME/state.db`` does not exist."""


class Failed(ToolError):
    """Our own code failed (an unexpected exception, not the arguments or the store's
    state): the model reads ``INTERNAL_FAILURE`` first, a person the message alone."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{INTERNAL_FAILURE}: {message}", person=message)


class BadValue(ToolError):
    """An argument's value that means nothing (a time bound that is no time): at the
    command line a usage error, exit status 2, as argparse's own refusals."""


def error_payload(message: str) -> dict[str, Any]:
    """The error shape, with an overlong message cut (a model reads it)."""
    if len(message) > _ERROR_MAX_CHARS:
        message = message[:_ERROR_MAX_CHARS] + "\u2026 [truncated]"
    return {"success": False, "error": message}
