"""Generated training tasks: scenario families, and the generator that validates what they draw."""

from env_server.domain._family import ScenarioContext, ScenarioFamily, ScenarioUnavailable, entity_ids
from env_server.generation.generator import Draw, generate, write_task

__all__ = [
    "Draw",
    "ScenarioContext",
    "ScenarioFamily",
    "ScenarioUnavailable",
    "entity_ids",
    "generate",
    "write_task",
]
