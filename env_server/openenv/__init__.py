"""The OpenEnv adapter: groundstate episodes behind OpenEnv's WebSocket environment protocol."""

from env_server.openenv.router import router

__all__ = ["router"]
