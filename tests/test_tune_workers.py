"""The tuner's worker pool: every worker holds its next item while it runs one, and a worker
that dies loses only the item it was running (the one queued behind it runs elsewhere)."""

from __future__ import annotations

import multiprocessing
import os

from asc_tui.devkit.tune.workers import DEPTH, Pool, WorkerDied

CTX = multiprocessing.get_context("fork")


def square_or_die(x: int) -> int:
    if x == 13:
        os._exit(3)  # the worker process dies mid-item
    if x == 7:
        raise ValueError("seven")
    return x * x


def failed(item, exc):
    return ("lost", item, type(exc).__name__)


def drain(pool: Pool) -> list:
    out = []
    while len(pool):
        out += pool.results(timeout=10)
    return out


def test_each_worker_is_sent_its_next_item_while_it_runs_one():
    pool = Pool(2, CTX, square_or_die, failed)
    try:
        for x in range(2 * DEPTH + 1):
            pool.put(x)
        assert len(pool.workers) == 2
        assert [len(w.sent) for w in pool.workers] == [DEPTH, DEPTH]
        assert list(pool.queue) == [2 * DEPTH]  # the rest waits for a worker's answer
        assert sorted(drain(pool)) == [x * x for x in range(2 * DEPTH + 1)]
    finally:
        pool.close()


def test_a_dying_worker_loses_only_its_running_item_and_the_one_behind_it_runs_elsewhere():
    pool = Pool(1, CTX, square_or_die, failed)
    try:
        for x in (12, 13, 14, 15, 13, 16):
            pool.put(x)
        out = drain(pool)
        lost = [o for o in out if isinstance(o, tuple)]
        assert lost == [("lost", 13, WorkerDied.__name__)] * 2
        assert sorted(o for o in out if not isinstance(o, tuple)) == [144, 196, 225, 256]
        assert len(pool.workers) == 1  # a fresh worker took over
    finally:
        pool.close()
    assert not pool.workers


def test_a_job_that_raises_loses_its_item_not_the_worker():
    pool = Pool(1, CTX, square_or_die, failed)
    try:
        for x in (6, 7, 8):
            pool.put(x)
        first = pool.workers[0].proc.pid
        out = drain(pool)
        assert ("lost", 7, "ValueError") in out and sorted(o for o in out if not isinstance(o, tuple)) == [
            36,
            64,
        ]
        assert [w.proc.pid for w in pool.workers] == [first]
    finally:
        pool.close()


def test_dropping_the_queue_leaves_only_what_the_workers_were_sent():
    pool = Pool(1, CTX, square_or_die, failed)
    try:
        for x in range(6):
            pool.put(x)
        pool.drop_queued()
        assert sorted(drain(pool)) == [x * x for x in range(DEPTH)]
    finally:
        pool.close()
