"""`asc-tui run` through the real console entry points."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "asc_tui", *args], capture_output=True, text=True, timeout=timeout
    )


def test_run_json_has_the_documented_fields():
    p = cli("run", "add_custom", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    for key in (
        "operator",
        "case",
        "chip",
        "block_dim",
        "time_us",
        "cycles",
        "pipes",
        "bytes",
        "precision",
        "errors",
    ):
        assert key in d
    assert set(d["pipes"]) >= {"scalar", "vec", "mte2", "mte3"}
    for stats in d["pipes"].values():
        assert set(stats) >= {"busy_us", "ratio", "wait_ratio", "instructions"}
    assert d["bytes"]["gm_read"] == 2 * d["bytes"]["gm_write"] > 0
    assert d["precision"]["verdict"] == "PASS"
    assert set(d["precision"]) >= {"max_abs_error", "mean_rel_error", "cosine_similarity"}


def test_human_output_lists_stages_pipes_and_verdict():
    p = cli("run", "softmax", "--case", "small", "--chip", "ascend910b4")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    for word in (
        "build",
        "emulate",
        "verify",
        "task ",
        "= kernel",
        "+ launch",
        "mte2",
        "GM read",
        "precision PASS",
        "ascend910b4",
    ):
        assert word in out


def test_timing_only_skips_verification_and_keeps_the_timeline():
    full = json.loads(cli("run", "add_custom", "--json").stdout)
    timing = json.loads(cli("run", "add_custom", "--json", "--timing-only").stdout)
    assert timing["precision"] is None and timing["emulation"] == "timing-only"
    assert full["emulation"] == "full" and timing["cycles"] == full["cycles"]


def test_every_emulating_command_takes_both_emulation_flags():
    from asc_tui.cli import build_parser

    parser = build_parser()
    for argv, default in ((["run"], False), (["profile", "x"], False), (["bench", "x"], True)):
        assert parser.parse_args(argv).timing_only is default
        assert parser.parse_args([*argv, "--timing-only"]).timing_only is True
        assert parser.parse_args([*argv, "--full"]).timing_only is False


def test_param_override_and_unknown_param():
    p = cli("run", "add_custom", "--param", "tile_length=512", "--json")
    assert json.loads(p.stdout)["params"]["tile_length"] == 512
    bad = cli("run", "add_custom", "--param", "nope=1", "--json")
    assert bad.returncode == 1
    assert "no parameter 'nope'" in json.loads(bad.stdout)["errors"][0]["message"]


def test_failed_precision_gives_non_zero_exit(write_operator):
    path = write_operator(
        "wrong",
        """
from asc_tui import ascendc as AscendC
from asc_tui.ascendc import *
from asc_tui.operator import In, Out, Launch
CASES = {"default": dict(n=256)}
def tensors(case): return {"x": In(case.n, half), "y": Out(case.n, half)}
def tiling(case, p): return Launch(1, case.n)
def golden(case, x): return x * 2 + 1
@AscendC.kernel
def k(x, y, n):
    pipe = TPipe(); q = TQue(QuePosition.VECIN, 1); pipe.InitBuffer(q, 1, n * 2)
    xg = GlobalTensor(half); xg.SetGlobalBuffer(x, n)
    yg = GlobalTensor(half); yg.SetGlobalBuffer(y, n)
    t = q.AllocTensor(half); AscendC.DataCopy(t, xg, n); q.EnQue(t); t = q.DeQue(half)
    AscendC.DataCopy(yg, t, n); q.FreeTensor(t)
""",
    )
    p = cli("run", str(path), "--json")
    assert p.returncode == 1
    assert json.loads(p.stdout)["precision"]["verdict"] == "FAIL"


def test_unknown_chip_and_operator_are_clear():
    p = cli("run", "add_custom", "--chip", "ascend999")
    assert p.returncode == 1 and "unknown chip 'ascend999'" in p.stdout
    p = cli("run", "no_such_op")
    assert p.returncode == 1 and "unknown operator 'no_such_op'" in p.stdout


@pytest.mark.parametrize("alias", ["asc-profile", "asc-debug", "asc-bench"])
def test_alias_entry_points_exist(alias):
    import shutil

    assert shutil.which(alias), f"{alias} not installed"


def test_run_without_an_argument_runs_every_bundled_operator_python_and_cpp():
    p = cli("run", timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr
    for cpp in ("rms_norm [default] on ascend910b  block_dim=8 BUFFER_NUM=2", "softmax [default]"):
        assert cpp in p.stdout
    assert "FAIL" not in p.stdout
