"""Lint of a task's text: doubled words, weekdays that contradict their date, ids that exist nowhere.

The user's text is what the agent reads and the scripted user says; a slip there ("a member member",
"Tuesday 14 October" for a Wednesday, an id no record has) is a task the agent cannot solve as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, datetime

from env_server.domain._family import ID_PATTERN, entity_ids
from env_server.scoring.tokens import MONTHS
from env_server.validation._report import CheckOutcome
from shared.tasks import Task

_WEEKDAYS = {
    name: i
    for i, names in enumerate(
        [
            ("mon", "monday"),
            ("tue", "tues", "tuesday"),
            ("wed", "wednesday"),
            ("thu", "thur", "thurs", "thursday"),
            ("fri", "friday"),
            ("sat", "saturday"),
            ("sun", "sunday"),
        ]
    )
    for name in names
}
_WD = "(?P<wd>" + "|".join(sorted(_WEEKDAYS, key=len, reverse=True)) + r")\.?"
_MO = "(?P<mo>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DATE = (
    rf"(?:(?P<iso>\d{{4}}-\d{{2}}-\d{{2}})"
    rf"|(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+{_MO}(?:,?\s+(?P<y1>\d{{4}}))?"
    rf"|{_MO.replace('mo>', 'mo2>')}\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y2>\d{{4}}))?)"
)
_WEEKDAY_DATE = re.compile(
    rf"(?i)\b{_WD},?\s+(?:the\s+)?{_DATE}(?!\d)|\b{_DATE.replace('?P<', '?P<r_')}\s*(?:\(|,)\s*"
    rf"{_WD.replace('?P<wd>', '?P<r_wd>')}\b"
)
_DOUBLED = re.compile(r"(?i)\b([a-z]+)\s+\1\b")


def texts(task: Task) -> Iterator[tuple[str, str]]:
    """(where, text) for every piece of text a person reads in the task."""
    user = task.user
    yield "description", task.description
    yield "persona", user.persona
    yield "goal", user.goal
    yield "instructions", user.instructions
    for i, line in enumerate(user.lines):
        yield f"script[{i}]", line
    for key, value in user.known_info.items():
        if isinstance(value, str):
            yield f"known_info.{key}", value
    for i, q in enumerate(task.rubric):
        yield f"rubric[{i}]", q


def doubled_words(task: Task) -> list[str]:
    """`script[2]: "member member"` for each word written twice in a row."""
    return [
        f'{where}: "{m.group(0)}"'
        for where, text in texts(task)
        for m in _DOUBLED.finditer(text)
        if m.group(1).lower() not in ("had", "that")  # "had had", "that that" can be right
    ]


def wrong_weekdays(task: Task, today: datetime) -> list[str]:
    """`script[0]: "Tuesday 14 October" is a Wednesday` for each weekday its adjacent date contradicts."""
    found = []
    for where, text in texts(task):
        for m in _WEEKDAY_DATE.finditer(text):
            g = {k.removeprefix("r_"): v for k, v in m.groupdict().items() if v is not None}
            day = _date_of(g, today)
            if day is None:
                continue
            said = _WEEKDAYS[g["wd"].lower()]
            if day.weekday() != said:
                found.append(f'{where}: "{m.group(0)}" is a {day.strftime("%A")}')
    return found


def _date_of(g: dict[str, str], today: datetime) -> date | None:
    try:
        if "iso" in g:
            return date.fromisoformat(g["iso"])
        month = MONTHS[(g.get("mo") or g["mo2"]).lower()]
        day = int(g.get("d1") or g["d2"])
        year = g.get("y1") or g.get("y2")
        if year:
            return date(int(year), month, day)
        candidates = [date(today.year + k, month, day) for k in (-1, 0, 1)]
    except ValueError:
        return None
    return min(candidates, key=lambda d: abs((d - today.date()).days))


def unknown_ids(task: Task, known: frozenset[str], generated_from: int) -> list[str]:
    """IDs the user's text mentions that neither the seed, the task's patch nor a tool would create."""
    patch_ids = set(entity_ids(task.initial_patch))
    said = {i for _, text in texts(task) for i in ID_PATTERN.findall(text)}
    missing = []
    for entity in sorted(said - patch_ids - known):
        number = entity.rsplit("-", 1)[-1]
        if number.isdigit() and int(number) >= generated_from:
            continue  # an id tools issue (the gold creates it)
        missing.append(entity)
    return missing


def text_check(task: Task, today: datetime, known_ids: frozenset[str], generated_from: int) -> CheckOutcome:
    """The `text` check: every slip found, or a pass."""
    problems = doubled_words(task) + wrong_weekdays(task, today)
    ids = unknown_ids(task, known_ids, generated_from)
    if ids:
        problems.append("ids in no seed row, patch or gold: " + ", ".join(ids))
    if problems:
        return CheckOutcome("text", False, "; ".join(problems))
    return CheckOutcome("text", True, "no doubled words, weekdays agree with dates, every id exists")
