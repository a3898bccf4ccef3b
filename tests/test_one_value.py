"""One value, one place: the chip, timeout, case and params rules each live in one function,
and the front ends ask it (issue 31, item 3)."""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import asc_tui
from asc_tui.config import DEFAULT_WORKER_TIMEOUT, Config, resolve_timeout
from asc_tui.devkit import chips
from asc_tui.devkit.text import case_text, params_text

PACKAGE = Path(asc_tui.__file__).parent


def _sources(skip: tuple[str, ...]) -> dict[str, str]:
    return {
        str(p.relative_to(PACKAGE)): p.read_text(encoding="utf-8")
        for p in PACKAGE.rglob("*.py")
        if str(p.relative_to(PACKAGE)) not in skip
    }


# chip ---------------------------------------------------------------------------------------


def test_the_chip_asked_for_wins_then_the_samples_arch_then_the_default():
    assert chips.chip_name("ascend910b4", arch="dav-2201") == "ascend910b4"
    assert chips.chip_name(None, arch="dav-2201") == chips.ARCH_CHIPS["dav-2201"]
    assert chips.chip_name(None, arch="dav-9999") == chips.default_chip_name()
    assert chips.chip_name() == chips.default_chip_name()


def test_no_module_above_the_emulator_spells_the_default_chip_itself():
    """The default lives in npu/chip.py and is read through `devkit.chips`; a literal elsewhere
    is a second default that drifts (samples once hard-coded "ascend910b")."""
    name = chips.default_chip_name()
    offenders = [f for f, src in _sources(("npu/chip.py",)).items() if f'"{name}"' in src]
    assert offenders == []


def test_a_stand_in_report_names_the_chip_the_one_rule_picks(monkeypatch):
    """The CLI's report for a worker that died names `chip_name()`'s chip, not a copy of it."""
    from asc_tui.devkit import isolated
    from asc_tui.devkit.run.runner import RunRequest
    from asc_tui.devkit.run.worker import WorkResult

    monkeypatch.setattr(chips, "default_chip_name", lambda: "ascend910b4")
    req = RunRequest("add_custom.py")
    res = WorkResult(req, "crashed", None, None, 0.1, exitcode=-9)
    rep = isolated._stand_in_run(req, res)
    assert rep.chip == "ascend910b4"


# timeout ------------------------------------------------------------------------------------


def test_the_timeout_asked_for_wins_then_the_configs_then_the_default():
    assert resolve_timeout(5, Config(worker_timeout=9.0)) == 5.0
    assert resolve_timeout(0, Config(worker_timeout=9.0)) == 0.0  # 0 is asked for, not unset
    assert resolve_timeout(None, Config(worker_timeout=9.0)) == 9.0
    assert resolve_timeout(None) == DEFAULT_WORKER_TIMEOUT


def test_the_cli_fills_an_unset_timeout_from_the_config(tmp_path, monkeypatch):
    from asc_tui.cli.common import ConfigDefault, apply_config

    (tmp_path / "asc-tui.toml").write_text("worker_timeout = 7.5\n")
    monkeypatch.chdir(tmp_path)
    args = argparse.Namespace(chip=None, case=None, timeout=ConfigDefault(DEFAULT_WORKER_TIMEOUT))
    apply_config(args)
    assert args.timeout == 7.5
    args = argparse.Namespace(chip=None, case=None, timeout=3.0)
    apply_config(args)
    assert args.timeout == 3.0


def test_the_workbench_debug_job_without_a_timeout_uses_the_one_default(monkeypatch):
    """It used its own 30 s while every other run used the config's default."""
    from asc_tui.devkit import jobs
    from asc_tui.devkit.debug import debugger
    from asc_tui.devkit.run.runner import RunRequest

    seen = {}

    def fake_debug(req):
        seen["timeout"] = req.timeout_s
        raise RuntimeError("stop here")

    monkeypatch.setattr(debugger, "debug", fake_debug)
    try:
        jobs.debug_run(RunRequest("add_custom.py", timeout_s=None), tools=("memcheck",))
    except RuntimeError:
        pass
    assert seen["timeout"] == DEFAULT_WORKER_TIMEOUT


# case ---------------------------------------------------------------------------------------


def test_the_shown_results_case_wins_then_the_chosen_one_then_default():
    assert case_text("tail", "small") == "tail"
    assert case_text(None, "small") == "small"
    assert case_text(None) == "default"


def test_no_front_end_spells_its_own_default_case_fallback():
    pattern = re.compile(r"""or ['"]default['"]""")
    offenders = [f for f, src in _sources(("devkit/text.py",)).items() if pattern.search(src)]
    assert offenders == []


# params -------------------------------------------------------------------------------------


