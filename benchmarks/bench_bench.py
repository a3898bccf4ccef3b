"""asc-bench costs: one bench case end to end, history appends/queries, report rendering.

Runs in a throwaway project directory, so it never touches a real project's history.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main() -> dict:
    with tempfile.TemporaryDirectory() as root:
        os.environ["ASC_TUI_PROJECT"] = root
        from asc_tui.devkit.bench import history
        from asc_tui.devkit.bench.figures import BenchRequest, bench
        from asc_tui.devkit.present.report import to_html, to_markdown
        from asc_tui.devkit.run.runner import RunRequest, run
        from asc_tui.devkit.store import Store

        store = Store(root)
        req = BenchRequest("vector_add_bias", baseline_op="add_custom")
        bench_ms = _median_ms(lambda: bench(req, store=store), 5)
        report = run(RunRequest("vector_add_bias", timing_only=True))
        n = 500
        t = time.perf_counter()
        for _ in range(n):
            history.record_run(report, "run", store)
        append_ms = (time.perf_counter() - t) * 1e3 / n
        prev_ms = _median_ms(
            lambda: history.previous_run(store, "vector_add_bias", "default", "ascend910b"), 20
        )
        result = bench(req, store=store)
        trends = {c.case: history.runs(store, result.operator, c.case, result.chip) for c in result.cases}
        md_ms = _median_ms(lambda: to_markdown(result, trends), 5)
        html_ms = _median_ms(lambda: to_html(result, trends), 5)
        html_kb = len(to_html(result, trends).encode()) / 1024
        store.close()
    figures = {
        "bench_case_with_baseline_ms": round(bench_ms, 2),
        "history_append_ms": round(append_ms, 3),
        "previous_run_query_ms": round(prev_ms, 3),
        "report_markdown_ms": round(md_ms, 2),
        "report_html_ms": round(html_ms, 2),
        "report_html_kb": round(html_kb, 1),
    }
    for k, v in figures.items():
        print(f"   {k:<30} {v}")
    return figures


if __name__ == "__main__":
    main()
