"""The server's packages form layers: a module may import its own layer and the layers below, never above.

The layers, top first, can be read off the folder list (docs/design/architecture.md describes them):
wiring ← protocols ← episodes ← LLM roles ← scoring ← tool execution ← sandbox ← built-in tools and domains
← the domain API ← plain infrastructure. Every import statement counts, also those inside functions.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "env_server"

#: Top layer first. A name is a subpackage or module directly under `env_server/`.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"app", "cli", "diagnostics"}),  # wiring: the app and the command line (diagnostics: its
    # regrade and blame commands) from everything below
    frozenset({"api", "mcp", "openenv", "ui"}),  # protocols over the episode service
    frozenset({"episodes", "validation", "generation"}),  # episodes; task checks and generation
    frozenset({"judge", "users"}),  # the LLM-backed roles: rubric judge, simulated user
    frozenset({"scoring"}),  # expected state, diffs, rewards
    frozenset({"execution"}),  # which tools an episode has, running a call, refusals, the SQL guard
    frozenset({"sandbox"}),  # storage: templates, copies, snapshots, change log, the sandbox's own tables
    frozenset({"analytics", "domains"}),  # the analytics tools and the shipped domains (domain API only)
    frozenset({"domain"}),  # the public domain API and the registry of domains
    frozenset({"llm", "store", "settings", "errors"}),  # no knowledge of domains or episodes
)
#: Private modules of the domain API that other packages may still import (the task-ID helpers that task
#: generation and validation share with scenario families).
PRIVATE_DOMAIN_ALLOWED = frozenset({"env_server.domain._family"})


def _layer(name: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if name in layer)


def _top_name(path: Path) -> str:
    """The `env_server` subpackage or module `path` belongs to (`sandbox` for sandbox/postgres/slots.py)."""
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) of every absolute `env_server` import in `path`, also those inside functions."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: relative import"
            modules = [node.module or ""]
            modules += [f"{node.module}.{alias.name}" for alias in node.names]  # `from pkg import module`
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        for module in modules:
            if module.startswith("env_server."):
                yield node.lineno, module


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "__init__.py")


def test_every_package_has_a_layer() -> None:
    names = {_top_name(p) for p in _modules()}
    placed = set().union(*LAYERS)
    assert names - placed == set(), "add the new package to LAYERS"
    assert placed - names == set(), "LAYERS names a package that no longer exists"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_imports_a_higher_layer(path: Path) -> None:
    own = _top_name(path)
    upward = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for line, module in _imports(path)
        if (target := module.split(".")[1]) in set().union(*LAYERS) and _layer(target) < _layer(own)
    ]
    assert upward == []


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_domain_api_imports_its_private_modules(path: Path) -> None:
    if _top_name(path) == "domain":
        return
    private = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for line, module in _imports(path)
        if module.startswith("env_server.domain._")
        and ".".join(module.split(".")[:3]) not in PRIVATE_DOMAIN_ALLOWED
    ]
    assert private == []


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The walk finds imports inside functions and `from pkg import module` forms (the check can fail)."""
    source = tmp_path / "probe.py"
    source.write_text("def f():\n    from env_server import episodes\n    import env_server.api.deps\n")
    found = {module for _, module in _imports(source)}
    assert {"env_server.episodes", "env_server.api.deps"} <= found
    assert _layer("episodes") < _layer("sandbox")
