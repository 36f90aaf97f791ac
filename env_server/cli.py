"""Server-side commands: `serve`, `db upgrade`, `tasks list|validate|generate`, `sandboxes prune`."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Annotated, Literal

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from env_server.domain.registry import DomainRegistry
from env_server.errors import GroundstateError
from env_server.settings import DEFAULT_PG_URL, Settings
from env_server.validation import TaskValidation
from shared.tables import fit_table

console = Console()
db_app = typer.Typer(help="The control-plane store.", no_args_is_help=True)
tasks_app = typer.Typer(help="Task catalogue and validation.", no_args_is_help=True)
sandboxes_app = typer.Typer(help="Sandbox databases on PostgreSQL.", no_args_is_help=True)

TasksDirOption = Annotated[
    list[Path] | None, typer.Option("--tasks-dir", help="Extra task directory (repeatable).")
]


def _registry(tasks_dir: list[Path] | None, domain: str | None = None) -> DomainRegistry:
    """Installed domains (only `domain`, if given) plus extra task files; bad input exits with a message."""
    try:
        return DomainRegistry.discover(tasks_dir or [], only=[domain] if domain else None)
    except GroundstateError as exc:
        console.print(f"[red]{exc.message}[/red]")
        raise typer.Exit(1) from exc


def _settings(**overrides: object) -> Settings:
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})  # type: ignore[arg-type]
    except ValidationError as exc:
        console.print(f"[red]invalid settings:[/red] {exc.errors()[0]['msg']}", soft_wrap=True)
        raise typer.Exit(2) from exc


def serve(
    host: Annotated[
        str | None, typer.Option(help="Bind address (default: GROUNDSTATE_HOST, else 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (default: GROUNDSTATE_PORT, else 8000).")] = None,
    workers: Annotated[
        int, typer.Option(min=1, help="Worker processes (use PostgreSQL sandboxes for >1).")
    ] = 1,
    tasks_dir: TasksDirOption = None,
    migrate: Annotated[
        bool | None,
        typer.Option(
            "--migrate/--no-migrate",
            help="Apply store migrations first (default: GROUNDSTATE_AUTO_MIGRATE, true). With several "
            "replicas run `groundstate db upgrade` once and start each with --no-migrate.",
        ),
    ] = None,
) -> None:
    """Run the environment server (settings from GROUNDSTATE_* variables; an option overrides one)."""
    import uvicorn

    from env_server.store import upgrade
    from env_server.store.migrate import StoreNotMigratedError, require_head

    settings = _settings(host=host, port=port, tasks_dirs=tasks_dir or None)
    taken = _unbindable(settings.host, settings.port)
    if taken:
        console.print(
            f"[red]cannot listen on {settings.host}:{settings.port}: {taken}.[/red] Stop what holds it, or "
            f"choose another port: `groundstate serve --port {settings.port + 10}`, "
            f"`make run PORT={settings.port + 10}` or GROUNDSTATE_PORT={settings.port + 10}.",
            soft_wrap=True,
        )
        raise typer.Exit(1)
    if workers > 1 and settings.sandbox_url.startswith("sqlite"):
        console.print(
            "[yellow]SQLite sandboxes live in one process: other workers rebuild them by replay.[/yellow]"
        )
    if settings.auto_migrate if migrate is None else migrate:
        upgrade(settings.store_url)
    else:
        try:
            require_head(settings.store_url)
        except StoreNotMigratedError as exc:
            console.print(f"[red]{exc}[/red]", soft_wrap=True)
            raise typer.Exit(1) from exc
    # uvicorn's workers build their settings from the environment: hand them the command line's choices, and
    # tell them the store is migrated already.
    workers_settings = settings.model_copy(update={"auto_migrate": False})
    os.environ.update(workers_settings.environment("host", "port", "tasks_dirs", "auto_migrate"))
    if workers > 1 or os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        _share_metrics_between_workers()
    url = f"http://{_url_host(settings.host)}:{settings.port}"
    console.print(
        f"groundstate on {url} (the viewer at {url}/ui, the API docs at {url}/docs), "
        f"sandboxes: {settings.sandbox_url}",
        soft_wrap=True,
    )
    # A long keep-alive: trainers reuse connections across slow policy turns; a server that closes an idle
    # connection just as a client reuses it turns a healthy request into a transport error.
    uvicorn.run(
        "env_server.app:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=workers,
        log_level="warning",
        timeout_keep_alive=120,
        # uvicorn kills a worker that does not answer its supervisor's ping in time (5 s by default); a new
        # worker re-imports this CLI and the domains first, which takes longer than that on a busy machine,
        # so with the default the workers were killed and restarted forever without serving.
        timeout_worker_healthcheck=60,
    )


def _unbindable(host: str, port: int) -> str | None:
    """Why the server cannot listen on `host:port` (the port taken, the address not ours), or None.

    Checked before the URL is announced: otherwise the URL shows, then uvicorn dies with "address already
    in use", and a newcomer reads the URL as a server that runs. The probe binds the way uvicorn does
    (`SO_REUSEADDR`), so a port in TIME_WAIT is not reported as taken.
    """
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return f"the address does not resolve ({exc.strerror})"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            return (
                "the port is taken by another program" if exc.errno == errno.EADDRINUSE else str(exc.strerror)
            )
    return None


def _url_host(host: str) -> str:
    """The host of the URL to open: a wildcard bind is reached on loopback, an IPv6 address in brackets."""
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def _share_metrics_between_workers() -> None:
    """Give the workers a fresh directory to write their metrics into, so `/metrics` shows them all.

    Each worker's values live in files named by its pid; a directory left by an earlier run would add the
    dead workers' counts, so the value files in an inherited `PROMETHEUS_MULTIPROC_DIR` are removed first.
    """
    import tempfile

    shared = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if shared:
        Path(shared).mkdir(parents=True, exist_ok=True)
        for stale in Path(shared).glob("*.db"):
            stale.unlink()
    else:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="groundstate-metrics-")


@db_app.command("upgrade")
def db_upgrade(revision: Annotated[str, typer.Argument(help="Target revision.")] = "head") -> None:
    """Apply the store's Alembic migrations (GROUNDSTATE_STORE_URL)."""
    from env_server.store.migrate import current, upgrade

    url = _settings().store_url
    upgrade(url, revision)
    console.print(f"store {url} at revision {current(url)}", soft_wrap=True)


