"""The progress stream and cancellation (what the TUI's tuning pane subscribes to)."""

from __future__ import annotations

import pytest
from tunesrc import tune_op_source

from asc_tui.devkit.tune import CancelToken, TuneRequest, tune
from asc_tui.npu.errors import BuildError


def test_events_count_up_to_the_total_with_best_so_far_and_eta(write_operator):
    path = str(write_operator("op", tune_op_source()))
    events = []
    report = tune(TuneRequest(path, workers=0), listeners=[events.append])
    kinds = [e.kind for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    results = [e for e in events if e.kind == "result"]
    assert [e.done for e in results] == list(range(1, len(results) + 1))
    assert results[-1].done == results[-1].total == report.evaluated
    assert events[0].invalid == len(report.invalid)
    bests = [e.best.time_us for e in results]
    assert bests == sorted(bests, reverse=True)  # best so far never gets worse
    assert all(e.eta_s is not None and e.eta_s >= 0 for e in results)
    assert results[-1].eta_s == 0
    assert {e.result.key for e in results} == {o.key for o in report.outcomes}


def test_cancelling_mid_tune_keeps_every_reported_result_in_the_cache(write_operator):
    path = str(write_operator("op", tune_op_source()))
    cancel = CancelToken()
    seen = []

    def listener(ev):
        if ev.kind == "result":
            seen.append(ev.result.key)
            if len(seen) == 3:
                cancel.cancel()

    first = tune(TuneRequest(path, workers=0), listeners=[listener], cancel=cancel)
    assert first.cancelled and len(first.outcomes) == 3
    resumed = tune(TuneRequest(path, workers=0))
    assert not resumed.cancelled
    assert resumed.cached == 3
    assert resumed.evaluated == resumed.space_size - len(resumed.invalid) - 3


def test_cancelling_with_workers_stops_promptly_and_stays_consistent(write_operator):
    path = str(
        write_operator(
            "op",
            tune_op_source(n=65536, tiles=(256, 512, 2048, 4096), refused=0, tiling_refuses=0, sleep=0.002),
        )
    )
    cancel = CancelToken()
    reported = []

    def listener(ev):
        if ev.kind == "result":
            reported.append(ev.result.key)
            cancel.cancel()

    first = tune(TuneRequest(path, workers=2), listeners=[listener], cancel=cancel)
    assert first.cancelled
    resumed = tune(TuneRequest(path, workers=2))
    assert resumed.cached >= len(reported) >= 1
    assert resumed.cached + resumed.evaluated == resumed.space_size - len(resumed.invalid)


def test_a_worker_that_dies_costs_only_its_config(write_operator):
    src = tune_op_source(n=65536, tiles=(256, 512, 2048, 4096), refused=0, tiling_refuses=0)
    src = src.replace(
        "        q.EnQue(a)\n",
        "        if t.tile == 512 and t.bufs == 2:\n"
        "            import os\n"
        "            os._exit(3)  # the worker process dies mid-emulation\n"
        "        q.EnQue(a)\n",
    )
    path = str(write_operator("op", src))
    report = tune(TuneRequest(path, workers=1))
    dead = [o for o in report.outcomes if not o.ok]
    assert dead and all(o.params["tile"] == 512 and o.params["bufs"] == 2 for o in dead)
    assert all("worker failed" in o.error for o in dead)
    assert sum(o.ok for o in report.outcomes) == report.space_size - len(dead)
    again = tune(TuneRequest(path, workers=1))
    assert again.evaluated == len(dead)  # transient failures are retried, not cached


def test_an_operator_that_kills_the_pruning_process_is_an_error_not_a_crash(write_operator):
    src = tune_op_source().replace(
        "    pipe = TPipe()\n", "    import os\n    os._exit(3)\n    pipe = TPipe()\n"
    )
    path = str(write_operator("op", src))
    with pytest.raises(BuildError, match="killed the process while the tuner pruned"):
        tune(TuneRequest(path, workers=1))
