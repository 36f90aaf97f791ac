"""`shared/tasks.py`: the task schema, and the one spelling of a gold tool call."""

import pytest
from pydantic import ValidationError

from shared.tasks import GoldAction, Task


def test_a_gold_action_is_spelt_as_openai_spells_a_call() -> None:
    action = GoldAction.model_validate({"name": "renew_loan", "arguments": {"loan_id": "L-1510"}})
    assert action.model_dump() == {"name": "renew_loan", "arguments": {"loan_id": "L-1510"}}


def test_the_old_spelling_loads_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"\{name, arguments\}"):
        action = GoldAction.model_validate({"tool": "renew_loan", "args": {"loan_id": "L-1510"}})
    assert action == GoldAction(name="renew_loan", arguments={"loan_id": "L-1510"})


def test_a_task_file_in_the_old_spelling_still_loads() -> None:
    data = {
        "id": "old-001",
        "domain": "starter",
        "split": "test",
        "user": {"persona": "p", "goal": "g", "script": ["hi"]},
        "gold_actions": [{"tool": "renew_loan", "args": {"loan_id": "L-1510"}}],
    }
    with pytest.warns(DeprecationWarning):
        task = Task.model_validate(data)
    assert task.gold_actions[0].name == "renew_loan"


def test_both_spellings_at_once_are_refused_by_name() -> None:
    with pytest.raises(ValidationError, match="'name' or the deprecated 'tool'"):
        GoldAction.model_validate({"name": "renew_loan", "tool": "renew_loan"})
