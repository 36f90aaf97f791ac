"""Tool sessions: read tools run without the writer's lock and cannot change rows; writes commit."""

import uuid

import pytest

from env_server.sandbox import make_sandbox_engine
from env_server.sandbox.template import Template
from tests.toy_domain import domain as toy_domain
from tests.toy_domain.models import Account


@pytest.mark.parametrize("commit", [True, False])
def test_a_read_session_that_changes_rows_is_a_bug_not_a_rollback(sandbox_url: str, commit: bool) -> None:
    engine = make_sandbox_engine(sandbox_url)
    sandbox = engine.create(uuid.uuid4().hex, Template(domain=toy_domain))
    try:
        with sandbox.session(commit=False) as session:
            before = session.get_one(Account, "AC-0001").balance_cents
        if commit:
            with sandbox.session(commit=True) as session:
                session.get_one(Account, "AC-0001").balance_cents = 1
        else:
            refused = pytest.raises(RuntimeError, match="read-only tool changed rows")
            with refused, sandbox.session(commit=False) as session:
                session.get_one(Account, "AC-0001").balance_cents = 1
        with sandbox.session(commit=False) as session:
            balance = session.get_one(Account, "AC-0001").balance_cents
        assert balance == (1 if commit else before)
    finally:
        sandbox.dispose()
        engine.close()
