"""The processes behind `asc-tui serve`: one workbench per page, none outliving its page or the server.

textual-serve starts each page's app through a shell and, when the page goes, asks it to quit and
stops reading its output; it never waits for the process nor ends it. An app that does not quit
at once stays (its runs go on, at full CPU), and on SIGTERM the server waits a minute for a page
that stopped reading. Here each app runs without a shell in a process group of its own, its
output is read to the end even after its page went (a full pipe would block it), and when its
page goes or the server stops it is asked to quit, then sent SIGTERM, then SIGKILL. The app's
side (`tui/served.py`) ends it when the server is gone without a word (killed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import signal

from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

log = logging.getLogger("textual-serve")

#: The driver the apps run with: textual's WebDriver, ending with its server (tui/served.py).
DRIVER = "asc_tui.tui.served:ServedDriver"
#: Seconds an app gets to quit when asked, then to end after SIGTERM (its own hard stop, after
#: closing its worker processes, comes within `served.HARD_EXIT_S`), before SIGKILL.
QUIT_GRACE_S = 3.0
TERM_GRACE_S = 4.0
#: Seconds the server waits for pages to finish once it is stopping (aiohttp's default: 60).
SHUTDOWN_S = 2.0


class ServedApp(AppService):
    """One page's workbench process."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.page_gone = False

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        env = super()._build_environment(width=width, height=height)
        env["TEXTUAL_DRIVER"] = DRIVER
        return env

    async def _open_app_process(self, width: int = 80, height: int = 24):
        """No shell in between (its pid is the app's), in a process group of its own."""
        self._process = process = await asyncio.create_subprocess_exec(
            *shlex.split(self.command),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width=width, height=height),
            start_new_session=True,
        )
        self._stdin = process.stdin
        return process

    async def on_data(self, payload: bytes) -> None:
        """To the page while there is one; after, the output is read and dropped (an app writing
        into a pipe nobody reads would block, and could not even quit)."""
        if self.page_gone:
            return
        try:
            await self.remote_write_bytes(payload)
        except (ConnectionError, RuntimeError):
            self.page_gone = True

    async def on_meta(self, data: bytes) -> None:
        try:
            await super().on_meta(data)
        except (ConnectionError, RuntimeError):
            self.page_gone = True

    async def stop(self) -> None:
        """Ask the app to quit; if it has not ended after QUIT_GRACE_S, SIGTERM its group, then
        SIGKILL. Safe to call twice, and from the server's shutdown while its page ends it."""
        self.page_gone = True
        process = self._process
        if process is not None and process.returncode is None:
            with contextlib.suppress(Exception):
                await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
            await self.send_meta({"type": "quit"})
            await end_process(process, QUIT_GRACE_S)
        task, self._task = self._task, None
        if task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(task, 5.0)  # its output read to the end


async def end_process(process, grace_s: float) -> None:
    """Wait `grace_s` for `process` to end, then SIGTERM its process group, then SIGKILL."""
    for sig, wait_s in ((None, grace_s), (signal.SIGTERM, TERM_GRACE_S), (signal.SIGKILL, 5.0)):
        if sig is not None:
            try:
                os.killpg(process.pid, sig)
            except (ProcessLookupError, PermissionError):
                return
        try:
            await asyncio.wait_for(process.wait(), wait_s)
            return
        except TimeoutError:
            continue


class WorkbenchServer(Server):
    """textual-serve's server with `ServedApp`s, every one of them ended when the server stops."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.apps: set[ServedApp] = set()

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """As textual-serve's, with a `ServedApp` that is always stopped when the page goes."""
        websocket = web.WebSocketResponse(heartbeat=15)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        app: ServedApp | None = None
        try:
            await websocket.prepare(request)
            app = ServedApp(
                self.command,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=websocket.close,
                download_manager=self.download_manager,
                debug=self.debug,
            )
            self.apps.add(app)
            await app.start(width, height)
            await self._process_messages(websocket, app)
        except asyncio.CancelledError:
            pass  # the server is stopping: `on_shutdown` ends the app
        except Exception as error:  # a page's failure must not stop the server
            log.exception(error)
        finally:
            if app is not None:
                await asyncio.shield(app.stop())
                self.apps.discard(app)
        return websocket

    async def on_shutdown(self, app: web.Application) -> None:
        """Before the pages are cut: end every app (quit, SIGTERM, SIGKILL)."""
        await asyncio.gather(*(a.stop() for a in list(self.apps)), return_exceptions=True)

    def kill_all(self) -> None:
        """The last resort once the loop is gone: SIGKILL the group of every app still there."""
        for a in list(self.apps):
            if a.pid is not None and a._process.returncode is None:  # (not reaped: still its pid)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(a.pid, signal.SIGKILL)
        self.apps.clear()

    def serve(self, debug: bool = False) -> None:
        """As textual-serve's, but pages still open get SHUTDOWN_S to end, not a minute."""
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.request_exit)
        try:
            web.run_app(
                self._make_app(),
                host=self.host,
                port=self.port,
                handle_signals=False,
                loop=loop,
                shutdown_timeout=SHUTDOWN_S,
                print=lambda *args: None,
            )
        finally:
            self.kill_all()
