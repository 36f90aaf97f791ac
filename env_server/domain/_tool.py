"""Typed tools: a decorated function becomes an argument model, an OpenAI schema and an invoker.

The schema is derived from the signature and the Google docstring, never written by hand, so the prompt the
model sees and the validation the server applies cannot drift apart.

Every argument is bounded, so no value a model can send reaches a tool outside the range it was written
for (an `OverflowError` on 9999-12-31 plus a day, an integer SQLite cannot store): integers to 32 bits (the
range of an `INTEGER` column), floats to ±1e15, dates to 1900-01-01..2100-12-31, text to 4,000 characters
and lists to 200 items, in nested models too. The bounds are in the JSON schema the model sees; an argument
that declares its own (`amount: int = Field(gt=0)`) keeps them, and gets the default only on the side it
leaves open.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from functools import cache, cached_property
from typing import Annotated, Any, Literal, get_type_hints

import annotated_types
import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo

from env_server.domain._context import ToolContext
from env_server.errors import InvalidArgumentsError

ToolKind = Literal["read", "write"]

INT_RANGE = (-(2**31), 2**31 - 1)
FLOAT_LIMIT = 1e15
DATE_RANGE = (date(1900, 1, 1), date(2100, 12, 31))
MAX_TEXT = 4_000
MAX_ITEMS = 200
#: The member tags pydantic puts in the location of a union's errors ("constrained-str", "int").
_UNION_TAG = re.compile(r"^(constrained-)?(str|int|float|bool|none|list\[.*\]|function-[a-z-]+)$")


@dataclass(frozen=True)
class Tool:
    """A domain tool: the function plus everything derived from its signature."""

    name: str
    kind: ToolKind
    description: str
    fn: Callable[..., Any]
    args_model: type[BaseModel]
    result_adapter: TypeAdapter[Any]

    def openai_schema(self) -> dict[str, Any]:
        """The OpenAI `tools` entry, exactly in OpenAI's format (shared: do not mutate it)."""
        return self._openai_schema

    @cached_property
    def _openai_schema(self) -> dict[str, Any]:
        # Built once per tool: generating a JSON schema costs ~0.4 ms, and every episode start lists them all.
        params = self.args_model.model_json_schema()
        params.pop("title", None)
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }

    def validate(self, arguments: dict[str, Any]) -> BaseModel:
        """Validate raw JSON arguments; raise `InvalidArgumentsError` naming the first bad field."""
        try:
            validated = self.args_model.model_validate(arguments)
        except ValidationError as exc:
            errors = exc.errors()
            # of a union's errors, the one that says what is wrong with the value, not that it is another type
            first = next((e for e in errors if not e["type"].endswith("_type")), errors[0])
            field = ".".join(str(p) for p in first["loc"] if not _UNION_TAG.match(str(p))) or None
            raise InvalidArgumentsError(
                f"tool '{self.name}': argument '{field}': {first['msg']}", field=f"arguments.{field}"
            ) from exc
        nul = _nul_path(arguments)
        if nul is not None:  # PostgreSQL refuses NUL in text and SQLite keeps it: refuse it on both, up front
            raise InvalidArgumentsError(
                f"tool '{self.name}': argument '{nul}': text must not contain NUL (\\u0000) characters",
                field=f"arguments.{nul}",
            )
        return validated

    def invoke(self, ctx: ToolContext, args: BaseModel) -> Any:
        """Run the tool on validated arguments and return its JSON-ready result."""
        result = self.fn(ctx, **{name: getattr(args, name) for name in type(args).model_fields})
        return self.result_adapter.dump_python(result, mode="json")


def tool(kind: ToolKind) -> Callable[[Callable[..., Any]], Tool]:
    """Mark a function `(ctx: ToolContext, **typed_args) -> result` as a domain tool.

    Args:
        kind: "read" for tools that never change state, "write" for tools that may.
    """

    def wrap(fn: Callable[..., Any]) -> Tool:
        return _build_tool(fn, kind)

    return wrap


