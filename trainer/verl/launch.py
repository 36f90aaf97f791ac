"""Launch `verl.trainer.main_ppo` with our agent loop registered, or compose and validate its config on CPU.

The recipes (`configs/*.yaml`) extend Verl's own `ppo_trainer` config (found through Hydra's search path
`pkg://verl.trainer.config`), so `--dry-run` composes exactly what `main_ppo` composes and runs Verl's own
checks on it (`validate_config` and the typed config dataclasses), then ours: the `groundstate:` section, the
agent-loop registry, the filter_groups metric and the failed-group policy (see `trainer.verl.agent_loop`),
and for `groundstate.curriculum: adaptive` what the curriculum needs (`adaptive_settings`, the data rows).
Verl is imported only by `compose` and `validate`.

Which module runs is decided by the composed config, not by a flag: `static` runs Verl's own
`verl.trainer.main_ppo`, `adaptive` runs `trainer.verl.main` (Verl's entry with our TaskRunner). A recipe
that says `adaptive` therefore never reaches a `main_ppo` that would ignore it (`Launch.for_curriculum`).
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainer.verl.resources import resource_problems
from trainer.verl.settings import AGENT_NAME, SETTINGS_KEY, CurriculumMode, EpisodeSettings, SettingsError

if TYPE_CHECKING:
    from trainer.curriculum import CurriculumSettings

__all__ = [
    "AGENT_LOOPS",
    "CONFIG_DIR",
    "ENTRIES",
    "RECIPES",
    "Launch",
    "LaunchError",
    "Validation",
    "adaptive_settings",
    "compose",
    "curriculum_of",
    "plan",
    "section_settings",
    "validate",
]

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
"""The shipped recipes and the agent-loop registry (installed with the package on every node)."""
AGENT_LOOPS = CONFIG_DIR / "agent_loops.yaml"
"""The agent-loop registry handed to Verl (`actor_rollout_ref.rollout.agent.agent_loop_config_path`)."""
RECIPES = {"grpo": "groundstate_grpo", "grpo_lora": "groundstate_grpo_lora"}
"""Shipped recipes by short name."""
ENTRIES: dict[str, str] = {"static": "verl.trainer.main_ppo", "adaptive": "trainer.verl.main"}
"""The module run for each `groundstate.curriculum`."""


class LaunchError(ValueError):
    """A config that cannot train: the message names the setting and what it must be."""


@dataclass(frozen=True)
class Launch:
    """What `main_ppo` is run with."""

    config_dir: Path
    config_name: str
    overrides: list[str] = field(default_factory=list)
    module: str = ENTRIES["static"]
    """`verl.trainer.main_ppo`, or `trainer.verl.main` for the adaptive curriculum."""

    def for_curriculum(self, curriculum: CurriculumMode) -> Launch:
        """This launch running the entry of the composed config's curriculum."""
        return replace(self, module=ENTRIES[curriculum])

    def command(self) -> list[str]:
        """The exact command line."""
        return [
            sys.executable,
            "-m",
            self.module,
            "--config-path",
            str(self.config_dir),
            "--config-name",
            self.config_name,
            *self.overrides,
        ]

    def shell(self) -> str:
        """The command as one shell line."""
        return shlex.join(self.command())


def plan(
    config: str,
    server_url: str,
    overrides: list[str] | None = None,
    *,
    curriculum: CurriculumMode | None = None,
    mint_per_step: int | None = None,
) -> Launch:
    """The launch of a recipe against a server.

    Args:
        config: A shipped recipe (`grpo`, `grpo_lora`) or the path of a YAML recipe of one's own.
        server_url: The groundstate server the episodes run on.
        overrides: Hydra overrides, applied after ours (so they win).
        curriculum: Sets `groundstate.curriculum` (None: the recipe's); `adaptive` also sets
            `data.dataloader_num_workers=0`, which it needs. The module run follows the composed config.
        mint_per_step: Sets `groundstate.mint_per_step` (None: the recipe's); `validate` refuses it without
            the adaptive curriculum.

    Raises:
        LaunchError: No such recipe.
    """
    if config in RECIPES:
        config_dir, name = CONFIG_DIR, RECIPES[config]
    else:
        path = Path(config).expanduser()
        if path.suffix not in (".yaml", ".yml") or not path.is_file():
            raise LaunchError(
                f"--config: give one of {', '.join(RECIPES)} or a YAML recipe file, got {config!r}"
            )
        config_dir, name = path.resolve().parent, path.stem
    ours = [
        f"{SETTINGS_KEY}.server_url={server_url}",
        f"actor_rollout_ref.rollout.agent.agent_loop_config_path={AGENT_LOOPS}",
    ]
    if curriculum is not None:
        ours.append(f"{SETTINGS_KEY}.curriculum={curriculum}")
    if curriculum == "adaptive":
        ours.append("data.dataloader_num_workers=0")
    if mint_per_step is not None:
        ours.append(f"{SETTINGS_KEY}.mint_per_step={mint_per_step}")
    return Launch(
        config_dir=config_dir,
        config_name=name,
        overrides=[*ours, *(overrides or [])],
        module=ENTRIES[curriculum or "static"],
    )


