"""The server's error hierarchy: every failure a client can see, with a stable code and an HTTP status.

    GroundstateError                      500 backend-error (never the agent's fault)
    ├── NotFoundError                     404 not-found
    │   ├── UnknownDomainError                unknown-domain
    │   ├── UnknownTaskError                  unknown-task
    │   └── UnknownEpisodeError               unknown-episode
    ├── InvalidRequestError               422 invalid-request
    │   ├── UnknownToolError                  unknown-tool
    │   └── InvalidArgumentsError             invalid-arguments
    ├── EpisodeFinishedError              409 episode-finished
    ├── ConversationOverError             409 conversation-over
    ├── UnauthorizedError                 401 unauthorized
    ├── JudgeNotConfiguredError           503 judge-not-configured
    └── BackendError                      503 backend-error (sandbox, user or judge endpoint failure)

A single exception handler renders them as `{"error": {"code", "message", "field"}}`.
"""

from __future__ import annotations


class GroundstateError(Exception):
    """Base of every error the API reports; subclasses fix `code` and `status`."""

    code = "internal-error"
    status = 500

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class NotFoundError(GroundstateError):
    """A named resource does not exist."""

    code = "not-found"
    status = 404


class UnknownDomainError(NotFoundError):
    """No domain of that name is installed."""

    code = "unknown-domain"


class UnknownTaskError(NotFoundError):
    """No task of that id is loaded."""

    code = "unknown-task"


class UnknownEpisodeError(NotFoundError):
    """No episode of that id exists (or it was disposed of)."""

    code = "unknown-episode"


class InvalidRequestError(GroundstateError):
    """The request is well-formed JSON but asks for something impossible."""

    code = "invalid-request"
    status = 422


class UnknownToolError(InvalidRequestError):
    """The episode's domain has no tool of that name."""

    code = "unknown-tool"


class InvalidArgumentsError(InvalidRequestError):
    """Tool arguments failed validation; `field` names the first bad argument."""

    code = "invalid-arguments"


class EpisodeFinishedError(GroundstateError):
    """The episode was scored already; only GET and DELETE still apply."""

    code = "episode-finished"
    status = 409


class ConversationOverError(GroundstateError):
    """The simulated user already ended the conversation; tools still work, then score."""

    code = "conversation-over"
    status = 409


class UnauthorizedError(GroundstateError):
    """The bearer API key is missing or wrong."""

    code = "unauthorized"
    status = 401


class BackendError(GroundstateError):
    """Infrastructure failed (sandbox, user or judge endpoint); never counted against the agent."""

    code = "backend-error"
    status = 503


class JudgeNotConfiguredError(GroundstateError):
    """`POST /v1/judge` on a server started without a judge endpoint."""

    code = "judge-not-configured"
    status = 503


class TaskInvalidError(GroundstateError):
    """A task file is malformed or its gold replay fails; raised at load or validation time."""

    code = "invalid-task"
