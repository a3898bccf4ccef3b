"""Config: [tool.asc-tui] or asc-tui.toml; mistakes name file, line and column."""

from __future__ import annotations

import pytest

from asc_tui.config import ConfigError, Thresholds, find_config, load_config


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_reads_every_key_from_asc_tui_toml(tmp_path):
    (tmp_path / "ops").mkdir()
    p = write(
        tmp_path,
        "asc-tui.toml",
        'operators = "ops"\nchip = "ascend910b4"\n'
        'theme = "light"\nworker_timeout = 5\n[keymap]\nrerun = "f5"\n'
        "[thresholds]\nship = 0.97\n",
    )
    c = load_config(p)
    assert (c.operators, c.chip, c.theme, c.worker_timeout) == ("ops", "ascend910b4", "light", 5.0)
    assert c.keymap == {"rerun": "f5"}
    assert c.thresholds == Thresholds(ship=0.97)


def test_pyproject_table_is_found_from_a_subdirectory(tmp_path):
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n\n[tool.asc-tui]\nchip = "ascend910a"\n')
    (tmp_path / "sub").mkdir()
    assert find_config(tmp_path / "sub") == tmp_path / "pyproject.toml"
    assert load_config(start=tmp_path / "sub").chip == "ascend910a"


def test_unknown_key_is_reported_with_line_column_and_suggestion(tmp_path):
    p = write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "x"\n[tool.asc-tui]\nchip = "ascend910a"\n  them = "dark"\n',
    )
    with pytest.raises(ConfigError) as err:
        load_config(p)
    (problem,) = err.value.problems
    assert (problem.line, problem.column) == (5, 3)
    assert "did you mean 'theme'" in problem.message
    assert str(err.value).startswith(f"{p}:5:3:")


def test_bad_values_are_each_reported_at_their_line(tmp_path):
    p = write(
        tmp_path,
        "asc-tui.toml",
        'worker_timeout = -1\n[keymap]\nrerun = 3\n[thresholds]\nship = "high"\nspeed = 1\n',
    )
    with pytest.raises(ConfigError) as err:
        load_config(p)
    where = {(pr.line, pr.column) for pr in err.value.problems}
    assert where == {(1, 1), (3, 1), (5, 1), (6, 1)}


def test_toml_syntax_error_keeps_the_parser_position(tmp_path):
    p = write(tmp_path, "asc-tui.toml", 'chip = "a"\ntheme = = "b"\n')
    with pytest.raises(ConfigError) as err:
        load_config(p)
    assert (err.value.problems[0].line, err.value.problems[0].column) == (2, 9)


def test_no_config_means_defaults(tmp_path):
    c = load_config(start=tmp_path)
    assert c.source is None and c.worker_timeout == 60.0  # one timeout for the CLI and the TUI


def test_operators_path_in_the_config_is_relative_to_the_config_file(tmp_path, monkeypatch):
    from asc_tui.config import resolve_operators_dir

    (tmp_path / "kernels").mkdir()
    write(tmp_path, "asc-tui.toml", 'operators = "kernels"\n')
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    c = load_config(start=tmp_path)
    assert resolve_operators_dir(None, c) == (tmp_path / "kernels").resolve()


def test_a_missing_operators_directory_is_reported_with_its_line(tmp_path):
    p = write(tmp_path, "asc-tui.toml", 'chip = "ascend910b"\noperators = "does/not/exist"\n')
    with pytest.raises(ConfigError) as err:
        load_config(p)
    (problem,) = err.value.problems
    assert (problem.line, problem.column) == (2, 1) and "does/not/exist" in problem.message


def test_an_unknown_chip_is_reported_at_load_with_its_line(tmp_path):
    p = write(tmp_path, "asc-tui.toml", 'case = "tail"\nchip = "ascend999"\n')
    with pytest.raises(ConfigError) as err:
        load_config(p)
    (problem,) = err.value.problems
    assert problem.line == 2 and "unknown chip 'ascend999'" in problem.message


def test_asc_tui_run_honours_the_configs_chip_and_reports_config_errors(tmp_path):
    import json
    import subprocess
    import sys

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "asc_tui", "run", "add_custom", "--timing-only", "--json", *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )

    (tmp_path / "asc-tui.toml").write_text('chip = "ascend910b4"\n')
    assert json.loads(run().stdout)["chip"] == "ascend910b4"
    assert json.loads(run("--chip", "ascend910a").stdout)["chip"] == "ascend910a"  # the flag wins
    (tmp_path / "asc-tui.toml").write_text('chip = "ascend999"\n')
    bad = run()
    assert bad.returncode == 2
    (err,) = json.loads(bad.stdout)["errors"]
    assert err["kind"] == "config" and err["line"] == 1 and "ascend999" in err["message"]


