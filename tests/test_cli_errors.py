"""Errors a new user meets name their line and say something useful (real entry point)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ADD_CUSTOM = Path(__file__).parent / "tui_data" / "add_custom.py"


def cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "asc_tui", *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_a_syntax_error_hint_hints_instead_of_repeating_the_line(tmp_path):
    p = tmp_path / "broken.py"
    p.write_text(ADD_CUSTOM.read_text().replace("def tiling(case, p):", "def tiling(case, p:"))
    out = cli("run", str(p), "--json")
    assert out.returncode == 1
    (err,) = json.loads(out.stdout)["errors"]
    assert err["line"] == line_of(p, "def tiling(case, p:")
    assert err["snippet"] == "def tiling(case, p:"
    assert err["hint"] and err["hint"] != err["snippet"] and "bracket" in err["hint"]


def test_a_golden_shape_mismatch_names_the_golden_line(tmp_path):
    p = tmp_path / "shape.py"
    p.write_text(ADD_CUSTOM.read_text().replace("    return x + y", "    return (x + y)[:-1]"))
    out = cli("run", str(p), "--case", "tail", "--json")
    assert out.returncode == 1
    (err,) = json.loads(out.stdout)["errors"]
    assert err["file"] == str(p) and err["line"] == line_of(p, "return (x + y)[:-1]")
    assert "100002" in err["message"] and "100003" in err["message"]


def test_a_native_crash_names_the_last_operator_line_that_ran(tmp_path):
    p = tmp_path / "segv.py"
    crash = "    import ctypes\n    ctypes.string_at(0)\n"
    p.write_text(ADD_CUSTOM.read_text().replace("def tensors(case):\n", "def tensors(case):\n" + crash))
    out = cli("run", str(p), "--json")
    d = json.loads(out.stdout)
    assert out.returncode == 1 and d["exit"]["cause"] == "SIGSEGV"
    assert d["errors"][0]["line"] == line_of(p, "ctypes.string_at(0)")


def _chip_with(tmp_path: Path, key: str, value: str) -> tuple[Path, int]:
    from asc_tui.npu.chip import CHIP_DIR

    lines = (CHIP_DIR / "ascend910b.toml").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"{key} ="))
    lines[at] = f"{key} = {value}"
    p = tmp_path / "mychip.toml"
    p.write_text("\n".join(lines) + "\n")
    return p, at + 1


def test_a_chip_with_clock_zero_is_refused_with_line_and_column(tmp_path):
    chip, line = _chip_with(tmp_path, "clock_mhz", "0")
    out = cli("run", "add_custom", "--chip", str(chip), "--json")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    (err,) = json.loads(out.stdout)["errors"]
    assert err["kind"] == "chip" and err["file"] == str(chip) and err["line"] == line
    assert "clock_mhz must be a positive number" in err["message"] and "(column 13)" in err["message"]


def test_a_chip_with_zero_bandwidth_blames_the_chip_file_not_datacopy(tmp_path):
    chip, line = _chip_with(tmp_path, "hbm_gbps", "0")
    (err,) = json.loads(cli("run", "add_custom", "--chip", str(chip), "--json").stdout)["errors"]
    assert err["file"] == str(chip) and err["line"] == line and "hbm_gbps" in err["message"]


def test_profile_with_a_bad_chip_gives_an_error_not_a_traceback(tmp_path):
    chip, _ = _chip_with(tmp_path, "clock_mhz", "0")
    out = cli("profile", "add_custom", "--chip", str(chip))
    assert out.returncode != 0 and "Traceback" not in out.stderr and "clock_mhz" in out.stderr


def test_a_chip_with_no_vector_cores_is_refused_at_the_count_not_a_zero_division(tmp_path):
    chip, line = _chip_with(tmp_path, "aiv", "0")
    out = cli("run", "add_custom", "--chip", str(chip), "--json")
    (err,) = json.loads(out.stdout)["errors"]
    assert (err["kind"], err["file"], err["line"], err["column"]) == ("chip", str(chip), line, 7)
    assert "aiv must be a positive whole number" in err["message"]


def test_a_misspelt_chip_key_is_refused_with_a_did_you_mean(tmp_path):
    chip, line = _chip_with(tmp_path, "aiv", "48\naivv = 2")
    out = cli("run", "add_custom", "--chip", str(chip), "--json")
    (err,) = json.loads(out.stdout)["errors"]
    assert (err["kind"], err["file"], err["line"], err["column"]) == ("chip", str(chip), line + 1, 1)
    assert "unknown key 'aivv' in [cores]" in err["message"] and "did you mean 'aiv'" in err["message"]


def test_a_binary_chip_file_is_a_chip_error_at_the_first_bad_byte(tmp_path):
    chip = tmp_path / "blob.toml"
    chip.write_bytes(b'[chip]\nname = "x"\nclock\xf7\xfe = 1\n')
    out = cli("run", "add_custom", "--chip", str(chip), "--json")
    (err,) = json.loads(out.stdout)["errors"]
    assert (err["kind"], err["file"], err["line"], err["column"]) == ("chip", str(chip), 3, 6)
    assert "UTF-8" in err["message"] and "Decode" not in err["message"] and err["snippet"] is None
