"""The base of the records and settings both sides write and read (results, metrics, configs, logs)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["StrictModel"]


class StrictModel(BaseModel):
    """A record or setting with unknown fields rejected and each field documented once.

    A typo in a config or a file fails loudly, and the docstring under each field is its description (in
    JSON schemas and `--help`).
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
