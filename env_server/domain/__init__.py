"""The public domain API: everything a domain plug-in needs, and nothing else.

A domain package imports only from here (and SQLAlchemy/pydantic); see `env_server/domains/hotel` for the
model to follow. Besides tables, tools and views, it holds the scenario kit a domain's families build
generated tasks with: `ScenarioPatch` for the rows, `call` and `user_spec` for the typed gold actions and
user, a `Caller` for the customer, the money and date wording, and the identity rule of write tools. A
dual-control domain also declares its customer's side (`Domain.user_tools`, `Domain.user_tables`, `Side`,
`user_call`): see `_user_side`.
"""

from env_server.domain._caller import Caller
from env_server.domain._conduct import Conduct
from env_server.domain._context import ToolContext, ToolError
from env_server.domain._domain import Domain, DomainFields, collect_tools, load_task_text, volatile
from env_server.domain._factories import EntitySpec, insert, patch_rows, patch_value, row_of, values_of
from env_server.domain._family import (
    ScenarioContext,
    ScenarioFamily,
    ScenarioPatch,
    ScenarioUnavailable,
)
from env_server.domain._gold import call, reply, user_call, user_spec
from env_server.domain._identity import is_verified
from env_server.domain._ids import FIRST_GENERATED_ID
from env_server.domain._schema import allowed_values, one_of
from env_server.domain._tables import (
    Entity,
    IdentityVerificationRecord,
    IdentityVerificationTable,
    named_metadata,
)
from env_server.domain._task_shapes import THANKS, Refusal, analytics_task, conversation, refusal
from env_server.domain._tool import Tool, ToolKind, tool
from env_server.domain._user_side import Instruction, Side
from env_server.domain._view import RowView
from env_server.domain._wording import (
    day_month,
    day_month_year,
    dollars,
    dollars_and_cents,
    month_day,
    month_day_year,
    whole_dollars,
)
from shared.tasks import GoldAction, ReferenceReply, ScriptLine, UserAction, UserSpec

__all__ = [
    "FIRST_GENERATED_ID",
    "THANKS",
    "Caller",
    "Conduct",
    "Domain",
    "DomainFields",
    "Entity",
    "EntitySpec",
    "GoldAction",
    "IdentityVerificationRecord",
    "IdentityVerificationTable",
    "Instruction",
    "ReferenceReply",
    "Refusal",
    "RowView",
    "ScenarioContext",
    "ScenarioFamily",
    "ScenarioPatch",
    "ScenarioUnavailable",
    "ScriptLine",
    "Side",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolKind",
    "UserAction",
    "UserSpec",
    "allowed_values",
    "analytics_task",
    "call",
    "collect_tools",
    "conversation",
    "day_month",
    "day_month_year",
    "dollars",
    "dollars_and_cents",
    "insert",
    "is_verified",
    "load_task_text",
    "month_day",
    "month_day_year",
    "named_metadata",
    "one_of",
    "patch_rows",
    "patch_value",
    "refusal",
    "reply",
    "row_of",
    "tool",
    "user_call",
    "user_spec",
    "values_of",
    "volatile",
    "whole_dollars",
]
