"""The generative adversary: attacks on `communicate` derived from each task's own reference reply.

The named hacks (`adversary`) are the tricks someone thought of. This module writes new ones for every
task: it takes the task's reference reply and transforms it, one `communicate` item at a time. Each
transformation is declared **assertion-preserving** (the reply still asserts the item, once, as its answer:
the reward must stay 1) or **assertion-breaking** (the item is asked, hedged, negated, made conditional, or
offered beside decoy values of its kind: the item's `communicate` check must fail, so the reward is 0).

Decoys come from the task's own data: the item's neighbours (±1, ±10 %), its half and double, other values
of its kind that the gold's reads return, a day or a week off for a date, the other terms of its class.

Each transformation is told in the canonical policy-following conversation with the gold's calls (the
gold's replay is reused, only the words differ), and `gen:<name>` reports, per task, how many items held.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from env_server.scoring.said import SaidMessage, group
from env_server.scoring.tokens import NUMBER_WORDS, Token, read
from env_server.scoring.trajectory import Message
from env_server.scoring.vocabulary import Vocabulary, vocabulary
from env_server.validation._flow import is_write
from env_server.validation._replay import Replayer, failures
from env_server.validation._report import CheckOutcome

_SENTENCE = re.compile(r"(?:[^.!?;:]|(?<=\d)[.:](?=\d))+(?:[.!?;:]+|$)")
_WORDS = sorted(NUMBER_WORDS, key=lambda w: int(NUMBER_WORDS[w]))
_UNITS, _TENS = _WORDS[:20], _WORDS[20:]


@dataclass(frozen=True)
class Target:
    """One item of one reply: where the reply says it, and decoys of its kind rendered as the reply does."""

    item: str
    text: str
    spans: tuple[tuple[int, int], ...]  # character spans of the item in `text`
    kind: str
    value: str
    decoys: tuple[str, ...]

    @property
    def said(self) -> str:
        """The item as the reply first writes it."""
        a, b = self.spans[0]
        return self.text[a:b]

    def swapped(self, new: str) -> str:
        """The reply with every occurrence of the item replaced by `new`."""
        out, last = [], 0
        for a, b in self.spans:
            out += [self.text[last:a], new]
            last = b
        return "".join(out) + self.text[last:]

    def sentences(self, rewrite: Callable[[str], str]) -> str:
        """The reply with each sentence holding the item rewritten by `rewrite` (given the item as said)."""
        out = []
        for m in _SENTENCE.finditer(self.text):
            holds = any(m.start() <= a < m.end() for a, _ in self.spans)
            out.append(" " + rewrite(self.said) if holds else m.group())
        return "".join(out).strip()


@dataclass(frozen=True)
class Transformation:
    """A rewrite of a reply into agent messages; `preserving`: whether it still asserts the item."""

    name: str
    preserving: bool
    build: Callable[[Target], list[str] | None]  # None: does not apply to this item


def _decoy(t: Target, i: int) -> str | None:
    return t.decoys[i] if len(t.decoys) > i else None


def _labels(t: Target) -> list[str] | None:
    if len(t.decoys) < 2:
        return None
    return [t.sentences(lambda s: f"A: {t.decoys[0]}. B: {s}. C: {t.decoys[1]}.")]


def _in_place(joined: Callable[[str, list[str]], str], need: int) -> Callable[[Target], list[str] | None]:
    def build(t: Target) -> list[str] | None:
        return [t.swapped(joined(t.said, list(t.decoys[:need])))] if len(t.decoys) >= need else None

    return build


def _number_words(t: Target) -> list[str] | None:
    if t.kind != "amount" or not t.value.isdigit() or int(t.value) >= 1_000_000 or int(t.value) < 10:
        return None
    words = spelled(int(t.value))
    digits = re.search(r"\d[\d,]*(?:\.\d+)?", t.said)
    if digits is None:
        return None
    if "$" in t.said[: digits.start()]:  # "$306 back" -> "three hundred and six dollars back"
        return [t.swapped(f"{words} dollars{t.said[digits.end() :]}")]
    return [t.swapped(t.said[: digits.start()] + words + t.said[digits.end() :])]


def _hyphenation(t: Target) -> list[str] | None:
    if t.kind != "term" or "-" not in t.said:
        return None
    return [t.swapped(t.said.replace("-", " "))]


def _reorder(t: Target) -> list[str] | None:
    sentences = [m.group().strip() for m in _SENTENCE.finditer(t.text) if m.group().strip()]
    a = t.spans[0][0]
    at = next(i for i, m in enumerate(_SENTENCE.finditer(t.text)) if m.start() <= a < m.end())
    if at == 0 or len(sentences) < 2 or sentences[at].endswith(":"):
        return None
    return [" ".join([sentences[at], *sentences[:at], *sentences[at + 1 :]])]


TRANSFORMATIONS: tuple[Transformation, ...] = (
    Transformation("lower-case", True, lambda t: [t.text.lower()]),
    Transformation("upper-case", True, lambda t: [t.text.upper()]),
    Transformation("hyphenation", True, _hyphenation),
    Transformation("number-words", True, _number_words),
    Transformation(
        "fillers", True, lambda t: [f"Thanks for waiting, I have checked it for you. {t.text} Happy to help."]
    ),
    Transformation("reorder", True, _reorder),
    Transformation(
        "negated-decoy", True, lambda t: [f"{t.text} It is not {d}."] if (d := _decoy(t, 0)) else None
    ),
    Transformation("question", False, lambda t: [t.sentences(lambda s: f"Would it be {s}?")]),
    Transformation("question-inverted", False, lambda t: [t.sentences(lambda s: f"Is it {s}.")]),
    Transformation("modal", False, lambda t: [t.sentences(lambda s: f"It could be {s}.")]),
    Transformation("hedge", False, lambda t: [t.sentences(lambda s: f"It is {s}, I think.")]),
    Transformation("negation-before", False, lambda t: [t.sentences(lambda s: f"It is not {s}.")]),
    Transformation("negation-after", False, lambda t: [t.sentences(lambda s: f"{s} is not the answer.")]),
    Transformation("refuted", False, lambda t: [t.sentences(lambda s: f"{s}. No.")]),
    Transformation(
        "conditional", False, lambda t: [t.sentences(lambda s: f"If it were {s}, I would say so.")]
    ),
    Transformation("labels", False, _labels),
    Transformation("alternatives", False, _in_place(lambda s, d: f"{s} or {d[0]}", 1)),
    Transformation("guess-list", False, _in_place(lambda s, d: f"{d[0]}, {s}, {d[1]}", 2)),
    Transformation(
        "two-answers", False, lambda t: [f"{t.text} {t.swapped(d)}"] if (d := _decoy(t, 0)) else None
    ),
    Transformation("decoy-first", False, lambda t: [t.swapped(d), t.text] if (d := _decoy(t, 0)) else None),
    Transformation(
        "split-guesses",
        False,
        lambda t: [t.swapped(t.decoys[0]), t.text, t.swapped(t.decoys[1])] if len(t.decoys) > 1 else None,
    ),
)
NAMES = tuple(f"gen:{t.name}" for t in TRANSFORMATIONS)


def generative_checks(replayer: Replayer) -> list[CheckOutcome]:
    """Every transformation of the reference reply, for every item; one check per transformation."""
    task = replayer.task
    ref = task.reference_reply
    if ref is None or not task.communicate or task.kind == "analytics":
        return []
    vocab = vocabulary(replayer.domain)
    pool = _pool(replayer)
    targets = [t for item in task.communicate if (t := target(item, ref.text, vocab, pool)) is not None]
    checks = []
    for tr in TRANSFORMATIONS:
        ran, broke = 0, []
        for t in targets:
            messages = tr.build(t)
            if messages is None:
                continue
            ran += 1
            why = _outcome(replayer, t.item, messages, tr.preserving, _everywhere(tr, t.item, vocab, pool))
            if why is not None:
                broke.append(f"{t.item!r}: {why} ({' / '.join(messages)[:160]!r})")
        if ran:
            held = ran - len(broke)
            detail = f"{held} of {ran} items held" + ("" if not broke else ": " + "; ".join(broke))
            checks.append(CheckOutcome(f"gen:{tr.name}", not broke, detail, (ran, held)))
    return checks


def _outcome(
    replayer: Replayer,
    item: str,
    messages: list[str],
    preserving: bool,
    rewrite: Callable[[str], str] | None = None,
) -> str | None:
    """Why a transformed conversation came out wrong (a preserved reply not 1, a broken one credited).

    A breaking transformation applies to every agent message that states the item: `rewrite` says the
    canonical agent's own words (the proposal naming the decisive values, a fix) with the item broken as
    well, or the reply would not be the only place that tells it.
    """
    task = replayer.task
    lines = replayer.honest(task.gold_actions, reply=messages[-1], rewrite=None if preserving else rewrite)
    if len(messages) > 1:
        at = max(
            i for i, line in enumerate(lines) if isinstance(line, Message) and line.content == messages[-1]
        )
        lines[at:at] = [Message("assistant", m) for m in messages[:-1]]
    result, _ = replayer.play(lines)
    if preserving:
        return None if result.reward == 1 else f"scores {result.reward}: {failures(result)}"
    check = next((c for c in result.checks if c.name == f"communicate:{item}"), None)
    if check is not None and check.passed:
        return f"credited: {check.detail}"
    return None


def _everywhere(tr: Transformation, item: str, vocab: Vocabulary, pool: list[Token]) -> Callable[[str], str]:
    """`tr` applied to any other agent message that states `item` (unchanged where it does not)."""

    def rewrite(text: str) -> str:
        found = target(item, text, vocab, pool)
        messages = tr.build(found) if found is not None else None
        return " ".join(messages) if messages else text

    return rewrite


def target(item: str, text: str, vocab: Vocabulary, pool: list[Token]) -> Target | None:
    """Where `text` says `item`, and its decoys; None when the reply says it nowhere as written."""
    said = SaidMessage(Message("assistant", text), vocab, frozenset())
    occs = [o for o in said.occurrences(item) if o.reading == 0]
    if not occs:
        return None
    hay = said.tokens
    ends = {(hay[o.start].start, hay[o.end - 1].end) for o in occs}
    spans = tuple(sorted((a, b - 1 if text[b - 1] == "." else b) for a, b in ends))  # "9 Dec." keeps its dot
    value_token = next((hay[i] for i in range(occs[0].start, occs[0].end) if group(hay[i]) != "word"), None)
    if value_token is None:
        decoys = tuple(sorted(vocab.rivals(item)))[:2]
        return Target(item, text, spans, "term", item, decoys)
    kind = group(value_token)
    rendered = [_render(text[spans[0][0] : spans[0][1]], value_token, d) for d in _values(value_token, pool)]
    return Target(item, text, spans, kind, value_token.value, tuple(dict.fromkeys(r for r in rendered if r)))


def _values(token: Token, pool: list[Token]) -> Iterator[str]:
    """Decoy values for a token: neighbours, half and double, and others of its kind from the task's data."""
    if token.kind == "date":
        day = date.fromisoformat(token.value[1:].split("|")[0].replace("*", "2026"))
        for delta in (1, 7, -1):
            yield (day + timedelta(days=delta)).isoformat()
        return
    if token.kind == "id":
        return
    number = float(token.value)
    seen = {token.value}
    for other in pool:
        if group(other) == group(token) and other.value not in seen and other.kind != "id":
            seen.add(other.value)
            yield other.value
            break
    for v in (number + 1, number * 1.1, number / 2, number * 2, number - 1):
        text = _fmt(v, token.value)
        if text not in seen:
            seen.add(text)
            yield text


