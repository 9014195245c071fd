"""The ``session_search`` schema the agent shows the model: description and parameters.

The description is the only manual a model reads, so it says when to use the
tool, how each call form works, the query syntax, what an empty result does
not mean, and how to cite a session.
"""

from __future__ import annotations

from typing import Any

from .args import DETAILS, LIMIT_MAX, LIMIT_MIN, SCROLL_WINDOW_MAX, SCROLL_WINDOW_MIN, SORTS

_DESCRIPTION = """\
Look through this user's past conversations with you (the stored session history) \
and bring back the real messages, never a summary. Use it when the user refers to \
earlier work: "what did we decide about X", "where did we leave Y", "find the chat \
where we fixed Z", "what was I doing last week".

The call form follows from the arguments you pass:
1. Search: query="..." returns one result per conversation (best hit first), each \
with match_message_id, a snippet with the match between >>> and <<<, and the messages \
around the hit. With the default detail="adaptive" only the first result carries its \
full surroundings (opening and closing turns plus the window); the others show just \
the matching message, so scroll one of them if it looks more promising. \
detail="full" expands every result; detail="index" returns snippets only (cheapest, \
good for a first look). Narrow with after/before (epoch seconds, ISO dates such \
as 2026-03-15, or a time back from now: 30m, 24h, 7d, 2w); they bound the time of \
the matching message, not the session's start. Leave out sessions you have already \
looked at with exclude_session_ids.
2. Scroll: session_id plus around_message_id returns window messages on each side \
of that message. To move forward pass the last message id you got, to move back the \
first one; that boundary message repeats. Fewer than window messages on one side \
means you reached the start or end of the session.
3. Read: session_id alone returns the whole session, or its first 20 and last 10 \
messages when it has more than 30 (scroll to see the middle). Search, read and scroll \
show at most 4,000 characters of a message (content_truncated) and keep the answer \
under 64 KB; query_notes says what was cut.
4. Browse: no arguments lists the most recently active sessions with title and \
preview.
Out-of-range or unrecognised values (limit, window, sort, detail) are replaced by \
the nearest valid one; the answer's query_notes then says what was used instead.

Query syntax: plain words are a best match, so ask in your own words or list \
keywords (query=when did Caroline go to the support group?; query=caroline support \
group; query=卡罗琳什么时候去了支持小组): conversations holding all the words come \
first, then those holding most of them, rarer words counting more; common words \
such as when, did, the do not decide the result, and query_notes says which words \
the results lack. Time words in a question (last week, March 8, 上周, 3月8号) are \
read from the messages' dates: conversations from then come first, the others \
still follow (after/before filter instead). Once a query has an operator or \
parentheses, words side by side must all occur. AND requires every word (deploy \
AND staging); OR joins alternatives (deploy OR release OR rollout; 部署 OR 发布); \
NOT removes what follows it from what \
the words before it find (deploy NOT staging; 部署 NOT 测试), so a query needs at \
least one word that is not negated and NOT alone is refused; AND and NOT bind \
tighter than OR, and parentheses group ((deploy OR rollout) NOT staging; \
(桂林 OR 漓江) 旅游); "double quotes" match an exact phrase ("connection refused", \
"数据库迁移"); a trailing * matches a prefix (migrat*); NEAR(deploy rollback, 5) finds \
terms within 5 words of each other (NEAR(桂林 漓江, 3)). Operators are upper case. \
Chinese, Japanese and Korean work as typed, no spaces needed, also next to \
operators (桂林OR漓江). A leading - and a colon are ordinary text (rm -rf, \
path:config.yaml). If the result has query_notes, read them: they say what was \
changed in your query or your arguments. If the first results lack the words that \
matter, search again with other words (synonyms, a name, a date) or a prefix.

This tool only sees past conversations. It is never evidence about the current \
state of anything outside them: when the user points at a source (a URL, file, \
repository, mailbox, contact, account or running system) inspect that source \
first if you can and use this tool only as background. An empty result does not \
mean there was no prior contact or that something does not exist; say what you \
checked instead of drawing that conclusion.

Every result has a link such as @session:default/20260315_092437_c9a6ff. To point \
the user at a session, write that link exactly as given, inside your sentence where \
a noun would go ("we settled this in @session:default/20260315_092437_c9a6ff last \
week"). The interface shows it as the session title, so do not wrap it in markdown \
or backticks, do not put it on a line by itself, and do not repeat the title, id or \
date next to it. A link (or its id) can be passed back as session_id."""

TOOL_SCHEMA: dict[str, Any] = {
    "name": "session_search",
    "description": _DESCRIPTION,
    "parameters": {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": (
                    "Words to find in past conversations (search form). Omit to read, "
                    "scroll or browse."
                ),
            },
            "session_id": {
                "type": "string",
                "description": (
                    "A session id or link from an earlier result "
                    "(@session:<profile>/<id>, <profile>/<id> or <id>). Alone it reads the "
                    "session; with around_message_id it scrolls."
                ),
            },
            "around_message_id": {
                "type": "integer",
                "description": "Message id to centre a scroll window on (needs session_id).",
            },
            "window": {
                "type": "integer",
                "minimum": SCROLL_WINDOW_MIN,
                "maximum": SCROLL_WINDOW_MAX,
                "description": "Messages on each side of around_message_id; default 5, 1 to 20.",
            },
            "limit": {
                "type": "integer",
                "minimum": LIMIT_MIN,
                "maximum": LIMIT_MAX,
                "description": (
                    "How many conversations to return (search and browse); default 3, "
                    "at most 10. Use 5-10 when the topic spans many sessions."
                ),
            },
            "sort": {
                "type": "string",
                "enum": list(SORTS),
                "description": (
                    "Omit for best match first. newest favours recent hits ('where did we "
                    "leave X'); oldest favours early ones ('how did X start')."
                ),
            },
            "detail": {
                "type": "string",
                "enum": list(DETAILS),
                "description": (
                    "adaptive (default): first result in full, others compact; full: all "
                    "results in full; index: snippets only."
                ),
            },
            "role_filter": {
                "type": "string",
                "description": (
                    "Comma-separated roles to search; default 'user,assistant'. Use "
                    "'user,assistant,tool' or 'tool' to search tool output."
                ),
            },
            "profile": {
                "type": "string",
                "description": (
                    "Another profile's history to read (read-only), e.g. 'work'. Taken from "
                    "a link's <profile>/ part automatically."
                ),
            },
            "after": {
                "type": "string",
                "description": (
                    "Only messages sent at or after this time (the message's own time, not "
                    "its session's start): epoch seconds, ISO date/time, or a time back "
                    "from now such as 7d, 24h, 30m, 2w (7d = within the last week)."
                ),
            },
            "before": {
                "type": "string",
                "description": (
                    "Only messages sent before this time (the message's own time, not its "
                    "session's start): epoch seconds, ISO date/time, or a time back from now "
                    "such as 7d, 24h, 30m, 2w (7d = older than a week)."
                ),
            },
            "exclude_session_ids": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Session ids or links to leave out of search results.",
            },
        },
        "required": [],
        "additionalProperties": False,
    },
}
