"""What a domain costs to write: each built-in domain's non-blank lines, by part, as a markdown table.

The parts follow the layout of `env_server/domains/README.md`: tables (`models`), `seed`, `tools` (without
their views), `views` (`tools/_views.py`), scenario `families`, entity `factories`, the `policy`, the task
files (`tasks`), anything else of the package (`other`: pricing rules, `__init__.py`...), and the domain's
own tests under `tests/env_server/domains/<name>/`; a domain's `README.md` is prose and not counted. `code`
sums the Python parts of the package, so a refactor that moves code between parts shows in the parts and a
refactor that removes it shows in `code`.

    python benchmarks/domain_lines.py            # print the table
    python benchmarks/domain_lines.py --readme   # write it into README.md's `lines` section
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = ROOT / "env_server" / "domains"
TESTS = ROOT / "tests" / "env_server" / "domains"
PARTS = ("models", "seed", "tools", "views", "families", "factories", "policy", "tasks", "other", "tests")
#: The parts that are the package's Python code (the `code` column).
CODE = ("models", "seed", "tools", "views", "families", "factories", "other")
SUFFIXES = (".py", ".md", ".yaml", ".yml")


def part_of(relative: Path) -> str:
    """The part a file of a domain package belongs to, from its path inside the package."""
    head = relative.parts[0]
    if relative.name == "_views.py":
        return "views"
    if head in ("models.py", "seed.py", "policy.md", "factories.py"):
        return head.split(".")[0]
    if head in ("tools", "tools.py"):
        return "tools"
    if head in ("families", "families.py"):
        return "families"
    if head == "tasks":
        return "tasks"
    return "other"


def non_blank(path: Path) -> int:
    """The file's lines that hold something besides white space."""
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def count(domain: Path) -> Counter[str]:
    """Non-blank lines per part of one domain package (and of its tests)."""
    lines: Counter[str] = Counter()
    for path in sorted(domain.rglob("*")):
        if (
            path.is_file()
            and path.suffix in SUFFIXES
            and path.name != "README.md"
            and "__pycache__" not in path.parts
        ):
            lines[part_of(path.relative_to(domain))] += non_blank(path)
    tests = TESTS / domain.name
    if tests.is_dir():
        lines["tests"] = sum(non_blank(p) for p in sorted(tests.rglob("*.py")))
    return lines


def table() -> str:
    """The markdown table: one row per domain, then the totals."""
    domains = sorted(p for p in DOMAINS.iterdir() if (p / "__init__.py").is_file())
    rows = {d.name: count(d) for d in domains}
    header = ["domain", *PARTS, "code"]
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    total: Counter[str] = Counter()
    for name, lines in rows.items():
        total.update(lines)
        out.append(_row(name, lines))
    out.append(_row("**all**", total))
    return "\n".join(out)


def _row(name: str, lines: Counter[str]) -> str:
    cells = [str(lines[p]) for p in PARTS] + [str(sum(lines[p] for p in CODE))]
    return "| " + " | ".join([name, *cells]) + " |"


def write_readme(readme: Path = ROOT / "README.md") -> None:
    """Replace the table between README.md's `lines` snippet markers with today's counts."""
    pattern = re.compile(r"(--8<-- \[start:lines\][^\n]*\n).*?(\n[^\n]*--8<-- \[end:lines\])", re.S)
    text = readme.read_text(encoding="utf-8")
    if not pattern.search(text):
        raise SystemExit(f"{readme.name} has no `lines` snippet section")
    readme.write_text(pattern.sub(lambda m: m.group(1) + table() + m.group(2), text), encoding="utf-8")


if __name__ == "__main__":
    if "--readme" in sys.argv[1:]:
        write_readme()
    else:
        print(table())