@tasks_app.command("list")
def tasks_list(
    domain: Annotated[str | None, typer.Option(help="Only this domain; lists its task ids.")] = None,
    tasks_dir: TasksDirOption = None,
) -> None:
    """Count tasks per domain, split and kind (or list one domain's tasks)."""
    registry = _registry(tasks_dir, domain)
    if domain:
        listed = [
            [t.id, t.split, t.kind, ", ".join(t.difficulty_tags)] for t in registry.tasks(domain=domain)
        ]
        header = ["task", "split", "kind", "tags"]
        console.print(fit_table(console, header, listed, title=f"{domain} tasks", wrap=["tags"]))
        return
    columns = ["domain", "tables", "tools", "test", "train", "action", "analytics", "total"]
    rows: list[list[str]] = []
    totals = [0] * 5
    for d in registry.domains:
        tasks = list(registry.tasks(domain=d.name))
        counts = [
            sum(t.split == "test" for t in tasks),
            sum(t.split == "train" for t in tasks),
            sum(t.kind == "action" for t in tasks),
            sum(t.kind == "analytics" for t in tasks),
            len(tasks),
        ]
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        rows.append([d.name, str(len(d.metadata.tables)), str(len(d.tools)), *map(str, counts)])
    rows.append(["all", "", "", *map(str, totals)])
    console.print(fit_table(console, columns, rows, title="groundstate tasks", sections=[len(rows) - 2]))


@tasks_app.command("validate")
def tasks_validate(
    domain: Annotated[str | None, typer.Option(help="Only this domain.")] = None,
    backend: Annotated[Literal["sqlite", "postgresql"], typer.Option(help="Sandbox backend.")] = "sqlite",
    pg_url: Annotated[str, typer.Option(help="PostgreSQL URL for --backend postgresql.")] = DEFAULT_PG_URL,
    tasks_dir: TasksDirOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print every task's checks as JSON.")] = False,
    report_dir: Annotated[
        Path | None,
        typer.Option(
            help="Write validity-<domain>.txt (one line per failed check: task, check, detail) and "
            "notes-<domain>.txt (settled argument sensitivities and boundaries) into this directory."
        ),
    ] = None,
    workers: Annotated[
        int, typer.Option(min=1, help="Worker processes (tasks are independent; default: one per core).")
    ] = os.cpu_count() or 1,
) -> None:
    """Check every task: its reward means something, and a policy-following agent can earn it.

    Replay checks (gold 1; empty, wrong, minus-one-write, canary 0), argument sensitivity, atomic
    communicate items, scripts a policy-following agent can finish, analytics boundaries, text lint.
    """
    from env_server.validation.pool import Source, validate_tasks
    from env_server.validation.summary import print_validation, validation_json

    registry = _registry(tasks_dir, domain)
    tasks = list(registry.tasks(domain=domain))
    if not tasks:
        console.print("[yellow]no tasks to validate[/yellow]")
        return
    source = Source(tuple(tasks_dir or ()), domain, "sqlite://" if backend == "sqlite" else pg_url)
    with _progress(Console(stderr=True) if as_json else console) as progress:
        bar = progress.add_task(f"validating on {backend}", total=len(tasks))
        reports = validate_tasks(source, [t.id for t in tasks], workers, lambda: progress.advance(bar))
    if report_dir is not None:
        _write_findings(reports, report_dir)
    if as_json:
        typer.echo(json.dumps(validation_json(reports, backend).model_dump(mode="json"), indent=1))
    else:
        print_validation(console, reports, backend)
    if not all(r.passed for r in reports):
        raise typer.Exit(1)


