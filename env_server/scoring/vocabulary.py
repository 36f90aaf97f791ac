"""A domain's vocabulary: the enumerated terms its tables and tools allow, grouped into classes.

A class is the set of values one column or one tool argument may take (`flexible` / `non_refundable`,
`blue` / `silver` / `gold` / `platinum`). The `communicate` check reads it to tell an answer from a spray:
the first term of a class the agent asserts is its answer, and a message naming many terms is a list, not an
answer. The classes are derived from the domain's `CHECK ... IN (...)` constraints and the `enum`s of its
tool schemas, so a domain declares nothing twice.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sqlalchemy import CheckConstraint

from env_server.domain import Domain
from env_server.scoring.tokens import Token, readings

_IN_LIST = re.compile(r"(\w+)\s+IN\s*\(([^)]*)\)", re.IGNORECASE)
_QUOTED = re.compile(r"'([^']*)'")


def spoken(value: str) -> str:
    """How a stored enum value is said: `non_refundable` -> `non refundable`."""
    return value.replace("_", " ").strip().lower()


@dataclass(frozen=True)
class Vocabulary:
    """The enumerated terms of a domain, in classes (each class: the spoken values of one enumeration)."""

    classes: tuple[frozenset[str], ...]

    @cached_property
    def terms(self) -> frozenset[str]:
        """Every term of every class."""
        return frozenset(t for c in self.classes for t in c)

    @cached_property
    def needles(self) -> dict[str, list[list[Token]]]:
        """Each term's token readings (with and without word-joining hyphens)."""
        return {t: [r for r in readings(t) if r] for t in self.terms}

    @cached_property
    def by_first(self) -> dict[str, list[tuple[str, list[Token]]]]:
        """Each term's readings, indexed by their first token's value (a message is scanned once)."""
        index: dict[str, list[tuple[str, list[Token]]]] = {}
        for term, needles in self.needles.items():
            for needle in needles:
                index.setdefault(needle[0].value, []).append((term, needle))
        return index

    def rivals(self, item: str) -> frozenset[str]:
        """The terms that compete with `item`: the other values of every class with a term that holds it.

        A term holds the item when the item's words are a run of its words (`adjuster` is held by
        `adjuster review`, `accidental` by `accidental damage`): saying the longer term says the item.
        """
        holding = [c for c in self.classes if any(_within(item, t) for t in c)]
        return frozenset(t for c in holding for t in c if not _within(item, t))

    def holds(self, item: str) -> bool:
        """Whether `item` is one of the terms, or a run of words of one."""
        return any(_within(item, t) for t in self.terms)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower().replace("-", " "))


def _within(item: str, term: str) -> bool:
    """Whether `item`'s words are a run of `term`'s words (or the two are one word joined: nonrefundable).

    An item with a digit is a value, not a word of a term: it is held only by the very same term ("250" is
    not a run of "250/500/250").
    """
    if _key(item) == _key(term):
        return True
    if any(c.isdigit() for c in item):
        return False
    inner, outer = _words(item), _words(term)
    return bool(inner) and any(outer[i : i + len(inner)] == inner for i in range(len(outer) - len(inner) + 1))


def _key(term: str) -> str:
    return re.sub(r"[\s_-]+", "", term.lower())


_CACHE: dict[str, Vocabulary] = {}
_LOCK = threading.Lock()


def vocabulary(domain: Domain) -> Vocabulary:
    """The domain's vocabulary (derived once per domain version)."""
    key = f"{domain.name}:{domain.fingerprint}"
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
    classes = {frozenset(spoken(v) for v in values) for values in _enumerations(domain) if len(values) > 1}
    found = Vocabulary(tuple(sorted(classes, key=sorted)))
    with _LOCK:
        _CACHE[key] = found
    return found


def _enumerations(domain: Domain) -> Iterator[list[str]]:
    for table in domain.metadata.tables.values():
        for constraint in table.constraints:
            if isinstance(constraint, CheckConstraint):
                for m in _IN_LIST.finditer(str(constraint.sqltext)):
                    yield _QUOTED.findall(m.group(2))
    for tool in domain.tools:
        yield from _schema_enums(tool.args_model.model_json_schema())


def _schema_enums(schema: Any) -> Iterator[list[str]]:
    if isinstance(schema, dict):
        if isinstance(schema.get("enum"), list):
            yield [str(v) for v in schema["enum"] if isinstance(v, str)]
        for value in schema.values():
            yield from _schema_enums(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _schema_enums(value)