def compose(launch: Launch) -> Any:
    """Compose the launch's config as `main_ppo` does (Hydra, Verl's config tree), without running it.

    Raises:
        LaunchError: Hydra refuses the recipe or an override (unknown key, bad syntax).
    """
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    try:
        with initialize_config_dir(config_dir=str(launch.config_dir), version_base=None):
            return hydra_compose(config_name=launch.config_name, overrides=launch.overrides)
    except (HydraException, OmegaConfBaseException) as exc:
        raise LaunchError(f"the config does not compose: {exc}") from exc


@dataclass(frozen=True)
class Validation:
    """A config that passed: its episode settings, and what could not be checked on this machine."""

    settings: EpisodeSettings
    notes: list[str] = field(default_factory=list)


def validate(config: Any) -> Validation:
    """Run Verl's own config checks, then ours.

    Raises:
        LaunchError: Verl or our checks refuse the config.
    """
    from hydra.errors import HydraException
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    checked, notes = _without_vllm(config)
    try:
        validate_config(
            config=checked,
            use_reference_policy=need_reference_policy(config),
            use_critic=need_critic(config),
        )
        for section in (config.algorithm, config.actor_rollout_ref.actor, config.actor_rollout_ref.rollout):
            omega_conf_to_dataclass(section)
    except (AssertionError, ValueError, TypeError, KeyError, AttributeError, HydraException) as exc:
        raise LaunchError(f"Verl refuses the config: {exc}") from exc
    try:
        settings = section_settings(config)
    except SettingsError as exc:
        raise LaunchError(str(exc)) from exc
    _check_agent_loops(config)
    _check_failure_policy(config)
    _check_files(config)
    rows = _count_rows(config)
    problems = resource_problems(config, settings.gpu_memory_gb, rows)
    if problems:
        raise LaunchError("the config cannot run as declared:\n- " + "\n- ".join(problems))
    if rows is None:
        notes.append("data.train_files: rows not counted (not readable as Parquet), batch size unchecked")
    problem = settings.minting_problem()
    if problem:
        raise LaunchError(problem)
    if settings.curriculum == "adaptive":
        adaptive_settings(config, settings)
        _check_rows(config)
    return Validation(settings=settings, notes=notes)


def adaptive_settings(config: Any, settings: EpisodeSettings) -> CurriculumSettings:
    """The adaptive curriculum's settings, once the config can run it (`trainer.verl.main` asks too).

    The curriculum draws each step after the previous one is scored, so it needs Verl's synchronous V1
    trainer and its replay buffer (async modes prefetch prompts across steps; a custom sampler replaces the
    buffer whose evictions it reads), a dataloader without worker processes (they prefetch indices), and
    groups of at least two episodes.

    Raises:
        LaunchError: One of those does not hold, or `groundstate.curriculum_options` is invalid.
    """
    trainer, data = config.trainer, config.data
    v1 = trainer.get("v1") or {}
    problems = []
    if not trainer.get("use_v1", False) or v1.get("trainer_mode") != "sync":
        problems.append("trainer.use_v1=true and trainer.v1.trainer_mode=sync")
    custom = (v1.get("sampler") or {}).get("custom_sampler") or {}
    if custom.get("path") or custom.get("name"):
        problems.append("no trainer.v1.sampler.custom_sampler")
    if data.get("dataloader_num_workers", 8) != 0:
        problems.append("data.dataloader_num_workers=0")
    group = int(config.actor_rollout_ref.rollout.n)
    if group < 2:
        problems.append("actor_rollout_ref.rollout.n of at least 2")
    if problems:
        raise LaunchError(f"{SETTINGS_KEY}.curriculum=adaptive needs {', '.join(problems)}")
    seed = data.get("seed")
    try:
        return settings.curriculum_settings(group=group, seed=int(seed) if seed is not None else 0)
    except SettingsError as exc:
        raise LaunchError(str(exc)) from exc


def _check_rows(config: Any) -> None:
    """Every row of the train files is a train task with an id (what `CurriculumSampler` will check)."""
    import pyarrow.parquet as pq

    from trainer.verl.curriculum_sampler import row_task_ids

    files = config.data.get("train_files")
    rows = 0
    for name in [files] if isinstance(files, str) else list(files or []):
        try:
            infos = pq.read_table(str(name), columns=["extra_info"]).column("extra_info").to_pylist()
            rows += len(row_task_ids(infos))
        except (OSError, KeyError, ValueError) as exc:
            raise LaunchError(f"data.train_files: {name} cannot feed the adaptive curriculum: {exc}") from exc
    slots = int(config.data.train_batch_size)
    if rows < slots:  # Verl counts epochs as rows // train_batch_size and divides by it
        raise LaunchError(
            f"data.train_files: {rows} rows, fewer than data.train_batch_size={slots} (Verl divides by "
            "rows // train_batch_size)"
        )


