"""The search form: one result per conversation lineage, with the messages around each hit.

A title that names a session exactly comes first; then full-text hits, best
first, one per lineage.  The caller's own conversation is left out while it is
still in the model's live context.  Time bounds and session exclusions are
conditions of the search itself (``SessionStore.search_messages``), so a
bounded discovery reads no more rows than an unbounded one.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from typing import Any

from .._display import char_start
from ..store import THEN_FIRST, QueryError, failure_cause
from .args import ROLES, SearchOptions
from .context import HIDDEN_SESSION_SOURCES, CallContext
from .errors import Failed, ToolError
from .shape import (
    BOOKEND_CONTENT_CAP,
    PAYLOAD_BUDGET_BYTES,
    WINDOW_CONTENT_CAP,
    bookend_messages,
    deleted_meanwhile,
    fit_content_cap,
    format_ts,
    nothing_found,
    over_budget,
    past_the_end,
    rebuild_note,
    shape_message,
    with_notes,
    without_escapes,
)

log = logging.getLogger(__name__)

_DEMOTED_SESSION_SOURCES = ("cron",)
# Discovery reads the top rows, then doubles the read while they hold fewer
# than `limit` lineages, so one long session cannot crowd out the rest.  The
# first read is small: every row read costs a snippet, and the answer is the
# same whichever read first holds `limit` lineages (see `collect`).  In the
# default order rows are sessions, and a lineage seldom has two near the top.
_DISCOVER_ROWS_PER_LINEAGE = 2
_DISCOVER_MAX_SCAN = 38_400
_DISCOVER_SEARCH_FIELDS = (
    "id",
    "session_id",
    "role",
    "snippet",
    "source",
    "model",
    "session_started",
    "matched_terms",
    "missing_terms",
    "timestamp",
)
# Best match first: each session scored by all its matching messages, one row
# (its best message) per session (SessionStore.search_messages' sort="sessions").
_BY_SESSIONS = "sessions"
_TITLE_MAX_CHARS = 100
# The time note of a search whose rows from the time its words name come first.
_THEN_FIRST = ": " + THEN_FIRST
_PROBE_ROWS = 8  # rows a hint's probe reads at a time (``_held_by``)
_NAMED_MAX_CHARS = 40  # a word named in a note
_NAMED_RUNS = 8  # the stretches of one word named in a note
_TITLE_QUOTES = "`\"'\u201c\u201d\u2018\u2019"


def _demoted(row: dict[str, Any]) -> int:
    return 1 if row.get("source") in _DEMOTED_SESSION_SOURCES else 0


def _origin(root_row: dict[str, Any], row: dict[str, Any], started_key: str) -> dict[str, Any]:
    """When, where and with which model a conversation began: its root, else ``row``."""
    return {
        "when": format_ts(root_row.get("started_at") or row.get(started_key)),
        "source": root_row.get("source") or row.get("source") or "unknown",
        "model": root_row.get("model") or row.get("model") or "unknown",
    }


def _named(words: list[str]) -> str:
    """Words for a note: a long one (a pasted CJK paragraph is one word) by its start,
    cut where a character ends (a letter keeps its accent: the note names what was typed)."""
    cut = _NAMED_MAX_CHARS
    return ", ".join(w if len(w) <= cut else w[: char_start(w, cut - 1)] + "…" for w in words)


def _named_runs(runs: list[str]) -> str:
    """The stretches of a word a result holds, for a note: a long paste holds many,
    so the first few stand for them."""
    shown = _named(runs[:_NAMED_RUNS])
    return shown + (", …" if len(runs) > _NAMED_RUNS else "")


def _in_bounds(ts: Any, after: float | None, before: float | None) -> bool:
    if after is None and before is None:
        return True
    try:
        value = float(ts)
    except (TypeError, ValueError):
        return False
    if after is not None and value < after:
        return False
    return not (before is not None and value >= before)


class Discovery:
    """One search: ``Discovery(ctx, options).run()`` returns the payload."""

    def __init__(self, ctx: CallContext, options: SearchOptions) -> None:
        self.ctx = ctx
        self.options = options
        self.current = ctx.current_session_id
        self.current_root = ctx.lineage(self.current)[0] if self.current else None
        # Sessions whose live messages the model holds: only their compaction archives
        # are searched (a live best row, the one row a session gives, hid them).
        self.live = ctx.live_ancestry(self.current)
        self.route: str | None = None  # the route that answered the last scan
        # What that search changed or could not do (the time words' windows too).
        self.search_notes: tuple[str, ...] = ()
        self.search_windows: tuple[tuple[float, float], ...] = ()  # and whose rows came first
        # Each result's view as read (entry, view, anchor id, detail), to shape it
        # again with smaller caps when the answer is over its budget (``_fit``).
        self._views: list[tuple[dict[str, Any], dict[str, Any], int, str]] = []
        self._read: list[dict[str, Any]] = []  # every row the search read, best first

    # title ------------------------------------------------------------
    def title_match(self) -> dict[str, Any] | None:
        opts = self.options
        title = opts.query.strip().strip(_TITLE_QUOTES).strip()
        if not title or len(title) > _TITLE_MAX_CHARS:
            return None
        try:
            sid = self.ctx.store.find_session_by_title(title)
            if not sid or sid in opts.excluded:
                return None
            row = self.ctx.session(sid)
            if row is None:
                return None
            root = self.ctx.lineage(sid)[0]
            if root == self.current_root and not self.ctx.left_live_context(sid):
                return None
            root_row = self.ctx.session(root) or row
            if {root_row.get("source"), row.get("source")} & set(HIDDEN_SESSION_SOURCES):
                return None
            if not _in_bounds(row.get("started_at"), opts.after, opts.before):
                return None
            return {"session_id": sid, "root": root, "title": row.get("title") or title}
        except Exception:  # noqa: BLE001 - a title lookup must not break discovery
            log.debug("title match failed for %r", opts.query, exc_info=True)
            return None

    # raw scan ---------------------------------------------------------
    def scan(self, want: int, crowding: Collection[str] = ()) -> list[dict[str, Any]]:
        """The top ``want`` rows the filters keep, best first, outside ``crowding``."""
        opts = self.options
        result = self.ctx.store.search(
            opts.query,
            exclude_sources=HIDDEN_SESSION_SOURCES,
            role_filter=opts.roles,
            limit=want,
            sort=opts.sort or _BY_SESSIONS,
            fields=_DISCOVER_SEARCH_FIELDS,
            after=opts.after,
            before=opts.before,
            exclude_session_ids=sorted({*opts.excluded, *crowding}),
            archived_only_session_ids=sorted(self.live),
            now=opts.now,
            marks=opts.marks,
        )
        self.route = result.route
        if not crowding:
            # The first read holds the top of the ranking, so its notes are the answer's:
            # a later read leaves out the sessions already seen, and would say that no
            # match is from the time asked when the first read's all were.
            self.search_notes = result.notes  # the query's, and what its time words did
            self.search_windows = result.windows
        return list(result.rows)

    def collect(self, title: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
        """``limit`` lineage slots whenever that many lineages match.

        Rows are read best first; while they hold fewer than ``limit``
        lineages outside the demoted (cron) sources, the read doubles and
        goes on below them: the rows read are kept and the next read leaves
        out their sessions, whose lineages rank above every row it can find
        (under a time sort rows are messages, and one long session can hold
        thousands of the newest).  Demoted lineages fill what is left after
        the others.

        The size of the first read never changes the answer: the rows kept are
        the top of the ranking, and each later read the next rows of the
        sessions not yet seen, so every read size picks the same lineages
        with the same first hits.  A live row of a session not known as live yet
        (a sibling in the current lineage) starts the reads again without it.
        """
        wanted = self.options.wanted
        want = min(wanted * _DISCOVER_ROWS_PER_LINEAGE, _DISCOVER_MAX_SCAN)
        kept: list[dict[str, Any]] = []
        crowding: set[str] = set()
        while True:
            rows = self.scan(want, crowding)
            live = {str(r["session_id"]) for r in rows if self._in_live_context(r)} - self.live
            if live:
                self.live |= live
                want = min(wanted * _DISCOVER_ROWS_PER_LINEAGE, _DISCOVER_MAX_SCAN)
                kept, crowding = [], set()
                continue
            kept += rows
            self._read = kept
            slots = self._slots(title, sorted(kept, key=_demoted))  # stable: rank order
            firsts = sum(1 for slot in slots.values() if not _demoted(slot.get("hit", {})))
            more = {str(row["session_id"]) for row in rows if row.get("session_id")} - crowding
            if firsts >= wanted or len(rows) < want or not more:
                return slots
            crowding |= more
            want = min(want * 2, _DISCOVER_MAX_SCAN)

    # main -------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        opts = self.options
        title = self.title_match()
        try:
            slots = self.collect(title)
        except QueryError as exc:  # the message already says how to write the query
            raise ToolError(str(exc)) from exc
        except Exception as exc:  # noqa: BLE001 - reported to the caller
            cause = failure_cause(exc)
            if cause is not None:  # the store's state: rewriting the query would not help
                raise ToolError(f"Search could not read the store: {cause}") from exc
            log.error("full-text search failed for %r", opts.query, exc_info=True)
            raise Failed(
                f"Search failed: {exc}; retry with plain words (drop operators and "
                "punctuation) or browse with no arguments"
            ) from exc

        payload: dict[str, Any] = {
            "success": True,
            "mode": "discover",
            "query": opts.query,
            "detail": opts.detail,
            # Known once, from the search that answered (a damaged index's
            # fallback included): never planned again for the label.
            "route": self.route or "unknown",
        }
        filters: dict[str, Any] = {}
        if opts.after is not None:
            filters["after"] = opts.after
        if opts.before is not None:
            filters["before"] = opts.before
        if opts.excluded:
            filters["exclude_session_ids"] = sorted(opts.excluded)
        if filters:
            payload["filters"] = filters

        start = opts.offset or 0
        page = list(slots.items())[start : start + opts.limit]
        if opts.offset is not None:  # paged: where the next page starts, None after the last
            payload["offset"] = opts.offset
            payload["next_offset"] = start + opts.limit if len(slots) > start + opts.limit else None
        results = self._entries(page)
        payload["results"] = results
        payload["count"] = len(results)
        payload["sessions_searched"] = len(slots)
        if not results and start and len(slots) <= start:
            # A page past the last (the command line's --offset): the words did match.
            payload["message"] = past_the_end(start, f"this search found {len(slots)} matching")
        elif not results:
            self._nothing_found(payload)
        note = rebuild_note(self.ctx.store)
        if note is not None:
            payload["index_rebuild"] = note
        # The search's own notes (SessionStore.query_notes, and the time words'
        # windows, which depend on `now` and the bounds); in the payload before it
        # is fitted, since a long query's notes (one per symbol) passed the budget.
        said = [*self._time_note_as_shown(page), *self._partial_note(slots), *opts.notes]
        with_notes(payload, [*said, deleted_meanwhile(len(page) - len(results))])
        cuts = self._fit(payload) if opts.budgeted else []
        return with_notes(payload, [*cuts, self._unknown_exclusions()])

    def _entries(self, page: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        """The page's results: a hit whose message is gone by now is left out (``run`` says so)."""
        results: list[dict[str, Any]] = []
        for root, slot in page:
            if "title_match" in slot:
                entry = self._title_entry(root, slot["title_match"], first=not results)
            else:
                entry = self._hit_entry(root, slot["hit"], first=not results)
            if entry is not None:
                entry["link"] = self.ctx.link(entry["session_id"])
                results.append(entry)
        return results

    def _time_note_as_shown(self, page: list[tuple[str, dict[str, Any]]]) -> list[str]:
        """The search's notes, its time note made true of the results shown: the
        current conversation's own matches are no result and cron sessions' come
        last, so "matches from then come first" could head results from other times."""
        notes = list(self.search_notes)
        first = next((n for n, note in enumerate(notes) if note.endswith(_THEN_FIRST)), None)
        hits = [slot["hit"] for _, slot in page if "hit" in slot]
        if first is None or not hits or (self.options.offset or 0) > 0:
            return notes
        # the search's own windows: it may have read the query another way (昨天的部署
        # as a sentence), whose time words the text as written does not have
        spans = self.search_windows
        then = [any(lo <= float(h.get("timestamp") or 0) < hi for lo, hi in spans) for h in hits]
        if then[0] or "title_match" in page[0][1]:
            return notes
        why = "the current conversation's own matches are not shown and cron jobs' come last"
        shown = (
            f"the first result is from another time: {why} ({sum(then)} of these are from then)"
            if any(then)
            else f"no result here is from then: {why}; these are from other times"
        )
        notes[first] = notes[first][: -len(_THEN_FIRST)] + ": " + shown
        return notes

    def _unknown_exclusions(self) -> str | None:
        """A note naming the excluded ids no session here has: a mistyped one left
        nothing out, and its session was listed as if it had not been named."""
        unknown = sorted(sid for sid in self.options.excluded if self.ctx.session(sid) is None)
        if not unknown:
            return None
        return f"no session {', '.join(unknown)} to exclude here; nothing was left out for it"

    def _fit(self, payload: dict[str, Any]) -> list[str]:
        """Keep ``payload`` under the budget a read has, and return the notes saying how.

        Long messages or tool calls around ten hits made an answer of half a
        megabyte, which Hermes moves out of the model's context into a file.  The
        content cap is halved first, as a read's; then results after the first show
        only their matching message, the last first.
        """
        if not over_budget(payload):
            return []

        def reshape(cap: int) -> None:
            for entry, view, anchor_id, detail in self._views:
                self._shape_view(entry, view, anchor_id, detail, cap)

        cap = fit_content_cap(payload, reshape)
        compacted = 0
        for entry, view, anchor_id, detail in reversed(self._views[1:]):
            if not over_budget(payload):
                break
            if detail == "full":
                self._shape_view(entry, view, anchor_id, "compact", cap)
                entry["detail"] = "compact"
                compacted += 1
        budget = f"{PAYLOAD_BUDGET_BYTES // 1024} KB"
        notes = []
        if cap < WINDOW_CONTENT_CAP:
            notes.append(
                f"messages cut to {cap:,} characters (content_truncated, original_content_chars) "
                f"to keep the answer under {budget}; scroll to a result's match_message_id with "
                "a small window to see more of them"
            )
        if compacted:
            notes.append(
                f"{compacted} result(s) show only their matching message to keep the answer "
                f"under {budget}; scroll to their match_message_id to see the messages around it"
            )
        return notes

    def _nothing_found(self, payload: dict[str, Any]) -> None:
        """The message of an empty answer: what to try, and the roles left out that
        hold matches (``roles_with_matches``; the model's default leaves tool output
        out, and an empty answer said nothing of it)."""
        opts = self.options
        payload["message"] = nothing_found(opts.after is not None or opts.before is not None)
        held = [role for role in ROLES if role not in opts.roles and self._held_by([role])]
        if held:
            # an unknown role (noted already) matches nothing: the filter to suggest leaves it out
            known = [role for role in opts.roles if role in ROLES]
            wider = ",".join(dict.fromkeys([*known, *held]))
            payload["roles_with_matches"] = held
            payload["message"] += (
                f" Messages of role {', '.join(held)} hold matches, but role_filter left them "
                f"out: search them with role_filter='{wider}'."
            )
        elif opts.excluded and self._held_by(opts.roles, excluding=False):
            # "try other words" alone was wrong: the words match, in what was left out
            payload["excluded_hold_matches"] = True
            payload["message"] += (
                " The sessions exclude_session_ids leaves out hold matches; drop it to see them."
            )

    def _held_by(self, roles: list[str], *, excluding: bool = True) -> bool:
        """Whether a message of ``roles`` that the other filters keep holds the query
        (``excluding``: the session exclusions among them)."""
        opts = self.options
        # The current conversation's own matches are no result (``_in_live_context``):
        # a hint they made sent the model to a search that found nothing again.
        # Only its lineage's sessions are passed over, so the reads are few.
        passed: set[str] = set(opts.excluded) if excluding else set()
        try:
            while True:
                rows = self.ctx.store.search(
                    opts.query,
                    exclude_sources=HIDDEN_SESSION_SOURCES,
                    role_filter=roles,
                    limit=_PROBE_ROWS,
                    fields=("id", "session_id"),
                    after=opts.after,
                    before=opts.before,
                    exclude_session_ids=sorted(passed),
                    now=opts.now,
                ).rows
                if any(not self._in_live_context(row) for row in rows):
                    return True
                if len(rows) < _PROBE_ROWS:
                    return False
                passed |= {str(row["session_id"]) for row in rows}
        except Exception:  # noqa: BLE001 - only a hint: the answer stands without it
            log.debug("role probe failed for %r", opts.query, exc_info=True)
            return False

    def _best_holds_every_word(self) -> bool:
        """Whether a conversation the filters keep holds every word, read best first: a
        time sort reads the newest (or oldest) messages, each for its own words, so
        that none of those holds them all says nothing of the conversations."""
        opts = self.options
        try:
            rows = self.ctx.store.search(
                opts.query,
                exclude_sources=HIDDEN_SESSION_SOURCES,
                role_filter=opts.roles,
                limit=_PROBE_ROWS,
                sort=_BY_SESSIONS,
                fields=("id", "session_id", "missing_terms"),
                after=opts.after,
                before=opts.before,
                exclude_session_ids=sorted(opts.excluded),
                archived_only_session_ids=sorted(self.live),
                now=opts.now,
            ).rows
        except Exception:  # noqa: BLE001 - only a note: the answer stands without it
            log.debug("best-match probe failed for %r", opts.query, exc_info=True)
            return True  # unknown: no note rather than a false one
        return any(not r.get("missing_terms") and not self._in_live_context(r) for r in rows)

    def _partial_note(self, slots: dict[str, dict[str, Any]]) -> list[str]:
        """When no result holds every word of a best match: which words the first holds,
        named as written (``SessionStore.words_held``).  A session whose title is the query
        holds every word, so there is no such note beside it."""
        hits = [slot["hit"] for slot in slots.values() if "hit" in slot]
        if len(hits) < len(slots) or not hits or any(not h.get("missing_terms") for h in hits):
            return []  # a title match, a strict query, or a result with every word
        # A cron job's conversation with every word comes after the others: not shown
        # with a small limit, it still holds every word.
        if any(not r.get("missing_terms") and not self._in_live_context(r) for r in self._read):
            return []
        if self.options.sort and self._best_holds_every_word():
            return []
        matched = hits[0].get("matched_terms") or ()
        whole, part, none = self.ctx.store.words_held(self.options.query, matched)
        if whole and not part and not none:
            return []  # it lacks only a pair across a time word's end, no word of the user's
        said = [f"matches {_named(whole)}"] if whole else []
        # which part: "only part of" a long sentence left the model to guess what matched
        parts = self.ctx.store.parts_held(self.options.query, matched) if part else []
        held = [f"{_named([word])} ({_named_runs(runs)})" for word, runs in parts]
        said += [f"matches only part of {', '.join(held)}"] if held else []
        said += [f"not {_named(none)}"] if none and said else []
        return [
            "no conversation holds every word; the first result "
            + (" and ".join(said) or "matches none of them")
        ]

    def _slots(
        self, title: dict[str, Any] | None, rows: list[dict[str, Any]]
    ) -> dict[str, dict[str, Any]]:
        """One slot per lineage root, in result order: the title match, then the hits."""
        slots: dict[str, dict[str, Any]] = {}
        if title is not None:
            slots[title["root"]] = {"title_match": title}
        for row in rows:
            if len(slots) >= self.options.wanted:
                break
            sid = row.get("session_id")
            if not sid:
                continue
            root = self.ctx.lineage(sid)[0]
            if root in slots or self._in_live_context(row):
                continue
            slots[root] = {"hit": row}
        return slots

    def _in_live_context(self, row: Mapping[str, Any]) -> bool:
        """Whether ``row`` is the current conversation's own, which the model still
        holds (not compacted out of it), so no result shows it."""
        sid = str(row["session_id"])
        root = self.ctx.lineage(sid)[0]
        if self.current is None or (root != self.current_root and sid != self.current):
            return False
        compacted_hit = self.ctx.is_compacted(int(row["id"]))
        if root == self.current_root and not (compacted_hit or self.ctx.left_live_context(sid)):
            return True
        return sid == self.current and not compacted_hit

    def _entry_detail(self, first: bool) -> str:
        if self.options.detail == "index":
            return "index"
        if self.options.detail == "full" or first:
            return "full"
        return "compact"

    def _attach_view(
        self, entry: dict[str, Any], session_id: str, anchor_id: int, detail: str
    ) -> bool:
        try:
            if detail == "full":
                view = self.ctx.anchored(session_id, anchor_id)
            else:  # compact: the anchor and the neighbour counts are all it shows
                view = self.ctx.anchor_summary(session_id, anchor_id)
        except Exception:  # noqa: BLE001 - one broken hit must not sink the others
            log.warning("anchored view failed for %s/%s", session_id, anchor_id, exc_info=True)
            return False
        if not view.get("window"):  # deleted since the search read it (Hermes' delete, /undo)
            return False
        self._shape_view(entry, view, anchor_id, detail, WINDOW_CONTENT_CAP)
        entry["messages_before"] = int(view.get("messages_before") or 0)
        entry["messages_after"] = int(view.get("messages_after") or 0)
        self._views.append((entry, view, anchor_id, detail))
        return True

    @staticmethod
    def _shape_view(
        entry: dict[str, Any], view: dict[str, Any], anchor_id: int, detail: str, cap: int
    ) -> None:
        """``entry``'s messages from ``view``: with ``detail`` "full" the window and the
        bookends, else the matching message alone; ``cap`` characters of each."""
        window = view.get("window") or []
        if detail == "full":
            ends = min(cap, BOOKEND_CONTENT_CAP)
            entry["bookend_start"] = bookend_messages(view.get("bookend_start") or [], ends)
            entry["messages"] = [shape_message(m, anchor_id, cap) for m in window]
            entry["bookend_end"] = bookend_messages(view.get("bookend_end") or [], ends)
        else:
            entry.pop("bookend_start", None)
            entry.pop("bookend_end", None)
            entry["messages"] = [
                shape_message(m, anchor_id, cap) for m in window if m.get("id") == anchor_id
            ]

    def _hit_entry(self, root: str, hit: dict[str, Any], first: bool) -> dict[str, Any] | None:
        sid = str(hit["session_id"])
        hit_id = int(hit["id"])
        root_row = self.ctx.session(root) or {}
        detail = self._entry_detail(first)
        entry: dict[str, Any] = {
            "session_id": sid,
            **_origin(root_row, hit, "session_started"),
            "title": root_row.get("title") or None,
            "matched_role": hit.get("role"),
            "match_message_id": hit_id,
            # as its message's content is shaped: no colours of a tool's output
            "snippet": without_escapes(hit.get("snippet") or ""),
            "detail": detail,
        }
        if root != sid:
            entry["parent_session_id"] = root
        if detail == "index":  # no view read: is the message still there?
            return entry if self.ctx.message_flags(hit_id) is not None else None
        return entry if self._attach_view(entry, sid, hit_id, detail) else None

    def _title_entry(self, root: str, match: dict[str, Any], first: bool) -> dict[str, Any] | None:
        sid = match["session_id"]
        row = self.ctx.session(sid) or {}
        root_row = self.ctx.session(root) or row
        anchor_id = self.ctx.store.first_message_id(sid)
        detail = "index" if self.options.detail == "index" else "full"
        entry: dict[str, Any] = {
            "session_id": sid,
            **_origin(root_row, row, "started_at"),
            "title": match["title"],
            "matched_role": "session_title",
            "match_message_id": anchor_id,
            "snippet": f"Session title matched: {match['title']}",
            "detail": detail,
        }
        if root != sid:
            entry["parent_session_id"] = root
        if detail == "index":
            return entry
        if anchor_id is None:
            entry.update(
                bookend_start=[], messages=[], bookend_end=[], messages_before=0, messages_after=0
            )
            return entry
        if not self._attach_view(entry, sid, anchor_id, "full"):
            return None
        return entry
