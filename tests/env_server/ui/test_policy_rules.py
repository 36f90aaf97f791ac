"""Which policy rules a task's gold tools fall under, read from the real domain policies."""

from __future__ import annotations

from env_server.domains.hotel import domain as hotel
from env_server.domains.insurance import domain as insurance
from env_server.domains.retail import domain as retail
from env_server.ui.policy_rules import parse_rules, rules_for_tools


def test_numbered_list_rules_with_bold_titles() -> None:
    rules = parse_rules(hotel.policy)
    assert [r.number for r in rules] == [str(n) for n in range(1, len(rules) + 1)]
    assert rules[0].title == "Identity first"
    assert rules[4].title == "Cancellation refunds (flexible rate)"
    assert "| luxury" in rules[4].text and "Non-refundable" not in rules[4].text  # ends at the next rule


def test_numbered_section_rules() -> None:
    rules = parse_rules(insurance.policy)
    assert len(rules) == 15 and rules[0].title == "Identity verification"
    assert "1.5 Verification covers only" in rules[0].text and "## 2." not in rules[0].text


def test_rules_naming_the_gold_tools() -> None:
    task = next(t for t in hotel.tasks if t.id == "hotel-corp-modify-approval-001")
    linked = {
        rule.number: tools
        for rule, tools in rules_for_tools(hotel.policy, (a.name for a in task.gold_actions))
    }
    assert "verify_guest_identity" in linked["1"]
    assert "get_corporate_account" in linked["2"]
    assert "create_approval_request" in linked["9"]
    assert rules_for_tools(retail.policy, ["no_such_tool"]) == []
