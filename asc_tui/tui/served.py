"""The driver of a workbench behind `asc-tui serve` (cli/serve_apps.py): it ends with its server.

textual's WebDriver keeps the app running when its input ends (the server was killed: the app
would go on running and watching files for no one), and turns SIGTERM into a request on the event
loop, which a blocked loop never reads. Here both end the app: it is asked to exit, and if it has
not after HARD_EXIT_S, its worker processes are closed and the process exits.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading

from textual import messages
from textual.drivers.web_driver import WebDriver

#: Seconds the app gets to exit by itself once its server is gone or it got SIGTERM.
HARD_EXIT_S = 2.0


class ServedDriver(WebDriver):
    def start_application_mode(self) -> None:
        super().start_application_mode()
        self._loop = asyncio.get_running_loop()
        self._leaving = threading.Event()
        # A handler in Python, not on the loop: it runs even while the loop is stuck.
        self._loop.remove_signal_handler(signal.SIGTERM)
        signal.signal(signal.SIGTERM, lambda *_: self.leave())

    def run_input_thread(self) -> None:
        super().run_input_thread()
        if not self.exit_event.is_set():  # the input ended, not the app: the server is gone
            self.leave()

    def leave(self) -> None:
        """Ask the app to exit; a second call (or HARD_EXIT_S later) ends the process."""
        if self._leaving.is_set():
            self._hard_exit()
        self._leaving.set()
        try:
            asyncio.run_coroutine_threadsafe(self._app._post_message(messages.ExitApp()), loop=self._loop)
        except RuntimeError:  # the loop has ended already: only the process is left to end
            self._hard_exit()
        timer = threading.Timer(HARD_EXIT_S, self._hard_exit)
        timer.daemon = True
        timer.start()

    def _hard_exit(self) -> None:
        """Close the workbench's worker processes (they would run on, orphaned), then exit."""
        try:
            shutdown = getattr(self._app, "shutdown", None)
            if shutdown is not None:
                shutdown()
        finally:
            os._exit(128 + signal.SIGTERM)
