"""The trainer's settings declared once: episode limits, retries, the server URL, portable policy names."""

from __future__ import annotations

import asyncio
import os
import re
import warnings
from pathlib import Path

import pytest

from shared.client import DEFAULT_SERVER_URL
from trainer.evaluate import CampaignConfig
from trainer.groups import GroupSettings
from trainer.policies.local import portable_spec, portable_target
from trainer.retry import EpisodeLimits, RetrySettings, run_with_retries
from trainer.rollout_models import EndReason, RolloutResult
from trainer.train_local import LocalTrainConfig
from trainer.verl.settings import EpisodeSettings, SettingsError

ROOT = Path(__file__).resolve().parents[2]


def result(status: str) -> RolloutResult:
    reason = EndReason.BACKEND_ERROR if status == "backend_error" else EndReason.USER_DONE
    return RolloutResult.model_validate(
        {
            "task_id": "t",
            "policy": "p",
            "status": status,
            "end_reason": reason,
            "reward": 1 if status == "scored" else None,
        }
    )


def play(statuses: list[str], settings: RetrySettings) -> tuple[RolloutResult, int, list[int], list[int]]:
    called: list[int] = []
    failed: list[int] = []

    async def attempt(number: int) -> RolloutResult:
        called.append(number)
        return result(statuses[number])

    outcome, number = asyncio.run(run_with_retries(settings, attempt, lambda n, _: failed.append(n)))
    return outcome, number, called, failed


def test_backend_errors_are_rerun_until_an_episode_is_scored() -> None:
    outcome, number, called, failed = play(
        ["backend_error", "backend_error", "scored"], RetrySettings(retries=2, retry_backoff_s=0)
    )
    assert (outcome.status, number, called, failed) == ("scored", 2, [0, 1, 2], [0, 1])


def test_reruns_stop_at_retries_and_return_the_last_failure() -> None:
    outcome, number, called, failed = play(["backend_error"] * 5, RetrySettings(retries=1, retry_backoff_s=0))
    assert (outcome.status, number, called, failed) == ("backend_error", 1, [0, 1], [0, 1])
    _, _, called, _ = play(["backend_error"], RetrySettings(retries=0))
    assert called == [0]


def test_the_backoff_doubles_from_its_first_wait() -> None:
    assert [RetrySettings(retry_backoff_s=1.5).backoff(n) for n in (1, 2, 3)] == [1.5, 3.0, 6.0]


def test_each_wait_is_jittered_within_half_to_all_of_the_backoff() -> None:
    waits = [RetrySettings(retry_backoff_s=2.0).wait(2) for _ in range(200)]
    assert all(2.0 <= w <= 4.0 for w in waits)
    assert len(set(waits)) > 100  # a step's failed episodes do not all come back at once


@pytest.mark.parametrize("config", [CampaignConfig, GroupSettings, LocalTrainConfig, EpisodeSettings])
def test_every_command_reads_the_same_limits_and_retries(config: type) -> None:
    """eval/probe (CampaignConfig), train local (LocalTrainConfig, GroupSettings) and Verl share one model."""
    assert issubclass(config, EpisodeLimits) and issubclass(config, RetrySettings)
    for name in (*EpisodeLimits.model_fields, *RetrySettings.model_fields):
        shared = {**EpisodeLimits.model_fields, **RetrySettings.model_fields}[name]
        assert config.model_fields[name].default == shared.default, name
    assert not {"attempts", "episode_timeout_s"} & set(config.model_fields)


def test_old_verl_names_still_work_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match="`attempts` is now `retries`"):
        settings = EpisodeSettings.parse({"attempts": 3})
    assert settings.retries == 2
    with pytest.warns(DeprecationWarning, match="`episode_timeout_s` is now `timeout_s`"):
        assert EpisodeSettings.parse({"episode_timeout_s": 60}).timeout_s == 60
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert EpisodeSettings.parse({"retries": 0, "timeout_s": 5}).retries == 0
    with pytest.raises(SettingsError, match=r"groundstate\.retries"):
        EpisodeSettings.parse({"retries": -1})


def test_the_default_server_url_is_declared_once() -> None:
    sources = [p for d in ("trainer", "shared", "env_server") for p in (ROOT / d).rglob("*.py")]
    places = [p for p in sources if re.search(r"(127\.0\.0\.1|localhost):8000", p.read_text())]
    assert places == [ROOT / "shared" / "client.py"]
    assert CampaignConfig(policy="replay").server == EpisodeSettings().server_url == DEFAULT_SERVER_URL


def test_results_name_a_local_model_without_a_path_of_this_machine(tmp_path: Path) -> None:
    model = tmp_path / "final"
    model.mkdir()
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_bytes(b"weights-1")
    name = portable_target(str(model))
    assert re.fullmatch(r"final@[0-9a-f]{12}", name) and str(tmp_path) not in name
    (model / "model.safetensors").write_bytes(b"weights-2")
    assert portable_target(str(model)) != name  # other weights, another name
    assert portable_target("smollm2") == "smollm2" and portable_target("runs/warm") == "runs/warm"
    inside = Path.cwd() / "benchmarks" / "results"
    assert (
        portable_spec(f"local:{inside}?temperature=1.0")
        == f"local:{os.path.join('benchmarks', 'results')}?temperature=1.0"
    )
    assert portable_spec("openai:gpt-4o?x=1") == "openai:gpt-4o?x=1"


def test_committed_results_hold_no_path_of_the_machine_they_ran_on() -> None:
    files = [p for p in (ROOT / "benchmarks").rglob("*") if p.suffix in (".json", ".jsonl")]
    leaks = [str(p) for p in files if re.search(r'"(/work|/root|/tmp|/home)/', p.read_text())]
    assert files and leaks == []
