"""What the agent told the user, and the `communicate` check: atomic facts it must have said.

A `communicate` item is an atomic fact: an amount, a date, an id, a count or a single key term. It is found
in an agent message when its canonical tokens appear there in a row, whatever way the agent wrote them:

- numbers lose thousands separators, currency marks and a zero fraction: `$1,450`, `1450 dollars`,
  `$1,450.00` and `USD 1,450` are all `1450` (while `$14,500`, `1450.5` and `21450` stay different);
- `%`, `percent` and `per cent` are one token; small number words are digits (`three` is `3`);
- dates are one token: `2026-10-14`, `14 October 2026`, `October 14, 2026`, `Wed 14th Oct`, `10/14/2026`
  and `14.10.2026` are the same day (`03/04/2026` may be either), and a date written without a year matches
  that day of any year;
- an item's last word also matches its plural (`adjuster` is found in "our adjusters").

`agent_messages` is also all that the rubric judge is shown, so both checks read the same messages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from shared.judge import JudgeMessage

#: Month names and abbreviations -> month number (also read by the text lint of task validation).
MONTHS: dict[str, int] = {
    name: number
    for number, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = "(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?:[12][0-9]|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ]
    )
}
_CURRENCY_WORDS = frozenset({"usd", "dollar", "dollars"})

_TOKEN = re.compile(
    rf"""
    (?P<iso>(?<![\w-])\d{{4}}-\d{{2}}-\d{{2}}(?![\d]))
    | (?P<numeric>(?<![\w./-])\d{{1,2}}[/.]\d{{1,2}}[/.]\d{{4}}(?![\w/]))
    | (?P<dmy>(?<![\w]){_DAY}(?:\s+of)?\s+{_MONTH}(?:,?\s+\d{{4}})?(?![\w]))
    | (?P<mdy>(?<![\w]){_MONTH}\s+{_DAY}(?:,?\s+\d{{4}})?(?![\w]))
    | (?P<number>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?(?!\d)|\d+(?:\.\d+)?)
    | (?P<percent>%|\bper\s+cent\b)
    | (?P<word>[a-z]+)
    """,
    re.VERBOSE,
)


def tokens(text: str) -> list[str]:
    """The canonical tokens of `text`: numbers, dates (`@2026-10-14`, `@*-10-14`) and words."""
    found = []
    for m in _TOKEN.finditer(text.lower()):
        kind, value = m.lastgroup, m.group()
        if kind == "iso":
            found.append(f"@{value}")
        elif kind == "numeric":
            found.append(_numeric_date(value))
        elif kind in ("dmy", "mdy"):
            found.append(_written_date(value))
        elif kind == "number":
            found.append(_number(value))
        elif kind == "percent" or value == "percent":
            found.append("percent")
        elif value in _NUMBER_WORDS:
            found.append(_NUMBER_WORDS[value])
        elif value not in _CURRENCY_WORDS:
            found.append(value)
    return found


def _number(text: str) -> str:
    """`1,450.00` -> `1450`, `0.50` -> `0.5`: the digits of a number without separators or zero fraction."""
    whole, _, fraction = text.replace(",", "").partition(".")
    fraction = fraction.rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def _written_date(text: str) -> str:
    """`14 October 2026` / `Oct 14th, 2026` -> `@2026-10-14`; without a year `@*-10-14`."""
    month = next(MONTHS[w] for w in re.findall(r"[a-z]+", text) if w in MONTHS)
    numbers = [int(n) for n in re.findall(r"\d+", text)]
    day = numbers[0]
    year = f"{numbers[1]:04d}" if len(numbers) > 1 else "*"
    return f"@{year}-{month:02d}-{day:02d}"


def _numeric_date(text: str) -> str:
    """`08/14/1987`, `14/08/1987`, `14.08.1987` -> `@1987-08-14`; `03/04/1987` is both `@1987-03-04|04-03`."""
    first, second, year = (int(n) for n in re.split(r"[/.]", text))
    month, day = (second, first) if "." in text or first > 12 else (first, second)
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return text
    if "/" in text and first <= 12 and second <= 12 and first != second:
        return f"@{year}-{first:02d}-{second:02d}|{second:02d}-{first:02d}"
    return f"@{year}-{month:02d}-{day:02d}"


def _dates(token: str) -> list[tuple[str, str]]:
    """(year, "MM-DD") readings of a date token."""
    year, _, rest = token[1:].partition("-")
    return [(year, md) for md in rest.split("|")]


def _same(item_token: str, said: str, last: bool) -> bool:
    if item_token == said:
        return True
    if item_token.startswith("@") and said.startswith("@"):
        return any(
            imd == smd and (iy == sy or "*" in (iy, sy))
            for iy, imd in _dates(item_token)
            for sy, smd in _dates(said)
        )
    return last and item_token.isalpha() and said in (item_token + "s", item_token + "es")


_WORD_HYPHEN = re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])")


def _readings(text: str) -> list[list[str]]:
    """The tokens of `text`, and of `text` with word-joining hyphens dropped ("non-refundable")."""
    joined = _WORD_HYPHEN.sub("", text)
    return [tokens(text)] if joined == text else [tokens(text), tokens(joined)]


def communicated(item: str, agent_messages: list[str]) -> bool:
    """True iff `item`'s canonical tokens appear, in a row, in any one of the agent's messages.

    A hyphenated term matches written with the hyphen, a space or neither ("non-refundable",
    "non refundable", "nonrefundable").
    """
    needles = [n for n in _readings(item) if n]
    return any(
        _contains(hay, needle)
        for message in agent_messages
        for hay in _readings(message)
        for needle in needles
    )


def _contains(hay: list[str], needle: list[str]) -> bool:
    """Whether `needle` is a run of tokens in `hay` (dates and a last word's plural compared loosely)."""
    last = len(needle) - 1
    return any(
        all(_same(t, hay[start + i], i == last) for i, t in enumerate(needle))
        for start in range(len(hay) - last)
    )


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
