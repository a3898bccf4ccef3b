"""Optional Ray backend (`pip install -e '.[ray]'`, `tune --backend ray [--address ADDR]`).

Evaluations fan out as Ray tasks over a cluster; results come back to this process, which
writes them to the same project cache as the local backend (one writer, same keys). Workers
need asc-tui installed and the operator file readable at the same path (a shared checkout);
the operator's source travels with each task, so a worker without the file still evaluates the
exact version being tuned.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path

from ... import install_hint
from .cache import Outcome
from .evaluate import Task, evaluate, lost


def _evaluate_with_source(task: Task, source: bytes) -> Outcome:
    """Ray task body: use the file at task.op_path if it is the same version, else a copy."""
    path = Path(task.op_path)
    try:
        same = path.read_bytes() == source
    except OSError:
        same = False
    if not same:
        d = Path(tempfile.gettempdir()) / f"asc-tui-ray-{task.op_hash}"
        d.mkdir(parents=True, exist_ok=True)
        copy = d / path.name
        if not copy.exists():
            tmp = copy.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(source)
            os.replace(tmp, copy)
        task = replace(task, op_path=str(copy))
    return evaluate(task)


class RayBackend:
    """Same contract as `LocalBackend`: submit, wait, cancel, close."""

    def __init__(self, address: str | None = None, workers: int = 0):
        try:
            import ray
        except ModuleNotFoundError:
            raise RuntimeError(f"the Ray backend needs Ray: {install_hint('ray')}") from None
        self.ray = ray
        self._started = False
        if not ray.is_initialized():
            ray.init(
                address=address,
                ignore_reinit_error=True,
                log_to_driver=False,
                include_dashboard=False,
                configure_logging=False,
            )
            self._started = True
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = workers if workers and workers > 0 else cpus
        self._remote = ray.remote(num_cpus=1, max_retries=1)(_evaluate_with_source)
        self._pending: dict = {}
        self._sources: dict[str, object] = {}

    @property
    def slots(self) -> int:
        return max(self.workers, 1)

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    def submit(self, task: Task) -> None:
        ref = self._sources.get(task.op_path)
        if ref is None:
            ref = self._sources[task.op_path] = self.ray.put(Path(task.op_path).read_bytes())
        self._pending[self._remote.remote(task, ref)] = task

    def wait(self, timeout: float | None = None) -> list[Outcome]:
        if not self._pending:
            return []
        done, _ = self.ray.wait(list(self._pending), num_returns=1, timeout=timeout)
        if done:  # take every finished one, not just the first
            done, _ = self.ray.wait(list(self._pending), num_returns=len(self._pending), timeout=0)
        out = []
        for ref in done:
            task = self._pending.pop(ref)
            try:
                out.append(self.ray.get(ref))
            except Exception as exc:  # worker died, task failed twice
                out.append(lost(task, "ray task failed", exc))
        return out

    def cancel(self) -> None:
        for ref in list(self._pending):
            try:
                self.ray.cancel(ref, force=False)
            except Exception:  # already finished or unknown: nothing to cancel
                pass
        self._pending.clear()

    def close(self) -> None:
        self.cancel()
        if self._started:
            self.ray.shutdown()
