"""Scenario families that ask the agent to tell facts give every such draw a reference reply that earns them.

The reply and its paraphrase are worded from the draw's own values, so each draw is checked the way
`groundstate tasks validate` checks a hand-written task: told in the canonical conversation, with the gold's
calls, the reply and each paraphrase score 1.
"""

from __future__ import annotations

from collections import Counter

import pytest

from env_server.domain import Domain
from env_server.domains.hotel import domain as hotel
from env_server.domains.insurance import domain as insurance
from env_server.domains.retail import domain as retail
from env_server.domains.telecom import domain as telecom
from env_server.domains.travel import domain as travel
from env_server.validation._replay import Replayer
from env_server.validation.replies import reply_check
from tests.domain_families import family_builds, generator_state

DRAWS = 12
#: Domain -> how many of its families must have told something in `DRAWS` draws each (the test bites).
TELLING_FAMILIES = {"hotel": 4, "insurance": 8, "retail": 7, "telecom": 8, "travel": 4}


@pytest.mark.parametrize("domain", [hotel, insurance, retail, telecom, travel], ids=lambda d: d.name)
def test_every_draw_that_tells_facts_carries_a_reply_that_earns_them(domain: Domain) -> None:
    scorer = generator_state(domain).scorer
    telling: Counter[str] = Counter()
    for family in domain.families:
        for task in family_builds(domain, family, seed=3, n=DRAWS):
            if not task.communicate:
                assert task.reference_reply is None, task.id  # a reply with nothing to tell means nothing
                continue
            telling[family.name] += 1
            reference = task.reference_reply
            assert reference is not None, task.id
            assert all(p != reference.text for p in reference.paraphrases), task.id
            outcome = reply_check(Replayer(task, domain, scorer))
            assert outcome.passed, (task.id, outcome.detail)
    assert len(telling) >= TELLING_FAMILIES[domain.name], telling
