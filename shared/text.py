"""Text a request may carry: valid Unicode, no control characters, bounded in length and depth.

JSON can spell strings Python holds but cannot encode (a lone surrogate, U+D800), and control characters
that no honest field needs. Such a string must be refused where it enters, naming its field: recorded, it
makes the episode's record unreadable, and echoed in an error it makes the error itself a 500.
`RequestModel` checks every field of a request; `clean_text` is the trainer's side of the same rule: it turns
whatever a model wrote into text the server accepts.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator

__all__ = [
    "MAX_DEPTH",
    "MAX_IDENTIFIER",
    "MAX_STRING",
    "RequestModel",
    "clean_text",
    "json_problem",
    "text_problem",
]

#: The longest string value a request may hold (a message, an argument): the body limit caps the total.
MAX_STRING = 200_000
#: The longest name, id or key (a tool name, a call id, a task id, an argument's name).
MAX_IDENTIFIER = 256
#: The deepest nesting of arguments: no tool takes more than a few levels.
MAX_DEPTH = 16

_SURROGATE = re.compile("[\ud800-\udfff]")
#: C0 controls and DEL, except tab, newline and carriage return, which prose uses.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LINE_BREAK = re.compile("[\t\n\r]")


def text_problem(value: str, *, identifier: bool = False) -> str | None:
    """Why `value` cannot be accepted as request text, or None when it can.

    The reason never quotes the value (it may be the very thing that cannot be encoded).
    """
    limit = MAX_IDENTIFIER if identifier else MAX_STRING
    if len(value) > limit:
        return f"is {len(value):,} characters long; at most {limit:,} are accepted"
    if (found := _SURROGATE.search(value)) is not None:
        return f"holds an invalid Unicode code point (a lone surrogate U+{ord(found.group()):04X})"
    if (found := _CONTROL.search(value)) is not None:
        return f"holds a control character (U+{ord(found.group()):04X})"
    if identifier and (found := _LINE_BREAK.search(value)) is not None:
        return f"holds a control character (U+{ord(found.group()):04X}); a name is one line"
    return None


def json_problem(value: Any, path: str = "", depth: int = 0) -> str | None:
    """Why a JSON value (a tool's arguments) cannot be accepted: `at <path>: <reason>`, or None."""
    where = path or "the value"
    if depth > MAX_DEPTH:
        return f"at {where}: nested deeper than {MAX_DEPTH} levels"
    if isinstance(value, str):
        problem = text_problem(value)
        return f"at {where}: the string {problem}" if problem else None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                continue
            problem = text_problem(key, identifier=True)
            if problem:
                return f"at {where}: a key {problem}"
            found = json_problem(item, f"{path}.{key}" if path else key, depth + 1)
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = json_problem(item, f"{path}[{i}]", depth + 1)
            if found:
                return found
    return None


def clean_text(value: str, limit: int = MAX_STRING) -> str:
    """`value` made acceptable: surrogates become U+FFFD, control characters go, the rest is cut at `limit`.

    For text a model wrote, which the trainer must pass on whatever it holds.
    """
    value = _SURROGATE.sub("\ufffd", value)
    return _CONTROL.sub("", value)[:limit]


class RequestModel(BaseModel):
    """Base of every request body: unknown fields refused, every string checked (`text_problem`).

    A subclass names its one-line fields (names and ids) in `identifiers`; every other string may hold
    prose. Nested values (a tool's arguments) are checked to the leaf, the reason naming the path inside.
    """

    model_config = ConfigDict(extra="forbid")
    identifiers: ClassVar[frozenset[str]] = frozenset()

    @field_validator("*", mode="after")
    @classmethod
    def _valid_text(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str):
            problem = text_problem(value, identifier=info.field_name in cls.identifiers)
        elif isinstance(value, dict | list):
            problem = json_problem(value)
        else:
            problem = None
        if problem:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _valid_extra_text(self) -> RequestModel:
        problem = json_problem(self.model_extra) if self.model_extra else None
        if problem:
            raise ValueError(problem)
        return self
