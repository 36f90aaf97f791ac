"""Facts the docs state about the installed domains stay true to the registry, and no page names a machine.

Lists of domains drift when a domain is added (three pages once named four or five of six); the context each
domain's first prompt needs is stated in docs/evaluation/index.md; an absolute path of the machine that wrote
a page (`/work/...`, `/root/...`) means nothing to a reader.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from env_server.domain.registry import DomainRegistry
from trainer.policies.context import estimated_prompt_tokens

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([*ROOT.glob("docs/**/*.md"), ROOT / "README.md"])
#: Records of past measurements and audits: their lists name the domains of their time.
HISTORY = {ROOT / "docs/performance/history.md", ROOT / "docs/validity/audit.md"}
REGISTRY = DomainRegistry.discover()
NAMES = sorted(d.name for d in REGISTRY.domains)


def domain_lists(text: str) -> list[tuple[set[str], str]]:
    """Every enumeration of three or more domain names (`a, b and c`, links included), with its context."""
    name = rf"\[?\b(?:{'|'.join(NAMES)})\b(?:\]\([^)]*\))?"
    pattern = re.compile(rf"{name}(?:(?:,\s+|,?\s+and\s+|\s+or\s+|;\s+){name})+")
    found = []
    for match in pattern.finditer(text):
        names = set(re.findall(rf"\b({'|'.join(NAMES)})\b", match.group(0)))
        if len(names) >= 3:
            found.append((names, text[match.start() : match.end() + 80]))
    return found


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", [p for p in PAGES if p not in HISTORY], ids=page_id)
def test_a_list_of_domains_names_every_domain(page: Path) -> None:
    benchmark = {d.name for d in REGISTRY.domains if d.benchmark}
    for names, context in domain_lists(page.read_text(encoding="utf-8")):
        if "of that time" in context:  # a dated record, said so
            continue
        assert benchmark <= names, f"{page.name}: {context!r} leaves out {sorted(benchmark - names)}"


def test_the_domain_list_check_catches_a_short_list() -> None:
    assert domain_lists("databases (hotel, retail, travel, insurance; each")[0][0] == {
        "hotel",
        "retail",
        "travel",
        "insurance",
    }


def test_the_context_each_domain_needs_is_stated_as_computed() -> None:
    page = (ROOT / "docs/evaluation/index.md").read_text(encoding="utf-8")
    stated = {m[1]: int(m[2].replace(",", "")) for m in re.finditer(r"^\| (\w+) \| ([\d,]+) \|$", page, re.M)}
    computed = {
        d.name: estimated_prompt_tokens(d.policy, [t.openai_schema() for t in d.tools])
        for d in REGISTRY.domains
    }
    assert stated == computed


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_no_page_carries_an_absolute_machine_path(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    found = re.findall(r"(?<![\w.])/(?:work|root|home/\w+|Users/\w+|tmp/pytest\S*)/\S*", text)
    assert not found, f"{page.relative_to(ROOT)}: {found}"
