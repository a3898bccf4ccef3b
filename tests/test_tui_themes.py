"""Themes are TOML files turned into Textual themes; NO_COLOR picks the high-contrast one."""

from __future__ import annotations

import pytest

from asc_tui.tui.app import build_arg_parser
from asc_tui.tui.keymap import ACTIONS, BY_ID, unknown_ids
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

    seen = {}

    class Fake:
        def __init__(self, path, theme=None, **kw):
            seen["theme"] = theme

        def run(self):
            return None

    monkeypatch.setattr(app_mod, "Workbench", Fake)
    monkeypatch.setenv("NO_COLOR", "1")
    assert app_mod.main([]) == 0 and seen["theme"] == "high-contrast"
    monkeypatch.delenv("NO_COLOR")
    app_mod.main(["--theme", "light"])
    assert seen["theme"] == "light"
    assert build_arg_parser().parse_args(["ops", "--chip", "x"]).path == "ops"