@tasks_app.command("generate")
def tasks_generate(
    domain: Annotated[str, typer.Option(help="Domain whose scenario families to draw from.")],
    n: Annotated[int, typer.Option("--n", min=1, help="How many valid tasks to write.")],
    out: Annotated[Path, typer.Option(help="Directory to write <id>.yaml files into.")],
    seed: Annotated[int, typer.Option(help="Run seed: the same seed gives the same tasks.")] = 0,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = os.cpu_count() or 1,
) -> None:
    """Write N new, validated `train` tasks on entities no benchmark task uses."""
    from collections import Counter

    from env_server.generation import generate, write_task

    dom = _registry(None, domain).domain(domain)
    out.mkdir(parents=True, exist_ok=True)
    kept: Counter[str] = Counter()
    discarded: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    with _progress() as progress:
        bar = progress.add_task(f"generating {domain} tasks", total=n)
        for draw in generate(dom, n=n, seed=seed, workers=workers):
            if draw.task is not None:
                write_task(draw.task, out)
                kept[draw.family] += 1
                progress.advance(bar)
            else:
                discarded[draw.family] += 1
                reasons[draw.discarded.split(":")[0] if draw.discarded else "?"] += 1
    rows = [
        [family.name, ",".join(family.covers), str(kept[family.name]), str(discarded[family.name])]
        for family in dom.families
    ]
    title = f"generated {domain} tasks in {out}"
    console.print(fit_table(console, ["family", "covers", "kept", "discarded"], rows, title=title))
    if reasons:
        console.print("discarded because: " + ", ".join(f"{r} ×{c}" for r, c in reasons.most_common()))
    total = sum(kept.values())
    console.print(f"{total} tasks written, {sum(discarded.values())} draws discarded")
    if total < n:
        raise typer.Exit(1)


def _progress(on: Console | None = None) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=on or console,
        transient=True,
    )


def _write_findings(reports: list[TaskValidation], out: Path) -> None:
    """validity-<domain>.txt: `task<TAB>check<TAB>detail` per failed check; notes-<domain>.txt likewise."""
    out.mkdir(parents=True, exist_ok=True)
    for name in sorted({r.domain for r in reports}):
        mine = [r for r in reports if r.domain == name]
        failed = [f"{r.task_id}\t{c.name}\t{c.detail}" for r in mine for c in r.checks if not c.passed]
        notes = [f"{r.task_id}\t{n.split(': ', 1)[0]}\t{n.split(': ', 1)[-1]}" for r in mine for n in r.notes]
        (out / f"validity-{name}.txt").write_text("".join(line + "\n" for line in failed), encoding="utf-8")
        (out / f"notes-{name}.txt").write_text("".join(line + "\n" for line in notes), encoding="utf-8")


@sandboxes_app.command("prune")
def sandboxes_prune(
    pg_url: Annotated[
        str, typer.Option(help="The PostgreSQL database the servers' sandboxes live in.")
    ] = DEFAULT_PG_URL,
    keep_free: Annotated[int, typer.Option(min=0, help="Free slots to keep per domain.")] = 8,
    held_hours: Annotated[
        float | None,
        typer.Option(min=0, help="Also drop slots held longer than this (episodes never disposed of)."),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would go; drop nothing.")] = False,
    tasks_dir: TasksDirOption = None,
) -> None:
    """Drop sandbox schemas left by older domain versions, surplus free slots and (if asked) orphaned slots.

    Pass every `--tasks-dir` the servers serve: templates of tasks not given here count as unused.
    """
    from env_server.sandbox import template_of
    from env_server.sandbox.postgres import PostgresSandboxEngine

    registry = _registry(tasks_dir)
    templates = [template_of(t, registry.domain(t.domain)) for t in registry.tasks()]
    engine = PostgresSandboxEngine(pg_url)
    try:
        with console.status("pruning sandbox schemas" if not dry_run else "looking for unused schemas"):
            report = engine.prune(templates, keep_free=keep_free, held_hours=held_hours, dry_run=dry_run)
    finally:
        engine.close()
    verb = "would drop" if dry_run else "dropped"
    console.print(
        f"{verb} {len(report.stale_schemas)} base/template schemas of older domain versions and "
        f"{len(report.surplus_slots)} free slots and {len(report.orphaned_slots)} orphaned slots; kept "
        f"{report.kept_slots} free slots and {report.held_slots} held by episodes"
    )
