"""Text presenters both front ends show, so the CLI and the workbench print the same figures.

`profile`: the profile report (breakdown, roofline, pipeline report, advice, hot lines) as Rich
renderables printed to a console, or as plain text (`report_text`). `bench`: the bench table,
change and history texts, and the workbench's bench-row cells. `text`: the sparkline and the µs
formatting they share. Rich here is a text formatter; no Textual widget is built below the front
ends.
"""
