"""Whether a value in a message is *asserted*: the clause model behind the `communicate` check.

A message is cut into sentences (at `.`, `!`, `?`, `;`, `:` and line breaks) and each sentence into clauses
(at commas, dashes, brackets, and before a word that opens a subordinate or coordinate clause: "but",
"because", "so", "which", "if", "unless", "whether"…). A value stands in one clause of one sentence, and
it is asserted only when the *structure* around it says so. It is not when

- **asked**: its sentence ends with `?`, or opens with an auxiliary or a wh-word followed by one (the
  inverted order of a question: "Is it 306.", "What is it, 306");
- **hedged**: its clause holds an epistemic modal or hedge (could, might, may, maybe, perhaps, probably,
  I think / guess / suppose…), an approximator stands right before it ("about $300"), or its sentence holds
  a clause that is only a hedge ("306, I think.");
- **conditional**: its clause is opened by, or holds before it, a conditional or an indirect question (if,
  unless, whether, assuming, suppose, in case, provided);
- **negated**, wherever the negation stands in the clause: a negator right before it over nothing but
  auxiliaries and determiners ("not 306", "isn't $306", "no $40 fee"); a negated verb whose complement
  clause holds it ("I can't confirm it's 306", "I'm not sure it is 306"); the value as the clause's subject
  with a negated or refuted predicate ("306 is not the answer", "$306 isn't right", "306 is wrong"); or a
  bare "no" / "wrong" right after its clause ("306 — no.");
- **an alternative**: it follows "rather than", "instead of", "unlike", "other than", "except"; its clause
  says "either"; or it stands behind a label ("A: 306", "2) 306").

Lists of candidates (values of one kind joined by commas, slashes, "or") and rival answers over the
conversation are the `communicate` module's to judge: they need the other values, not just this clause.
The word classes below are closed grammatical classes (auxiliaries, modals, negators, determiners,
subordinators), not cue phrases: the model reads *where* a value stands, not which words surround it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from env_server.scoring.tokens import Token

#: Auxiliaries and copulas, with the stems a contraction leaves ("isn" of "isn't", "s" of "it's").
AUX = frozenset(
    {"is", "are", "was", "were", "be", "been", "being", "am", "s", "re", "m", "d", "ll", "ve", "has", "have",
     "had", "do", "does", "did", "will", "would", "can", "could", "shall", "should", "may", "might", "must",
     "isn", "aren", "wasn", "weren", "doesn", "don", "didn", "won", "wouldn", "couldn", "shouldn", "hasn",
     "haven", "hadn", "mustn", "cannot"}
)  # fmt: skip
#: Negators; "t" is what the tokenizer keeps of "n't".
NEGATORS = frozenset({"not", "no", "never", "t", "cannot", "none", "neither", "nor", "nothing", "nobody"})
#: Words that deny the value they are said of ("306 is wrong").
REFUTED = frozenset({"wrong", "incorrect", "false", "inaccurate", "mistaken", "untrue", "nope"})
#: Epistemic modals and hedges: a clause with one of them offers its values as possible, not as so.
HEDGES = frozenset(
    {"could", "might", "may", "maybe", "perhaps", "possibly", "probably", "likely", "unlikely", "presumably",
     "apparently", "supposedly", "allegedly", "guess", "think", "believe", "suppose", "reckon", "assume",
     "seems", "seem", "appears", "unsure", "uncertain", "unclear", "doubt", "hypothetically"}
)  # fmt: skip
#: Words that, right before a value, make it approximate.
APPROXIMATORS = frozenset({"about", "around", "roughly", "approximately", "nearly", "almost", "circa"})
#: Subordinators that make their clause hypothetical or an indirect question.
CONDITIONALS = frozenset({"if", "unless", "whether", "assuming", "suppose", "supposing", "provided"})
#: Words that open a new clause inside a sentence.
OPENERS = frozenset(
    {"but", "because", "so", "since", "although", "though", "however", "while", "whereas", "which", "who",
     "if", "unless", "whether", "then", "otherwise", "assuming", "provided"}
)  # fmt: skip
#: Words that may stand between a negator (or a clause's start) and the value without changing its role.
FILLERS = frozenset(
    {"a", "an", "the", "any", "exactly", "really", "actually", "quite", "just", "only", "at", "all", "even",
     "currently", "necessarily", "it", "that", "this", "there", "your", "my", "our", "its", "their", "and",
     "so", "then", "well", "ok", "okay", "yes", "still", "yet", "longer", "equal", "to", "precisely", "total"}
)  # fmt: skip
#: Subjects that open a complement clause after a negated verb ("I can't say *it* is 306").
SUBJECTS = frozenset({"it", "that", "this", "you", "we", "they", "he", "she", "i", "there", "if", "whether"})
WH = frozenset({"what", "which", "who", "how", "when", "where", "why"})
_ALTERNATIVES = (("instead", "of"), ("rather", "than"), ("unlike",), ("other", "than"), ("except",))
_SENTENCE_END = re.compile(r"[.!?;:\n]")
_CLAUSE_BREAK = re.compile(r"[,()]|\s[-–—]\s|[–—]")
_LABEL_MARK = re.compile(r"^\s*[:)]")


@dataclass(frozen=True)
class Clause:
    """Token indices [start, end) of one clause, with what its sentence says about it."""

    start: int
    end: int
    sentence: int
    question: bool
    labelled: bool


class Clauses:
    """One reading of a message cut into sentences and clauses (see the module docstring)."""

    def __init__(self, text: str, hay: list[Token]) -> None:
        self.text = text
        self.hay = hay
        self.clauses = self._cut()
        self._of = {i: c for c in self.clauses for i in range(c.start, c.end)}

    def _gap(self, i: int) -> str:
        """The text between token i-1 and token i (the text's tail for i == len)."""
        start = self.hay[i - 1].end if i > 0 else 0
        end = self.hay[i].start if i < len(self.hay) else len(self.text)
        return self.text[start:end]

    def _cut(self) -> list[Clause]:
        n = len(self.hay)
        sentences: list[tuple[int, int]] = []
        start = 0
        for i in range(1, n + 1):
            if i == n or _SENTENCE_END.search(self._gap(i)) or self._ends_in_dot(i):
                sentences.append((start, i))
                start = i
        out: list[Clause] = []
        label = False
        for s, (a, b) in enumerate(sentences):
            asks = "?" in self._gap(b) or self._inverted(a, b)
            cut = [a] + [
                i
                for i in range(a + 1, b)
                if _CLAUSE_BREAK.search(self._gap(i)) or self.hay[i].value in OPENERS
            ]
            for x, y in zip(cut, [*cut[1:], b], strict=True):
                out.append(Clause(x, y, s, asks, label))
            label = self._is_label(a, b)
        return out

    def _ends_in_dot(self, i: int) -> bool:
        """Whether token i-1 swallowed a sentence's full stop ("on 3 Nov. Is it…"): no lower case follows."""
        previous = self.hay[i - 1]
        return self.text[previous.end - 1] == "." and not self.text[self.hay[i].start].islower()

    def _is_label(self, a: int, b: int) -> bool:
        """Whether a sentence is a label ("A:", "2)", "Option B:") for what follows it."""
        words = [t.value for t in self.hay[a:b]]
        if not words or len(words) > 2 or not _LABEL_MARK.match(self._gap(b)):
            return False
        last = words[-1]
        short = (len(last) == 1 and last.isalpha()) or (last.isdigit() and len(last) <= 2)
        return short and (len(words) == 1 or words[0] in {"option", "choice", "answer", "guess"})

    def _inverted(self, a: int, b: int) -> bool:
        """A question without its mark: an auxiliary first, or a wh-word then an auxiliary and no other."""
        words = [t.value for t in self.hay[a:b] if t.kind == "word"]
        while words and words[0] in {"so", "and", "then", "ok", "okay", "well", "but"}:
            words = words[1:]
        if len(words) < 2:
            return False
        if words[0] in AUX and words[0] not in {"s", "re", "m", "d", "ll", "ve"} and words[1] in SUBJECTS:
            return True
        return words[0] in WH and words[1] in AUX and not any(w in AUX for w in words[2:])

    def clause(self, i: int) -> Clause:
        """The clause holding token i."""
        return self._of[i]

    def why_not(self, start: int, end: int) -> str | None:
        """Why the value at tokens [start, end) is not asserted, or None when it is."""
        c = self.clause(start)
        before = [t.value for t in self.hay[c.start : start]]
        after = [t.value for t in self.hay[end : c.end]]
        if c.labelled:
            return "offered behind a label, as one option"
        if c.question:
            return "asked, not told"
        if any(w in CONDITIONALS for w in before) or _holds(before, ("in", "case")):
            return "said under a condition"
        if any(w in HEDGES for w in before + after) or (before and before[-1] in APPROXIMATORS):
            return "hedged"
        if self._hedged_sentence(c):
            return "hedged"
        negation = self._negation(c, start, end, before, after)
        if negation is not None:
            return negation
        for alternative in _ALTERNATIVES:
            if tuple(before[-len(alternative) :]) == alternative:
                return f"named as the alternative ('{' '.join(alternative)} …')"
        if "either" in before + after:
            return "offered as one of alternatives"
        return None

    def _hedged_sentence(self, c: Clause) -> bool:
        """Whether another clause of the sentence is only a hedge ("…, I think", "…, probably")."""
        for other in self.clauses:
            if other.sentence != c.sentence or other == c:
                continue
            words = [t.value for t in self.hay[other.start : other.end]]
            if 0 < len(words) <= 4 and any(w in HEDGES for w in words):
                return True
        return False

    def _negation(self, c: Clause, start: int, end: int, before: list[str], after: list[str]) -> str | None:
        j = len(before) - 1
        while j >= 0 and (before[j] in FILLERS or before[j] in AUX):
            j -= 1
        if j >= 0 and before[j] in NEGATORS:
            return "negated (a negation right before it)"
        for k, w in enumerate(before):
            if w in NEGATORS and any(x in SUBJECTS for x in before[k + 1 :]):
                return "negated (inside what a negated verb says)"
        if j < 0:  # the value opens its clause: is its predicate denied?
            for w in after[:5]:
                if w in NEGATORS or w in REFUTED:
                    return "negated (its predicate is denied)"
                if w not in AUX and w not in FILLERS:
                    break
        following = next((o for o in self.clauses if o.start == c.end), None)
        if following is not None:
            words = [t.value for t in self.hay[following.start : following.end]]
            if (
                words
                and len(words) <= 2
                and all(w in NEGATORS | REFUTED | {"that", "it", "s"} for w in words)
            ):
                return "negated (denied right after it)"
        return None

    def frame(self, start: int, end: int, skip: frozenset[int]) -> tuple[str, ...]:
        """The role the value plays: the two words before it in its clause (or after it, when it opens it).

        A value alone after a colon plays the role its lead-in names ("Store credit: $44.90").

        Determiners, fillers and the token indices in `skip` (values of the same kind) are left out,
        pronoun subjects read as `it` and copulas as `be`, so "It's $306." and "It is $310." play one role.
        An empty frame is a bare value: a fragment that fills any role.
        """
        c = self.clause(start)

        def words(indices: range) -> list[str]:
            out = []
            for i in indices:
                if i in skip or self.hay[i].value in FILLERS - {"it", "that", "this"}:
                    continue
                out.append(_normal(self.hay[i].value))
            return out

        before = words(range(c.start, start))
        if before:
            return tuple(before[-2:])
        after = words(range(end, c.end))
        if after:
            return ("^", *after[:2])
        if c.start > 0 and ":" in self._gap(c.start) and not c.labelled:  # "Store credit: $44.90"
            led = self.clause(c.start - 1)
            return tuple(words(range(led.start, led.end))[-2:])
        return ()


def _holds(words: list[str], run: tuple[str, ...]) -> bool:
    return any(tuple(words[i : i + len(run)]) == run for i in range(len(words) - len(run) + 1))


def _normal(word: str) -> str:
    if word in {"it", "that", "this", "they", "these", "those"}:
        return "it"
    if word in {"is", "are", "was", "were", "s", "re", "be", "been", "am", "m"}:
        return "be"
    return word
