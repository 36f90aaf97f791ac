"""Client-side errors: the server said no (`ApiError`) or could not be reached (`TransportError`).

    ClientError
    ├── ApiError          the server answered 4xx/5xx with {error: {code, message, field}}
    └── TransportError    connection refused, timeout, broken response
`retriable` marks what a trainer may retry: backend errors (503) and transport failures. A 503
`over-capacity` (the server refused before doing anything) the clients retry themselves, after its
`Retry-After` (`shared.client.OverCapacityRetry`).
"""

from __future__ import annotations


class ClientError(Exception):
    """Base of the client's errors."""

    retriable = False


class ApiError(ClientError):
    """The server rejected the request; `code` is its stable error code."""

    def __init__(
        self, status: int, code: str, message: str, field: str | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message, self.field = status, code, message, field
        #: The server's `Retry-After` in seconds, when it sent one (503 `over-capacity`).
        self.retry_after = retry_after

    @property
    def retriable(self) -> bool:  # type: ignore[override]
        """Backend errors are infrastructure failures, never the agent's; retrying is safe."""
        return self.status >= 500


class TransportError(ClientError):
    """The request did not get an answer (connection, timeout, protocol)."""

    retriable = True