def _build_tool(fn: Callable[..., Any], kind: ToolKind) -> Tool:
    doc = docstring_parser.parse(inspect.getdoc(fn) or "")
    if not doc.short_description:
        raise TypeError(f"tool {fn.__name__} needs a docstring: it is the model's only manual")
    param_docs = {p.arg_name: p.description or "" for p in doc.params}
    hints = get_type_hints(fn, include_extras=True)
    params = list(inspect.signature(fn).parameters.values())[1:]  # the first is the ToolContext
    undocumented = [p.name for p in params if not param_docs.get(p.name)]
    if undocumented:
        raise TypeError(f"tool {fn.__name__}: document {undocumented} under Args: (the model reads it)")
    fields: dict[str, Any] = {}
    for p in params:
        if p.name not in hints:
            raise TypeError(f"tool {fn.__name__}: argument {p.name} needs a type annotation")
        description = param_docs.get(p.name) or None
        if isinstance(p.default, FieldInfo):  # `amount: int = Field(ge=0)`: keep its constraints
            info = p.default
            info.description = info.description or description
        else:
            default = ... if p.default is inspect.Parameter.empty else p.default
            info = Field(default, description=description)
        fields[p.name] = (bounded(hints[p.name], info.metadata), info)
    model_name = "".join(part.title() for part in fn.__name__.split("_")) + "Args"
    args_model = create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)
    description = "\n\n".join(d for d in (doc.short_description, doc.long_description) if d)
    return Tool(
        name=fn.__name__,
        kind=kind,
        description=description,
        fn=fn,
        args_model=args_model,
        result_adapter=TypeAdapter(hints.get("return", Any)),
    )


def _nul_path(value: Any, path: str = "") -> str | None:
    """The dotted path of the first string holding a NUL character, if any."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _nul_path(item, f"{path}.{key}" if path else str(key))
        if found is not None:
            return found
    return None


def bounded(annotation: Any, declared: list[Any] | None = None) -> Any:
    """`annotation` with the default bounds of its type (see the module docstring).

    An argument whose own constraints (`declared`) already bound it keeps those instead.
    """
    own = {type(c) for m in declared or () for c in (m.metadata if isinstance(m, FieldInfo) else [m])}
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return Annotated[(bounded(args[0], [*args[1:], *(declared or ())]), *args[1:])]
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(bounded(a) for a in args)]  # noqa: UP007 - built from a tuple
    if origin is list:
        listed = list[bounded(args[0]) if args else Any]  # type: ignore[valid-type, misc]
        return listed if annotated_types.MaxLen in own else Annotated[listed, Field(max_length=MAX_ITEMS)]
    if annotation is bool or origin is Literal:
        return annotation
    if annotation is int:
        return Annotated[int, *_missing_bounds(own, *INT_RANGE)]
    if annotation is float:
        return Annotated[float, Field(allow_inf_nan=False), *_missing_bounds(own, -FLOAT_LIMIT, FLOAT_LIMIT)]
    if annotation is date:
        low, high = (d.isoformat() for d in DATE_RANGE)
        return Annotated[
            date,
            Field(
                ge=DATE_RANGE[0],
                le=DATE_RANGE[1],
                json_schema_extra={"formatMinimum": low, "formatMaximum": high},
            ),
        ]
    if annotation is str:
        return annotation if annotated_types.MaxLen in own else Annotated[str, Field(max_length=MAX_TEXT)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _bounded_model(annotation)
    return annotation


def _missing_bounds(own: set[type], low: float, high: float) -> list[Any]:
    """The default lower and upper bounds an argument does not declare itself.

    `gt=0` keeps its own floor and still gets the default ceiling.
    """
    bounds: list[Any] = []
    if not own & {annotated_types.Ge, annotated_types.Gt}:
        bounds.append(Field(ge=low))
    if not own & {annotated_types.Le, annotated_types.Lt}:
        bounds.append(Field(le=high))
    return bounds or [Field()]


@cache
def _bounded_model(model: type[BaseModel]) -> type[BaseModel]:
    """A copy of a nested argument model whose fields carry the default bounds (same name and schema)."""
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        merged = FieldInfo.merge_field_infos(
            FieldInfo.from_annotation(bounded(info.annotation, info.metadata)), info
        )
        fields[name] = (merged.annotation, merged)
    return create_model(model.__name__, __base__=model, __doc__=model.__doc__, **fields)
