"""Name -> class registries that record dotted paths, so a CLI flag or a config file can name a class.

A `Registry` maps a short name (`openai`) to a dotted path (`trainer.policies.openai_chat:OpenAIChatPolicy`)
and imports the class only when the name is looked up: naming the local transformers policy imports torch
only when that policy is used. Three ways to add a name, one registry style for policies, selectors and loops:

- built-ins are listed explicitly where the registry is created (`Registry(..., builtins={...})`);
- a third-party package declares an entry point in the registry's group, e.g. in its `pyproject.toml`
  `[project.entry-points."groundstate.policies"] mine = "acme.policy:MyPolicy"`;
- code that owns a class may decorate it: `@POLICIES.register("mine")` records the class's dotted path.

An unknown name raises `UnknownNameError`, whose message lists the known names.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Generic, TypeVar

__all__ = ["Registry", "UnknownNameError"]

T = TypeVar("T")


class UnknownNameError(LookupError):
    """A name that no registry entry answers to; `known` lists the valid names."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        super().__init__(f"unknown {kind} {name!r}; known: {', '.join(known) or '(none)'}")
        self.kind, self.name, self.known = kind, name, known


class Registry(Generic[T]):
    """Short names of subclasses of `base`, resolved lazily to classes through their dotted paths."""

    def __init__(
        self,
        kind: str,
        base: type[T],
        *,
        builtins: Mapping[str, str] | None = None,
        entry_point_group: str | None = None,
    ) -> None:
        """Create a registry.

        Args:
            kind: What the registry holds, for messages ("policy").
            base: The class every entry must subclass.
            builtins: Name -> `"package.module:Class"` for the entries that ship with groundstate.
            entry_point_group: The entry-point group third-party packages register in, if any.
        """
        self.kind = kind
        self.base = base
        self.entry_point_group = entry_point_group
        self._paths: dict[str, str] = {}
        for name, path in (builtins or {}).items():
            self.add(name, path)

    def add(self, name: str, path: str) -> None:
        """Record `name` -> `path` (`"package.module:Class"`).

        Raises:
            ValueError: The path is malformed, or the name already points elsewhere.
        """
        module, _, attr = path.partition(":")
        if not module or not attr:
            raise ValueError(f"{self.kind} {name!r}: expected 'package.module:Class', got {path!r}")
        current = self._paths.get(name)
        if current is not None and current != path:
            raise ValueError(f"{self.kind} {name!r} is already registered as {current}, not {path}")
        self._paths[name] = path

    def register(self, name: str) -> Callable[[type[T]], type[T]]:
        """A class decorator recording the decorated class's dotted path under `name`."""

        def decorate(cls: type[T]) -> type[T]:
            self.add(name, f"{cls.__module__}:{cls.__qualname__}")
            return cls

        return decorate

    def paths(self) -> dict[str, str]:
        """Every known name with its dotted path: built-ins, decorated classes and entry points."""
        found = dict(self._paths)
        if self.entry_point_group:
            for ep in entry_points(group=self.entry_point_group):
                found.setdefault(ep.name, ep.value)
        return dict(sorted(found.items()))

    def names(self) -> list[str]:
        """The known names, sorted."""
        return list(self.paths())

    def load(self, name: str) -> type[T]:
        """Import and return the class registered as `name`.

        Raises:
            UnknownNameError: No entry has that name (the message lists the known ones).
            TypeError: The entry is not a subclass of the registry's base class.
        """
        paths = self.paths()
        if name not in paths:
            raise UnknownNameError(self.kind, name, list(paths))
        module_name, _, attr = paths[name].partition(":")
        obj: object = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
        if not (isinstance(obj, type) and issubclass(obj, self.base)):
            raise TypeError(f"{self.kind} {name!r} ({paths[name]}) is not a subclass of {self.base.__name__}")
        return obj
