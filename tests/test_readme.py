"""The README is true: its domain table equals the installed domains', its tour prints what it shows.

The table and the tour are also the docs site's (included from the README), so these tests keep both true.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from env_server.ui.policy_rules import parse_rules
from tests.conftest import IN_CI
from tests.live_server import serve

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def _section(text: str, name: str) -> str:
    match = re.search(rf"--8<-- \[start:{name}\][^\n]*\n(.*?)\n[^\n]*--8<-- \[end:{name}\]", text, re.S)
    assert match, f"README.md has no snippet section {name!r}"
    return match.group(1)


def expected_domain_rows() -> list[str]:
    """The domain table's rows, counted from the installed domains (the last row sums them)."""
    registry = DomainRegistry.discover()
    rows, totals = [], [0] * 10
    for domain in registry.domains:
        tasks = list(registry.tasks(domain=domain.name))

        def count(split: str, kind: str, tasks: list = tasks) -> int:
            return sum(1 for t in tasks if t.split == split and t.kind == kind)

        writes = sum(1 for t in domain.tools if t.kind == "write")
        figures = [
            len(domain.metadata.tables),
            len(domain.tools),
            len(domain.tools) - writes,
            writes,
            len(parse_rules(domain.policy)),
            *(count(split, kind) for split in ("test", "train") for kind in ("action", "analytics")),
        ]
        figures.append(len(domain.families))
        totals = [a + b for a, b in zip(totals, figures, strict=True)]
        rows.append(_row(domain.name, domain.description, figures))
    rows.append(_row(f"**{len(rows)} domains**", "", totals))
    return rows


def _row(name: str, description: str, f: list[int]) -> str:
    cell = f" {description} " if description else " "
    return (
        f"| {name} |{cell}| {f[0]} | {f[1]} ({f[2]}/{f[3]}) | {f[4]} | {f[5]} + {f[6]} | "
        f"{f[7]} + {f[8]} | {f[9]} |"
    )


def test_readme_domain_table_matches_the_installed_domains() -> None:
    table = _section(README.read_text(), "domains").splitlines()
    rows = [line for line in table if line.startswith("| ") and not line.startswith("| domain |")]
    expected = expected_domain_rows()
    assert rows == expected, "README.md's domain table is stale; the rows should read:\n" + "\n".join(
        expected
    )


def test_readme_line_counts_are_the_domains_lines_today() -> None:
    """What a domain costs to write, as `benchmarks/domain_lines.py` counts it from the files now."""
    from benchmarks.domain_lines import table

    assert _section(README.read_text(), "lines").strip() == table(), (
        "README.md's line counts are stale: run `python benchmarks/domain_lines.py --readme`"
    )


def test_readme_first_screen_names_the_two_commands() -> None:
    first_screen = README.read_text().splitlines()[:12]
    commands = [line.split("#")[0].strip() for line in first_screen if line.startswith("make ")]
    assert commands == ["make run", "make test"]
    makefile = (ROOT / "Makefile").read_text()
    for target in ("run", "test", "docs"):
        assert re.search(rf"^{target}:", makefile, re.M), f"the Makefile has no `{target}` target"


def test_readme_stays_a_front_door() -> None:
    assert len(README.read_text().splitlines()) <= 200


def test_readme_links_resolve_in_the_repository() -> None:
    """Relative links work where the README is read (GitHub, an editor): generated pages are not files."""
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text())
    relative = [t for t in targets if not re.match(r"[a-z]+://", t)]
    assert relative, "the README links into the docs"
    missing = [t for t in relative if not (ROOT / t).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def _tour_blocks() -> list[tuple[str, str]]:
    """The tour's (commands, printed output) pairs: each ```bash block with the ```text block after it."""
    tour = _section(README.read_text(), "tour")
    return re.findall(r"```bash\n(.*?)```\n```text\n(.*?)```", tour, re.S)


def test_readme_tour_prints_what_it_says(tmp_path: Path) -> None:
    """Every command of the curl tour, run in order against a live server, prints the output shown."""
    missing = [tool for tool in ("curl", "jq", "bash") if shutil.which(tool) is None]
    if missing:
        if IN_CI:
            pytest.fail(f"the README's tour needs {missing} (Debian packages)")
        pytest.skip(f"the README's tour needs {missing}")
    blocks = _tour_blocks()
    assert len(blocks) >= 5, "the tour starts, calls a tool, messages, acts and scores"
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db")
    with serve(create_app(settings)) as url:
        marker = "\n@@@ next block @@@\n"
        script = marker.join(commands for commands, _ in blocks)
        script = script.replace("GS=http://127.0.0.1:8000", f"GS={url}", 1).replace(
            marker, "\necho '@@@ next block @@@'\n"
        )
        assert f"GS={url}" in script
        run = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert run.returncode == 0, run.stderr
    outputs = run.stdout.split("@@@ next block @@@\n")
    assert len(outputs) == len(blocks)
    for (commands, shown), printed in zip(blocks, outputs, strict=True):
        expected = shown.rstrip("\n").splitlines()
        if expected[-1] == "...":  # the README shows the first lines only
            expected = expected[:-1]
            assert printed.splitlines()[: len(expected)] == expected, commands
        else:
            assert printed.splitlines() == expected, commands
