"""The remote trainer: rollouts, evaluation campaigns, difficulty selection, reports, Verl integration."""
