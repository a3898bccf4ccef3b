"""Views of finished runs that the front ends show: computed here, drawn there.

`timeline` indexes a run's records for screen-sized frames, `profile` condenses `devkit.profile`
into the breakdown rows and the per-line heat (the text reports are `devkit.present`).
Plain dataclasses and numpy only: no Textual or Rich, so the CLI and the TUI show the same
figures from the same code.
"""
