"""The verifiers plug-in: `vf-eval groundstate_verifiers --env.taskset.env hotel ...` imports this package.

verifiers finds a taskset by its package name and takes the `Taskset` and `Env` subclasses its `__all__`
exports; the code lives in `trainer.adapters.verifiers_env`.
"""

from trainer.adapters.verifiers_env import GroundstateEnv, GroundstateTaskset, load_environment

__all__ = ["GroundstateEnv", "GroundstateTaskset", "load_environment"]