def _cli(tmp_path, *args):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "asc_tui", *args], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-inf"])
def test_worker_timeout_must_be_finite_and_positive(tmp_path, value):
    p = write(tmp_path, "asc-tui.toml", f'chip = "ascend910b"\nworker_timeout = {value}\n')
    with pytest.raises(ConfigError) as err:
        load_config(p)
    (problem,) = err.value.problems
    assert (problem.line, problem.column) == (2, 1) and "finite" in problem.message


def test_a_timeout_too_small_for_any_run_names_the_config_line_not_an_asc_tui_file(tmp_path):
    import json

    write(tmp_path, "asc-tui.toml", 'chip = "ascend910b"\nworker_timeout = 0.001\n')
    out = _cli(tmp_path, "run", "add_custom", "--json")
    (err,) = json.loads(out.stdout)["errors"]  # the worker's deadline or the emulator's: both
    assert err["kind"] == "timeout" and "worker_timeout" in err["message"]
    assert (err["file"], err["line"], err["column"]) == (str(tmp_path / "asc-tui.toml"), 2, 1)


def test_the_emulators_deadline_outside_any_kernel_line_names_the_kernels_def():
    """The alarm can land while asc-tui computes a replayed block's numbers: no kernel line is
    running then, and the frame is asc-tui's own; the user is shown their kernel."""
    import signal

    from asc_tui.npu.launch.guards import KernelTimeout, deadline

    def my_kernel(x, y):
        return x

    with pytest.raises(KernelTimeout) as exc:
        deadline(0.5, my_kernel)._fire(signal.SIGALRM, None)
    assert (exc.value.file, exc.value.line) == (__file__, my_kernel.__code__.co_firstlineno)
    assert "within 0.5 s" in exc.value.message


def test_a_config_case_the_operator_lacks_names_the_config_line(tmp_path):
    import json

    write(tmp_path, "asc-tui.toml", 'chip = "ascend910b"\n  case = "nope"\n')
    out = _cli(tmp_path, "run", "add_custom", "--timing-only", "--json")
    (err,) = json.loads(out.stdout)["errors"]
    assert (err["file"], err["line"], err["column"]) == (str(tmp_path / "asc-tui.toml"), 2, 3)
    assert "no case 'nope'" in err["message"] and err["snippet"] == 'case = "nope"'


def test_a_case_given_on_the_command_line_still_names_the_operators_cases(tmp_path):
    import json

    out = _cli(tmp_path, "run", "add_custom", "--timing-only", "--case", "nope", "--json")
    (err,) = json.loads(out.stdout)["errors"]
    assert err["file"].endswith("add_custom.py") and err["snippet"] == "CASES = {"


@pytest.mark.parametrize(
    "text, where",
    [
        ('[project]\nname = "x"\n[tool.asc-tui\nchip = "ascend910a"\n', (3, 14)),
        ('[tool.asc-tui]\nchip = "ascend910a"\ntheme = \n', (3, 9)),
        ('[tool.asc-tui]\nchip = "ascend910a"\n[tool.asc-tui]\n', (3, 14)),
    ],
)
def test_a_broken_tool_table_in_pyproject_is_reported_at_its_position(tmp_path, text, where):
    p = write(tmp_path, "pyproject.toml", text)
    assert find_config(tmp_path) == p
    with pytest.raises(ConfigError) as err:
        load_config(start=tmp_path)
    (problem,) = err.value.problems
    assert problem.file == str(p) and (problem.line, problem.column) == where


@pytest.mark.parametrize("header", ["[ tool.asc-tui ]", '[tool."asc-tui"]', "[tool . asc-tui]"])
def test_every_spelling_of_the_tool_table_is_read(tmp_path, header):
    write(tmp_path, "pyproject.toml", f'{header}\nchip = "ascend910a"\n')
    assert load_config(start=tmp_path).chip == "ascend910a"


def test_a_pyproject_without_the_table_is_not_a_config_even_when_broken(tmp_path):
    write(tmp_path, "pyproject.toml", "[project]\nname = \n")
    assert find_config(tmp_path) is None


def test_a_broken_pyproject_table_fails_the_cli_with_its_position(tmp_path):
    import json

    write(tmp_path, "pyproject.toml", '[tool.asc-tui\nchip = "ascend910a"\n')
    out = _cli(tmp_path, "run", "add_custom", "--timing-only", "--json")
    assert out.returncode == 2
    (err,) = json.loads(out.stdout)["errors"]
    assert (err["kind"], err["file"], err["line"]) == ("config", str(tmp_path / "pyproject.toml"), 1)


def test_a_binary_config_is_a_config_error_at_the_bad_byte(tmp_path):
    p = tmp_path / "asc-tui.toml"
    p.write_bytes(b'chip = "ascend910b"\ncase = "\xff"\n')
    with pytest.raises(ConfigError) as err:
        load_config(p)
    (problem,) = err.value.problems
    assert (problem.line, problem.column) == (2, 9) and "UTF-8" in problem.message
