"""Markdown and HTML bench reports, parsed back: tables, well-formed HTML, inline SVG only."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from benchsrc import SLOW_VEC, add_bias_source

from asc_tui.cli import main as cli_main
from asc_tui.devkit.bench import history
from asc_tui.devkit.bench.figures import BenchRequest, bench
from asc_tui.devkit.present.report import sparkline, to_html, to_markdown
from asc_tui.devkit.store import Store

SVG = "{http://www.w3.org/2000/svg}"
XHTML = "{http://www.w3.org/1999/xhtml}"


@pytest.fixture
def result(write_operator):
    """Three benches of one operator (the last one slower) against a baseline operator."""
    base = write_operator("official", add_bias_source())
    path = write_operator("add_bias", add_bias_source())
    for _ in range(2):
        bench(BenchRequest(str(path), baseline_op=str(base)))
    path.write_text(add_bias_source(extra_compute=SLOW_VEC))
    r = bench(BenchRequest(str(path), baseline_op=str(base)))
    trends = {c.case: history.runs(Store(), r.operator, c.case, r.chip) for c in r.cases}
    return r, trends


def md_tables(text: str) -> dict[str, list[dict[str, str]]]:
    """Section title -> rows of the first table under it (as dicts keyed by header)."""
    out: dict[str, list[dict[str, str]]] = {}
    title, lines = None, text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            title = line.lstrip("#").strip()
        elif (
            line.startswith("| ")
            and title not in out
            and i + 1 < len(lines)
            and lines[i + 1].startswith("|---")
        ):
            head = [h.strip() for h in line.strip("|").split(" | ")]
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("| "):
                rows.append(dict(zip(head, [v.strip() for v in re.split(r"(?<!\\)\|", lines[i].strip("|"))])))
                i += 1
            out[title] = rows
            continue
        i += 1
    return out


def test_markdown_report_tables_parse_back_to_the_figures(result):
    r, trends = result
    text = to_markdown(r, trends)
    tables = md_tables(text)
    conf = tables["Configuration"][0]
    assert conf["operator"] == "add_bias" and conf["chip"] == "ascend910b"
    assert conf["baseline"] == "operator official"
    (row,) = tables["Comparison"]
    c = r.cases[0]
    assert row["case"] == "default"
    assert float(row["time (us)"]) == pytest.approx(c.time_us, abs=1e-3)
    assert float(row["baseline (us)"]) == pytest.approx(c.baseline_time_us, abs=1e-3)
    assert row["relative"] == f"{c.relative:.1%}" and row["verdict"] == c.verdict.value
    assert row["change"].startswith("+ +") and row["change"].endswith("% slower")
    units = {p["unit"]: p for p in tables["Breakdown — default"]}
    assert {"Compute (Vector)", "HBM Read (MTE2)", "HBM Write (MTE3)"} <= set(units)
    mte2 = c.report.emulation.pipe_stats()["mte2"]
    assert units["HBM Read (MTE2)"]["busy"] == f"{mte2.ratio:.1%}"
    hist = tables["History — default"]
    assert len(hist) == 3 and hist[-1]["change"].startswith("+ +")
    assert "Performance regression detected" in text
    assert re.search(r"grew \(per core\):\n\s+vec ", text)
    assert "## Advice — default" in text


def test_markdown_rows_keep_their_columns_when_source_text_has_a_pipe(write_operator):
    path = write_operator(
        "add_bias", add_bias_source(extra_compute="AscendC.Muls(yl, yl, 1.0, L | 0)  # pipe-char")
    )
    r = bench(BenchRequest(str(path)))
    text = to_markdown(r, {})
    assert "L \\| 0" in text
    width = None
    for line in text.splitlines():
        if not line.startswith("|"):
            width = None
            continue
        cells = len(re.split(r"(?<!\\)\|", line.strip("|")))
        width = width or cells
        assert cells == width, line


def test_html_report_is_well_formed_self_contained_and_has_the_pictures(result):
    r, trends = result
    html = to_html(r, trends)
    assert html.startswith("<!DOCTYPE html>")
    root = ET.fromstring(html.split("\n", 1)[1])  # raises if not well-formed
    assert root.tag == f"{XHTML}html"
    svgs = list(root.iter(f"{SVG}svg"))
    titles = [s.find(f"{SVG}title").text for s in svgs]
    assert any(t.startswith("breakdown") for t in titles)
    assert any(t.startswith("pipeline timeline") for t in titles)
    assert any(t.startswith("history") for t in titles)
    timeline = next(s for s, t in zip(svgs, titles) if t.startswith("pipeline timeline"))
    busy = [e for e in timeline.iter(f"{SVG}rect") if e.get("class") == "busy"]
    assert busy and all(float(e.get("width")) > 0 for e in busy)
    assert root.find(f".//{XHTML}style") is not None
    for el in root.iter():
        assert el.tag not in (f"{XHTML}script", f"{XHTML}link", f"{XHTML}img")
        assert not any(k in ("src", "href") for k in el.attrib)
    cells = [td.text for td in root.iter(f"{XHTML}td")]
    assert f"{r.cases[0].time_us:.3f}" in cells


def test_html_breakdown_bars_are_proportional_to_busy_share(result):
    r, trends = result
    root = ET.fromstring(to_html(r, trends).split("\n", 1)[1])
    svg = next(s for s in root.iter(f"{SVG}svg") if s.find(f"{SVG}title").text.startswith("breakdown"))
    bars = {
        e.get("data-key"): float(e.get("width")) for e in svg.iter(f"{SVG}rect") if e.get("class") == "busy"
    }
    stats = r.cases[0].report.emulation.pipe_stats()
    assert bars["mte2"] / bars["vec"] == pytest.approx(stats["mte2"].ratio / stats["vec"].ratio, rel=0.02)


def test_cli_writes_both_report_formats(write_operator, tmp_path, capsys):
    path = write_operator("add_bias", add_bias_source())
    md, html = tmp_path / "report.md", tmp_path / "report.html"
    assert cli_main(["bench", str(path), "--report", "markdown", str(md)]) == 0
    assert cli_main(["bench", str(path), "--report", "html", "--output", str(html)]) == 0
    out = capsys.readouterr().out
    assert f"markdown report written to {md}" in out
    assert md.read_text().startswith("# Benchmark: add_bias on ascend910b")
    ET.fromstring(html.read_text().split("\n", 1)[1])


def test_sparkline_spans_the_range():
    assert sparkline([1.0, 2.0, 3.0]) == "▁▅█"
    assert sparkline([2.0, 2.0]) == "▁▁"
    assert sparkline([]) == ""
