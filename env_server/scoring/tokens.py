"""The canonical reading of a text: numbers, dates, ids and words, each with its kind and place.

Both the `communicate` check and the validity checks read agent messages, script lines and items through
this one tokenizer, so "said" means the same everywhere:

- numbers lose thousands separators, currency marks and a zero fraction: `$1,450`, `1450 dollars`,
  `$1,450.00` and `USD 1,450` are all `1450` (while `$14,500`, `1450.5` and `21450` stay different);
  a number with a currency mark is of kind `money`, one followed by `%`/`percent` of kind `percent`;
- `%`, `percent` and `per cent` are one token; number words are digits (`three` is `3`, `three hundred and
  six` is `306`, `one thousand four hundred fifty dollars` is money `1450`);
- dates are one token: `2026-10-14`, `14 October 2026`, `October 14, 2026`, `Wed 14th Oct`, `10/14/2026`
  and `14.10.2026` are the same day (`03/04/2026` may be either), and a date written without a year matches
  that day of any year;
- an id (`BK-20417`, `RT-04-STD`, `GS212`, `GOLD20`) keeps its parts as tokens (`bk`, `20417`) of kind `id`,
  one `group` per id, so it is found however it is spaced but never read as a bare number or word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["date", "id", "money", "percent", "number", "word"]

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
_UNITS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
]  # fmt: skip
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
#: Number words up to ninety-nine -> digits ("twenty-one" and "twenty one" are read as one number).
NUMBER_WORDS = {w: str(i) for i, w in enumerate(_UNITS)} | {w: str(20 + 10 * i) for i, w in enumerate(_TENS)}
#: Words that multiply the number said before them ("three hundred", "a thousand").
SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_CURRENCY_WORDS = frozenset({"usd", "dollar", "dollars"})

_TOKEN = re.compile(
    rf"""
    (?P<iso>(?<![\w-])\d{{4}}-\d{{2}}-\d{{2}}(?![\d]))
    | (?P<numeric>(?<![\w./-])\d{{1,2}}[/.]\d{{1,2}}[/.]\d{{4}}(?![\w/]))
    | (?P<dmy>(?<![\w]){_DAY}(?:\s+of)?\s+{_MONTH}(?:,?\s+\d{{4}})?(?![\w]))
    | (?P<mdy>(?<![\w]){_MONTH}\s+{_DAY}(?:,?\s+\d{{4}})?(?![\w]))
    | (?P<id>(?<![\w-])(?=[a-z0-9-]*\d)[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?![\w-]))
    | (?P<money>(?:us\$|\$|\busd\s?)\s?(?:\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?(?!\d)|\d+(?:\.\d+)?))
    | (?P<number>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?(?!\d)|\d+(?:\.\d+)?)
    | (?P<percent>%|\bper\s+cent\b)
    | (?P<word>[a-z]+)
    """,
    re.VERBOSE,
)
_ID_PART = re.compile(r"[a-z]+|\d+")
_DOLLARS = re.compile(r"\s*(?:dollars?|usd)\b")
_AFTER_AMOUNT = re.compile(r"\s*(?:%|percent\b|per\s+cent\b|(?P<cur>dollars?\b|usd\b))")


@dataclass(frozen=True)
class Token:
    """One canonical token of a text.

    Attributes:
        value: the canonical spelling: `1450`, `@2026-10-14` (`@*-10-14` without a year), `bk`, `refund`.
        kind: what it is; the parts of one id share the kind `id` and a `group`.
        start: where it begins in the text (a character offset).
        end: where it ends.
        group: for id parts, the offset of the id they belong to; otherwise the token's own start.
    """

    value: str
    kind: Kind
    start: int
    end: int
    group: int


def read(text: str) -> list[Token]:
    """The canonical tokens of `text`, in order (see the module docstring)."""
    lowered = text.lower()
    found: list[Token] = []
    for m in _TOKEN.finditer(lowered):
        kind, value, start, end = m.lastgroup, m.group(), m.start(), m.end()
        if kind == "iso":
            found.append(Token(f"@{value}", "date", start, end, start))
        elif kind == "numeric":
            found.append(Token(_numeric_date(value), "date", start, end, start))
        elif kind in ("dmy", "mdy"):
            found.append(Token(_written_date(value), "date", start, end, start))
        elif kind == "id":
            for part in _ID_PART.finditer(value):
                found.append(Token(part.group(), "id", start + part.start(), start + part.end(), start))
        elif kind in ("money", "number"):
            digits = re.sub(r"^[^\d]*", "", value)
            after = _AFTER_AMOUNT.match(lowered, end)
            if kind == "number" and after is not None:
                kind = "money" if after.group("cur") else "percent"
            found.append(Token(_number(digits), kind, start, end, start))  # type: ignore[arg-type]
        elif kind == "percent" or value == "percent":
            found.append(Token("percent", "word", start, end, start))
        elif value in NUMBER_WORDS:
            found.append(_number_word(found, lowered, value, start, end))
        elif value not in _CURRENCY_WORDS:
            found.append(Token(value, "word", start, end, start))
    return _scaled(found, lowered)


def _spelled(token: Token, text: str) -> bool:
    """Whether a number token was written in words ("six", "twenty-one"), not digits."""
    return token.kind in ("number", "money") and text[token.start : token.end][:1].isalpha()


def _scaled(found: list[Token], text: str) -> list[Token]:
    """Join number words with their scales into one number: "three hundred and six" is `306`.

    A run is number words and `hundred`/`thousand`/`million` (an "a" or "one" may open it), with "and"
    allowed right after a scale; a run followed by "dollars" is money, as digits are.
    """
    out: list[Token] = []
    i = 0
    while i < len(found):
        j, total, current, scaled = i, 0, 0, False
        if found[i].value == "a" and i + 1 < len(found) and found[i + 1].value in SCALES:
            j, current = i + 1, 1
        while j < len(found):
            t = found[j]
            if _spelled(t, text):
                current += int(t.value)
            elif t.value in SCALES and (j > i or current):
                factor = SCALES[t.value]
                if factor == 100:
                    current = max(current, 1) * 100
                else:
                    total, current = total + max(current, 1) * factor, 0
                scaled = True
            elif (
                t.value == "and"
                and scaled
                and found[j - 1].value in SCALES
                and j + 1 < len(found)
                and _spelled(found[j + 1], text)
            ):
                pass
            else:
                break
            j += 1
        if not scaled:
            out.append(found[i])
            i += 1
            continue
        start, end = found[i].start, found[j - 1].end
        kind: Kind = "money" if _DOLLARS.match(text, end) else "number"
        out.append(Token(str(total + current), kind, start, end, start))
        i = j
    return out


def _number_word(found: list[Token], text: str, word: str, start: int, end: int) -> Token:
    """A number word; a unit right after a tens word ("twenty-one") joins it into one number."""
    units = int(NUMBER_WORDS[word])
    previous = found[-1] if found else None
    joined = (
        previous is not None
        and 0 < units < 10
        and previous.kind in ("number", "money")
        and text[previous.start : previous.end] in _TENS
        and text[previous.end : start] in ("-", " ")
    )
    kind: Kind = "money" if _DOLLARS.match(text, end) else "number"
    if joined and previous is not None:
        found.pop()
        return Token(str(int(previous.value) + units), kind, previous.start, end, previous.start)
    return Token(NUMBER_WORDS[word], kind, start, end, start)


def tokens(text: str) -> list[str]:
    """The canonical token values of `text`: numbers, dates (`@2026-10-14`, `@*-10-14`) and words."""
    return [t.value for t in read(text)]


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


def same(item: Token, said: Token, last: bool) -> bool:
    """Whether token `said` is item token `item`: dates loosely, a last word also in its plural.

    Only an id matches the parts of an id: `Gold` is not found in `GOLD20`, nor `4` in `RAV4`.
    """
    if item.kind != "id" and said.kind == "id":  # "4" is not in "RAV4", "$5.00" not in "WELCOME5"
        return False
    if item.value == said.value:
        return True
    if item.value.startswith("@") and said.value.startswith("@"):
        return any(
            imd == smd and (iy == sy or "*" in (iy, sy))
            for iy, imd in _dates(item.value)
            for sy, smd in _dates(said.value)
        )
    return last and item.value.isalpha() and said.value in (item.value + "s", item.value + "es")


_WORD_HYPHEN = re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])")


def readings(text: str) -> list[list[Token]]:
    """The tokens of `text`, and of `text` with word-joining hyphens dropped ("non-refundable")."""
    joined = _WORD_HYPHEN.sub("", text)
    return [read(text)] if joined == text else [read(text), read(joined)]


def find(needle: list[Token], hay: list[Token]) -> list[int]:
    """The start indices in `hay` where `needle` occurs as a run of tokens."""
    if not needle:
        return []
    last = len(needle) - 1
    return [
        start
        for start in range(len(hay) - last)
        if all(same(t, hay[start + i], i == last) for i, t in enumerate(needle))
    ]
