"""MkDocs hooks: the reference pages generated from the code at build time, so they cannot drift.

- `reference/cli.md` from the Typer app of the `groundstate` console script (every command, its help and its
  options);
- `reference/settings.md` from the server's settings model (`env_server.settings.Settings`: every
  `GROUNDSTATE_*` variable) and the `groundstate:` section of a Verl config (`EpisodeSettings`);
- `api/rest.md` from the FastAPI app's OpenAPI schema (every operation, its parameters, bodies and responses,
  and every schema);
- `{{ task_schema_table }}` in a page: the fields of the task schema (`shared.tasks.Task` and its parts).

Files that live outside `docs/` but belong on the site (the learning curve of the benchmark) are added as
they are, never copied into `docs/`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent

#: Pages this module writes, by their path on the site.
GENERATED_PAGES = ("reference/cli.md", "reference/settings.md", "api/rest.md")

#: Files outside `docs/` the pages show: path on the site -> path in the repository.
EXTERNAL_FILES = {"assets/learning.png": "benchmarks/results/learning/learning.png"}


def _escape(text: str) -> str:
    """Prose from docstrings as Markdown: `<`, `>` and `*` outside code spans are text, not markup."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;").replace("*", "\\*")
    return "`".join(parts)


def _cell(text: Any) -> str:
    """Prose as one Markdown table cell: one line, pipes and markup escaped."""
    return _escape(" ".join(str(text).split())).replace("|", "\\|")


def _code(value: Any) -> str:
    """A default value as inline code (JSON for structures); empty for none."""
    if value is None:
        return "none"
    if isinstance(value, str):
        return f"`{value}`" if value else '`""`'
    if isinstance(value, Path):
        return f"`{value}`"
    return f"`{json.dumps(value, default=str)}`"


# -- the CLI -----------------------------------------------------------------------------------------------


def _cli_commands() -> Iterator[tuple[str, Any]]:
    """Every command of the console script, depth first: (full name, click command)."""
    import typer

    from groundstate.cli import TRAINER_COMMANDS, app, load_trainer_command

    root = typer.main.get_command(app)

    def walk(name: str, command: Any) -> Iterator[tuple[str, Any]]:
        yield name, command
        for sub_name, sub in getattr(command, "commands", {}).items():
            yield from walk(f"{name} {sub_name}", sub)

    yield "groundstate", root
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        if name in TRAINER_COMMANDS:
            command = load_trainer_command(name)
        yield from walk(f"groundstate {name}", command)


def _help_text(command: Any) -> str:
    """A command's help as Markdown paragraphs (Click's no-rewrap marker dropped)."""
    return _escape((command.help or "").replace("\b\n", "").strip())


def cli_reference() -> str:
    """The CLI reference page."""
    import click as _  # noqa: F401  (Typer needs click importable; the tree below is Typer's own)

    lines = [
        "# CLI reference",
        "",
        "Every command of the `groundstate` console script, generated from its Typer app when this site is "
        "built (`groundstate COMMAND --help` prints the same). The trainer's commands need the `trainer` "
        "extra; `train local` and `train warm-start` the `train` extra, `train verl` and `train dataset` "
        "the `verl` extra.",
        "",
    ]
    for name, command in _cli_commands():
        if command.hidden if hasattr(command, "hidden") else False:
            continue
        depth = name.count(" ")
        lines += [f"{'#' * min(depth + 2, 4)} `{name}`", "", _help_text(command), ""]
        arguments = [p for p in command.params if p.param_type_name == "argument"]
        options = [p for p in command.params if p.param_type_name == "option" and not p.hidden]
        usage = [name] + (["[OPTIONS]"] if options else [])
        usage += [a.name.upper() if a.required else f"[{a.name.upper()}]" for a in arguments]
        if getattr(command, "commands", None):
            usage.append("COMMAND ...")
        lines += ["```", " ".join(usage), "```", ""]
        if arguments or options:
            lines += ["| argument or option | default | meaning |", "|---|---|---|"]
            for param in arguments:
                default = "required" if param.required else _code(param.default)
                lines.append(
                    f"| `{param.name.upper()}` | {default} | {_cell(getattr(param, 'help', '') or '')} |"
                )
            for param in options:
                names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
                if param.required:
                    default = "required"
                elif param.is_flag and not param.secondary_opts:
                    default = "off"
                elif param.default is None or param.default == () or callable(param.default):
                    default = ""
                else:
                    default = _code(param.default)
                lines.append(f"| {names} | {default} | {_cell(param.help or '')} |")
            lines.append("")
    return "\n".join(lines)


