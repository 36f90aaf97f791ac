"""A server installed without the `trainer` extra: it serves, and a trainer command says what to install.

Each test runs a fresh interpreter whose import system refuses the extra's modules (numpy, scipy,
matplotlib) as if they were not installed, then calls the real console-script entry point.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import typer
from typer import _click as click
from typer.core import TyperGroup

from groundstate.cli import (
    TRAINER_COMMANDS,
    TRAINER_EXTRA_MODULES,
    app,
    install_hint,
    load_trainer_command,
    source_checkout,
)

ROOT = Path(__file__).parents[2]

_WITHOUT_EXTRA = textwrap.dedent(
    """
    import sys

    BLOCKED = {blocked!r}

    class NotInstalled:
        '''Refuses the `trainer` extra's modules as an interpreter without them would.'''

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.meta_path.insert(0, NotInstalled())
    sys.argv = ["groundstate", *{argv!r}]
    from groundstate.cli import main

    try:
        main()
    finally:
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in {{"trainer", *BLOCKED}})
        print("LOADED", loaded, file=sys.stderr)
    """
)


def _run_without_extra(*argv: str) -> subprocess.CompletedProcess[str]:
    code = _WITHOUT_EXTRA.format(blocked=sorted(TRAINER_EXTRA_MODULES), argv=list(argv))
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )


def _loaded(stderr: str) -> str:
    return next(line for line in stderr.splitlines() if line.startswith("LOADED"))


def test_serve_help_runs_without_the_trainer_extra_and_imports_no_trainer_code() -> None:
    out = _run_without_extra("serve", "--help")
    assert out.returncode == 0, out.stderr
    assert "Run the environment server" in out.stdout
    assert _loaded(out.stderr) == "LOADED []"


def test_the_top_level_help_lists_the_trainer_commands_without_importing_them() -> None:
    out = _run_without_extra("--help")
    assert out.returncode == 0, out.stderr
    for name in ("serve", "tasks", *TRAINER_COMMANDS):
        assert name in out.stdout
    assert _loaded(out.stderr) == "LOADED []"


@pytest.mark.parametrize("argv", [["metrics", "runs/none"], ["eval", "--help"], ["select", "--help"]])
def test_a_trainer_command_without_the_extra_says_what_to_install(argv: list[str]) -> None:
    out = _run_without_extra(*argv)
    assert out.returncode == 1
    # from this checkout (as after `make run`): the exact command for this interpreter and checkout
    assert f"{sys.executable} -m pip install -e '{ROOT}[trainer]'" in out.stderr
    assert "make install" in out.stderr
    assert "Traceback" not in out.stderr


def test_an_installed_wheel_is_told_the_extra_by_name() -> None:
    assert source_checkout() == ROOT  # these tests run from the checkout
    hint = install_hint("numpy", None)
    assert "(numpy is not installed): pip install 'groundstate[trainer]'" in hint and "-e" not in hint


def test_a_trainer_command_runs_with_the_extra_installed(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "groundstate", "metrics", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert out.returncode == 1 and "error:" in out.stderr and "results.jsonl" in out.stderr
    assert "pip install" not in out.stderr


@pytest.mark.parametrize("name", sorted(TRAINER_COMMANDS))
def test_each_listed_summary_is_the_commands_own(name: str) -> None:
    command = load_trainer_command(name)
    assert command.name == name and command.help is not None
    assert " ".join(command.help.split("\n\n")[0].split()) == TRAINER_COMMANDS[name].summary


def test_the_root_group_lists_every_command_it_can_run() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    with click.Context(group) as ctx:
        for name in group.list_commands(ctx):
            assert group.get_command(ctx, name) is not None


def test_the_server_and_shared_import_none_of_the_trainers_dependencies(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import pkgutil, sys
        import shared
        from env_server.app import create_app
        from env_server.settings import Settings
        import groundstate.cli
        for info in pkgutil.iter_modules(shared.__path__, "shared."):
            __import__(info.name)
        create_app(Settings(store_url=f"sqlite:///{sys.argv[1]}/store.db"))
        heavy = {"trainer", "numpy", "scipy", "matplotlib", "torch"}
        print(sorted(m for m in sys.modules if m.split(".")[0] in heavy))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    assert out.stdout.strip() == "[]"
