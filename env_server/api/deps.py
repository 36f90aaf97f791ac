"""FastAPI dependencies: the app's services, taken from `app.state` (nothing is built at import time).

They are `async` only so FastAPI resolves them on the event loop instead of hopping to a worker thread.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from env_server.domain.registry import DomainRegistry
from env_server.episodes.service import EpisodeService
from env_server.settings import Settings


async def _service(request: Request) -> EpisodeService:
    return request.app.state.episodes  # type: ignore[no-any-return]


async def _registry(request: Request) -> DomainRegistry:
    return request.app.state.registry  # type: ignore[no-any-return]


async def _settings(request: Request) -> Settings:
    return request.app.state.settings  # type: ignore[no-any-return]


EpisodesDep = Annotated[EpisodeService, Depends(_service)]
RegistryDep = Annotated[DomainRegistry, Depends(_registry)]
SettingsDep = Annotated[Settings, Depends(_settings)]
