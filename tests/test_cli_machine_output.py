"""Machine output: one JSON document per `--json` command, error objects with file/line/column,
and a closed pipe that ends quietly (real entry points, as a CI script would call them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ADD_CUSTOM = HERE / "tui_data" / "add_custom.py"
REPO = HERE.parent
CALIBRATION_RUN = REPO / "examples" / "msprof_calibrate" / "OPPROF_bd1_tile2048_bn1"

#: prints at import, through Python and straight to file descriptor 1
LOUD = 'import os\nprint("hello from import")\nos.write(1, b"raw bytes on fd 1\\n")\n'


def cli(*args: str, cwd=None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "asc_tui", *args], capture_output=True, text=True, timeout=timeout, cwd=cwd
    )


def one_document(out: subprocess.CompletedProcess):
    """The whole of stdout is one JSON document (json.loads refuses anything around it)."""
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"stdout is not one JSON document ({exc}):\n{out.stdout[:400]}") from None


def loud_copy(tmp_path: Path, source: Path, name: str) -> Path:
    p = tmp_path / name
    p.write_text(LOUD + source.read_text())
    return p


@pytest.mark.parametrize(
    "command",
    [
        ("run", "--timing-only"),
        ("debug",),
        ("profile", "--timing-only"),
        ("bench", "--no-record"),
        ("tune", "--workers", "0"),
        ("tune", "--workers", "1", "--param", "block_dim=8", "--param", "buffer_num=2"),
    ],
)
def test_an_operator_that_prints_at_import_leaves_one_json_document(tmp_path, command):
    op = loud_copy(tmp_path, ADD_CUSTOM, "loud.py")
    out = cli(command[0], str(op), *command[1:], "--json", cwd=tmp_path)
    d = one_document(out)  # what the operator printed is inside it, or on stderr
    assert "raw bytes on fd 1" in (json.dumps(d) + out.stderr)
    assert out.returncode == 0, d


def test_calibrate_json_is_one_document_though_the_operator_prints(tmp_path):
    op = loud_copy(tmp_path, REPO / "operators" / "vector_add_bias.py", "loud_vab.py")
    run = [str(CALIBRATION_RUN), str(op), "default", "block_dim=1", "tile_length=2048", "buffer_num=1"]
    out = cli(
        "calibrate", "--chip", "ascend910b4", "--out", str(tmp_path / "fit.toml"), "--run", *run,
        "--no-leave-one-out", "--max-iter", "1", "--json", cwd=tmp_path,
    )  # fmt: skip
    d = one_document(out)
    assert out.returncode == 0 and d["chip_file"] == str(tmp_path / "fit.toml")
    assert "hello from import" in out.stderr


def test_a_json_command_that_stops_early_still_answers_with_an_error_document(tmp_path):
    out = cli("bench", "add_custom", "--report", "html", "--json", cwd=tmp_path)
    (err,) = one_document(out)["errors"]
    assert out.returncode == 2 and "--output FILE" in err["message"]
    assert (err["file"], err["line"], err["column"]) == (None, None, None)


def test_a_bad_param_is_an_error_document_too(tmp_path):
    out = cli("run", "add_custom", "--param", "tile_length", "--json", cwd=tmp_path)
    (err,) = one_document(out)["errors"]
    assert out.returncode != 0 and "KEY=VALUE" in err["message"]


def _broken(tmp_path: Path) -> tuple[Path, int]:
    p = tmp_path / "broken.py"
    p.write_text(ADD_CUSTOM.read_text().replace("def tiling(case, p):", "def tiling(case, p:"))
    line = next(i for i, s in enumerate(p.read_text().splitlines(), 1) if "def tiling(case, p:" in s)
    return p, line


def _errors(d) -> list[dict]:
    """Every error object in a document, wherever the command puts them."""
    found = []
    if isinstance(d, dict):
        for k, v in d.items():
            if k == "errors" and isinstance(v, list):
                found += v
            else:
                found += _errors(v)
    elif isinstance(d, list):
        for v in d:
            found += _errors(v)
    return found


@pytest.mark.parametrize(
    "command", [("run",), ("debug",), ("profile",), ("bench", "--no-record"), ("tune", "--workers", "0")]
)
def test_every_error_object_has_file_line_and_column(tmp_path, command):
    op, line = _broken(tmp_path)
    d = one_document(cli(command[0], str(op), *command[1:], "--json", cwd=tmp_path))
    errors = _errors(d)
    assert errors, d
    for e in errors:
        assert isinstance(e, dict) and {"file", "line", "column"} <= set(e), e
    assert any(e["file"] == str(op) and e["line"] == line for e in errors)


def test_bench_errors_are_objects_at_the_users_line(tmp_path):
    op = tmp_path / "boom.py"
    src = ADD_CUSTOM.read_text().replace("def tensors(case):\n", "def tensors(case):\n    1 / 0\n")
    op.write_text(src)
    line = src.splitlines().index("    1 / 0") + 1
    d = one_document(cli("bench", str(op), "--no-record", "--json", cwd=tmp_path))
    (c,) = d["cases"]
    (err,) = c["errors"]
    assert (err["file"], err["line"], err["column"]) == (str(op), line, None)
    assert "ZeroDivisionError" in err["message"]


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
@pytest.mark.parametrize("command", ["run", "tune"])
def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(tmp_path, command, json_flag):
    """`asc-tui ... | head`: the reader is gone before anything is written."""
    extra = ("--timing-only",) if command == "run" else ("--workers", "0", "--param", "block_dim=8")
    p = subprocess.Popen(
        [sys.executable, "-m", "asc_tui", command, str(ADD_CUSTOM), *extra, *json_flag],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait(300) == 141  # as if killed by SIGPIPE, like any well-behaved filter
    assert "Traceback" not in err and "BrokenPipe" not in err, err
