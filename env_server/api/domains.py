"""`/v1/domains`: the catalogue of domains, their policies and tool schemas."""

from fastapi import APIRouter

from env_server.api.deps import RegistryDep
from env_server.api.responses import COMMON, error_responses
from shared.models import DomainDetail, DomainSummary

router = APIRouter(prefix="/v1/domains", tags=["domains"])


@router.get("", operation_id="domains-list", responses=error_responses(*COMMON))
def list_domains(registry: RegistryDep) -> list[DomainSummary]:
    """Every installed domain."""
    return [
        DomainSummary(
            name=d.name,
            description=d.description,
            tools=len(d.tools),
            tasks=sum(1 for _ in registry.tasks(domain=d.name)),
            benchmark=d.benchmark,
        )
        for d in registry.domains
    ]


@router.get("/{name}", operation_id="domains-get", responses=error_responses(*COMMON, 404, 422))
def get_domain(name: str, registry: RegistryDep) -> DomainDetail:
    """One domain: its policy (the agent's system prompt) and its tools in OpenAI format."""
    d = registry.domain(name)
    return DomainDetail(
        name=d.name,
        description=d.description,
        policy=d.policy,
        tools=[t.openai_schema() for t in d.tools],
        tool_kinds={t.name: t.kind for t in d.tools},
        families=[f.name for f in d.families],
    )
