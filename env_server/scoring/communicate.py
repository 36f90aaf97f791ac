"""The `communicate` check: a fact counts only when the agent told it to the user as the answer.

A `communicate` item is an atomic fact: an amount, a date, an id, a count or a single term. Finding its
tokens in an agent message (see `env_server.scoring.tokens` for how any wording is normalised) is necessary
but not enough: a policy under optimisation pressure learns to paste the manual, dump every number it saw,
spray the domain's terms, echo the user or say the fact under a negation. So an item is credited only by an
occurrence that passes every rule below (`RULES` names them; a failed check's detail says which one bit):

1. **short** — the message is an answer, not a document: at most `MAX_WORDS` words.
2. **own words** — the message is not mostly copied from the policy: fewer than half of its words (and
   fewer than `COPIED_MIN` in all) lie in runs of `NGRAM` words that also stand in the policy.
3. **agent first** — no user message before it states the item (an echo of the user is not an answer).
4. **affirmed** — the fact is asserted, not negated or hedged: no "not"/"isn't"/"no"/"never" right before
   it, no "cannot confirm"/"not sure"/"whether"/"if"/"maybe"/"might" earlier in its clause, no "instead of",
   "rather than", "unlike" before it, no "is wrong"/"is incorrect" after it.
5. **not a list** — it is not one of several values of its kind (amounts with amounts, percentages with
   percentages, terms with terms) joined by commas, slashes, "or"/"and" (a hedge "$40 or $50" and a dump
   "40, 50, 60" both name the fact without telling it; "$135, 50% of the stay" is no list).
6. **specific** — an amount, count, date or id shares its message with at most `MAX_RIVALS` other asserted
   values of its kind, and no other value of its kind is offered in the same words anywhere in the
   conversation ("It is $40." … "It is $50."); a term shares its message with fewer than `SPRAY_TERMS`
   terms of the domain's vocabulary.
7. **first answer** — for a term of the domain's vocabulary (a class such as the rate plans or the tiers),
   the first term of its class the agent asserts in the conversation is the item itself: hedging one term
   per message earns nothing.
8. **no spray** — over the whole conversation the agent states at most `MAX_DISTINCT` distinct values of
   the item's kind (amounts and counts, dates, ids): a dump spread over many short messages is still a dump.

What the rules cannot tell apart (said in the docs too): a short guess of a few plausible values in an
honest-looking sentence, a right value given for a wrong reason, a negation phrased in words the cue lists
lack, and an honest reply that breaks a rule (a long message, a list of options that happens to hold the
fact). Tasks where that matters add a narrow rubric question for the judge.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from env_server.scoring.tokens import Token, find, readings
from env_server.scoring.trajectory import Message
from env_server.scoring.vocabulary import Vocabulary
from shared.judge import JudgeMessage

MAX_WORDS = 120
NGRAM = 6
COPIED_MIN = 12
MAX_RIVALS = 2
FRAME = 2
SPRAY_TERMS = 6
MAX_DISTINCT = 8
RULES = (
    "short",
    "own words",
    "agent first",
    "affirmed",
    "not a list",
    "specific",
    "first answer",
    "no spray",
)

_NEGATIONS = frozenset({"not", "no", "never", "t", "cannot", "neither", "nor", "without", "none"})
#: Words that may stand between a negation and what it negates ("not a", "no longer", "isn't really").
_FILLERS = frozenset(
    {"a", "an", "the", "any", "exactly", "really", "actually", "quite", "at", "all", "longer", "yet", "even",
     "currently", "necessarily", "be", "been", "being", "is", "are", "was", "were", "it", "s", "that", "this"}
)  # fmt: skip
#: Words after a negation that make a clause a statement of doubt ("I can't confirm ...").
_EPISTEMIC = frozenset(
    {"confirm", "say", "tell", "verify", "guarantee", "promise", "know", "sure", "certain", "determine",
     "check", "see", "find", "state", "vouch", "assure"}
)  # fmt: skip
#: Words that make the rest of their clause hypothetical or doubtful.
_HEDGES = frozenset(
    {"whether", "if", "unless", "maybe", "perhaps", "possibly", "might", "unsure", "uncertain", "unclear",
     "doubt", "supposedly", "allegedly", "hypothetically", "assuming", "suppose", "guess", "unknown"}
)  # fmt: skip
#: Words right before a value that name it as the alternative, not the answer.
_ALTERNATIVES = (("instead", "of"), ("rather", "than"), ("unlike",), ("other", "than"), ("except",))
_REFUTED = frozenset({"wrong", "incorrect", "false", "inaccurate", "mistaken", "untrue", "mistake"})
_JOINERS = frozenset({"and", "or", "nor", "to", "vs", "versus", "plus", "either", "both", "through"})
_CLAUSE_WORDS = frozenset({"but", "because", "so", "since", "although", "though", "however", "while", "and"})
_CLAUSE_BREAK = re.compile(r"[.;:!?()\n]|,|\s[-–—]\s|[–—]")
_LIST_MARK = re.compile(r"[,/&|+;\-–]")


def _valued(hay: list[Token], occ: Occurrence) -> int:
    """The index of the item's value in an occurrence: its first token that is not a word.

    An item with a number (its value) may open with words ("Mobile 10"): the value is what rivals, lists
    and sprays are counted by, never the word before it.
    """
    return next((i for i in range(occ.start, occ.end) if group(hay[i]) != "word"), occ.start)


def group(token: Token) -> str:
    """The kind of value a token counts against: amounts and counts together, dates, ids, words."""
    if token.kind in ("money", "percent", "number"):
        return "quantity"
    return token.kind


@dataclass(frozen=True)
class Occurrence:
    """Where an item's tokens stand in a message: the reading and the token indices [start, end)."""

    reading: int
    start: int
    end: int


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
        """The message's length in words (tokens)."""
        return len(self.tokens)

    @cached_property
    def copied(self) -> int:
        """How many of its words lie in `NGRAM`-word runs that also stand in the policy."""
        values = [t.value for t in self.tokens]
        covered = [False] * len(values)
        for i in range(len(values) - NGRAM + 1):
            if tuple(values[i : i + NGRAM]) in self._policy_grams:
                covered[i : i + NGRAM] = [True] * NGRAM
        return sum(covered)

    def is_copied(self) -> bool:
        """Whether the message is mostly the policy's own words."""
        return self.copied >= COPIED_MIN and self.copied * 2 >= self.words

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

    # -- the per-occurrence rules ----------------------------------------------------------------------------

    def clause_start(self, occ: Occurrence) -> int:
        """The index of the first token of the clause holding `occ`."""
        hay = self.readings[occ.reading]
        text = self._text(occ.reading)
        for i in range(occ.start, 0, -1):
            if _CLAUSE_BREAK.search(text[hay[i - 1].end : hay[i].start]) or hay[i - 1].value in _CLAUSE_WORDS:
                return i
        return 0

    def frame(self, occ: Occurrence) -> tuple[str, ...]:
        """The words just before `occ` in its clause ("it is", "costs"): how the value is offered."""
        hay = self.readings[occ.reading]
        start = max(self.clause_start(occ), occ.start - FRAME)
        return tuple(t.value for t in hay[start : occ.start] if t.kind == "word")

    def negated(self, occ: Occurrence) -> str | None:
        """Why `occ` is not asserted (a negation, a hedge, an alternative, a refutation), or None."""
        hay = self.readings[occ.reading]
        before = [t.value for t in hay[self.clause_start(occ) : occ.start]]
        j = len(before) - 1
        while j >= 0 and before[j] in _FILLERS:
            j -= 1
        if j >= 0 and before[j] in _NEGATIONS:
            return f"negated ('{before[j] if before[j] != 't' else 'n’t'} … {self.said(occ)}')"
        for alternative in _ALTERNATIVES:
            if tuple(before[-len(alternative) :]) == alternative:
                return f"named as the alternative ('{' '.join(alternative)} {self.said(occ)}')"
        for i, word in enumerate(before):
            if word in _HEDGES:
                return f"hedged ('{word} … {self.said(occ)}')"
            if word in _NEGATIONS and any(w in _EPISTEMIC for w in before[i + 1 :]):
                return f"doubted ('{word} … {self.said(occ)}')"
        after = [t.value for t in hay[occ.end : occ.end + 4]]
        if any(w in _REFUTED for w in after[:3]):
            return f"refuted ('{self.said(occ)} … {next(w for w in after if w in _REFUTED)}')"
        return None

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

    def said(self, occ: Occurrence) -> str:
        """The text of an occurrence, as the agent wrote it."""
        hay = self.readings[occ.reading]
        return self._text(occ.reading)[hay[occ.start].start : hay[occ.end - 1].end]

    def _text(self, reading: int) -> str:
        return self.text if reading == 0 else _dehyphenated(self.text)


