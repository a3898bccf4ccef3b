"""--apply edits exactly the Param default literals of PARAMS and shows a diff first."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tunesrc import tune_op_source

from asc_tui.devkit.tune.apply import plan_apply
from asc_tui.npu.errors import BuildError

SRC = '''"""op"""
TILE = 2048  # the tile we ship

PARAMS = {
    # tile length in elements
    "tile_length": Param(TILE, values=[1024, 2048, 4096]),
    "buffer_num": Param(1, values=[1, 2]),  # queue depth
    "block_dim": Param(default=8, values=[8, 16]),
    "mode": "fast",
}
'''


def test_only_the_default_literals_change(tmp_path):
    p = tmp_path / "op.py"
    p.write_text(SRC)
    plan = plan_apply(p, {"tile_length": 4096, "buffer_num": 2, "block_dim": 16, "mode": "slow"})
    assert plan.after == (
        SRC.replace("TILE = 2048", "TILE = 4096")
        .replace("Param(1, values=[1, 2])", "Param(2, values=[1, 2])")
        .replace("Param(default=8,", "Param(default=16,")
        .replace('"mode": "fast"', '"mode": "slow"')
    )
    assert "-TILE = 2048  # the tile we ship" in plan.diff()
    assert "+TILE = 4096  # the tile we ship" in plan.diff()
    assert p.read_text() == SRC  # planning writes nothing
    plan.write()
    assert p.read_text() == plan.after


def test_unchanged_values_make_no_edit(tmp_path):
    p = tmp_path / "op.py"
    p.write_text(SRC)
    plan = plan_apply(p, {"tile_length": 2048, "buffer_num": 1})
    assert not plan.changed and plan.diff() == ""


def test_a_non_literal_default_is_refused_with_its_line(tmp_path):
    p = tmp_path / "op.py"
    p.write_text('PARAMS = {\n    "tile": Param(compute_tile(), values=[1, 2]),\n}\n')
    with pytest.raises(BuildError) as err:
        plan_apply(p, {"tile": 2})
    assert err.value.line == 2 and "literal" in err.value.message


def test_non_ascii_comments_keep_their_bytes(tmp_path):
    p = tmp_path / "op.py"
    p.write_text('PARAMS = {"t": Param(1, values=[1, 2]),  # ü\n "ü": Param(3, values=[3, 4])}\n')
    plan = plan_apply(p, {"t": 2, "ü": 4})
    assert plan.after == 'PARAMS = {"t": Param(2, values=[1, 2]),  # ü\n "ü": Param(4, values=[3, 4])}\n'


def test_cli_apply_prints_the_diff_then_writes_the_best_params(write_operator, isolated_project):
    path = write_operator("op", tune_op_source())
    out = subprocess.run(
        [sys.executable, "-m", "asc_tui", "tune", str(path), "--workers", "0", "--apply", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ASC_TUI_PROJECT": str(isolated_project)},
    )
    assert out.returncode == 0, out.stderr
    best = json.loads(out.stdout)["best"]["params"]
    assert f'+    "tile": Param({best["tile"]}, values=' in out.stderr
    text = path.read_text()
    assert f'"tile": Param({best["tile"]}, values=' in text
    assert f'"block_dim": Param({best["block_dim"]}, values=' in text
    assert "# elements per tile" in text


@given(st.integers(-(10**6), 10**6), st.sampled_from([1, 2, 4]), st.text(alphabet="abc xyz_", max_size=8))
def test_applied_values_read_back_from_the_file(tmp_path_factory, tile, bufs, mode):
    p = tmp_path_factory.mktemp("apply") / "op.py"
    p.write_text(SRC)
    plan_apply(p, {"tile_length": tile, "buffer_num": bufs, "mode": mode}).write()
    tree = ast.parse(p.read_text())
    env: dict = {}
    exec(compile(tree, str(p), "exec"), {"Param": lambda *a, **k: (a, k)}, env)  # noqa: S102
    assert env["TILE"] == tile
    assert env["PARAMS"]["buffer_num"][0][0] == bufs
    assert env["PARAMS"]["mode"] == mode
    assert p.read_text().count("#") == SRC.count("#")
