"""Hermes Agent plugin: the agent's own ``session_search`` runs on hermes-fts.

Hermes Agent (0.19.0) loads this module through the ``hermes_agent.plugins``
entry point once ``hermes plugins enable hermes-fts`` is run, and calls
``register(ctx)``.  What it registers, and why:

* A ``tool_execution`` middleware.  In the agent loop ``session_search`` is an
  agent-level tool: ``invoke_tool`` calls Hermes' implementation directly, not
  through the tool registry, so replacing the registry entry alone would change
  the schema but not the code that runs.  The middleware wraps that execution
  and answers every ``session_search`` call from hermes-fts.  It serves the store
  the agent's own SessionDB reads (the agent is found behind ``next_call``), so a
  new session's first search is ours even before Hermes has written its row, and
  an agent on another file gets the built-in.
* With the operator's grant (``--allow-tool-override``), the registry entry too,
  so the model sees our ``TOOL_SCHEMA`` and its extra parameters.  Without it the
  middleware still serves every call with Hermes' argument names, and one INFO
  line says how to grant the override.
* ``hermes fts status|optimize-storage|search|sync`` and the ``/fts`` slash command.

Async Hermes (async-hermes-agent) awaits every callback and refuses plain
functions, so there the middleware, the registry entry and the hook are coroutine functions
(the search itself runs in a worker thread).  The middleware is registered last,
and a failure releases what was registered before it.

Fail safe: whenever hermes-fts cannot answer properly (the extension does not
load, the store is missing or cannot be opened, our search fails inside), the
call goes to Hermes' own implementation (``next_call``) and one WARNING says
why.  Nothing raised on our side reaches the agent loop.  Searching opens the
store read-only, so it never writes, never backfills in the agent's hot path
and is not blocked by another connection holding the write lock.

Importing ``hermes_fts`` never imports this module, and this module imports
Hermes only inside functions Hermes itself calls.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, Callable

import hermes_fts

from .._cjk_ranges import is_cjk
from ..index.schema import CJK as CJK_INDEX
from ..index.slowed import fix_command, missed_until_rebuilt, search_slowed_by, slowed_why
from ..tool.context import CallContext
from ..tool.errors import INTERNAL_FAILURE
from . import commands, serving, upkeep
from . import host as hermes_host
from .agent import agent_behind, agents_store_path, agents_store_path_async, db_path, same_file
from .serving import STORES, Decline

log = logging.getLogger(__name__)

TOOL_NAME = "session_search"
TOOLSET = "session_search"  # Hermes' own toolset name, so toolset filters keep the tool

# --------------------------------------------------------------------------- serving


_OUR_PARAMETERS = frozenset(hermes_fts.TOOL_SCHEMA["parameters"]["properties"])


def _honoured_args(args: Any) -> dict[str, Any]:
    """The model's arguments, each one ours honours; raises ``Decline`` otherwise.

    An argument ours does not know (Hermes main's chat ``scope``, say) may narrow
    what the host's tool shows, and dropping it would widen the search, so the
    host answers such a call, and every call when its tool takes such a parameter.
    """
    if serving.REGISTRATION.host_only:
        raise Decline(serving.host_only_reason(serving.REGISTRATION.host_only))
    if not isinstance(args, dict):
        return {}
    unknown = sorted(str(name) for name in args if name not in _OUR_PARAMETERS)
    if unknown:
        raise Decline(f"the call passes {', '.join(unknown)}, which hermes-fts does not honour")
    return args


def _annotate(state: dict[str, Any], payload: dict[str, Any], path: Path) -> None:
    payload["engine"] = serving.ENGINE
    # A search's payload names the route that answered it; the other modes
    # (read, scroll, browse) read no index, and a refused call reached none.
    if payload.get("success") is not False:
        payload.setdefault("route", str(payload.get("mode") or "unknown"))
    # The same reasons the tool reads (pending CJK changes, an opt-in index to
    # build or drop and the time table change no route), said with the
    # command Hermes' users run.
    reasons = search_slowed_by(state)
    if reasons:
        hint = f"hermes fts {fix_command(reasons)}"
        missed = missed_until_rebuilt(state)
        payload["index_rebuild"] = {
            **payload.get("index_rebuild", {}),
            "reasons": sorted(reasons),
            "note": (
                f"hermes-fts searches this store by slower exact routes, since "
                f"{slowed_why(reasons)}{f', and {missed}' if missed else ''}. "
                f"Ask the user to run `{hint}` once."
            ),
        }
        serving.once(
            logging.INFO,
            f"optimize:{path}",
            "hermes-fts: searches of %s use slower exact routes (%s) until you run `%s`",
            path,
            slowed_why(reasons),
            hint,
        )


def answer(
    args: Any,
    current_session_id: str | None,
    path: Path | None = None,
    *,
    agents_store: bool = False,
) -> dict[str, Any]:
    """Our answer to one ``session_search`` call (a JSON-ready dict); raises ``Decline``.

    ``path`` is the store (default: the one Hermes' SessionDB uses for this task).
    ``agents_store``: the caller checked that ``path`` is the file the agent's own
    SessionDB reads, so a current session it does not hold yet is simply not
    written yet.  Otherwise such a session means the agent runs on a custom session
    DB we cannot see, so the built-in must answer.
    """
    path = path if path is not None else serving.store_path()
    call_args = _honoured_args(args)
    with STORES.lock:
        store = STORES.get(path)
        try:
            state = store.index_state()
            if not state.get("cjk_available"):
                raise Decline(
                    "the cjk_unicode61 extension is not available in this process "
                    "(see `hermes-fts status`)"
                )
            if (
                current_session_id
                and not agents_store
                and store.get_session(current_session_id) is None
            ):
                raise Decline(
                    f"the current session {current_session_id!r} is not in {path}; the agent "
                    "uses a session store hermes-fts cannot locate"
                )
            payload = hermes_fts.session_search(
                store, current_session_id=current_session_id or None, **call_args
            )
            if not isinstance(payload, dict):
                raise Decline(f"hermes-fts returned {type(payload).__name__}, not a result")
            error = payload.get("error")
            # Our own failures (not a refusal of the caller's arguments) go to the built-in.
            if (
                payload.get("success") is False
                and isinstance(error, str)
                and error.startswith(INTERNAL_FAILURE)
            ):
                raise Decline(error)
            _annotate(state, payload, path)
            return payload
        except Decline:
            raise
        except Exception as exc:
            STORES.drop(str(path))
            raise Decline(f"hermes-fts search failed: {exc}") from exc


def _fallback_reason(reason: str) -> None:
    serving.once(
        logging.WARNING,
        f"fallback:{reason}",
        "hermes-fts: %s; Hermes' built-in session_search answers instead",
        reason,
    )


def _ours(
    args: Any, current_session_id: str | None, path: Path | None, agents_store: bool
) -> dict[str, Any] | None:
    """``answer``, or ``None`` (after one WARNING) when the built-in must answer."""
    try:
        return answer(args, current_session_id, path, agents_store=agents_store)
    except Decline as exc:
        _fallback_reason(str(exc))
    except Exception as exc:  # noqa: BLE001 - nothing of ours may reach the agent loop
        log.debug("hermes-fts failed", exc_info=True)
        _fallback_reason(f"unexpected failure: {exc}")
    return None


def _wants_cross_check(payload: dict[str, Any], args: Any) -> bool:
    """An empty search is the one failure that looks like success (a damaged index
    can read as empty), so Hermes' built-in is asked too: the cost of a miss, never
    of a hit.  Not when time bounds or exclusions narrowed it (``filters``): the
    built-in takes neither, so its hits answer a wider question; nor when it
    would read the call otherwise (``_builtin_reads_otherwise``)."""
    return (
        payload.get("mode") == "discover"
        and not payload.get("results")
        and not payload.get("filters")
        and not _builtin_reads_otherwise(args)
        and not _builtin_drops_operators(payload.get("query"))
    )


def _builtin_reads_otherwise(args: Any) -> bool:
    """Whether Hermes' built-in answers another question than ours for ``args``: it
    searches only the agent's own store (a named profile is another), and reads
    ``role_filter`` only as text (a list of roles is its default, user and assistant)."""
    if not isinstance(args, dict):
        return False
    profile, roles = args.get("profile"), args.get("role_filter")
    named_profile = isinstance(profile, str) and bool(profile.strip())
    return named_profile or (bool(roles) and not isinstance(roles, str))


def _builtin_drops_operators(query: Any) -> bool:
    """Whether Hermes 0.19.0 reads ``query`` without its ``AND``/``NOT``/``NEAR``: one with a
    CJK word of one or two characters is answered by substring tests ORed together,
    so its hits for ``迁移 NOT 数据库`` hold 数据库 and answer another question."""
    if not isinstance(query, str):
        return False
    words = query.replace("(", " ").replace(")", " ").replace(",", " ").split()
    if not {"AND", "NOT", "NEAR"} & set(words):
        return False
    counts = (sum(is_cjk(ord(ch)) for ch in word) for word in words)
    return any(0 < n < 3 for n in counts)


def _cross_checked(
    payload: dict[str, Any], theirs: Any, current_session_id: str | None, path: Path | None
) -> Any:
    """Our empty answer, or the built-in's ``theirs`` when it found something outside
    the current conversation (a WARNING says so)."""
    try:
        data = json.loads(theirs) if isinstance(theirs, str) else None
    except ValueError:
        data = None
    # Only the built-in's own search answers the same question: a query it cannot
    # read as text (a number) makes it list the latest sessions instead.
    searched = isinstance(data, dict) and data.get("mode") == "discover"
    found = data.get("results") if searched and isinstance(data, dict) else None
    if not found or not _outside_current(found, current_session_id, path):
        return json.dumps(payload, ensure_ascii=False)
    query = payload.get("query")
    serving.once(
        logging.WARNING,
        f"empty:{query}",
        "hermes-fts found nothing for %r but Hermes' built-in found %d session(s), so its "
        "answer is used; check the indexes with `hermes fts status` and rebuild them with "
        "`%s`",
        query,
        len(found),
        commands.OPTIMIZE_HINT,
    )
    return theirs


def _outside_current(found: list[Any], current: str | None, path: Path | None) -> bool:
    """Whether a built-in hit lies outside the current conversation.  Hermes 0.19.0
    walks ``parent_session_id`` only until a session repeats, so on a parent cycle
    it takes another member of the current conversation for a past one; ours reads
    the cycle as one conversation (``CallContext.lineage``)."""
    if not current:
        return True
    with STORES.lock:
        ctx = CallContext(STORES.get(path or serving.store_path()), None, current)
        root = ctx.lineage(current)[0]
        return any(
            not isinstance(hit, dict) or ctx.lineage(str(hit.get("session_id") or ""))[0] != root
            for hit in found
        )


def serve(
    args: Any,
    current_session_id: str | None,
    builtin: Callable[[], Any],
    path: Path | None = None,
    *,
    agents_store: bool = False,
) -> Any:
    """One ``session_search`` call: our answer as Hermes' JSON string, else ``builtin()``."""
    payload = _ours(args, current_session_id, path, agents_store)
    if payload is None:
        return builtin()
    if _wants_cross_check(payload, args):
        try:
            return _cross_checked(payload, builtin(), current_session_id, path)
        except Exception:  # noqa: BLE001 - the check is extra; our answer stands
            log.debug("cross-checking an empty answer with the built-in failed", exc_info=True)
    return json.dumps(payload, ensure_ascii=False)


async def serve_async(
    args: Any,
    current_session_id: str | None,
    builtin: Callable[[], Awaitable[Any]],
    path: Path | None = None,
    *,
    agents_store: bool = False,
) -> Any:
    """``serve`` for async Hermes: the search runs in a worker thread, off the event loop."""
    payload = await asyncio.to_thread(_ours, args, current_session_id, path, agents_store)
    if payload is None:
        return await builtin()
    if _wants_cross_check(payload, args):
        try:
            return await asyncio.to_thread(
                _cross_checked, payload, await builtin(), current_session_id, path
            )
        except Exception:  # noqa: BLE001 - the check is extra; our answer stands
            log.debug("cross-checking an empty answer with the built-in failed", exc_info=True)
    return json.dumps(payload, ensure_ascii=False)


def _store_for(next_call: Any, session_id: str | None) -> tuple[Path | None, bool]:
    """(store to search, whether it is known to be the agent's own); raises ``Decline``
    when the agent reads another file.  An agent that cannot be found leaves the
    decision to ``answer`` (the current session must be in our store)."""
    agent = agent_behind(next_call, session_id)
    return _checked_store(agents_store_path(agent) if agent is not None else None)


async def _store_for_async(next_call: Any, session_id: str | None) -> tuple[Path | None, bool]:
    agent = agent_behind(next_call, session_id)
    return _checked_store(await agents_store_path_async(agent) if agent is not None else None)


def _checked_store(agent_path: Path | None) -> tuple[Path | None, bool]:
    if agent_path is None:
        return None, False
    ours = serving.store_path()
    if not same_file(agent_path, ours):
        raise Decline(
            f"the agent's SessionDB is {agent_path}, not {ours}; hermes-fts serves only "
            "Hermes' default store"
        )
    return ours, True


def tool_execution_middleware(
    *,
    tool_name: str = "",
    args: Any = None,
    next_call: Callable[[Any], Any] | None = None,
    session_id: str = "",
    **_context: Any,
) -> Any:
    """Hermes ``tool_execution`` middleware: serve ``session_search``, pass the rest."""
    assert next_call is not None  # Hermes always passes it
    if tool_name != TOOL_NAME:
        return next_call(args)
    current = session_id or None
    try:
        path, agents_store = _store_for(next_call, current)
    except Decline as exc:
        _fallback_reason(str(exc))
        return next_call(args)
    except Exception:  # noqa: BLE001 - nothing of ours may reach the agent loop
        log.debug("locating the agent's store failed", exc_info=True)
        path, agents_store = None, False
    return serve(args, current, lambda: next_call(args), path, agents_store=agents_store)


async def tool_execution_middleware_async(
    *,
    tool_name: str = "",
    args: Any = None,
    next_call: Callable[[Any], Awaitable[Any]] | None = None,
    session_id: str = "",
    **_context: Any,
) -> Any:
    """The ``tool_execution`` middleware for async Hermes, which awaits every callback."""
    assert next_call is not None  # Hermes always passes it
    if tool_name != TOOL_NAME:
        return await next_call(args)
    current = session_id or None
    try:
        path, agents_store = await _store_for_async(next_call, current)
    except Decline as exc:
        _fallback_reason(str(exc))
        return await next_call(args)
    except Exception:  # noqa: BLE001 - nothing of ours may reach the agent loop
        log.debug("locating the agent's store failed", exc_info=True)
        path, agents_store = None, False
    return await serve_async(
        args, current, lambda: next_call(args), path, agents_store=agents_store
    )


_UNAVAILABLE = json.dumps({"success": False, "error": "session_search is unavailable"})


def _registry_handler(
    builtin: Callable[..., Any] | None, async_host: bool = False
) -> Callable[..., Any]:
    """The registry entry for ``session_search`` (used by ``registry.dispatch`` callers);
    a coroutine function on async Hermes, which accepts no other handler."""

    def handle_session_search(args: dict[str, Any], **kw: Any) -> Any:
        # Hermes passes its own SessionDB: a current session it lacks is one not written yet.
        path = db_path(kw.get("db"))
        return serve(
            args,
            kw.get("current_session_id"),
            lambda: _UNAVAILABLE if builtin is None else builtin(args, **kw),
            path,
            agents_store=path is not None,
        )

    async def handle_session_search_async(args: dict[str, Any], **kw: Any) -> Any:
        async def fallback() -> Any:
            return _UNAVAILABLE if builtin is None else await builtin(args, **kw)

        path = db_path(kw.get("db"))
        return await serve_async(
            args, kw.get("current_session_id"), fallback, path, agents_store=path is not None
        )

    return handle_session_search_async if async_host else handle_session_search


# --------------------------------------------------------------------------- register


def host_is_async() -> bool:
    """Async Hermes (async-hermes-agent) awaits every middleware and tool handler and
    refuses plain functions; its tool middleware runner is a coroutine function."""
    try:
        from hermes_cli import middleware
    except ImportError:
        return False
    return inspect.iscoroutinefunction(getattr(middleware, "run_tool_execution_middleware", None))


def _host_entry() -> Any:
    """The host's own registry entry for ``session_search`` (None without one)."""
    try:
        from tools.registry import registry

        return registry.get_entry(TOOL_NAME)
    except Exception:  # noqa: BLE001 - no registry entry: no built-in to fall back to
        log.debug("no registry entry for %s", TOOL_NAME, exc_info=True)
        return None


def _host_only_parameters(entry: Any) -> tuple[str, ...]:
    """The parameters the host's ``session_search`` schema names and ours lacks."""
    schema = getattr(entry, "schema", None)
    params = schema.get("parameters") if isinstance(schema, dict) else None
    names = params.get("properties") if isinstance(params, dict) else None
    return tuple(sorted(set(names) - _OUR_PARAMETERS)) if isinstance(names, dict) else ()


def _register_schema_override(ctx: Any, async_host: bool, entry: Any) -> Any:
    """Our registry entry when the operator granted it; returns the host's handle."""
    builtin = getattr(entry, "handler", None)
    if serving.REGISTRATION.host_only:  # the host answers every call: the model keeps its schema
        return None
    try:
        handle = ctx.register_tool(
            TOOL_NAME,
            TOOLSET,
            hermes_fts.TOOL_SCHEMA,
            _registry_handler(builtin, async_host),
            emoji="\U0001f50d",
            override=True,
        )
    except PermissionError as exc:  # Hermes' PluginToolOverrideError
        serving.REGISTRATION.override_refused = str(exc)
        log.info(
            "hermes-fts serves every session_search call through its execution middleware; "
            "the model still sees Hermes' tool schema. To show it hermes-fts' schema (more "
            "parameters) run `hermes plugins enable %s %s`",
            hermes_host.PLUGIN_NAME,
            hermes_host.GRANT_FLAG,
        )
        return None
    serving.REGISTRATION.schema_override = True
    return handle


def after_turn(**_context: Any) -> None:
    """Hermes' ``on_session_end`` hook, run after every turn: the turn's messages wait
    in the pending table, so where our CJK index is served and rows wait they
    are applied in the background (``upkeep``).  Never raises into the loop."""
    try:
        path = serving.store_path()
        with STORES.lock:
            state = STORES.get(path).index_state()
        # A table of ours dropped by hand fails every message Hermes saves: the
        # write open of an apply puts it back.
        blocked = "writes_blocked" in state.get("needs_optimize", ())
        if blocked or (state.get("cjk_pending") and state.get(CJK_INDEX, {}).get("served")):
            upkeep.apply_after_turn(path)
    except Exception:  # noqa: BLE001 - the next turn or `hermes fts sync` applies them
        log.debug("hermes-fts: no sync after this turn", exc_info=True)


async def after_turn_async(**context: Any) -> None:
    """``after_turn`` for async Hermes, which refuses a plain hook: it raised at every
    turn's end, skipping the hooks after ours, and nothing was applied.  The
    store is read off the event loop."""
    await asyncio.to_thread(after_turn, **context)


def _release(handles: list[Any]) -> None:
    """Undo registrations through the handles newer Hermes returns (older ones return
    ``None``; what they registered before the failure is our registry entry and
    commands, each of which works alone)."""
    for handle in reversed(handles):
        dispose = getattr(handle, "dispose", None)
        if callable(dispose):
            try:
                dispose()
            except Exception:  # noqa: BLE001 - undo the rest regardless
                log.debug("releasing a registration failed", exc_info=True)


def register(ctx: Any) -> None:
    """Hermes' plugin entry point.

    The middleware is registered last: it is what changes every agent's tool calls,
    so a failure anywhere earlier leaves the host as it was (handles released,
    the error raised for Hermes to report).  Async Hermes gets coroutine callbacks.
    """
    async_host = host_is_async()
    entry = _host_entry()
    serving.REGISTRATION = serving.Registration(host_only=_host_only_parameters(entry))
    handles: list[Any] = []
    registered: list[str] = []
    try:
        handles.append(_register_schema_override(ctx, async_host, entry))
        if callable(getattr(ctx, "register_cli_command", None)):  # not on async Hermes
            handles.append(
                ctx.register_cli_command(
                    "fts",
                    "hermes-fts search index: status, optimize-storage, search, sync",
                    commands.setup_cli,
                    commands.handle_cli,
                    description="Runs `hermes-fts COMMAND` on the active profile's state.db.",
                )
            )
            registered.append("hermes fts")
        handles.append(
            ctx.register_command(
                "fts",
                commands.slash_command,
                description="hermes-fts: who answers session_search, index state",
            )
        )
        registered.append("/fts")
        if callable(getattr(ctx, "register_hook", None)):
            hook = after_turn_async if async_host else after_turn
            handles.append(ctx.register_hook("on_session_end", hook))
        handles.append(
            ctx.register_middleware(
                "tool_execution",
                tool_execution_middleware_async if async_host else tool_execution_middleware,
            )
        )
    except Exception:
        _release(handles)
        serving.REGISTRATION = serving.Registration()
        raise
    serving.REGISTRATION.middleware = True
    serving.REGISTRATION.commands = registered
