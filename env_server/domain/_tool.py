"""Typed tools: a decorated function becomes an argument model, an OpenAI schema and an invoker.

The schema is derived from the signature and the Google docstring, never written by hand, so the prompt the
model sees and the validation the server applies cannot drift apart.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, get_type_hints

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo

from env_server.domain._context import ToolContext
from env_server.errors import InvalidArgumentsError

ToolKind = Literal["read", "write"]


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
        """The OpenAI `tools` entry, with our `kind` mark beside `function` (shared: do not mutate it)."""
        return self._openai_schema

    @cached_property
    def _openai_schema(self) -> dict[str, Any]:
        # Built once per tool: generating a JSON schema costs ~0.4 ms, and every episode start lists them all.
        params = self.args_model.model_json_schema()
        params.pop("title", None)
        return {
            "type": "function",
            "kind": self.kind,
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }

    def validate(self, arguments: dict[str, Any]) -> BaseModel:
        """Validate raw JSON arguments; raise `InvalidArgumentsError` naming the first bad field."""
        try:
            validated = self.args_model.model_validate(arguments)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or None
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
        fields[p.name] = (hints[p.name], info)
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
