"""A message read once for the `communicate` check: its tokens, clauses, values, terms, and how each is said.

`SaidMessage` holds what every rule reads of one message (both token readings, the clause model of
`env_server.scoring.assertion`, the values of each kind, the vocabulary's terms); `Said` is one value in it
with its verdict: why it is not asserted, its role (frame), whether it stands in a list, what it counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from env_server.scoring.assertion import AUX, FILLERS, NEGATORS, OPENERS, SUBJECTS, WH, Clauses
from env_server.scoring.tokens import Token, find, readings
from env_server.scoring.trajectory import Message
from env_server.scoring.vocabulary import Vocabulary

NGRAM = 6
COPIED_MIN = 12

_JOINERS = frozenset({"and", "or", "nor", "to", "vs", "versus", "plus", "either", "both", "through"})
_NOT_UNITS = _JOINERS | AUX | FILLERS | NEGATORS | {"percent"}
#: Function words: a number after one of them is a value ("is 310", "of 310"), after another word a name's.
FUNCTION_WORDS = _NOT_UNITS | frozenset(
    {"of", "for", "in", "on", "by", "from", "with", "over", "under", "than", "as", "into", "per", "be"}
)  # fmt: skip
#: Words that carry a sentence on rather than name another thing ("final-sale, which …", "shipped, so it …").
CLAUSAL = FUNCTION_WORDS | SUBJECTS | OPENERS | WH
_LIST_MARK = re.compile(r"[,/&|+;\-–]")


def group(token: Token) -> str:
    """The kind of value a token competes with: amounts and counts, percentages, dates, ids, words."""
    if token.kind in ("money", "number"):
        return "amount"
    return token.kind


def valued(hay: list[Token], occ: Occurrence) -> int:
    """The index of the item's value in an occurrence: its first token that is not a word.

    An item with a number (its value) may open with words ("Mobile 10"): the value is what rivals, lists
    and sprays are counted by, never the word before it.
    """
    return next((i for i in range(occ.start, occ.end) if group(hay[i]) != "word"), occ.start)


@dataclass(frozen=True)
class Occurrence:
    """Where a value's tokens stand in a message: the reading and the token indices [start, end)."""

    reading: int
    start: int
    end: int


@dataclass(frozen=True)
class Said:
    """One value the agent said: its canonical value, where, and whether (and in what role) it asserts it."""

    value: str
    message: int
    occ: Occurrence
    why_not: str | None
    frame: tuple[str, ...]
    listed: bool
    kind: str = "term"
    unit: str = ""
    named: bool = False

    @property
    def asserted(self) -> bool:
        """Said as so: not asked, hedged, conditional, negated, labelled or in a list."""
        return self.why_not is None and not self.listed

    def competes(self, other: Said) -> bool:
        """Whether two values could answer one question: same kind, and a count of the same unit.

        `$306` and `310` compete (a bare number may be an amount), `30 days` and `40 days` do, but `5 days`
        and `$44.90`, or `three instalments` and `$103.34`, are values of different things.
        """
        if self.kind == other.kind:
            return self.kind != "number" or self.unit == other.unit
        if {self.kind, other.kind} == {"money", "number"}:
            number = self if self.kind == "number" else other
            return number.unit == "" and not number.named
        return False

    @property
    def floated(self) -> bool:
        """Offered as a possibility: asked, hedged, conditional, behind a label or as one of alternatives.

        Negated values and named alternatives are not offered; a value in a list is judged by its role.
        """
        return self.why_not is not None and not self.why_not.startswith(("negated", "named as", "a sentence"))


