"""The `communicate` check: a fact counts only when the agent asserted it, once, as its answer.

A `communicate` item is an atomic fact: an amount, a date, an id, a count or a single term. Finding its
tokens in an agent message (`env_server.scoring.tokens` normalises any wording, number words included) is
necessary but not enough. The check asks what an assertion is, from the structure of the sentence
(`env_server.scoring.assertion`), and credits an item only when all of these hold:

1. **an answer** (`answer`): the message is short (at most `MAX_WORDS` words), in the agent's own words
   (fewer than half of its words in `NGRAM`-word runs of the policy), names fewer than `SPRAY_TERMS` of the
   domain's terms, and no user message said the item before it (an echo is not an answer); the sentence
   holding the item is a sentence, not a run-on list (at most `MAX_SENTENCE` words).
2. **asserted** (`asserted`): in at least one place the item is not asked, hedged, conditional, negated
   (anywhere in its clause) or offered behind a label or as the alternative (see `assertion`).
3. **alone** (`not a list`): that occurrence is not joined to another value of its kind by commas, slashes,
   "or"/"and"/"to" (a hedge "$40 or $50" and a dump "40, 50, 60" name it without telling it); a term outside
   the vocabulary is not one bare word among others ("airplane, wifi, roaming").
4. **one answer** (`one answer`): nowhere in the conversation does the agent offer another value of the
   item's kind as a candidate for the same fact: asserted in the same role (the same two words before it:
   "It is $306." … "It is $310."), as a bare fragment ("$310."), or floated without being asserted (asked,
   hedged, under a condition, in a list, behind a label). Values the agent only negated, values named as the
   alternative ("rather than the $1,450 you pay now"), the task's other items and the decisive values of its
   gold writes (what a proposal names) are no rivals; a bare repeat of the item adds no role. This is the
   counterfactual test: a conversation that would also earn a different value of the item's kind earns
   neither.
5. **few values** (`no spray`): the agent asserts at most `MAX_RIVALS` other values of the item's kind in
   the item's message and at most `MAX_DISTINCT` distinct ones over the conversation, whatever their role.

What the model still cannot see (also in docs/validity/reward-rules.md): a right value given for a wrong
reason; a rival asserted in a different role ("The refund is $306. The fee is $310.") within the caps; a
negation or hedge in words outside its closed classes ("306 is a fib"); a conditional without its comma
("If you cancel today $189 goes back"); and an honest correction ("$310, sorry, $306"), which earns nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from env_server.scoring.said import (
    CLAUSAL,
    NGRAM,
    Occurrence,
    Said,
    SaidMessage,
    dehyphenated,
    group,
    valued,
)
from env_server.scoring.tokens import Token, read, readings, same
from env_server.scoring.trajectory import Message
from env_server.scoring.vocabulary import Vocabulary
from shared.judge import JudgeMessage

MAX_WORDS = 120
MAX_SENTENCE = 40
MAX_RIVALS = 3
SPRAY_TERMS = 6
MAX_DISTINCT = 6
RULES = ("answer", "asserted", "not a list", "one answer", "no spray")


@dataclass(frozen=True)
class Verdict:
    """Whether an item was told, and the sentence a score shows for it."""

    passed: bool
    detail: str


class Conversation:
    """A conversation read for the `communicate` check: each message once, then any number of items."""

    def __init__(
        self, messages: Sequence[Message], vocab: Vocabulary, policy: str = "", items: Sequence[str] = ()
    ) -> None:
        grams = _grams(policy)
        self.vocab = vocab
        self.messages = [SaidMessage(m, vocab, grams) for m in messages]
        self.items = tuple(items)

    def answers(self) -> list[Message]:
        """The conversation without the agent's non-answers (too long, the policy's words, a term spray)."""
        return [Message(m.role, m.text) for m in self.messages if m.role == "user" or self._answer(m)]

    def _answer(self, m: SaidMessage) -> bool:
        return m.words <= MAX_WORDS and not m.is_copied() and len({t for t, _ in m.terms}) < SPRAY_TERMS

    def told(self, item: str) -> Verdict:
        """Whether the agent asserted `item`, once, as its answer; the detail says where, or what bit."""
        is_term = not any(c.isdigit() for c in item) or self.vocab.holds(item)
        misses: list[str] = []
        found: list[Said] = []
        user_said = False
        agent_index = 0
        for index, message in enumerate(self.messages):
            occurrences = message.occurrences(item)
            if message.role == "user":
                user_said = user_said or bool(occurrences)
                continue
            agent_index += 1
            if not occurrences:
                continue
            why = self._message_rule(message, user_said)
            if why is not None:
                misses.append(f"message {agent_index}: {why}")
                continue
            for occ in occurrences:
                said = self._said_item(index, message, occ, item, is_term)
                if said.asserted:
                    found.append(said)
                else:
                    reason = said.why_not or "one of a list of values"
                    misses.append(f"message {agent_index}: {reason} ('{message.said(occ)}')")
        if not found:
            if not misses:
                return Verdict(False, "never said")
            return Verdict(False, "not told as the answer: " + "; ".join(dict.fromkeys(misses)))
        rivals = self._rivals(item, is_term, found)
        if rivals is not None:
            return Verdict(False, rivals)
        first = found[0]
        return Verdict(True, f"told in message {self._agent_ordinal(first.message)}")

    def _agent_ordinal(self, index: int) -> int:
        return sum(m.role == "assistant" for m in self.messages[: index + 1])

    def _message_rule(self, message: SaidMessage, user_said: bool) -> str | None:
        if user_said:
            return "the user had said it first (an echo is not an answer)"
        if message.words > MAX_WORDS:
            return f"a message of {message.words} words (an answer has at most {MAX_WORDS})"
        if message.is_copied():
            return f"{message.copied} of its {message.words} words are copied from the policy"
        named = {t for t, _ in message.terms}
        if len(named) >= SPRAY_TERMS:
            return f"it names {len(named)} of the domain's terms (a list, not an answer)"
        return None

    def _said_item(self, index: int, message: SaidMessage, occ: Occurrence, item: str, is_term: bool) -> Said:
        """How the item is said at `occ`: why not asserted, its role, whether it stands in a list."""
        hay = message.readings[occ.reading]
        why = message.why_not(occ)
        if why is None and message.sentence_words(occ) > MAX_SENTENCE:
            why = f"a sentence of over {MAX_SENTENCE} words (a run-on list, not an answer)"
        if is_term:
            rivals = self.vocab.rivals(item)
            ends = {(o.reading, i) for t, o in message.terms if t in rivals for i in (o.start, o.end - 1)}
            rival: Callable[[int, int], bool] = lambda r, i: (r, i) in ends  # noqa: E731
            if not rivals:  # a term outside the vocabulary: a lone content word joined to it makes a list
                own = {t.value for t in read(item)} | {dehyphenated(item).lower()}

                def rival(
                    r: int, i: int
                ) -> bool:  # "airplane, wifi, …", not an apposition "area, Harbourside"
                    words = message.readings[r]
                    return (
                        words[i].kind == "word" and words[i].value not in CLAUSAL | own and message.lone(r, i)
                    )

            listed = message.in_list(occ, rival) or (not rivals and message.bare_among_bare(occ))
            skip: frozenset[int] = frozenset()
        else:
            first = hay[valued(hay, occ)]

            def rival(r: int, i: int) -> bool:  # a value of the same kind, not the fact repeated nor a name's
                t = message.readings[r][i]
                name = t.kind == "number" and first.kind == "money" and r == 0 and message.named(i)
                return group(t) == group(first) and t.value != first.value and not name

            listed = message.in_list(occ, rival)
            skip = frozenset(i for i, t in enumerate(hay) if group(t) == group(first))
            at = valued(hay, occ)
            frame = message.frame(occ, skip)
            unit, named = message.unit(occ, at), occ.reading == 0 and message.named(at)
            return Said(item, index, occ, why, frame, listed, first.kind, unit, named)
        return Said(item, index, occ, why, message.frame(occ, skip), listed)

    def _candidates(self, item: str, is_term: bool, kind: str) -> list[Said]:
        """Every other value of the item's kind the agent said in an answer, each with how it said it."""
        others = {_canon(i) for i in self.items}
        out: list[Said] = []
        for index, message in enumerate(self.messages):
            if message.role != "assistant" or not self._answer(message):
                continue
            if is_term:
                rivals = self.vocab.rivals(item)
                mine = message.occurrences(item)
                spots = [(t, o) for t, o in message.terms if t in rivals and not _inside(o, mine)]
            else:
                spots = [(v, o) for v, o in message.values(kind) if v not in others]
            for value, occ in spots:
                if not is_term and _same_value(item, value):
                    continue
                said = self._said_item(index, message, occ, value, is_term)
                out.append(said)
        return out

    def _rivals(self, item: str, is_term: bool, found: list[Said]) -> str | None:
        """Why the item is a guess among other candidates of its kind, or None when it is the one answer."""
        if is_term and not self.vocab.holds(item):
            return None
        message = self.messages[found[0].message]
        hay = message.readings[found[0].occ.reading]
        kind = "term" if is_term else group(hay[valued(hay, found[0].occ)])
        candidates = self._candidates(item, is_term, kind)
        candidates = [c for c in candidates if is_term or any(f.competes(c) for f in found)]
        # the item's roles: where it is said in a frame, its bare repeats ("restart, 5.2.") add no role
        roles = {f.frame for f in found if f.frame}
        for c in candidates:
            where = f"message {self._agent_ordinal(c.message)}"
            said = self.messages[c.message].said(c.occ)
            if c.floated:
                return f"'{said}' ({where}) is floated as another candidate for the same fact: a guess"
            if c.why_not is None and (not c.frame or not roles or c.frame in roles):
                return f"'{said}' ({where}) is said in the same role as the item: two answers, a guess"
        asserted = {c.value for c in candidates if c.asserted}
        if len(asserted) >= MAX_DISTINCT:
            return (
                f"the agent asserted {len(asserted) + 1} different values of this kind over the conversation "
                f"(a spray; at most {MAX_DISTINCT})"
            )
        for f in found:
            beside = {c.value for c in candidates if c.asserted and c.message == f.message}
            if len(beside) <= MAX_RIVALS:
                return None
        return f"stated beside more than {MAX_RIVALS} other values of its kind in its message"