# -- settings ----------------------------------------------------------------------------------------------


def _type_name(annotation: Any) -> str:
    """A field's type as people write it (`list[str]`, `Literal['a', 'b']`)."""
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    text = re.sub(r"\b[a-z_]+\.", "", text)  # module prefixes: typing., pathlib., shared.models.
    text = re.sub(r"Optional\[(.*)\]", r"\1 | None", text)
    text = re.sub(r"Literal\[(.*?)\]", lambda m: m.group(1).replace(", ", " or "), text)
    return text.replace(" | ", " or ")


def _field_rows(model: type[BaseModel], name_of: Any) -> Iterator[str]:
    """One table row per field of `model`: name, type, default, description (required)."""
    for name, field in model.model_fields.items():
        if not field.description:
            raise ValueError(f"{model.__name__}.{name} has no description: give it one (Field or docstring)")
        kind = _cell(_type_name(field.annotation))
        yield f"| `{name_of(name)}` | {kind} | {_default(field)} | {_cell(field.description)} |"


def _default(field: Any) -> str:
    """A field's default as the tables show it: `required`, or the (factory's) value as code."""
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        return _code(field.default_factory())
    return _code(field.default)


def settings_reference() -> str:
    """The settings reference page."""
    from env_server.settings import Settings
    from trainer.verl.settings import EpisodeSettings

    prefix = Settings.model_config.get("env_prefix", "")
    head = ["| variable | type | default | meaning |", "|---|---|---|---|"]
    lines = [
        "# Settings",
        "",
        "Generated from the settings models when this site is built.",
        "",
        "## The server",
        "",
        f"Every setting of the server is an environment variable `{prefix}<NAME>` "
        "(`env_server.settings.Settings`). Lists are JSON (`GROUNDSTATE_TASKS_DIRS='[\"tasks/hotel\"]'`). "
        "A combination that must not start a server (a non-loopback bind address without an API key, "
        "previous keys without a key) is refused at start.",
        "",
        *head,
        *_field_rows(Settings, lambda name: f"{prefix}{name.upper()}"),
        "",
        "## A Verl training config's `groundstate:` section",
        "",
        "How the agent loop plays one training episode and which curriculum draws the tasks "
        "(`trainer.verl.settings.EpisodeSettings`); any key "
        "can be overridden on the command line, e.g. `groundstate.max_turns=20` "
        "([Training with Verl](../training/verl.md)).",
        "",
        "| key | type | default | meaning |",
        "|---|---|---|---|",
        *_field_rows(EpisodeSettings, lambda name: f"groundstate.{name}"),
        "",
    ]
    return "\n".join(lines)


# -- the REST API --------------------------------------------------------------------------------------------


def _anchor(name: str) -> str:
    return "schema-" + name.lower()


