"""Config: [tool.asc-tui] or asc-tui.toml; mistakes name file, line and column."""

from __future__ import annotations

import pytest

from asc_tui.config import ConfigError, Thresholds, find_config, load_config


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_reads_every_key_from_asc_tui_toml(tmp_path):
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
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n\n[tool.asc-tui]\nchip = "a"\n')
    (tmp_path / "sub").mkdir()
    assert find_config(tmp_path / "sub") == tmp_path / "pyproject.toml"
    assert load_config(start=tmp_path / "sub").chip == "a"


def test_unknown_key_is_reported_with_line_column_and_suggestion(tmp_path):
    p = write(
        tmp_path, "pyproject.toml", '[project]\nname = "x"\n[tool.asc-tui]\nchip = "a"\n  them = "dark"\n'
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