def _canon(item: str) -> str:
    """An item's value as `values` writes it (`$15` -> `15`, `BK-20417` -> `bk-20417`)."""
    return "-".join(t.value for t in read(item))


def _same_value(item: str, value: str) -> bool:
    """Whether a said value is the item's own value (dates compare loosely)."""
    mine = read(item)
    theirs = read(value.replace("-", " ") if not value.startswith("@") else value[1:])
    if value.startswith("@"):
        return any(t.value.startswith("@") and same(t, Token(value, "date", 0, 0, 0), False) for t in mine)
    return _canon(item) == value or [t.value for t in mine if group(t) != "word"] == [t.value for t in theirs]


def _inside(occ: Occurrence, spans: list[Occurrence]) -> bool:
    return any(s.reading == occ.reading and s.start <= occ.start and occ.end <= s.end for s in spans)


@lru_cache(maxsize=64)
def _grams(text: str) -> frozenset[tuple[str, ...]]:
    values = [t.value for t in readings(text)[0]] if text else []
    return frozenset(tuple(values[i : i + NGRAM]) for i in range(len(values) - NGRAM + 1))


def mentions(item: str, text: str) -> bool:
    """Whether `text` holds `item`'s tokens in a row, however worded (no other rule applies)."""
    return bool(SaidMessage(Message("assistant", text), Vocabulary(()), frozenset()).occurrences(item))


def communicated(item: str, agent_messages: list[str]) -> bool:
    """True iff `item`'s canonical tokens appear, in a row, in any one of the messages (no other rule)."""
    return any(mentions(item, m) for m in agent_messages)


def is_atomic(item: str) -> bool:
    """An atomic fact: it holds a digit (amount, date, id, count) or is one term without spaces."""
    text = item.strip()
    return any(c.isdigit() for c in text) or re.fullmatch(r"[\w'’-]+", text) is not None


def agent_messages(transcript: Sequence[Mapping[str, Any] | JudgeMessage]) -> list[str]:
    """What the judge may see of a conversation: the agent's non-empty messages to the user, in order.

    Args:
        transcript: `{role, content}` mappings or `JudgeMessage`s; user, system and tool messages and
            assistant turns without text (tool calls) are dropped.

    Returns:
        The agent's message texts, stripped.
    """
    said = []
    for m in transcript:
        role: Any = m.role if isinstance(m, JudgeMessage) else m.get("role")
        content: Any = m.content if isinstance(m, JudgeMessage) else m.get("content")
        if role == "assistant" and isinstance(content, str) and content.strip():
            said.append(content.strip())
    return said
