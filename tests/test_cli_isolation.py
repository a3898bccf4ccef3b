"""User code that crashes, kills itself, allocates too much or prints never breaks the CLI's answer:
the real entry point always prints one JSON document naming the error, the line and the exit cause."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ADD_CUSTOM = Path(__file__).parent / "tui_data" / "add_custom.py"


def cli(*args: str, cwd=None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "asc_tui", *args], capture_output=True, text=True, timeout=timeout, cwd=cwd
    )


def op_with(tmp_path: Path, name: str, anchor: str, inject: str) -> tuple[Path, int]:
    """add_custom with `inject` placed after the line containing `anchor`; returns the path and the
    1-based line of the injected code's last line."""
    lines = ADD_CUSTOM.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if anchor in line)
    new = inject.splitlines()
    lines[at + 1 : at + 1] = new
    p = tmp_path / f"{name}.py"
    p.write_text("\n".join(lines) + "\n")
    return p, at + 1 + len(new)


def run_json(path: Path, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    p = cli("run", str(path), "--json", *extra)
    return p, json.loads(p.stdout)  # always one valid document


def test_os_exit_in_the_kernel_gives_a_json_document_naming_the_line(tmp_path):
    path, line = op_with(tmp_path, "bye", "def Compute(self, n):", "        import os\n        os._exit(1)")
    p, d = run_json(path)
    assert p.returncode == 1
    assert d["exit"]["status"] == "crashed" and d["exit"]["cause"] == "exit code 1"
    (err,) = d["errors"]
    assert err["file"] == str(path) and err["line"] == line
    assert d["passed"] is False


def test_sigkill_in_the_kernel_gives_a_json_document(tmp_path):
    inject = "        import os, signal\n        os.kill(os.getpid(), signal.SIGKILL)"
    path, line = op_with(tmp_path, "killed", "def Compute(self, n):", inject)
    p, d = run_json(path)
    assert p.returncode == 1
    assert d["exit"]["cause"] == "SIGKILL"
    assert d["errors"][0]["file"] == str(path) and d["errors"][0]["line"] == line


def test_a_50_gb_allocation_is_an_error_at_the_users_line(tmp_path):
    inject = "    import numpy as np\n    big = np.ones((50_000_000_000,), np.uint8)"
    path, line = op_with(tmp_path, "huge", "def tensors(case):", inject)
    p, d = run_json(path)
    assert p.returncode == 1
    (err,) = d["errors"]
    assert "MemoryError" in err["message"]
    assert err["file"] == str(path) and err["line"] == line


def test_a_50_gb_tensor_declaration_names_the_tensor(tmp_path):
    path, _ = op_with(tmp_path, "hugein", "def tiling(case, p):", "    return Launch(1, None)")
    src = path.read_text().replace('"x": In(case.n, case.dtype)', '"x": In(50_000_000_000, "float16")')
    path.write_text(src)
    p, d = run_json(path)
    assert p.returncode == 1
    (err,) = d["errors"]
    assert "'x'" in err["message"] and err["file"] == str(path)
    assert "In(50_000_000_000" in err["snippet"]


def test_module_level_print_goes_into_the_document(tmp_path):
    path, _ = op_with(tmp_path, "chatty", "from dataclasses import dataclass", 'print("hello from import")')
    p, d = run_json(path, "--case", "tail")
    assert p.returncode == 0, p.stdout
    assert "hello from import" in d["stdout"] and d["exit"]["cause"] == "ok"
    assert p.stdout.lstrip().startswith("{")


@pytest.mark.parametrize("command", [["profile"], ["debug", "--precision-check"]])
def test_profile_and_debug_survive_os_exit_too(tmp_path, command):
    path, line = op_with(tmp_path, "bye2", "def Compute(self, n):", "        import os\n        os._exit(1)")
    p = cli(*command, str(path), "--json")
    assert p.returncode == 1
    d = json.loads(p.stdout)
    errors = d["errors"] if "errors" in d else d["run"]["errors"]
    assert errors[0]["line"] == line and d["exit"]["cause"] == "exit code 1"


def test_bench_survives_os_exit_with_a_json_document(tmp_path):
    path, line = op_with(tmp_path, "bye3", "def Compute(self, n):", "        import os\n        os._exit(1)")
    p = cli("bench", str(path), "--json", "--fail-on", "none")
    assert p.returncode == 1  # a dead worker fails even with --fail-on none
    d = json.loads(p.stdout)
    assert d["exit"]["cause"] == "exit code 1"
    assert (d["errors"][0]["file"], d["errors"][0]["line"]) == (str(path), line)


def test_bench_still_uses_the_default_timeout_without_reading_the_config():
    from asc_tui.cli import build_parser

    for cmd in ("bench", "tune"):
        assert build_parser().parse_args([cmd, "add_custom"]).timeout == 60.0


def test_the_configs_memory_cap_turns_a_big_allocation_into_an_error_at_the_users_line(tmp_path):
    (tmp_path / "asc-tui.toml").write_text("worker_memory_mb = 1024\n")
    inject = "    import numpy as np\n    big = np.ones((3 << 30,), np.uint8)"  # 3 GiB > the 1 GiB cap
    path, line = op_with(tmp_path, "capped", "def tensors(case):", inject)
    p = cli("run", str(path), "--json", cwd=tmp_path)
    (err,) = json.loads(p.stdout)["errors"]
    assert p.returncode == 1 and "MemoryError" in err["message"] and err["line"] == line
