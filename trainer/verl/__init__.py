"""Training with Verl: the agent loop, the dataset rows, the recipes and their launcher.

`agent_loop` imports verl (and torch); `settings`, `dataset`, `launch` and `cli` do not at import time, so the
CLI mounts on a bare server install and imports Verl only when a command needs it.
"""
