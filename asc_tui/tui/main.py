"""`asc-tui [PATH]` (no subcommand): arguments, the project config, then the workbench."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..config import Config, ConfigError, load_config


def build_arg_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="asc-tui", description="The asc-tui workbench.")
    p.add_argument(
        "path", nargs="?", help="operators directory (default ./operators, else the bundled operators)"
    )
    p.add_argument("--theme", help="theme name (themes/*.toml: dark, light, high-contrast)")
    p.add_argument("--chip", help="chip model (default from config, else ascend910b)")
    p.add_argument("--no-watch", action="store_true", help="do not rerun on save")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv if argv is not None else sys.argv[1:])
    start = Path(args.path) if args.path else Path.cwd()
    config, error = Config(), None
    try:
        config = load_config(start=start)
    except ConfigError as exc:
        error = exc
        print(f"asc-tui: config error (using defaults):\n{exc}", file=sys.stderr)
    theme = args.theme
    if theme is None and os.environ.get("NO_COLOR") is not None and not config.theme:
        theme = "high-contrast"
    from . import app as app_mod  # the workbench module imports this one

    app = app_mod.Workbench(
        args.path, theme=theme, config=config, config_error=error, chip=args.chip, watch=not args.no_watch
    )
    app.run()
    return 0
