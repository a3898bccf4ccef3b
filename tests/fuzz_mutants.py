"""The team's C++ mutator, and its oracle: the whole-unit check of cxx/check (clang).

A mutant is one edit of one C++ file of a project (an operator's `.asc` beside its spec, or a
sample directory): a deleted, duplicated or renamed token, a truncation, a bad literal, two
call arguments swapped, a duplicated line, a dropped `;`, or `int broken( {` appended. Each
mutant runs through asc-tui as a user's save would (`runner.run`, timing only). The oracle:

- a mutant clang rejects must end in a build error (it may not pass), located at the mutated
  line ±1 (counted: syntax errors and all errors);
- no mutant's errors may contain internal text (a Python traceback, a Python exception class
  name, a path inside asc_tui/).

`python tests/fuzz_mutants.py [--many] [--seed N] [--count N] [--devkit DIR]`: `--many` runs a
longer campaign that also takes the passing asc-devkit samples; prints the numbers.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

KINDS = ("delete", "duplicate", "rename", "truncate", "literal", "swap", "dupline", "semicolon", "append")
_TOKEN = re.compile(
    r'"(?:\\.|[^"\\\n])*"|[A-Za-z_]\w*|\d[\w.]*|<<<|>>>|::|->|\+\+|--|[{}()\[\];,<>=+\-*/&|!.]'
)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_INTERNAL = re.compile(
    r"Traceback \(most recent call last\)|\b(?:TypeError|AttributeError|KeyError|IndexError|ValueError|"
    r"NameError|ZeroDivisionError|IsADirectoryError|FileNotFoundError|UnboundLocalError|RecursionError|"
    r"AssertionError|NotImplementedError|UnicodeDecodeError)\b|asc_tui/"
)


@dataclass
class Mutant:
    project: Path  # what is run: the operator's kernel file or the sample directory
    file: Path  # the file edited (inside the project)
    kind: str
    line: int  # 1-based line of the edit
    text: str  # the mutated file's text


@dataclass
class Outcome:
    mutant: Mutant
    rejected: bool  # clang (cxx/check) rejects it
    syntax: bool  # ... with a parse error
    passed: bool  # the run ended without errors
    build_line: int | None  # the line of the first build error in the edited file
    internal: str | None  # internal text in an error, if any
    message: str = ""


def _code_tokens(text: str) -> list[tuple[int, int, str]]:
    """(start, end, token) of the code tokens (not in comments or preprocessor lines)."""
    blank = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    out = []
    for m in _TOKEN.finditer(blank):
        line_start = blank.rfind("\n", 0, m.start()) + 1
        if blank[line_start : m.start()].lstrip().startswith("#"):
            continue
        out.append((m.start(), m.end(), m.group(0)))
    return out


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def mutate(text: str, kind: str, rng: random.Random) -> tuple[str, int] | None:
    """One edit of `kind` at a random place: (new text, 1-based line), or None if none fits."""
    toks = _code_tokens(text)
    if not toks:
        return None
    if kind == "append":
        return text.rstrip("\n") + "\nint broken( {\n", text.rstrip("\n").count("\n") + 2
    if kind == "truncate":
        lines = text.split("\n")
        cut = rng.randrange(len(lines) // 4, len(lines))
        kept = lines[:cut]
        while kept and not _COMMENT.sub("", kept[-1]).strip():
            kept.pop()  # the edit is where the code now ends
        return "\n".join(kept) + "\n", max(len(kept), 1)
    if kind == "dupline":
        cands = [
            i for i, ln in enumerate(text.split("\n")) if re.match(r"\s+[\w:<>]+\s+\w+(\s*=.*)?;\s*$", ln)
        ]
        if not cands:
            return None
        lines = text.split("\n")
        i = rng.choice(cands)
        return "\n".join(lines[: i + 1] + [lines[i]] + lines[i + 1 :]), i + 2
    if kind == "semicolon":
        cands = [t for t in toks if t[2] == ";"]
        if not cands:
            return None
        s, e, _ = rng.choice(cands)
        return text[:s] + text[e:], _line_of(text, s)
    if kind == "literal":
        cands = [t for t in toks if t[2][0].isdigit()]
        if not cands:
            return None
        s, e, tok = rng.choice(cands)
        bad = rng.choice([tok + "q", "0x", tok + ".5.5", "1e+"])
        return text[:s] + bad + text[e:], _line_of(text, s)
    if kind == "swap":
        calls = list(re.finditer(r"\b\w+\s*\(([^(),\n]+),([^(),\n]+)([,)])", text))
        calls = [
            c
            for c in calls
            if not text[text.rfind("\n", 0, c.start()) + 1 : c.start()].lstrip().startswith(("#", "//"))
        ]
        if not calls:
            return None
        c = rng.choice(calls)
        a, b = c.group(1), c.group(2)
        new = text[: c.start(1)] + b.strip() + ", " + a.strip() + text[c.end(2) :]
        return new, _line_of(text, c.start())
    s, e, tok = rng.choice(toks)
    if kind == "delete":
        return text[:s] + text[e:], _line_of(text, s)
    if kind == "duplicate":
        return text[:s] + tok + " " + tok + text[e:], _line_of(text, s)
    if kind == "rename":
        idents = [t for t in toks if re.fullmatch(r"[A-Za-z_]\w*", t[2]) and len(t[2]) > 2]
        if not idents:
            return None
        s, e, tok = rng.choice(idents)
        return text[:s] + tok + rng.choice(["_x", "Q", "2"]) + text[e:], _line_of(text, s)
    raise ValueError(kind)


def projects(many: bool, devkit: Path | None) -> list[tuple[Path, list[Path]]]:
    """(project, C++ files to mutate): the bundled operators, the test sample projects and
    (`many`) the asc-devkit samples that pass today."""
    out = []
    for k in sorted((REPO / "operators" / "cpp").glob("*.asc")):
        out.append((k, [k]))
    for d in sorted((REPO / "tests" / "samples").iterdir()):
        srcs = sorted(p for p in d.iterdir() if p.suffix in (".asc", ".cpp"))
        if srcs:
            out.append((d, srcs))
    if many and devkit is not None and devkit.is_dir():
        import json

        from asc_tui.cxx.files import sample_layout

        passing = None
        before = Path("/work/notes/conformance_before.json")
        if before.is_file():
            passing = {
                s["sample"] for s in json.loads(before.read_text())["samples"] if s["status"] == "PASS"
            }
        for d in sorted(p.parent for p in devkit.rglob("CMakeLists.txt")):
            rel = str(d.relative_to(devkit))
            if passing is not None and rel not in passing:
                continue
            s = sample_layout(d)
            if s is not None:
                out.append((d, [s.kernel] + ([s.main] if s.main else [])))
    return out


def make_mutants(n: int, seed: int, many: bool = False, devkit: Path | None = None) -> list[Mutant]:
    rng = random.Random(seed)
    projs = projects(many, devkit)
    out: list[Mutant] = []
    tries = 0
    while len(out) < n and tries < n * 20:
        tries += 1
        proj, files = projs[len(out) % len(projs)]
        f = rng.choice(files)
        kind = KINDS[rng.randrange(len(KINDS))]
        text = f.read_text(encoding="utf-8")
        m = mutate(text, kind, rng)
        if m is None or m[0] == text:
            continue
        out.append(Mutant(proj, f, kind, m[1], m[0]))
    return out


def _copy(m: Mutant, tmp: Path) -> tuple[Path, Path]:
    """A scratch copy of the project with the mutant written in: (what to run, edited file)."""
    if m.project.is_dir():
        dst = tmp / m.project.name
        shutil.copytree(m.project, dst, ignore=shutil.ignore_patterns("build", "input", "output", ".git"))
        edited = dst / m.file.relative_to(m.project)
        run_what = dst
    else:
        dst = tmp
        for f in m.project.parent.iterdir():
            if f.is_file() and f.suffix in (".asc", ".py", ".h"):  # the kernel, its spec, headers
                shutil.copy(f, dst / f.name)
        edited = dst / m.file.name
        run_what = dst / m.project.name
    edited.write_text(m.text, encoding="utf-8")
    return run_what, edited


def check(m: Mutant, timeout_s: float = 10.0) -> Outcome:
    """Run one mutant through asc-tui and judge it."""
    from asc_tui.cxx.check import errors_of
    from asc_tui.devkit.run.runner import RunRequest, run

    with tempfile.TemporaryDirectory(prefix="asc-fuzz-") as t:
        run_what, edited = _copy(m, Path(t))
        errs = errors_of(edited)
        rejected = bool(errs)
        syntax = rejected and _is_syntax(edited, errs)
        try:
            rep = run(RunRequest(str(run_what), timing_only=True, timeout_s=timeout_s))
            errors = list(rep.errors)
        except Exception as exc:  # noqa: BLE001 - an escaped exception is internal text too
            import traceback

            return Outcome(m, rejected, syntax, False, None, traceback.format_exc(), str(exc))
        texts = [" ".join(str(x) for x in (e.message, e.hint, e.snippet, e.file) if x) for e in errors]
        internal = next((tx for tx in texts if _INTERNAL.search(tx.replace(str(REPO / "tests"), ""))), None)
        build_line = None
        for e in errors:
            if e.kind == "build" and e.file and Path(e.file).name == edited.name:
                build_line = e.line
                break
        return Outcome(m, rejected, syntax, not errors, build_line, internal, texts[0] if texts else "")


def _is_syntax(edited: Path, errs: list[dict]) -> bool:
    from asc_tui.cxx.check import clang

    diags, _files = clang.run(edited)
    first = errs[0]
    return any(d.category == "Parse Issue" and d.line == first["line"] for d in diags)


@dataclass
class Summary:
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def rejected(self):
        return [o for o in self.outcomes if o.rejected]

    def rejected_passed(self):
        return [o for o in self.rejected if o.passed]

    def internal(self):
        return [o for o in self.outcomes if o.internal]

    def located(self, outs):
        return [o for o in outs if o.build_line is not None and abs(o.build_line - o.mutant.line) <= 1]

    def report(self) -> str:
        rej, syn = self.rejected, [o for o in self.rejected if o.syntax]
        lines = [
            f"mutants: {len(self.outcomes)}; rejected by clang: {len(rej)} ({len(syn)} syntax errors)",
            f"rejected but passed: {len(self.rejected_passed())}",
            f"internal text: {len(self.internal())}",
            f"rejected located at the mutated line ±1: {len(self.located(rej))}/{len(rej)}",
            f"syntax errors located at the mutated line ±1: {len(self.located(syn))}/{len(syn)}",
        ]
        return "\n".join(lines)


def campaign(n: int, seed: int, many: bool = False, devkit: Path | None = None, verbose=False) -> Summary:
    s = Summary()
    for m in make_mutants(n, seed, many, devkit):
        o = check(m)
        s.outcomes.append(o)
        if verbose and (
            o.internal
            or (o.rejected and (o.passed or o.build_line is None or abs(o.build_line - m.line) > 1))
        ):
            where = f"{m.file.name}:{m.line} {m.kind}"
            print(f"  {where}: passed={o.passed} build_line={o.build_line} {o.message[:150]!r}", flush=True)
            if o.internal:
                print("     internal:", o.internal[:300].replace("\n", " | "), flush=True)
    return s


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--many", action="store_true", help="a longer run, asc-devkit samples too")
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--count", type=int, default=None)
    ap.add_argument("--devkit", default="/work/asc-devkit/examples/01_simd_cpp_api")
    a = ap.parse_args(argv)
    n = a.count or (400 if a.many else 120)
    t0 = time.perf_counter()
    s = campaign(n, a.seed, a.many, Path(a.devkit), verbose=True)
    print(s.report())
    print(f"{time.perf_counter() - t0:.0f} s")
    return 1 if s.rejected_passed() or s.internal() else 0


if __name__ == "__main__":
    sys.exit(main())
