"""The person a generated task's user plays: how they prove who they are and what they can tell the agent."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from env_server.domain._gold import call, user_spec
from shared.tasks import GoldAction, UserSpec


class Caller(ABC):
    """A customer calling about their own records; a domain subclasses it once, next to its scene.

    The subclass says which tool checks identity (`identity_tool`) with which arguments
    (`identity_args`), the facts the caller can give (`identity_facts`), how they give them
    (`identity_line`) and who they are (`persona`); the rest follows, the same in every domain.
    """

    #: The domain's identity-check tool, e.g. "verify_guest_identity".
    identity_tool: ClassVar[str]

    @abstractmethod
    def identity_args(self) -> dict[str, Any]:
        """The arguments of `identity_tool` that this caller's own details make."""

    @abstractmethod
    def identity_facts(self) -> dict[str, Any]:
        """What the caller knows about themselves (the start of the user's `known_info`)."""

    @abstractmethod
    def identity_line(self) -> str:
        """The user's line that answers the agent's identity questions."""

    @abstractmethod
    def persona(self, detail: str = "") -> str:
        """Who the caller is and how they talk, with a scenario's `detail`."""

    def verify(self) -> GoldAction:
        """The identity check with the details the caller gives."""
        return call(self.identity_tool, **self.identity_args())

    def known(self, **extra: Any) -> dict[str, Any]:
        """`known_info`: the caller's identity facts, then the scenario's `extra` ones."""
        return {**self.identity_facts(), **extra}

    def user(
        self,
        goal: str,
        script: list[str],
        *,
        detail: str = "",
        known: dict[str, Any] | None = None,
        unknown: list[str] | None = None,
        instructions: str = "",
    ) -> UserSpec:
        """The task's simulated user: this caller's persona (with `detail`) and facts (with `known`)."""
        return user_spec(
            self.persona(detail),
            goal,
            script,
            self.known(**(known or {})),
            unknown=unknown,
            instructions=instructions,
        )