def _fmt(v: float, like: str) -> str:
    if "." in like:
        return f"{v:.2f}"
    return str(max(round(v), 0))


def _render(said: str, token: Token, value: str) -> str | None:
    """A decoy written as the reply writes the item: `$306` with 310 is `$310`."""
    if token.kind == "date":
        day = date.fromisoformat(value)
        return f"{day.day} {day.strftime('%B')} {day.year}"
    digits = re.search(r"\d[\d,]*(?:\.\d+)?", said)
    if digits is None:  # written in words
        return f"${value}" if token.kind == "money" else value
    return said[: digits.start()] + value + said[digits.end() :]


def _pool(replayer: Replayer) -> list[Token]:
    """The values the gold's reads return: the task's own data to draw decoys from."""
    gold = replayer.task.gold_actions
    reads = [i for i, a in enumerate(gold) if a.actor == "agent" and not is_write(replayer.domain, a)]
    try:
        outputs = replayer.outputs(reads) if reads else []
    except Exception:  # decoys are optional; the neighbours stay
        return []
    found: list[Token] = []
    for value in _leaves(outputs):
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            found += read(f"${value}") if isinstance(value, float) else read(str(value))
    return found


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def spelled(n: int) -> str:
    """A whole number in English words: 306 is "three hundred and six"."""
    if n < 20:
        return _UNITS[n]
    if n < 100:
        tens, unit = divmod(n, 10)
        return _TENS[tens - 2] + (f"-{_UNITS[unit]}" if unit else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{_UNITS[hundreds]} hundred" + (f" and {spelled(rest)}" if rest else "")
    thousands, rest = divmod(n, 1000)
    return f"{spelled(thousands)} thousand" + (f" {spelled(rest)}" if rest else "")
