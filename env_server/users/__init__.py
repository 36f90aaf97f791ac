"""Simulated users: the scripted default and an LLM behind any OpenAI-compatible endpoint."""
