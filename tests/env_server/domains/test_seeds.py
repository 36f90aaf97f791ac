"""Each built-in domain's seed writes the rows it always wrote.

Task files name seeded entities (`G-1042`, `BK-10417`), and the domain fingerprint hashes the seeded rows,
so a refactor of a seed (onto the domain's `factories.py`, say) must draw and write exactly the same rows.
The pins are the hash of those rows (`seeded_rows_digest`, the part of the fingerprint the seed makes):
when a seed change is meant to change rows, update the pin in the same commit and say why.
"""

from __future__ import annotations

import importlib

import pytest

from env_server.domain._fingerprint import seeded_rows_digest

SEEDED_ROWS = {
    "starter": "7d4c71b598b2d193",
    "hotel": "2059dcd12041fef4",
    "retail": "0956a3f13650dd89",
    "travel": "2ea7a359af577779",
    "insurance": "07f0de63280b228f",
    "telecom": "ab5bf288d524e712",
}


@pytest.mark.parametrize("name", sorted(SEEDED_ROWS))
def test_the_seed_writes_the_pinned_rows(name: str) -> None:
    domain = importlib.import_module(f"env_server.domains.{name}").domain
    digest = seeded_rows_digest(domain.metadata, domain.seed, domain.seed_value).hex()[:16]
    assert digest == SEEDED_ROWS[name], f"the {name} seed writes different rows than before"
