"""Text presenters both front ends show, so the CLI and the workbench print the same figures.

`report_lines`: a run report (a Python operator's, a sample's) as lines with levels, what
`asc-tui run` prints and the workbench's log shows. `profile`: the profile report (breakdown,
roofline, pipeline report, advice, hot lines) as Rich renderables printed to a console, or as
plain text (`report_text`). `bench`: the bench table, change and history texts, and the
workbench's bench-row cells. `text`: figures (NaN, Inf and missing ones included), the sparkline
and the µs formatting they share. Rich here is a text formatter; no Textual widget is built below
the front ends.
"""
