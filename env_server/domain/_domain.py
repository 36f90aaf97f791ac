"""The `Domain` object a plug-in exports: tables, seed, clock, tools, policy and tasks in one place."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from importlib import resources
from types import ModuleType
from typing import TypedDict, Unpack

import yaml
from pydantic import ValidationError
from sqlalchemy import MetaData

from env_server.domain._conduct import Conduct
from env_server.domain._family import ScenarioFamily
from env_server.domain._fingerprint import SeedFn, fingerprint
from env_server.domain._tool import Tool
from env_server.domain._user_side import Instruction, Side, check_user_side, side_of
from env_server.errors import TaskInvalidError
from shared.tasks import GoldAction, Task


class _RequiredDomainFields(TypedDict):
    name: str
    description: str
    metadata: MetaData
    seed: SeedFn
    now: datetime
    tools: Sequence[Tool]


class DomainFields(_RequiredDomainFields, total=False):
    """The `Domain` fields a package passes to `Domain.from_package` (policy and tasks come from files)."""

    volatile_columns: Mapping[str, frozenset[str]]
    seed_value: int
    canary_action: GoldAction | None
    families: Sequence[ScenarioFamily]
    conduct: Conduct
    user_tools: Sequence[Tool]
    user_tables: frozenset[str]
    user_instructions: Sequence[Instruction]
    benchmark: bool


@dataclass(frozen=True, eq=False)
class Domain:
    """A business domain served by groundstate.

    Attributes:
        name: short identifier used in URLs and task files ("hotel").
        description: one sentence for the catalogue.
        metadata: the SQLAlchemy `MetaData` holding every table of the domain (and nothing else).
        seed: fills an empty database deterministically from `rng`.
        now: the frozen clock tools read.
        tools: the agent's tools.
        policy: the agent's operating manual (markdown); it is the system prompt.
        tasks: the built-in tasks.
        volatile_columns: per table, columns the state comparison ignores (free text, timestamps); the
            column "*" drops the whole table from the comparison (e.g. per-conversation identity checks).
        seed_value: the RNG seed passed to `seed`.
        canary_action: a valid write on an entity no task touches; validation appends it to each gold
            trajectory to prove that an extra side effect costs the reward.
        families: scenario families for `groundstate tasks generate` (see `env_server.generation`).
        conduct: what the policy demands before a write (identity, an explicit yes); task validation
            holds every script to it.
        user_tools: tools only the simulated customer may call, on their own side (restart a router,
            toggle airplane mode); never listed to the agent nor callable by it (`_user_side`).
        user_tables: the tables on the customer's side (their device, app, home equipment); a diff labels
            each change with its side.
        user_instructions: what the scripted customer does whenever told, script or not (`Instruction`):
            the fixes with a side effect an agent could otherwise name without cost.
        benchmark: whether the domain is part of the benchmark; a curriculum for small models (`starter`)
            says False, so headline figures (`eval`'s default domains, the viewer's totals) leave it out
            unless it is named.
    """

    name: str
    description: str
    metadata: MetaData
    seed: SeedFn
    now: datetime
    tools: Sequence[Tool]
    policy: str
    tasks: Sequence[Task] = ()
    volatile_columns: Mapping[str, frozenset[str]] = field(default_factory=dict)
    seed_value: int = 0
    canary_action: GoldAction | None = None
    families: Sequence[ScenarioFamily] = ()
    conduct: Conduct = field(default_factory=Conduct)
    user_tools: Sequence[Tool] = ()
    user_tables: frozenset[str] = frozenset()
    user_instructions: Sequence[Instruction] = ()
    benchmark: bool = True

    def __post_init__(self) -> None:
        names = [t.name for t in self.tools]
        if len(set(names)) != len(names):
            raise ValueError(f"domain {self.name}: duplicate tool names in {names}")
        unknown = set(self.volatile_columns) - set(self.metadata.tables)
        if unknown:
            raise ValueError(f"domain {self.name}: volatile_columns names unknown tables {sorted(unknown)}")
        tables, instructions = self.metadata.tables, self.user_instructions
        check_user_side(self.name, self.tools, self.user_tools, self.user_tables, tables, instructions)

    @cached_property
    def tools_by_name(self) -> dict[str, Tool]:
        """Tools keyed by name, for dispatch."""
        return {t.name: t for t in self.tools}

    @cached_property
    def user_tools_by_name(self) -> dict[str, Tool]:
        """The customer's tools keyed by name, for the simulated user's calls."""
        return {t.name: t for t in self.user_tools}

    def side_of(self, table: str) -> Side:
        """Whether `table` is on the agent's side or the customer's."""
        return side_of(table, self.user_tables)

    @cached_property
    def fingerprint(self) -> str:
        """A hash of the tables' DDL and the seeded rows: databases of an older version are never reused."""
        return fingerprint(self.name, self.metadata, self.seed, self.seed_value)

    @classmethod
    def from_package(cls, package: str | ModuleType, **fields: Unpack[DomainFields]) -> Domain:
        """Build a domain whose `policy.md` and `tasks/*.yaml` live inside `package`.

        Args:
            package: the domain package (usually `__name__` of its `__init__`).
            **fields: every other `Domain` field (`DomainFields`).
        """
        root = resources.files(package)
        policy = (root / "policy.md").read_text(encoding="utf-8")
        tasks_dir = root / "tasks"
        files = (
            sorted((p for p in tasks_dir.iterdir() if p.name.endswith(".yaml")), key=lambda p: p.name)
            if tasks_dir.is_dir()
            else []
        )
        tasks = [load_task_text(p.read_text(encoding="utf-8"), source=p.name) for p in files]
        return cls(policy=policy, tasks=tasks, **fields)


