"""A versioned environment: `domain@version`, so a framework's results say what they were scored against.

The version is the domain's fingerprint (its tables and seeded rows) from the server's grading version, and
the scorer's version rides beside it. `resolve_pin` learns both before any training: it scores an empty
trajectory of one of the domain's tasks (`POST /v1/score`, a stateless call that changes nothing). Every
episode's score is then checked against the pin: a server whose domain or scorer moved under a run is a
configuration mistake (`VersionMismatchError`), never a reward.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.client import AsyncGroundstateClient
from shared.models import ScoreRequest, ScoreResult

__all__ = ["EnvironmentPin", "VersionMismatchError", "parse_env_id", "resolve_pin"]


class VersionMismatchError(RuntimeError):
    """The server grades with another domain or scorer version than the one the run pinned."""


def parse_env_id(env_id: str) -> tuple[str, str | None]:
    """Split `hotel@a41be0c95d2f7713` into the domain and the pinned version (null when unpinned).

    Raises:
        ValueError: The id has an empty domain or an empty version after `@`.
    """
    domain, _, version = env_id.partition("@")
    if not domain or (env_id.count("@") and not version):
        raise ValueError(f"environment id {env_id!r}: expected DOMAIN or DOMAIN@VERSION, e.g. hotel@a41be0c9")
    return domain, version or None


@dataclass(frozen=True)
class EnvironmentPin:
    """What a run is scored against: the domain at one fingerprint, graded by one scorer version."""

    domain: str
    version: str
    """The domain's fingerprint (`GradingVersion.domain_fingerprint`)."""
    scorer_version: str

    @property
    def env_id(self) -> str:
        """`domain@version`, as the frameworks' results name the environment."""
        return f"{self.domain}@{self.version}"

    def check(self, score: ScoreResult) -> None:
        """Refuse a score graded against another version (a backend_error, ungraded, passes).

        Raises:
            VersionMismatchError: The score's domain fingerprint or scorer version differs from the pin.
        """
        grading = score.grading
        if grading is None:
            return
        if (
            not grading.domain_fingerprint.startswith(self.version)
            or grading.scorer_version != self.scorer_version
        ):
            raise VersionMismatchError(
                f"pinned {self.env_id} ({self.scorer_version}) but the server graded "
                f"{self.domain}@{grading.domain_fingerprint} ({grading.scorer_version})"
            )


async def resolve_pin(
    client: AsyncGroundstateClient, domain: str, task_id: str, version: str | None
) -> EnvironmentPin:
    """The pin of `domain` as the server grades it now, checked against `version` when one is given.

    Args:
        client: The server client.
        domain: The domain.
        task_id: One of the domain's tasks (its empty trajectory is scored to read the grading version).
        version: The version the caller pinned (a prefix of the fingerprint is enough), or null to take the
            server's.

    Raises:
        VersionMismatchError: The server's domain fingerprint does not start with `version`.
    """
    score = await client.score_trajectory(ScoreRequest(task_id=task_id))
    if score.grading is None:
        raise VersionMismatchError(f"the server gave no grading version for {task_id} ({score.status})")
    found = score.grading.domain_fingerprint
    if version is not None and not found.startswith(version):
        raise VersionMismatchError(f"pinned {domain}@{version} but the server has {domain}@{found}")
    return EnvironmentPin(
        domain=domain, version=version or found, scorer_version=score.grading.scorer_version
    )