def _joins(gap: str) -> bool:
    """Whether the text between two values makes them a list: separators and joiner words only."""
    words = re.findall(r"[A-Za-z]+", gap)
    if any(w.lower() not in _JOINERS for w in words):
        return False
    return bool(words) or _LIST_MARK.search(gap) is not None


def _dehyphenated(text: str) -> str:
    return re.sub(r"(?<=[A-Za-z])-(?=[A-Za-z])", "", text)


@dataclass(frozen=True)
class Verdict:
    """Whether an item was told, and the sentence a score shows for it."""

    passed: bool
    detail: str


class Conversation:
    """A conversation read for the `communicate` check: each message once, then any number of items."""

    def __init__(self, messages: Sequence[Message], vocab: Vocabulary, policy: str = "") -> None:
        grams = _grams(policy)
        self.vocab = vocab
        self.messages = [SaidMessage(m, vocab, grams) for m in messages]

    def answers(self) -> list[Message]:
        """The conversation without the agent's non-answers (too long, the policy's words, a term spray)."""
        return [
            Message(m.role, m.text)
            for m in self.messages
            if m.role == "user"
            or (m.words <= MAX_WORDS and not m.is_copied() and len({t for t, _ in m.terms}) < SPRAY_TERMS)
        ]

    def told(self, item: str) -> Verdict:
        """Whether the agent told `item` as the answer; the detail says where, or which rule bit."""
        is_term = not any(c.isdigit() for c in item) or self.vocab.holds(item)
        first_answer = self._first_answer(item) if self.vocab.holds(item) else None
        misses: list[str] = []
        user_said = False
        agent_index = 0
        for message in self.messages:
            occurrences = message.occurrences(item)
            if message.role == "user":
                user_said = user_said or bool(occurrences)
                continue
            agent_index += 1
            if not occurrences:
                continue
            why = self._message_rule(message, user_said, is_term)
            if why is not None:
                misses.append(f"message {agent_index}: {why}")
                continue
            for occ in occurrences:
                why = self._occurrence_rule(message, occ, item, is_term, first_answer)
                if why is None:
                    spray = None if is_term else self._spray(message, occ)
                    if spray is not None:
                        return Verdict(False, spray)
                    return Verdict(True, f"told in message {agent_index}")
                misses.append(f"message {agent_index}: {why}")
        if not misses:
            return Verdict(False, "never said")
        return Verdict(False, "not told as the answer: " + "; ".join(dict.fromkeys(misses)))

    def _message_rule(self, message: SaidMessage, user_said: bool, is_term: bool) -> str | None:
        if user_said:
            return "the user had said it first (an echo is not an answer)"
        if message.words > MAX_WORDS:
            return f"a message of {message.words} words (an answer has at most {MAX_WORDS})"
        if message.is_copied():
            return f"{message.copied} of its {message.words} words are copied from the policy"
        if is_term:
            named = {t for t, _ in message.terms}
            if len(named) >= SPRAY_TERMS:
                return f"it names {len(named)} of the domain's terms (a list, not an answer)"
        return None

    def _occurrence_rule(
        self, message: SaidMessage, occ: Occurrence, item: str, is_term: bool, first_answer: str | None
    ) -> str | None:
        why = message.negated(occ)
        if why is not None:
            return why
        hay = message.readings[occ.reading]
        if is_term:
            mine = {(o.reading, o.start) for o in message.occurrences(item)}
            term_ends = {
                (o.reading, i)
                for _, o in message.terms
                if (o.reading, o.start) not in mine
                for i in (o.start, o.end - 1)
            }
            rival: Callable[[int, int], bool] = lambda r, i: (r, i) in term_ends  # noqa: E731
        else:
            first = hay[_valued(hay, occ)]
            rival = lambda r, i: (  # noqa: E731  # a value of the same kind, not the fact repeated
                message.readings[r][i].kind == first.kind and message.readings[r][i].value != first.value
            )
        if message.in_list(occ, rival):
            return f"one of a list of values ('{message.said(occ)}')"
        if is_term:
            if first_answer is not None and first_answer != "item":
                return f"the agent's first answer of this kind was '{first_answer}'"
            return None
        at = _valued(hay, occ)
        kind = group(hay[at])
        values = message.values(kind)
        own = next(v for v, o in values if o.start <= at < o.end)
        others = {v for v, o in values if v != own and message.negated(o) is None}
        if len(others) > MAX_RIVALS:
            return f"stated beside {len(others)} other values of its kind (at most {MAX_RIVALS})"
        return self._same_words(message, occ, kind, own)

    def _same_words(self, message: SaidMessage, occ: Occurrence, kind: str, own: str) -> str | None:
        """Whether the agent offers another value of the item's kind in the very words it offers the item."""
        frame = message.frame(occ)
        if not frame:
            return None
        for other in self.messages:
            if other.role != "assistant":
                continue
            for value, o in other.values(kind):
                if value != own and other.frame(o) == frame and other.negated(o) is None:
                    return f"offered in the same words as {other.said(o)} ('{' '.join(frame)} …'): a hedge"
        return None

    def _spray(self, message: SaidMessage, occ: Occurrence) -> str | None:
        hay = message.readings[occ.reading]
        kind = group(hay[_valued(hay, occ)])
        distinct = {v for m in self.messages if m.role == "assistant" for v, _ in m.values(kind)}
        if len(distinct) > MAX_DISTINCT:
            return (
                f"the agent stated {len(distinct)} different values of this kind over the conversation "
                f"(a spray; at most {MAX_DISTINCT})"
            )
        return None

    def _first_answer(self, item: str) -> str | None:
        """`item` if the first term of the item's class the agent asserts is the item, else that term."""
        rivals = self.vocab.rivals(item)
        for message in self.messages:
            if message.role != "assistant":
                continue
            asserted = []
            for occ in message.occurrences(item):
                if message.negated(occ) is None:
                    asserted.append((occ.start, "item"))
            for term, occ in message.terms:
                if (
                    term in rivals
                    and message.negated(occ) is None
                    and not _inside(occ, message.occurrences(item))
                ):
                    asserted.append((occ.start, term))
            if asserted:
                return min(asserted)[1]
        return None


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
