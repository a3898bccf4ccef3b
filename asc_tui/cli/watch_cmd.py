"""`asc-tui watch [PATH]`: headless hot reload — one line per rerun, as the workbench would show.

Runs every operator once, then reruns what each save affects (in a worker process, so a hang
or a crash in an operator is reported and the watch goes on). `--json` prints one JSON object
per rerun; `--count N` exits after N results (scripts, CI smoke tests).
"""

from __future__ import annotations

import json
import queue
import sys
import time
from pathlib import Path

from ..config import (
    DEFAULT_WORKER_TIMEOUT,
    ConfigError,
    load_config,
    resolve_operators_dir,
    resolve_timeout,
    watched_extras,
)
from ..devkit.bench.history import RunKey
from ..devkit.bench.regression import slowdown, slowdown_text
from ..devkit.outcome import outcome
from ..devkit.run.discovery import find_operators
from ..devkit.run.runner import RunRequest
from ..devkit.run.watch import FileWatcher, Rerunner
from ..devkit.run.worker import RunWorker, WorkResult


def add_parser(sub) -> None:
    p = sub.add_parser("watch", help="rerun operators on save, headless (one line per rerun)")
    p.add_argument(
        "path",
        nargs="?",
        help="operators directory (default ./operators, else the bundled operators) or one operator file",
    )
    p.add_argument("--case", help="case name (default: each operator's default case)")
    p.add_argument("--chip", help="chip model")
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds before a runaway operator is stopped (default: the config's worker_timeout, "
        f"{DEFAULT_WORKER_TIMEOUT:g})",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per rerun")
    p.add_argument("--no-initial", action="store_true", help="do not run everything at start")
    p.add_argument("--count", type=int, default=None, help="exit after N results")


def format_line(path: Path, res: WorkResult, previous_us: float | None) -> str:
    stamp = time.strftime("%H:%M:%S")
    rep = res.report
    host = f"{res.seconds * 1000:.0f} ms"
    if rep is not None and rep.emulation is not None and not rep.errors:
        t = rep.emulation.time_us
        verdict = rep.verdict  # (RAN for a timing-only run)
        delta = f" ({slowdown_text(slowdown(t, previous_us))})" if previous_us else ""
        return f"{stamp} {path.stem} [{rep.case}] {verdict} {t:,.3f} us{delta}  ({host})"
    err = res.errors[0] if res.errors else None
    where = f" {err.location()}" if err and err.location() else ""
    msg = err.message if err else res.status
    word = res.status.upper() if res.status != "ok" else outcome(rep)  # (a sample's verify: FAIL)
    return f"{stamp} {path.stem} {word}{where}: {msg}  ({host})"


def main(args) -> int:
    try:
        config = load_config(start=Path(args.path) if args.path else None)
    except ConfigError as exc:
        print(f"asc-tui watch: config error:\n{exc}", file=sys.stderr)
        return 2
    target = Path(args.path).resolve() if args.path else None
    only = target if target is not None and target.is_file() else None
    ops_dir = resolve_operators_dir(args.path, config)
    ops = [only] if only else find_operators(ops_dir)
    timeout = resolve_timeout(args.timeout, config)
    chip = args.chip or config.chip
    case = args.case or config.case
    results: queue.Queue = queue.Queue()
    worker = RunWorker(timeout_s=timeout, spare=True, memory_mb=config.worker_memory_mb)
    rerunner = watcher = None
    failed = False
    try:  # from here on a SIGTERM (SystemExit) or ctrl+c still closes the worker and its temp folder
        rerunner = Rerunner(
            worker,
            lambda p: RunRequest(str(p), case=case, chip=chip, timeout_s=timeout),
            on_result=lambda p, r: results.put((p, r)),
        )

        def changed(cs):
            wanted = [p for p in ops if cs.affects(p)]
            new = [p for p in cs.operators if only is None and p not in ops]
            ops.extend(new)
            for p in cs.removed:
                print(f"{time.strftime('%H:%M:%S')} {p.stem} removed", flush=True)
            rerunner.submit(wanted + new)

        watcher = FileWatcher(ops_dir, changed, extra=watched_extras(config.source, chip)).start()
        watcher.wait_ready()
        print(f"watching {ops_dir} ({len(ops)} operators); ctrl+c stops", file=sys.stderr, flush=True)
        if not args.no_initial:
            rerunner.submit(ops)
        failed = _report(args, results)
    except KeyboardInterrupt:
        pass
    finally:
        if watcher is not None:
            watcher.stop()
        if rerunner is not None:
            rerunner.stop()
        worker.close()
    return 1 if failed and args.count is not None else 0


def _report(args, results: queue.Queue) -> bool:
    """Print each result as it arrives until `--count` results; True if any failed."""
    last: dict[RunKey, float] = {}  # the previous run of the same operator, case, chip, params
    seen, failed = 0, False
    while args.count is None or seen < args.count:
        try:
            path, res = results.get(timeout=0.5)
        except queue.Empty:
            continue
        seen += 1
        rep = res.report
        failed = failed or not res.passed
        if args.json:
            d = (
                rep.to_dict()
                if rep is not None
                else {"operator": path.stem, "errors": [e.to_dict() for e in res.errors]}
            )
            d.update(status=res.status, host_seconds=res.seconds)
            print(json.dumps(d, default=str), flush=True)
        else:
            print(format_line(path, res, last.get(RunKey.of(rep)) if rep else None), flush=True)
        if rep is not None and rep.emulation is not None and not rep.errors:
            last[RunKey.of(rep)] = rep.emulation.time_us
    return failed
