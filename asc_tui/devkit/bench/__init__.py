"""The bench room: figures per case, baselines and history, regressions, diffs and reports."""