def test_params_read_as_key_value_pairs_in_their_order():
    assert params_text({"BLOCK": 64, "TILE": 8}) == "BLOCK=64 TILE=8"
    assert params_text({"BLOCK": 64, "TILE": 8}, ", ") == "BLOCK=64, TILE=8"
    assert params_text({}) == params_text(None) == ""


def test_no_module_joins_params_text_itself():
    """`params_text` is the one `k=v` form (cxx/api.py's are C++ call arguments, not params)."""
    offenders = [
        f
        for f, src in _sources(("devkit/text.py", "cxx/api.py")).items()
        if 'f"{k}={v}"' in src or "f'{k}={v}'" in src
    ]
    assert offenders == []


# previous run -------------------------------------------------------------------------------


def _rec(path, time_us, params=None, kind="run"):
    from asc_tui.devkit.bench.history import RunRecord

    return RunRecord(
        None,
        time.time(),
        kind,
        "add_custom",
        path,
        None,
        "default",
        "ascend910b",
        params or {"n": 8},
        time_us=time_us,
    )


def test_the_previous_run_keeps_a_cpp_operator_apart_from_its_python_twin(tmp_path):
    from asc_tui.devkit.bench import history
    from asc_tui.devkit.store import Store

    store = Store(tmp_path)
    py = history.append(store, _rec("/ops/add_custom.py", 10.0))
    history.append(store, _rec("/ops/add_custom.asc", 20.0))
    key_py = history.RunKey.make("add_custom", "/ops/add_custom.py", "default", "ascend910b", {"n": 8})
    key_asc = history.RunKey.make("add_custom", "/ops/add_custom.asc", "default", "ascend910b", {"n": 8})
    assert history.previous(store, key_py).id == py
    assert history.previous(store, key_asc).time_us == 20.0
    other = history.RunKey.make("add_custom", "/ops/add_custom.asc", "default", "ascend910b", {"n": 16})
    assert history.previous(store, other) is None  # like with like only


def test_rows_recorded_without_a_file_still_match_the_python_operator(tmp_path):
    """No migration: a row that names no file counts as the Python operator's."""
    from asc_tui.devkit.bench import history
    from asc_tui.devkit.store import Store

    store = Store(tmp_path)
    old = history.append(store, _rec(None, 10.0))
    key_py = history.RunKey.make("add_custom", "/ops/add_custom.py", "default", "ascend910b", {"n": 8})
    key_asc = history.RunKey.make("add_custom", "/ops/add_custom.asc", "default", "ascend910b", {"n": 8})
    assert history.previous(store, key_py).id == old
    assert history.previous(store, key_asc) is None


def test_the_bench_tab_gives_a_cpp_operator_and_its_python_twin_two_rows():
    from types import SimpleNamespace

    from asc_tui.tui.bench_sync import row_key

    def rep(path):
        return SimpleNamespace(operator="add_custom", path=path, case="default", chip="ascend910b")

    assert row_key(rep("/ops/add_custom.py")) == "add_custom/default/ascend910b"
    assert row_key(rep("/ops/add_custom.asc")) == "add_custom.asc/default/ascend910b"


# results by name ----------------------------------------------------------------------------


def test_devkit_results_are_built_by_name_only():
    """Eleven positional fields read as a row of Nones; a swapped pair would go unseen."""
    import pytest

    from asc_tui.config import Thresholds
    from asc_tui.devkit.bench.figures import BenchResult
    from asc_tui.devkit.debug.debugger import DebugReport

    with pytest.raises(TypeError):
        DebugReport("op", None, "default", ("memcheck",), (), (), None, None, None, 0.0)
    with pytest.raises(TypeError):
        BenchResult("op", None, "ascend910b", None, Thresholds(), ())
    res = BenchResult(
        operator="op", path=None, chip="ascend910b", baseline=None, thresholds=Thresholds(), cases=()
    )
    assert res.errors == () and res.operator == "op"


def test_a_sample_run_travels_as_a_frozen_sample_run(tmp_path):
    """Not a dict that any room may grow a key in: one typed, frozen value, JSON by `to_dict`."""
    import dataclasses
    import json
    import shutil

    import pytest

    from asc_tui.devkit.run.runner import RunRequest, run
    from asc_tui.devkit.samples.result import SampleRun

    root = Path(__file__).parent / "samples"
    shutil.copytree(root / "vadd", tmp_path / "vadd")
    r = run(RunRequest(str(tmp_path / "vadd" / "vadd.asc")))
    assert isinstance(r.sample, SampleRun) and r.sample.verify["exit"] == 0
    assert r.sample.launches and len(r.sample.emulations) == len(r.sample.launches)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.sample.status = "FAIL"
    d = json.loads(json.dumps(r.to_dict(), default=str))["sample"]
    assert "emulations" not in d and d["launches"][0]["kernel"] == r.sample.launches[0]["kernel"]