def load_task_text(text: str, *, source: str) -> Task:
    """Parse and validate one task YAML document; errors name the file and the field."""
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        task = Task.model_validate(data)
    except yaml.YAMLError as exc:
        raise TaskInvalidError(f"{source}: not valid YAML: {exc}") from exc
    except ValidationError as exc:
        loc, msg = _first_error(exc)
        raise TaskInvalidError(f"{source}: field '{loc}': {msg}", field=loc) from exc
    if source.endswith(".yaml") and source.rsplit("/", 1)[-1] != f"{task.id}.yaml":
        raise TaskInvalidError(f"{source}: file name must be the task id ({task.id}.yaml)", field="id")
    return task


#: The member tags pydantic puts in the location of a union's errors: a script line is `str | ScriptLine`.
#: A model member with a validator is tagged like `function-after[_told_only_to_act(), ScriptLine]`.
_UNION_MEMBER = re.compile(r"^(str|ScriptLine|function-[a-z-]+\[.*\])$")


def _first_error(exc: ValidationError) -> tuple[str, str]:
    """The location and message of the error to report first.

    A value matching no member of a union fails once per member; of those, the one that says what is wrong
    with the value ("actions.0.name: Field required") beats "Input should be a valid string", and the
    member tags leave the location (`user.script.1.actions.0.name`).
    """
    errors = exc.errors()
    first = errors[0]
    tagged = [i for i, p in enumerate(first["loc"]) if _UNION_MEMBER.match(str(p))]
    if tagged:
        prefix = first["loc"][: tagged[0]]
        same = [e for e in errors if e["loc"][: len(prefix)] == prefix]
        first = next((e for e in same if not e["type"].endswith("_type")), first)
    loc = ".".join(str(p) for p in first["loc"] if not _UNION_MEMBER.match(str(p)))
    return loc, first["msg"]


def collect_tools(*modules: ModuleType) -> list[Tool]:
    """Every `Tool` defined at module level in `modules`, in definition order."""
    found: list[Tool] = []
    for module in modules:
        found.extend(v for v in vars(module).values() if isinstance(v, Tool))
    return found


def volatile(**tables: Iterable[str]) -> dict[str, frozenset[str]]:
    """Spell `volatile_columns` readably: `volatile(tickets=["body", "created_at"])`."""
    return {table: frozenset(cols) for table, cols in tables.items()}
