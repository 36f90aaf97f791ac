"""The server's error hierarchy: every failure a client can see, with a stable code and an HTTP status.

    GroundstateError                      500 backend-error (never the agent's fault)
    ├── NotFoundError                     404 not-found
    │   ├── UnknownDomainError                unknown-domain
    │   ├── UnknownTaskError                  unknown-task
    │   └── UnknownEpisodeError               unknown-episode
    │       └── EpisodeDisposedError          410 episode-disposed
    │           └── EpisodeReclaimedError         episode-reclaimed (idle past the timeout)
    ├── InvalidRequestError               422 invalid-request
    │   ├── UnknownToolError                  unknown-tool
    │   └── InvalidArgumentsError             invalid-arguments
    ├── EpisodeFinishedError              409 episode-finished
    ├── ConversationOverError             409 conversation-over
    ├── UnauthorizedError                 401 unauthorized
    ├── RequestTooLargeError              413 request-too-large
    ├── JudgeNotConfiguredError           503 judge-not-configured
    └── BackendError                      503 backend-error (sandbox, user or judge endpoint failure)
        ├── DomainVersionError                domain-version-changed (the episode's sandbox is another
        │                                     version's: a rolling upgrade)
        └── OverCapacityError                 over-capacity (with Retry-After: the worker is full; nothing
                                              was done, so a retry runs the request once)

A single exception handler renders them as `{"error": {"code", "message", "field"}}`.
"""

from __future__ import annotations

from typing import Any


class GroundstateError(Exception):
    """Base of every error the API reports; a subclass fixes `code` and `status` as class keywords.

    `class UnknownTaskError(NotFoundError, code="unknown-task")` keeps its parent's status (404).
    """

    code = "internal-error"
    status = 500

    def __init_subclass__(cls, *, code: str | None = None, status: int | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code
        if status is not None:
            cls.status = status

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class NotFoundError(GroundstateError, code="not-found", status=404):
    """A named resource does not exist."""


class UnknownDomainError(NotFoundError, code="unknown-domain"):
    """No domain of that name is installed."""


class UnknownTaskError(NotFoundError, code="unknown-task"):
    """No task of that id is loaded."""


class UnknownEpisodeError(NotFoundError, code="unknown-episode"):
    """No episode of that id exists (or it was disposed of)."""


class EpisodeDisposedError(UnknownEpisodeError, code="episode-disposed", status=410):
    """The episode was disposed of: its sandbox is gone, its record (`GET`) stays, nothing else applies."""


class EpisodeReclaimedError(EpisodeDisposedError, code="episode-reclaimed"):
    """The episode sat idle past `GROUNDSTATE_EPISODE_IDLE_TIMEOUT_S`: reclaimed, as if disposed of."""


class InvalidRequestError(GroundstateError, code="invalid-request", status=422):
    """The request is well-formed JSON but asks for something impossible."""


class UnknownToolError(InvalidRequestError, code="unknown-tool"):
    """The episode's domain has no tool of that name."""


class InvalidArgumentsError(InvalidRequestError, code="invalid-arguments"):
    """Tool arguments failed validation; `field` names the first bad argument."""


class EpisodeFinishedError(GroundstateError, code="episode-finished", status=409):
    """The episode was scored already; only GET and DELETE still apply."""


class ConversationOverError(GroundstateError, code="conversation-over", status=409):
    """The simulated user already ended the conversation; tools still work, then score."""


class UnauthorizedError(GroundstateError, code="unauthorized", status=401):
    """The bearer API key is missing or wrong."""


class RequestTooLargeError(GroundstateError, code="request-too-large", status=413):
    """The request body is larger than the server accepts (`GROUNDSTATE_MAX_REQUEST_BYTES`)."""


class BackendError(GroundstateError, code="backend-error", status=503):
    """Infrastructure failed (sandbox, user or judge endpoint); never counted against the agent."""


class DomainVersionError(BackendError, code="domain-version-changed"):
    """The episode's sandbox belongs to another version of its domain (a rolling upgrade is under way)."""


class JudgeNotConfiguredError(GroundstateError, code="judge-not-configured", status=503):
    """`POST /v1/judge` on a server started without a judge endpoint."""


class OverCapacityError(BackendError, code="over-capacity"):
    """The worker is at capacity (live episodes or requests in flight): retry after `retry_after_s`.

    Refused before any work, so a retry runs the request once; infrastructure, never the agent's fault.
    """

    def __init__(self, message: str, *, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class TaskInvalidError(GroundstateError, code="invalid-task"):
    """A task file is malformed or its gold replay fails; raised at load or validation time."""
