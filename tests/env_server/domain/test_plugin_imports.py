"""Every domain plug-in depends only on the public domain API (plus SQLAlchemy, pydantic and the stdlib).

Checked for each installed domain (every entry point of `groundstate.domains`, the starter curriculum
included) and for the toy domain the tests install as a third-party plug-in.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from env_server.domain.registry import ENTRY_POINT_GROUP

PACKAGES = sorted(
    {ep.value.split(":")[0] for ep in entry_points(group=ENTRY_POINT_GROUP)} | {"tests.toy_domain"}
)
THIRD_PARTY = ("sqlalchemy", "pydantic")


def _allowed(module: str, package: str) -> bool:
    if module == "__future__" or module.split(".")[0] in sys.stdlib_module_names:
        return True
    if module == package or module.startswith(package + "."):
        return True
    if module.split(".")[0] in THIRD_PARTY:
        return True
    return module in ("env_server.domain", "shared.tasks")  # not env_server.domain._* (private)


def _imports(path: Path) -> list[str]:
    """Absolute module names `path` imports (relative imports stay inside the package)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
    return found


def _root(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, package
    return Path(next(iter(spec.submodule_search_locations)))


def test_the_built_in_domains_are_all_checked() -> None:
    built_in = {p.rsplit(".", 1)[-1] for p in PACKAGES if p.startswith("env_server.domains.")}
    assert {"hotel", "retail", "travel", "insurance", "starter", "telecom"} <= built_in


@pytest.mark.parametrize("package", PACKAGES)
def test_a_domain_imports_only_the_public_domain_api(package: str) -> None:
    root = _root(package)
    files = sorted(root.rglob("*.py"))
    assert root / "__init__.py" in files
    bad = [
        f"{path.relative_to(root)} imports {module}"
        for path in files
        for module in _imports(path)
        if not _allowed(module, package)
    ]
    assert not bad, bad


def test_the_rule_catches_a_private_import(tmp_path: Path) -> None:
    leaky = tmp_path / "leaky.py"
    leaky.write_text("from env_server.domain._context import internal_metadata\nimport env_server.sandbox\n")
    assert [m for m in _imports(leaky) if not _allowed(m, "plugin")] == [
        "env_server.domain._context",
        "env_server.sandbox",
    ]