def _schema_type(schema: dict[str, Any]) -> str:
    """A JSON schema as a short type expression, `$ref`s as links to their schema's section."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{_anchor(name)})"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(_schema_type(s) for s in schema[key])
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return _schema_type(schema["allOf"][0])
    if "enum" in schema:
        return " or ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    kind = schema.get("type")
    if kind == "array":
        return f"array of {_schema_type(schema.get('items', {}))}"
    if kind == "object" and "additionalProperties" in schema and schema["additionalProperties"] is not True:
        return f"object of {_schema_type(schema['additionalProperties'])}"
    if kind is None:
        return "any"
    return str(kind)


def _body_schema(content: dict[str, Any]) -> str:
    """The first media type of a request or response body, and its schema."""
    media, spec = next(iter(content.items()))
    return f"`{media}`: {_schema_type(spec.get('schema', {}))}"


def openapi_schema() -> dict[str, Any]:
    """The OpenAPI schema of an app built with an in-memory store (nothing written to disk)."""
    from env_server.app import create_app
    from env_server.settings import Settings

    return create_app(Settings(store_url="sqlite://")).openapi()


def rest_reference(schema: dict[str, Any]) -> str:
    """The REST API reference page from an OpenAPI schema."""
    info = schema["info"]
    lines = [
        "# REST API reference",
        "",
        f"Generated from the server's OpenAPI schema ({info['title']} {info['version']}, OpenAPI "
        f"{schema['openapi']}) when this site is built; a running server serves the same schema at "
        "`/openapi.json` and an interactive page at `/docs`. What the resources mean and how errors are "
        "shaped is the [wire protocol](../design/wire-protocol.md).",
        "",
    ]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            tag = (operation.get("tags") or ["other"])[0]
            by_tag.setdefault(tag, []).append((method.upper(), path, operation))
    for tag, operations in by_tag.items():
        lines += [f"## {tag}", ""]
        for method, path, operation in operations:
            lines += [f"### `{method} {path}`", ""]
            if operation.get("summary"):
                lines += [f"**{operation['summary']}**", ""]
            if operation.get("description"):
                lines += [operation["description"].strip(), ""]
            lines += [f"Operation id: `{operation.get('operationId', '')}`", ""]
            parameters = operation.get("parameters", [])
            if parameters:
                lines += ["| parameter | in | type | required | meaning |", "|---|---|---|---|---|"]
                for p in parameters:
                    lines.append(
                        f"| `{p['name']}` | {p['in']} | {_cell(_schema_type(p.get('schema', {})))} | "
                        f"{'yes' if p.get('required') else 'no'} | {_cell(p.get('description', ''))} |"
                    )
                lines.append("")
            body = operation.get("requestBody")
            if body:
                lines += [f"Request body: {_body_schema(body['content'])}", ""]
            lines += ["| status | meaning | body |", "|---|---|---|"]
            for status, response in operation.get("responses", {}).items():
                content = response.get("content")
                shape = _cell(_body_schema(content)) if content else ""
                lines.append(f"| {status} | {_cell(response.get('description', ''))} | {shape} |")
            lines.append("")
    lines += ["## Schemas", ""]
    for name, spec in sorted(schema.get("components", {}).get("schemas", {}).items()):
        lines += [f"### {name} {{#{_anchor(name)}}}", ""]
        if spec.get("description"):
            lines += [spec["description"].strip(), ""]
        properties = spec.get("properties")
        if properties:
            required = set(spec.get("required", []))
            lines += ["| field | type | required | meaning |", "|---|---|---|---|"]
            for field, prop in properties.items():
                lines.append(
                    f"| `{field}` | {_cell(_schema_type(prop))} | {'yes' if field in required else 'no'} | "
                    f"{_cell(prop.get('description', ''))} |"
                )
            lines.append("")
        else:
            lines += [f"Type: {_schema_type(spec)}", ""]
    return "\n".join(lines)


# -- the task schema -----------------------------------------------------------------------------------------


def _models_of(model: type[BaseModel]) -> Iterable[type[BaseModel]]:
    """`model` and the models its fields hold, each once, in the order they appear."""
    seen: list[type[BaseModel]] = []

    def visit(current: type[BaseModel]) -> None:
        if current in seen:
            return
        seen.append(current)
        for field in current.model_fields.values():
            for candidate in _types_in(field.annotation):
                if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                    visit(candidate)

    visit(model)
    return seen


def _types_in(annotation: Any) -> Iterator[Any]:
    yield annotation
    for argument in getattr(annotation, "__args__", ()):
        yield from _types_in(argument)


def task_schema_table() -> str:
    """The fields of a task file: one table per model of the task schema."""
    from shared.tasks import Task

    lines: list[str] = []
    for model in _models_of(Task):
        lines += [f"`{model.__name__}`: {_cell((model.__doc__ or '').strip().splitlines()[0])}", ""]
        lines += ["| field | type | default | meaning |", "|---|---|---|---|"]
        for name, field in model.model_fields.items():
            lines.append(
                f"| `{name}` | {_cell(_type_name(field.annotation))} | {_default(field)} | "
                f"{_cell(field.description or '')} |"
            )
        lines.append("")
    return "\n".join(lines)


# -- MkDocs hook entry points --------------------------------------------------------------------------------


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages and the files from outside `docs/`."""
    from mkdocs.structure.files import File

    pages = {
        "reference/cli.md": cli_reference(),
        "reference/settings.md": settings_reference(),
        "api/rest.md": rest_reference(openapi_schema()),
    }
    for path, content in pages.items():
        files.append(File.generated(config, path, content=content))
    for path, source in EXTERNAL_FILES.items():
        files.append(File.generated(config, path, abs_src_path=str(ROOT / source)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Fill the `{{ task_schema_table }}` placeholder."""
    if "{{ task_schema_table }}" in markdown:
        markdown = markdown.replace("{{ task_schema_table }}", task_schema_table())
    return markdown
