"""Themes from `themes/*.toml` (read with tomli) turned into Textual `Theme`s.

File format: top-level `name`, `dark`; a `[colors]` table with Textual's theme colours
(primary, secondary, accent, foreground, background, surface, panel, success, warning, error);
a `[variables]` table with extra CSS variables (the timeline's `pipe-<name>` lane colours).
"""

from __future__ import annotations

from pathlib import Path

import tomli
from textual.theme import Theme

from .. import BUNDLED_THEMES

COLOR_KEYS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
    "success",
    "warning",
    "error",
)
DEFAULT_THEME = "dark"


class ThemeFileError(ValueError):
    pass


def theme_from_toml(path: Path) -> Theme:
    """One theme file → Theme; the name defaults to the file stem."""
    try:
        data = tomli.loads(Path(path).read_text(encoding="utf-8"))
    except tomli.TOMLDecodeError as exc:
        raise ThemeFileError(f"{path}: {exc}") from None
    colors = data.get("colors", {})
    unknown = sorted(set(colors) - set(COLOR_KEYS))
    if unknown:
        raise ThemeFileError(
            f"{path}: unknown colour(s) {', '.join(unknown)}; known: {', '.join(COLOR_KEYS)}"
        )
    if "primary" not in colors:
        raise ThemeFileError(f"{path}: [colors] needs at least 'primary'")
    return Theme(
        name=str(data.get("name", Path(path).stem)),
        dark=bool(data.get("dark", True)),
        variables={str(k): str(v) for k, v in data.get("variables", {}).items()},
        **{k: str(v) for k, v in colors.items()},
    )


def theme_dirs(extra: Path | None = None) -> list[Path]:
    dirs = [Path.cwd() / "themes", BUNDLED_THEMES]
    if extra is not None:
        dirs.insert(0, Path(extra))
    return [d for d in dirs if d.is_dir()]


def load_themes(extra: Path | None = None) -> tuple[dict[str, Theme], list[str]]:
    """All themes found (project dir first wins) and the problems met on the way."""
    themes: dict[str, Theme] = {}
    problems: list[str] = []
    for d in theme_dirs(extra):
        for f in sorted(d.glob("*.toml")):
            try:
                t = theme_from_toml(f)
            except (ThemeFileError, TypeError, ValueError) as exc:
                problems.append(str(exc))
                continue
            themes.setdefault(t.name, t)
    return themes, problems
