"""groundstate inside other people's trainers: one thin module per framework over the one rollout.

Each adapter drives `trainer.rollout` through `EpisodeBridge` (the framework pushes the model's turns) and
pins a versioned environment (`EnvironmentPin`, `domain@version`). The framework modules import their own
package and are imported by name (`trainer.adapters.skyrl`, `trainer.adapters.verifiers`), never from here.
"""

from trainer.adapters._bridge import BridgeStep, EpisodeBridge
from trainer.adapters._pin import EnvironmentPin, VersionMismatchError, parse_env_id, resolve_pin

__all__ = [
    "BridgeStep",
    "EnvironmentPin",
    "EpisodeBridge",
    "VersionMismatchError",
    "parse_env_id",
    "resolve_pin",
]
