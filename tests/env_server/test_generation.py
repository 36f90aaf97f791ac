"""`groundstate tasks generate`: valid, reproducible train tasks on entities no benchmark task uses."""

from pathlib import Path

from typer.testing import CliRunner

from env_server.domain.registry import DomainRegistry, load_tasks_dir
from env_server.generation import entity_ids, generate
from groundstate.cli import app


def test_generate_writes_valid_train_tasks_that_avoid_benchmark_entities(
    toy_site: Path, tmp_path: Path
) -> None:
    out = tmp_path / "gen"
    result = CliRunner().invoke(
        app,
        [
            "tasks",
            "generate",
            "--domain",
            "toybank",
            "--n",
            "12",
            "--seed",
            "7",
            "--out",
            str(out),
            "--workers",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "12 tasks written" in result.output
    tasks = load_tasks_dir(out)
    assert len(tasks) == 12 and {t.split for t in tasks} == {"train"}
    assert {t.kind for t in tasks} == {"action", "analytics"}
    registry = DomainRegistry.discover(only=["toybank"])
    benchmark = {i for t in registry.tasks(split="test") for i in entity_ids(t.model_dump(mode="json"))}
    assert benchmark and not benchmark & {i for t in tasks for i in entity_ids(t.model_dump(mode="json"))}
    check = CliRunner().invoke(app, ["tasks", "validate", "--domain", "toybank", "--tasks-dir", str(out)])
    assert check.exit_code == 0 and "18 passed, 0 failed" in check.output


def test_generation_is_reproducible_and_independent_of_workers(toy_site: Path) -> None:
    domain = DomainRegistry.discover(only=["toybank"]).domain("toybank")
    one = [d.task for d in generate(domain, n=6, seed=3, workers=1) if d.task]
    two = [d.task for d in generate(domain, n=6, seed=3, workers=2) if d.task]
    assert one == two and len(one) == 6
    other = [d.task for d in generate(domain, n=6, seed=4, workers=1) if d.task]
    assert other != one


def test_discarded_draws_carry_their_reason(toy_site: Path) -> None:
    domain = DomainRegistry.discover(only=["toybank"]).domain("toybank")
    draws = list(generate(domain, n=20, seed=1, workers=1))
    discarded = [d for d in draws if d.task is None]
    assert discarded and all(d.discarded for d in discarded)
    assert sum(d.task is not None for d in draws) == 20
