"""The README's captured command outputs and figures, regenerated from the commands themselves.

    python tests/readme_outputs.py            # check: a diff and exit 1 when the README drifted
    python tests/readme_outputs.py --write    # rewrite README.md in place
    python tests/readme_outputs.py --all ...  # the slow blocks too (CI checks the fast ones)

`tests/test_readme_outputs.py` runs the check, so a figure that no longer matches what its command
prints fails the suite. Three markers, HTML comments that GitHub does not show:

A fenced block that is a command's output, rewritten whole:

    <!-- readme-output
    $ asc-debug bugs/add_tail_oob
    exit: 1
    -->
    ```
    (what the commands print, each after its `$ command` line)
    ```
    <!-- /readme-output -->

Options go on the lines under their command: `exit: N`, the exit status it must have (shown as
`(exit N)`); `keep: REGEX` or `drop: REGEX`, the lines shown (each run of left-out lines becomes
one `...`, unless `elide: no`); `head: N`. `slow: yes` before the first command leaves the block
out of the default run. Host timings (`11.4 ms`, `[0.01 s]`) differ from run to run: they are
compared as `<t>`, and a rewrite keeps the old text when nothing else changed.

Figures inside a block that is not a command's output (a tmux capture of the workbench):

    <!-- readme-figures
    · task {} µs · = add_custom.task_us
    -->

Each line is a regex with `{}` where the figure stands, and a name from `FIGURES`; every match in
the next fenced block must read the figure (and at least one must exist). A figure in prose:
`<!-- figure: add_custom.task_us -->5.706<!-- /figure -->`.

Commands run through the console scripts' own `main` (`asc-profile X` is `asc-tui profile X`),
with this checkout's package, in a scratch directory that links `operators/` and `examples/`
from the checkout: the project store is fresh and nothing is written into the checkout. Paths
under the checkout are printed relative to it.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
#: The width the Rich reports wrap at in the README.
COLUMNS = 120
#: What the scratch directory links to from the checkout, so commands name files as in it.
LINKED = ("operators", "examples")
#: Processes running the commands side by side.
JOBS = max(2, min(4, os.cpu_count() or 2))
ALIASES = {"asc-tui": (), "asc-profile": ("profile",), "asc-debug": ("debug",), "asc-bench": ("bench",)}


@dataclass(frozen=True)
class Figure:
    """A figure read from a command's output: the first group of `pattern` (multi-line), shown
    through `form`."""

    command: str
    pattern: str
    form: Callable[[str], str] = str
    slow: bool = False  # the command takes long: checked with --all only


@dataclass(frozen=True)
class Derived:
    """A figure computed from others (their shown values, as floats)."""

    inputs: tuple[str, ...]
    fn: Callable[..., str]


RUN = "asc-tui run add_custom"
PROFILE_BN1 = "asc-profile add_custom --param buffer_num=1 --pipeline-report --lines 5 --timing-only"
FIGURES: dict[str, Figure | Derived] = {
    "add_custom.task_us": Figure(RUN, r"^  task ([\d.]+) us"),
    "add_custom.kernel_us": Figure(RUN, r"= kernel ([\d.]+) us"),
    "add_custom.cycles": Figure(RUN, r"kernel [\d.]+ us \(([\d,]+) cycles"),
    "add_custom.instructions": Figure(RUN, r"emulate .*  (\d+) instructions"),
    "add_custom.overlap": Figure(RUN, r"^  overlap (\d+)%"),
    "add_custom_bn1.task_us": Figure(PROFILE_BN1, r"^  total +([\d.]+) µs"),
    "add_custom_bn1.kernel_us": Figure(PROFILE_BN1, r"^  total .*\(kernel ([\d.]+) µs"),
    "add_custom_bn1.sync_wait_us": Figure(PROFILE_BN1, r"^Sync Wait +([\d.]+) µs"),
    # buffer_num 1 against the shipped 2: the workbench's regression and bench-row figures
    "add_custom_bn1.slowdown": Derived(
        ("add_custom_bn1.task_us", "add_custom.task_us"), lambda b1, b2: f"{(b1 / b2 - 1) * 100:.1f}"
    ),
    "add_custom_bn1.relative": Derived(
        ("add_custom.task_us", "add_custom_bn1.task_us"), lambda b2, b1: f"{b2 / b1 * 100:.1f}"
    ),
    "add_custom_bn1.delta_us": Derived(
        ("add_custom_bn1.task_us", "add_custom.task_us"), lambda b1, b2: f"{b1 - b2:.3f}"
    ),
    "add_custom_bn2.faster": Derived(
        ("add_custom.task_us", "add_custom_bn1.task_us"), lambda b2, b1: f"{(1 - b2 / b1) * 100:.1f}"
    ),
    "matmul.vs_official": Figure(
        "asc-tui bench matmul",
        r"^  default .* (\d+\.\d)% +(?:ship|optimise|must optimise)",
        lambda s: f"{float(s):.0f}%",
    ),
}
for _pipe in ("scalar", "vec", "mte2", "mte3"):  # busy µs per core and busy ratio
    FIGURES[f"add_custom.{_pipe}_us"] = Figure(RUN, rf"^  {_pipe} +([\d.]+) ")
    FIGURES[f"add_custom.{_pipe}_ratio"] = Figure(RUN, rf"^  {_pipe} +[\d.]+ +([\d.]+)%")
# the matmul walkthrough (slow: emulating a cube kernel)
SMALL_TILES = (
    "asc-tui profile matmul --param tile_m=64 --param tile_n=64 --param tile_k=64 --param double_buffer=1 "
    "--timing-only"
)
TUNED = (
    "asc-tui run matmul --timing-only --param tile_m=128 --param tile_n=128 --param tile_k=128 "
    "--param double_buffer=2"
)
FIGURES.update(
    {
        "matmul_small.task_us": Figure(SMALL_TILES, r"^  total +([\d.]+) µs", slow=True),
        "matmul_tuned.task_us": Figure(TUNED, r"^  task ([\d.]+) us", slow=True),
        "matmul_official_large.roofline": Figure(
            "asc-tui profile matmul_official --case large --timing-only",
            r"^Roofline .* ([\d.]+)% of the chip",
            lambda s: f"{float(s):.0f}%",
            slow=True,
        ),
    }
)
FIGURES["matmul_small.task_us_1"] = Derived(("matmul_small.task_us",), lambda t: f"{t:.1f}")
FIGURES["matmul_tuned.task_us_1"] = Derived(("matmul_tuned.task_us",), lambda t: f"{t:.1f}")
FIGURES["matmul_tuned.speedup"] = Derived(
    ("matmul_small.task_us", "matmul_tuned.task_us"), lambda a, b: f"{a / b:.1f}"
)
RUN3 = "asc-tui run rms_norm softmax vector_add_bias --timing-only"  # (the same timelines as full)
for _op in ("rms_norm", "softmax", "vector_add_bias"):
    # (an operator's section: its header line, then lines that start with blanks)
    _section = rf"^{_op} \[[^\n]*\n(?:  .*\n)*?"
    FIGURES[f"{_op}.instructions"] = Figure(RUN3, _section + r"  ok  emulate .*  (\d+) instructions")
    FIGURES[f"{_op}.task_us"] = Figure(RUN3, _section + r"  task ([\d.]+) us")

FENCE = r"(```[^\n]*\n)(.*?)(^```[ \t]*$)"
OUTPUT_RE = re.compile(r"<!-- readme-output\n(.*?)-->\n" + FENCE + r"\n<!-- /readme-output -->", re.S | re.M)
FIGURES_RE = re.compile(r"<!-- readme-figures\n(.*?)-->\n" + FENCE, re.S | re.M)
INLINE_RE = re.compile(r"<!-- figure: ([\w.]+) -->(.*?)<!-- /figure -->")
#: What differs from run to run or host to host: host timings, tuning rates, the worker count.
HOST_TIME = re.compile(r" *(?<![\w.])\d[\d,]*(?:\.\d+)? (?:ms|s|configs/s)\b|\d+ worker\(s\)")


@dataclass
class Command:
    line: str
    exit: int = 0
    keep: str | None = None
    drop: str | None = None
    head: int | None = None
    elide: bool = True  # a `...` where lines are left out


@dataclass
class OutputBlock:
    span: tuple[int, int]  # of the content between the fences
    line: int  # README line of the marker
    commands: list[Command]
    text: str
    slow: bool = False

    @property
    def name(self) -> str:
        return f"README.md:{self.line}: {self.commands[0].line}"


@dataclass
class FigureCheck:
    span: tuple[int, int]
    line: int
    rules: list[tuple[re.Pattern, str]]
    text: str


@dataclass
class Inline:
    span: tuple[int, int]
    line: int
    name: str
    text: str


@dataclass
class Readme:
    text: str
    outputs: list[OutputBlock] = field(default_factory=list)
    figure_blocks: list[FigureCheck] = field(default_factory=list)
    inlines: list[Inline] = field(default_factory=list)


def parse(text: str) -> Readme:
    """Every marker of the README, with where its text is; a malformed marker raises."""
    r = Readme(text)

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    for m in OUTPUT_RE.finditer(text):
        commands: list[Command] = []
        slow = False
        for raw in m.group(1).splitlines():
            raw = raw.strip()
            if not raw:
                continue
            if raw.startswith("$ "):
                commands.append(Command(raw[2:].strip()))
                continue
            key, _, value = raw.partition(":")
            key, value = key.strip(), value.strip()
            if key == "slow" and not commands:
                slow = value == "yes"
            elif commands and key in ("exit", "head"):
                setattr(commands[-1], key, int(value))
            elif commands and key in ("keep", "drop"):
                setattr(commands[-1], key, value)
            elif commands and key == "elide":
                commands[-1].elide = value == "yes"
            else:
                raise ValueError(f"README.md:{line_of(m.start())}: readme-output option {raw!r}")
        if not commands:
            raise ValueError(f"README.md:{line_of(m.start())}: readme-output without a $ command")
        r.outputs.append(OutputBlock(m.span(3), line_of(m.start()), commands, m.group(3), slow))
    for m in FIGURES_RE.finditer(text):
        rules = []
        for raw in m.group(1).splitlines():
            if not raw.strip():
                continue
            pattern, sep, name = raw.rpartition(" = ")
            if not sep or name.strip() not in FIGURES or "{}" not in pattern:
                raise ValueError(f"README.md:{line_of(m.start())}: readme-figures rule {raw!r}")
            rules.append((re.compile(pattern.strip().replace("{}", r"([\d,.]+)")), name.strip()))
        r.figure_blocks.append(FigureCheck(m.span(3), line_of(m.start()), rules, m.group(3)))
    for m in INLINE_RE.finditer(text):
        if m.group(1) not in FIGURES:
            raise ValueError(f"README.md:{line_of(m.start())}: unknown figure {m.group(1)!r}")
        r.inlines.append(Inline(m.span(2), line_of(m.start()), m.group(1), m.group(2)))
    return r


@dataclass(frozen=True)
class Result:
    stdout: str
    exit: int


def argv_of(command: str) -> list[str]:
    """The `asc_tui.cli.main` arguments of a README command line."""
    words = shlex.split(command)
    if words[0] not in ALIASES:
        raise ValueError(f"not an asc-tui command: {command!r}")
    return [*ALIASES[words[0]], *words[1:]]


def clean(stdout: str, scratch: str = "") -> str:
    """The output as the README shows it: no trailing blanks, checkout paths relative."""
    for root in filter(None, (str(REPO), scratch, scratch and os.path.realpath(scratch))):
        stdout = stdout.replace(root + os.sep, "")
    return "\n".join(line.rstrip() for line in stdout.splitlines()).strip("\n")


def run_commands(sequences: list[list[str]], jobs: int = JOBS) -> dict[str, Result]:
    """Every command's output and exit status. Each sequence runs in order (a block's later
    command may read what an earlier one wrote); the sequences are dealt to `jobs` processes that
    run side by side in one scratch directory, each calling the console scripts' `main` once per
    command (one interpreter start per process, not per command)."""
    groups: list[list[list[str]]] = [[] for _ in range(max(1, min(jobs, len(sequences))))]
    for seq in sorted(sequences, key=len, reverse=True):
        min(groups, key=lambda g: sum(map(len, g))).append(seq)
    results: dict[str, Result] = {}
    with tempfile.TemporaryDirectory(prefix="readme-outputs-") as tmp:
        for name in LINKED:  # `operators/cpp/add_custom.asc` and `bugs/x` as in a checkout
            os.symlink(REPO / name, Path(tmp, name))
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
            "COLUMNS": str(COLUMNS),
            "NO_COLOR": "1",
        }
        env.pop("FORCE_COLOR", None)

        def one(i: int) -> None:
            out = Path(tmp, f".results-{i}.json")
            p = subprocess.run(
                [sys.executable, __file__, "--batch", str(out)],
                input=json.dumps(groups[i]),
                cwd=tmp,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
            if p.returncode != 0 or not out.exists():
                raise RuntimeError(f"running the README's commands failed:\n{p.stderr[-2000:]}")
            for command, (stdout, status) in json.loads(out.read_text(encoding="utf-8")).items():
                results[command] = Result(clean(stdout, tmp), status)

        with ThreadPoolExecutor(max_workers=len(groups)) as pool:
            list(pool.map(one, range(len(groups))))
    return results


def _batch(out: str) -> int:
    """(In the child) each command of stdin's JSON list of sequences through `asc_tui.cli.main`,
    as the console script would run it, each sequence with a project store of its own (history
    would otherwise make one block's "change" column depend on what ran before it);
    `{command: [stdout, exit status]}` into the file `out`."""
    import contextlib
    import io

    from asc_tui.cli import main as cli_main

    done = {}
    commands = []
    for seq in json.loads(sys.stdin.read()):
        store = tempfile.mkdtemp(prefix="store-", dir=".")
        commands += [(store, command) for command in seq]
    for store, command in commands:
        os.environ["ASC_TUI_PROJECT"] = os.path.abspath(store)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            try:
                status = cli_main(argv_of(command))
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 1
        done[command] = [buf.getvalue(), int(status or 0)]
    Path(out).write_text(json.dumps(done), encoding="utf-8")
    return 0


def sequences_for(readme: Readme, slow: bool = False) -> list[list[str]]:
    """What to run: each block's commands, then every figure's command not already among them."""
    seqs: list[list[str]] = []
    seen: set[str] = set()
    for b in readme.outputs:
        if b.slow and not slow:
            continue
        seq = [c.line for c in b.commands if c.line not in seen]
        seen.update(seq)
        if seq:
            seqs.append(seq)
    for name in sorted(_figure_names(readme, slow)):
        for cmd in _commands_of(name):
            if cmd not in seen:
                seen.add(cmd)
                seqs.append([cmd])
    return seqs


def _figure_names(readme: Readme, slow: bool = False) -> set[str]:
    names = {n for fb in readme.figure_blocks for _, n in fb.rules} | {i.name for i in readme.inlines}
    return {n for n in names if slow or not is_slow(n)}


def is_slow(name: str) -> bool:
    fig = FIGURES[name]
    return fig.slow if isinstance(fig, Figure) else any(map(is_slow, fig.inputs))


def _commands_of(name: str) -> list[str]:
    fig = FIGURES[name]
    if isinstance(fig, Figure):
        return [fig.command]
    return [c for dep in fig.inputs for c in _commands_of(dep)]


def figure(name: str, results: dict[str, Result]) -> str:
    fig = FIGURES[name]
    if isinstance(fig, Derived):
        return fig.fn(*(float(figure(d, results).replace(",", "")) for d in fig.inputs))
    m = re.search(fig.pattern, results[fig.command].stdout, re.M)
    if m is None:
        raise LookupError(f"figure {name}: {fig.pattern!r} is not in the output of `{fig.command}`")
    return fig.form(m.group(1))


def render(block: OutputBlock, results: dict[str, Result]) -> str:
    """The block's text from its commands' outputs (raises when an exit status is not the one the
    marker states)."""
    parts = []
    for c in block.commands:
        res = results[c.line]
        if res.exit != c.exit:
            raise AssertionError(
                f"{block.name}: `{c.line}` exited {res.exit}, the README says {c.exit}:\n{res.stdout[-1500:]}"
            )
        lines = [f"$ {c.line}", *_shown(res.stdout.splitlines(), c)]
        if c.exit:
            lines += ["", f"(exit {c.exit})"]
        parts.append("\n".join(lines))
    return "\n".join(parts) + "\n"


def _shown(lines: list[str], c: Command) -> list[str]:
    if c.head is not None and len(lines) > c.head:
        lines = lines[: c.head] + ["..."]
    if c.keep is None and c.drop is None:
        return lines
    out: list[str] = []
    gap = False
    for line in lines:
        if (c.keep is None or re.search(c.keep, line)) and not (c.drop and re.search(c.drop, line)):
            out.append(line)
            gap = False
        elif not gap and c.elide:  # one `...` per run of left-out lines, indented like the first
            out.append(line[: len(line) - len(line.lstrip())] + "...")
            gap = True
    return out


def normal(text: str) -> str:
    """Text compared without the host timings, which differ from run to run."""
    return HOST_TIME.sub(" <t>", text)  # (with the padding: a longer figure pads less)


@dataclass(frozen=True)
class Drift:
    where: str
    old: str
    new: str

    def diff(self) -> str:
        if "\n" not in self.old + self.new:
            return f"{self.where}: README {self.old or 'none'}, the command prints {self.new}"
        lines = difflib.unified_diff(
            self.old.splitlines(), self.new.splitlines(), "README.md", "now", lineterm="", n=1
        )
        return f"{self.where}\n" + "\n".join(lines)


def check_figure_block(
    fb: FigureCheck, results: dict[str, Result], slow: bool = False
) -> tuple[str, list[Drift]]:
    """The block with each figure rewritten, and the figures that were wrong (or never found)."""
    text, drifts = fb.text, []
    for pattern, name in fb.rules:
        if is_slow(name) and not slow:
            continue
        want = figure(name, results)
        found = list(pattern.finditer(text))
        if not found:
            drifts.append(Drift(f"README.md:{fb.line}: no `{pattern.pattern}` in the block", "", want))
            continue
        for m in reversed(found):
            if m.group(1) != want:
                drifts.append(Drift(f"README.md:{fb.line}: {name} ({pattern.pattern})", m.group(1), want))
                text = text[: m.start(1)] + want + text[m.end(1) :]
    return text, drifts


def update(readme: Readme, results: dict[str, Result], slow: bool = False) -> tuple[str, list[Drift]]:
    """The README with every checked block and figure as the commands print them now, and what
    changed."""
    edits: list[tuple[tuple[int, int], str]] = []
    drifts: list[Drift] = []
    for b in readme.outputs:
        if b.slow and not slow:
            continue
        new = render(b, results)
        if normal(new) != normal(b.text):
            drifts.append(Drift(b.name, b.text, new))
            edits.append((b.span, new))
    for fb in readme.figure_blocks:
        new, found = check_figure_block(fb, results, slow)
        drifts += found
        if new != fb.text:
            edits.append((fb.span, new))
    for i in readme.inlines:
        if is_slow(i.name) and not slow:
            continue
        want = figure(i.name, results)
        if i.text != want:
            drifts.append(Drift(f"README.md:{i.line}: figure {i.name}", i.text, want))
            edits.append((i.span, want))
    text = readme.text
    for (lo, hi), new in sorted(edits, reverse=True):
        text = text[:lo] + new + text[hi:]
    return text, drifts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite README.md in place")
    ap.add_argument("--all", action="store_true", help="the slow blocks too")
    ap.add_argument("--jobs", type=int, default=JOBS, help="processes running the commands side by side")
    ap.add_argument("--batch", metavar="OUT", help=argparse.SUPPRESS)  # (the child of run_commands)
    args = ap.parse_args(argv)
    if args.batch:
        return _batch(args.batch)
    readme = parse(README.read_text(encoding="utf-8"))
    results = run_commands(sequences_for(readme, args.all), args.jobs)
    text, drifts = update(readme, results, args.all)
    for d in drifts:
        print(d.diff(), end="\n\n")
    if args.write:
        if text != readme.text:
            README.write_text(text, encoding="utf-8")
        print(f"README.md: {len(drifts)} block(s)/figure(s) rewritten")
        return 0
    print(f"README.md: {len(drifts)} block(s)/figure(s) differ from what the commands print")
    return 1 if drifts else 0


if __name__ == "__main__":
    sys.exit(main())