class SaidMessage:
    """One message, read once: its tokens (both readings), clauses and vocabulary terms."""

    def __init__(self, message: Message, vocab: Vocabulary, policy_grams: frozenset[tuple[str, ...]]) -> None:
        self.role = message.role
        self.text = message.content
        self.readings = readings(message.content)
        self._vocab = vocab
        self._policy_grams = policy_grams

    @property
    def tokens(self) -> list[Token]:
        """The tokens of the text as written."""
        return self.readings[0]

    @cached_property
    def words(self) -> int:
        """How many words the message has."""
        return len(self.text.split())

    @cached_property
    def copied(self) -> int:
        """How many of the message's tokens lie in runs of `NGRAM` tokens that also stand in the policy."""
        values = [t.value for t in self.tokens]
        covered = [False] * len(values)
        for i in range(len(values) - NGRAM + 1):
            if tuple(values[i : i + NGRAM]) in self._policy_grams:
                covered[i : i + NGRAM] = [True] * NGRAM
        return sum(covered)

    def is_copied(self) -> bool:
        """Whether the message is mostly the policy's own words."""
        return self.copied >= COPIED_MIN and self.copied * 2 >= self.words

    @cached_property
    def clauses(self) -> list[Clauses]:
        """Each reading cut into sentences and clauses."""
        return [Clauses(self._text(r), hay) for r, hay in enumerate(self.readings)]

    def occurrences(self, item: str) -> list[Occurrence]:
        """Every place the item's tokens stand in a row (a term also with its hyphens dropped)."""
        found = []
        hays = self.readings if not any(c.isdigit() for c in item) else self.readings[:1]
        for needle in (n for n in readings(item) if n):
            for r, hay in enumerate(hays):
                found += [Occurrence(r, s, s + len(needle)) for s in find(needle, hay)]
        return found

    @cached_property
    def terms(self) -> list[tuple[str, Occurrence]]:
        """The vocabulary terms the message names, each with where it stands."""
        found = []
        for r, hay in enumerate(self.readings):
            for start, token in enumerate(hay):
                for term, needle in self._vocab.by_first.get(token.value, ()):
                    if find(needle, hay[start : start + len(needle)]):
                        found.append((term, Occurrence(r, start, start + len(needle))))
        return found

    def values(self, kind: str) -> list[tuple[str, Occurrence]]:
        """The values of one group in the message (ids whole), each with where it stands."""
        hay = self.tokens
        out: list[tuple[str, Occurrence]] = []
        i = 0
        while i < len(hay):
            if group(hay[i]) != kind or kind == "word":
                i += 1
                continue
            j = i + 1
            while kind == "id" and j < len(hay) and hay[j].group == hay[i].group and hay[j].kind == "id":
                j += 1
            out.append(("-".join(t.value for t in hay[i:j]), Occurrence(0, i, j)))
            i = j
        return out

    def why_not(self, occ: Occurrence) -> str | None:
        """Why the value at `occ` is not asserted (asked, hedged, negated, an option…), or None."""
        return self.clauses[occ.reading].why_not(occ.start, occ.end)

    def sentence_words(self, occ: Occurrence) -> int:
        """How many tokens the sentence holding `occ` has."""
        cut = self.clauses[occ.reading]
        sentence = cut.clause(occ.start).sentence
        return sum(c.end - c.start for c in cut.clauses if c.sentence == sentence)

    def frame(self, occ: Occurrence, skip: frozenset[int]) -> tuple[str, ...]:
        """The role of the value at `occ` (see `Clauses.frame`)."""
        return self.clauses[occ.reading].frame(occ.start, occ.end, skip)

    def in_list(self, occ: Occurrence, rival: Callable[[int, int], bool]) -> bool:
        """Whether `occ` is joined to a neighbouring value of its kind by commas, slashes, "or"/"and"."""
        hay = self.readings[occ.reading]
        text = self._text(occ.reading)
        i = occ.start - 1
        while i >= 0 and hay[i].value in _JOINERS:
            i -= 1
        if i >= 0 and rival(occ.reading, i) and _joins(text[hay[i].end : hay[occ.start].start]):
            return True
        k = occ.end
        while k < len(hay) and hay[k].value in _JOINERS:
            k += 1
        return k < len(hay) and rival(occ.reading, k) and _joins(text[hay[occ.end - 1].end : hay[k].start])

    def named(self, at: int) -> bool:
        """Whether the number at token `at` follows a content word, as a name's does ("Fibre 100")."""
        if at == 0:
            return False
        word = self.tokens[at - 1]
        return (
            word.kind == "word"
            and word.value not in FUNCTION_WORDS
            and self.clauses[0].clause(at - 1).end > at
        )

    def unit(self, occ: Occurrence, at: int) -> str:
        """What the number at token `at` counts: the noun right after it in its clause ("5 days" -> day)."""
        cut = self.clauses[occ.reading]
        hay = self.readings[occ.reading]
        nxt = at + 1
        if nxt >= cut.clause(at).end or hay[nxt].kind != "word" or hay[nxt].value in _NOT_UNITS:
            return ""
        return hay[nxt].value.removesuffix("s")

    def lone(self, reading: int, i: int) -> bool:
        """Whether token i stands between list marks or joiners on both sides (or the text's ends)."""
        hay = self.readings[reading]
        text = self._text(reading)
        before = text[hay[i - 1].end : hay[i].start] if i > 0 else "."
        after = text[hay[i].end : hay[i + 1].start] if i + 1 < len(hay) else "."

        def bounds(gap: str, side: int) -> bool:
            near = i + side
            joiner = 0 <= near < len(hay) and hay[near].value in _JOINERS
            return joiner or _joins(gap) or re.search(r"[.!?;:]", gap) is not None

        return bounds(before, -1) and bounds(after, 1)

    def bare_among_bare(self, occ: Occurrence) -> bool:
        """Whether a word stands alone in its clause among other lone words ("Airplane. Wifi. Roaming.").

        The item's clause holds nothing but it, and at least two other clauses of the message are one
        content word each: a spray cut into sentences, not an answer ("Transfer complete, all done." is one).
        """
        cut = self.clauses[occ.reading]
        hay = self.readings[occ.reading]
        c = cut.clause(occ.start)
        if (c.end - c.start) != (occ.end - occ.start):
            return False
        lone = [
            o
            for o in cut.clauses
            if o != c
            and o.end - o.start == 1
            and hay[o.start].kind == "word"
            and hay[o.start].value not in CLAUSAL
        ]
        return len(lone) >= 2

    def said(self, occ: Occurrence) -> str:
        """The text of an occurrence, as the agent wrote it."""
        hay = self.readings[occ.reading]
        return self._text(occ.reading)[hay[occ.start].start : hay[occ.end - 1].end]

    def _text(self, reading: int) -> str:
        return self.text if reading == 0 else dehyphenated(self.text)


def _joins(gap: str) -> bool:
    """Whether the text between two values makes them a list: separators and joiner words only."""
    words = re.findall(r"[A-Za-z]+", gap)
    if any(w.lower() not in _JOINERS for w in words):
        return False
    return bool(words) or _LIST_MARK.search(gap) is not None


def dehyphenated(text: str) -> str:
    """The text with word-joining hyphens dropped ("non-refundable" -> "nonrefundable")."""
    return re.sub(r"(?<=[A-Za-z])-(?=[A-Za-z])", "", text)
