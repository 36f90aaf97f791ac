"""The generative adversary: attacks written from a task's own reference reply, scored through real scoring.

On a shipped hotel task every assertion-breaking rewrite of the reply (a question, a hedge, a negation
before or after, a condition, labels and lists of decoys, a second answer, guesses over three messages)
scores 0 on its item, and every assertion-preserving one (casing, number words, fillers, a negated decoy)
keeps the reward 1. The report counts items per transformation.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from env_server.domain.registry import DomainRegistry
from env_server.sandbox import make_sandbox_engine
from env_server.scoring.scorer import Scorer
from env_server.scoring.tokens import read
from env_server.scoring.vocabulary import vocabulary
from env_server.users.conduct import proposal_sentence
from env_server.validation._replay import Replayer
from env_server.validation._report import CheckOutcome, TaskValidation
from env_server.validation.generative import TRANSFORMATIONS, generative_checks, spelled, target
from env_server.validation.summary import generated_counts, validation_json

REGISTRY = DomainRegistry.discover(only=["hotel"])
HOTEL = REGISTRY.domain("hotel")


@pytest.fixture
def replayer() -> Replayer:
    task = next(t for t in REGISTRY.tasks(domain="hotel") if t.id == "hotel-cancel-refund-002")
    return Replayer(task, HOTEL, Scorer(make_sandbox_engine("sqlite://")))


def test_every_transformation_of_a_refund_quote_comes_out_as_declared(replayer: Replayer) -> None:
    checks = {c.name: c for c in generative_checks(replayer)}
    breaking = {f"gen:{t.name}" for t in TRANSFORMATIONS if not t.preserving}
    assert breaking <= set(checks), sorted(breaking - set(checks))
    for name, check in checks.items():
        assert check.passed, (name, check.detail)
        assert check.counts == (1, 1), name


def test_decoys_come_from_the_task_and_are_written_as_the_reply_writes_the_item() -> None:
    reply = "Cancelling now would refund $306 of the $612 you paid. Shall I cancel it?"
    t = target("306", reply, vocabulary(HOTEL), read("612"))
    assert t is not None and t.said == "$306"
    assert t.decoys[0] == "$612" and "$307" in t.decoys and "$153" in t.decoys
    assert t.swapped("$153") == reply.replace("$306", "$153")
    term = target("non-refundable", "Your rate is non-refundable.", vocabulary(HOTEL), [])
    assert term is not None and term.decoys == ("flexible",)


@given(st.integers(min_value=0, max_value=999_999))
def test_property_a_number_in_words_reads_back_as_its_digits(n: int) -> None:
    tokens = read(f"You get {spelled(n)} dollars back.")
    amounts = [t for t in tokens if t.kind == "money"]
    assert [t.value for t in amounts] == [str(n)]


def test_the_report_counts_items_per_transformation_in_text_and_json() -> None:
    report = TaskValidation("t-1", "hotel")
    report.checks += [
        CheckOutcome("gen:question", True, "1 of 1 items held", (1, 1)),
        CheckOutcome("gen:lower-case", False, "0 of 1 items held: ...", (1, 0)),
    ]
    counts = generated_counts([report])
    assert counts["question"] == {"preserving": 0, "tasks": 1, "items": 1, "held": 1, "failed": 0}
    assert counts["lower-case"]["failed"] == 1 and counts["lower-case"]["preserving"] == 1
    assert validation_json([report], "sqlite").generated == counts


def test_a_breaking_transformation_also_breaks_the_item_in_the_proposal_the_flow_writes() -> None:
    registry = DomainRegistry.discover(only=["retail"])
    task = registry.task("retail-return-fee-charged-001")
    domain = registry.domain("retail")
    assert any(v in proposal_sentence(task, domain) for v in task.communicate)  # told there too
    checks = generative_checks(Replayer(task, domain, Scorer(make_sandbox_engine("sqlite://"))))
    breaking = {f"gen:{t.name}" for t in TRANSFORMATIONS if not t.preserving}
    failed = {c.name: c.detail for c in checks if not c.passed}
    assert not failed, failed
    assert breaking & {c.name for c in checks}
