"""Themes are TOML files turned into Textual themes; NO_COLOR picks the high-contrast one."""

from __future__ import annotations

import pytest

from asc_tui.tui.keymap import ACTIONS, BY_ID, unknown_ids
from asc_tui.tui.main import build_arg_parser
from asc_tui.tui.themes import ThemeFileError, load_themes, theme_from_toml


def test_bundled_dark_light_and_high_contrast_themes_load():
    themes, problems = load_themes()
    assert {"dark", "light", "high-contrast"} <= set(themes) and not problems
    assert themes["light"].dark is False
    assert themes["dark"].variables["pipe-mte2"].startswith("#")


def test_a_theme_with_an_unknown_colour_is_refused_by_name(tmp_path):
    p = tmp_path / "odd.toml"
    p.write_text('[colors]\nprimary = "#ffffff"\nprimray = "#000000"\n')
    with pytest.raises(ThemeFileError, match="unknown colour"):
        theme_from_toml(p)


def test_project_themes_dir_adds_themes(tmp_path):
    (tmp_path / "mine.toml").write_text('name = "mine"\n[colors]\nprimary = "#123456"\n')
    themes, _ = load_themes(tmp_path)
    assert themes["mine"].primary == "#123456"


def test_every_action_has_a_unique_id_and_key():
    assert len(BY_ID) == len(ACTIONS)
    keys = [a.keys for a in ACTIONS]
    assert len(set(keys)) == len(keys)
    assert unknown_ids({"rerun": "f5", "rerunn": "f6"}) == ["rerunn"]


def test_no_color_selects_the_high_contrast_theme(monkeypatch):
    import asc_tui.tui.app as app_mod
    import asc_tui.tui.main as main_mod

    seen = {}

    class Fake:
        def __init__(self, path, theme=None, **kw):
            seen["theme"] = theme

        def run(self):
            return None

    monkeypatch.setattr(app_mod, "Workbench", Fake)
    monkeypatch.setenv("NO_COLOR", "1")
    assert main_mod.main([]) == 0 and seen["theme"] == "high-contrast"
    monkeypatch.delenv("NO_COLOR")
    main_mod.main(["--theme", "light"])
    assert seen["theme"] == "light"
    assert build_arg_parser().parse_args(["ops", "--chip", "x"]).path == "ops"


def _broken_copy_of_dark(project, value: str) -> tuple[str, int]:
    """themes/broken.toml in the project: dark.toml renamed, primary set to `value`."""
    from asc_tui import BUNDLED_THEMES

    text = (BUNDLED_THEMES / "dark.toml").read_text()
    text = text.replace('name = "dark"', 'name = "broken"')
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("primary ="))
    lines[at] = f"primary = {value}"
    (project / "themes").mkdir(exist_ok=True)
    (project / "themes" / "broken.toml").write_text("\n".join(lines) + "\n")
    return "broken.toml", at + 1


@pytest.mark.parametrize("value", ['"notacolor"', "5"])
def test_a_theme_with_a_bad_colour_is_refused_with_line_and_column(tmp_path, value):
    name, line = _broken_copy_of_dark(tmp_path, value)
    with pytest.raises(ThemeFileError, match=rf"{name}:{line}:11: primary"):
        theme_from_toml(tmp_path / "themes" / name)


def _app(tmp_path, monkeypatch, **kw):
    import shutil
    from pathlib import Path

    from asc_tui.config import Config
    from asc_tui.tui.app import Workbench

    ops = tmp_path / "operators"
    ops.mkdir()
    shutil.copy(Path(__file__).parent / "tui_data" / "add_custom.py", ops / "add_custom.py")
    monkeypatch.chdir(tmp_path)
    return Workbench(str(ops), config=Config(worker_timeout=20), watch=False, **kw)


def _log(app) -> str:
    return "\n".join(app.query_one("#log-pane").lines_text)


@pytest.mark.parametrize("value", ['"notacolor"', "5"])
def test_f2_skips_a_broken_theme_and_the_log_names_its_line(tmp_path, monkeypatch, value):
    import asyncio

    name, line = _broken_copy_of_dark(tmp_path, value)
    app = _app(tmp_path, monkeypatch)

    async def go():
        async with app.run_test(size=(100, 30)) as pilot:
            seen = {app.theme}
            for _ in range(len(app.theme_names()) + 2):
                await pilot.press("f2")
                await pilot.pause(0.05)
                seen.add(app.theme)
            assert "broken" not in seen and {"dark", "light"} <= seen
            assert f"{name}:{line}:11" in _log(app)

    asyncio.run(go())


def test_theme_option_naming_a_broken_theme_keeps_the_default(tmp_path, monkeypatch):
    import asyncio

    name, line = _broken_copy_of_dark(tmp_path, '"notacolor"')
    app = _app(tmp_path, monkeypatch, theme="broken")

    async def go():
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause(0.1)
            assert app.theme != "broken" and app.is_running  # the app's start theme is kept
            log = _log(app)
            assert f"{name}:{line}:11" in log and "unknown theme 'broken'" in log

    asyncio.run(go())


def _theme_file(project, text: str | bytes):
    (project / "themes").mkdir(exist_ok=True)
    p = project / "themes" / "bad.toml"
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


@pytest.mark.parametrize(
    "text, where, what",
    [
        ('name = "bad"\nvariables = 5\n[colors]\nprimary = "#ffffff"\n', "2:13", "variables must be a table"),
        ('colors = "red"\n', "1:10", "colors must be a table"),
        ('name = 3\n[colors]\nprimary = "#ffffff"\n', "1:8", "name must be a non-empty string"),
        ('dark = "yes"\n[colors]\nprimary = "#ffffff"\n', "1:8", "dark must be true or false"),
        ('[colors]\nprimary = "#ffffff"\n[variables]\nfooter = 7\n', "4:10", "variables.footer must be"),
        ('[colors]\nprimary = "#ffffff"\n\n[colours]\n', "4:1", "unknown key 'colours'"),
        (b'[colors]\nprimary = "#ff\xff"\n', "2:15", "UTF-8"),
    ],
)
def test_a_theme_of_the_wrong_shape_is_refused_at_its_line(tmp_path, text, where, what):
    p = _theme_file(tmp_path, text)
    with pytest.raises(ThemeFileError) as exc:
        theme_from_toml(p)
    assert str(exc.value).startswith(f"{p}:{where}: ") and what in str(exc.value)


def test_the_workbench_starts_past_a_theme_with_variables_5_and_logs_its_line(tmp_path, monkeypatch):
    import asyncio

    p = _theme_file(tmp_path, 'name = "bad"\nvariables = 5\n[colors]\nprimary = "#ffffff"\n')
    app = _app(tmp_path, monkeypatch)

    async def go():
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause(0.1)
            assert app.is_running and "bad" not in app.theme_names()
            assert f"{p}:2:13: variables must be a table" in _log(app)

    asyncio.run(go())
