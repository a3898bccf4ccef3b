"""Results from threads can arrive while the app tears its widgets down: drop those quietly.

Panes are never removed while the workbench runs, so a missing pane means tear-down. Every
dropped message is counted in `app.dropped_messages` (the tests check it stays 0 while the app
is up, so a real query bug cannot hide here).
"""

from __future__ import annotations

import functools

from textual.app import App
from textual.css.query import NoMatches


def while_mounted(handler):
    """Skip the message if the app is closing or its panes are already gone (for methods of the
    app, and of its controllers: objects with an `app` attribute)."""

    @functools.wraps(handler)
    def wrapper(self, *args, **kwargs):
        app = self if isinstance(self, App) else self.app
        if getattr(app, "closing", False):
            return None
        try:
            return handler(self, *args, **kwargs)
        except NoMatches:
            app.dropped_messages = getattr(app, "dropped_messages", 0) + 1
            return None

    return wrapper