def curriculum_of(config: Any) -> CurriculumMode:
    """The composed config's `groundstate.curriculum`: `static` unless it says `adaptive`."""
    section = config.get(SETTINGS_KEY) or {}
    return "adaptive" if section.get("curriculum") == "adaptive" else "static"


def section_settings(config: Any) -> EpisodeSettings:
    """The config's `groundstate:` section, validated.

    Raises:
        SettingsError: A field is unknown or invalid.
    """
    from omegaconf import OmegaConf

    section = OmegaConf.to_container(config.get(SETTINGS_KEY) or {}, resolve=True)
    return EpisodeSettings.parse({str(k): v for k, v in section.items()} if isinstance(section, dict) else {})


def _without_vllm(config: Any) -> tuple[Any, list[str]]:
    """The config Verl's `validate_config` can check here, and what it then leaves unchecked.

    Verl checks a LoRA rank against vLLM by importing its vLLM rollout package, which refuses to import
    without vLLM (a CPU box): there, that one check is left to the job's start (by marking the adapters as
    merged in a copy, which makes Verl skip it) and everything else is checked as usual.
    """
    import copy
    import importlib.util

    from omegaconf import open_dict

    model = config.actor_rollout_ref.model
    rank = model.get("lora", {}).get("rank", 0) or model.get("lora_rank", 0)
    if rank <= 0 or config.actor_rollout_ref.rollout.name != "vllm" or importlib.util.find_spec("vllm"):
        return config, []
    checked = copy.deepcopy(config)
    with open_dict(checked):
        checked.actor_rollout_ref.model.lora.merge = True
    return checked, [
        f"vLLM is not installed here: Verl checks LoRA rank {rank} against vLLM when the job starts"
    ]


def _check_agent_loops(config: Any) -> None:
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase
    from verl.utils.import_utils import load_class_from_fqn

    agent = config.actor_rollout_ref.rollout.agent
    path = agent.get("agent_loop_config_path")
    if not path or not Path(path).is_file():
        raise LaunchError(
            f"actor_rollout_ref.rollout.agent.agent_loop_config_path: no registry file at {path!r}"
        )
    registry = OmegaConf.to_container(OmegaConf.load(path))
    items = registry if isinstance(registry, list) else []
    entries: dict[str, Any] = {str(e["name"]): e for e in items if isinstance(e, dict) and "name" in e}
    if AGENT_NAME not in entries:
        raise LaunchError(
            f"{path} registers no agent loop named {AGENT_NAME!r} (the dataset rows' agent_name)"
        )
    target = str(entries[AGENT_NAME]["_target_"])
    loop_cls = load_class_from_fqn(target, "agent loop")
    if not (isinstance(loop_cls, type) and issubclass(loop_cls, AgentLoopBase)):
        raise LaunchError(f"{path}: {target} is not a Verl AgentLoopBase")


def _check_failure_policy(config: Any) -> None:
    from trainer.verl.agent_loop import REWARD_INFO_KEYS

    trainer = config.trainer
    if not trainer.get("use_v1", False):
        raise LaunchError(
            "trainer.use_v1 must be true: failed and signal-less groups are replaced by the V1 trainer"
        )
    filter_groups = config.algorithm.get("filter_groups")
    if filter_groups is not None and filter_groups.get("enable", False):
        metric = str(filter_groups.get("metric"))
        if metric != "reward" and metric not in REWARD_INFO_KEYS:
            raise LaunchError(
                f"algorithm.filter_groups.metric={metric!r}: the agent loop reports "
                f"{', '.join(REWARD_INFO_KEYS)}"
            )
    if trainer.v1.trainer_mode == "sync" and not trainer.v1.sampler.get("sync_refill_failed_groups", False):
        raise LaunchError(
            "trainer.v1.sampler.sync_refill_failed_groups must be true in sync mode: a group dropped for a "
            "backend failure is then replaced by a fresh prompt instead of shrinking the batch"
        )


def _count_rows(config: Any) -> int | None:
    """Rows in the train files, or None when one cannot be read as Parquet."""
    import pyarrow.parquet as pq

    files = config.data.get("train_files")
    rows = 0
    for name in [files] if isinstance(files, str) else list(files or []):
        try:
            rows += pq.ParquetFile(str(Path(str(name)).expanduser())).metadata.num_rows
        except (OSError, ValueError):
            return None
    return rows


def _check_files(config: Any) -> None:
    for key in ("train_files", "val_files"):
        files = config.data.get(key)
        for name in [files] if isinstance(files, str) else list(files or []):
            if not Path(str(name)).expanduser().is_file():
                raise LaunchError(
                    f"data.{key}: no file at {name} (build it with `groundstate train dataset`)"
                )
