"""The optional Ray backend, against a local Ray started by the test (skipped without Ray)."""

from __future__ import annotations

import pytest
from tunesrc import tune_op_source

from asc_tui.devkit.tune import TuneRequest, tune

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def test_ray_backend_matches_the_local_result_and_shares_the_cache(local_ray, write_operator):
    path = str(write_operator("op", tune_op_source()))
    remote = tune(TuneRequest(path, backend="ray"))
    assert remote.backend == "ray" and remote.evaluated > 0 and remote.cached == 0
    local = tune(TuneRequest(path, workers=0, fresh=True))
    assert local.best.params == remote.best.params
    assert local.best.time_us == remote.best.time_us
    again = tune(TuneRequest(path, backend="ray"))
    assert again.evaluated == 0 and again.cached == remote.evaluated


def test_ray_workers_evaluate_the_exact_source_even_without_the_file(local_ray, write_operator):
    from asc_tui.devkit.tune.evaluate import Task
    from asc_tui.devkit.tune.ray_backend import RayBackend

    path = write_operator("gone", tune_op_source())
    from asc_tui.devkit.run.loader import load_operator

    op = load_operator(path)
    backend = RayBackend(None, 1)
    try:
        backend._sources[str(path)] = ray.put(path.read_bytes())
        path.unlink()  # a cluster node without the checkout
        backend.submit(
            Task(str(path), op.source_hash, "default", None, "k", {"tile": 256, "bufs": 1, "block_dim": 1})
        )
        out = []
        while not out:
            out = backend.wait(timeout=30)
    finally:
        backend.close()
    assert out[0].ok and out[0].time_us > 0
