"""REST routers, one per resource."""

from env_server.api import domains, episodes, health, judge, scoring, tasks

routers = [domains.router, tasks.router, episodes.router, scoring.router, judge.router, health.router]

__all__ = ["routers"]
