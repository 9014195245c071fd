"""A parsed query's tree: ``Term``, ``Near``, ``AllOf`` and ``AnyOf`` nodes inside a
``Query`` with the parser's notes, and ``render``, which writes a tree back in
canonical form (every term quoted, every operator explicit), also valid FTS5."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Union

__all__ = [
    "DEFAULT_NEAR_DISTANCE",
    "AllOf",
    "AnyOf",
    "Near",
    "Node",
    "Query",
    "Term",
    "all_of",
    "any_of",
    "contains_near",
    "quote",
    "render",
]

DEFAULT_NEAR_DISTANCE = 10


@dataclass(frozen=True)
class Term:
    """A word or phrase: ``text`` to find, ``prefix`` for a trailing ``*``.

    ``negated`` is set only in :attr:`Query.terms` listings (a term under an
    odd number of ``NOT``); terms inside the tree never carry it.
    """

    text: str
    prefix: bool = False
    negated: bool = False


@dataclass(frozen=True)
class Near:
    """``NEAR(t1 t2 …, distance)``."""

    terms: tuple[Term, ...]
    distance: int = DEFAULT_NEAR_DISTANCE


@dataclass(frozen=True)
class AllOf:
    """Every ``include`` node and none of the ``exclude`` nodes."""

    include: tuple[Node, ...]
    exclude: tuple[Node, ...] = ()


@dataclass(frozen=True)
class AnyOf:
    """At least one of ``options``."""

    options: tuple[Node, ...]


Node = Union[Term, Near, AllOf, AnyOf]


@dataclass(frozen=True)
class Query:
    """A parsed query: ``expr`` (None: matches nothing), what the parser changed, or why not."""

    expr: Node | None = None
    notes: tuple[str, ...] = ()
    error: str | None = None
    # Words and phrases side by side with no operator, parenthesis or NEAR, or
    # joined by OR alone (``expr`` an AnyOf): a best match
    # (``query.best.best_match``), not all or nothing.  ``bare`` holds the texts
    # written without quotes, which may be split further or searched in
    # other forms.
    loose: bool = False
    bare: tuple[str, ...] = ()
    # Of a best match: (word, its other forms) pairs among its terms
    # (``fixed``, ``fix*``), and overlapping bigrams of a sentence (张伟, 伟说): one
    # word, which a row holds once (``term_groups``).
    forms: tuple[tuple[Term, Term], ...] = ()

    @property
    def is_empty(self) -> bool:
        return self.expr is None

    @property
    def terms(self) -> tuple[Term, ...]:
        """Every term in query order, NEAR terms included, ``negated`` by polarity."""
        return tuple(_walk_terms(self.expr, False)) if self.expr is not None else ()


def _walk_terms(node: Node, negated: bool) -> Iterator[Term]:
    if isinstance(node, Term):
        yield replace(node, negated=negated)
    elif isinstance(node, Near):
        for term in node.terms:
            yield replace(term, negated=negated)
    elif isinstance(node, AnyOf):
        for option in node.options:
            yield from _walk_terms(option, negated)
    else:
        for child in node.include:
            yield from _walk_terms(child, negated)
        for child in node.exclude:
            yield from _walk_terms(child, not negated)


def contains_near(node: Node | None) -> bool:
    if node is None or isinstance(node, Term):
        return False
    if isinstance(node, Near):
        return True
    children = node.options if isinstance(node, AnyOf) else node.include + node.exclude
    return any(contains_near(c) for c in children)


def all_of(include: list[Node], exclude: list[Node]) -> Node:
    """AND is associative: nested positive ANDs merge; repeats are kept once."""
    inc: list[Node] = []
    exc: list[Node] = []
    for node in exclude:  # NOT (a OR b) is NOT a NOT b
        exc.extend(node.options if isinstance(node, AnyOf) else (node,))
    for node in include:
        if isinstance(node, AllOf):
            inc.extend(node.include)
            exc.extend(node.exclude)
        else:
            inc.append(node)
    inc_t, exc_t = tuple(dict.fromkeys(inc)), tuple(dict.fromkeys(exc))
    if len(inc_t) == 1 and not exc_t:
        return inc_t[0]
    return AllOf(inc_t, exc_t)


def any_of(options: list[Node]) -> Node:
    flat: list[Node] = []
    for node in options:
        flat.extend(node.options if isinstance(node, AnyOf) else (node,))
    unique = tuple(dict.fromkeys(flat))
    return unique[0] if len(unique) == 1 else AnyOf(unique)


def quote(text: str) -> str:
    """``text`` as an FTS5 string: in double quotes, its own doubled."""
    return '"' + text.replace('"', '""') + '"'


def render(node: Node, *, prefix_star: bool = True, top: bool = True) -> str:
    """``node`` with every term quoted, every operator explicit, compounds parenthesized.

    FTS5's own precedence never decides the meaning.  ``prefix_star=False``
    drops the ``*`` of prefix terms (a trigram substring already extends).
    """
    if isinstance(node, Term):
        return quote(node.text) + ("*" if node.prefix and prefix_star else "")
    if isinstance(node, Near):
        inner = " ".join(render(t, prefix_star=prefix_star) for t in node.terms)
        return f"NEAR({inner}, {node.distance})"
    if isinstance(node, AnyOf):
        text = " OR ".join(render(o, prefix_star=prefix_star, top=False) for o in node.options)
    else:
        text = " AND ".join(render(c, prefix_star=prefix_star, top=False) for c in node.include)
        if node.exclude:
            # one NOT over an OR of the exclusions keeps the FTS5 tree shallow
            if len(node.include) > 1:
                text = f"({text})"
            excluded = any_of(list(node.exclude))
            text += " NOT " + render(excluded, prefix_star=prefix_star, top=False)
    return text if top else f"({text})"
