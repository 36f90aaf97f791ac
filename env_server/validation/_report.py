"""What validation reports: one outcome per check and task, in a fixed order of checks."""

from __future__ import annotations

from dataclasses import dataclass, field

#: The adversarial suite's checks (`adversary`), in the order the summary lists them.
HACKS = tuple(
    f"hack:{name}"
    for name in (
        "recital",
        "recital-chunks",
        "value-dump",
        "value-dribble",
        "vocabulary-spray",
        "term-per-message",
        "echo",
        "dump-after-writes",
        "negated-facts",
        "act-before-consent",
        "tool-edge-values",
        "near-miss",
        "agent-plays-user",
        "no-proposal",
        "identity-from-record",
        "instruction-spray",
        "invented-turns",
    )
)

#: Every check, in the order the summary lists them (a task runs the ones that apply to it).
CHECKS = (
    "gold",
    "empty",
    "wrong",
    "minus-one-write",
    "canary",
    "user-actions",
    "minus-one-user-action",
    "columns",
    "arguments",
    "communicate-items",
    "reference-replies",
    "script",
    "script-replay",
    "boundaries",
    "tolerance",
    "text",
    *HACKS,
)


@dataclass(frozen=True)
class CheckOutcome:
    """One validation check of one task."""

    name: str
    passed: bool
    detail: str = ""
    counts: tuple[int, int] | None = None  # a generated attack's (items tried, items held)


@dataclass
class TaskValidation:
    """All checks of one task, plus notes that are findings but not failures (settled sensitivities)."""

    task_id: str
    domain: str
    checks: list[CheckOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True iff every check passed."""
        return all(c.passed for c in self.checks)
