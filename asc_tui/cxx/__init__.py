"""The C++ front end: run users' Ascend C kernels (`.asc`/`.cpp`) on the kernel API twin.

Pipeline, one module per job, in four rooms:

- `check/` — the whole unit (every file, code that runs or not) checked by libclang against an
  SDK stand-in generated from the twin, before anything runs; its errors are build errors.
- `source/` — `preprocess` (`#include "local.h"` with guards and `#pragma once`, `#if`/`#ifdef`,
  every line and column kept; Ascend C qualifiers blanked and remembered) with `macros` (macro
  expansion); `parse` (tree-sitter with the CUDA grammar: C++ plus `<<<...>>>` launches);
  `symbols` (the Collector) filling `decls` (namespaces, classes, functions, templates,
  globals, enums, aliases of the unit).
- `kernel/` — `codegen.Translator`, built of mixins (`typeres`, `classes`, `calls`, `names`,
  `expr`, `ops`, `stmt`, `loops`, `vectorize`) that all derive from `base.GeneratorBase`, the
  surface they share; `emit`, `scope`, `vloop`. Translation runs on demand from the
  `__global__` entry with static C++ types, each statement on its C++ line.
- `host/` — a sample's host `main()` interpreted (`interp`, `expr`, `values`, `structs`, `lib`,
  `api`) onto the ACL runtime twin (`acl`); `run` launches the translated kernels.
- at the top: `ctype` (C types; the one scalar table of kernel and host), `runtime`, `api`,
  `cmath` (what generated code calls where plain Python is not exact C++, and what the
  translator knows about the twin); `translate`, `cache` (the driver and the content-hash
  cache); `operator` (C++ operators for the loader); `files` (the sample directory layout);
  `apply` (`--apply` into C++ literals); `errors` (CxxError with file:line:col and a caret).

The subset: function qualifiers (`__global__`, `__aicore__`, `__vector__`, `__cube__`,
`__mix__(…)`, `inline`, `extern "C"`) and address spaces (`__gm__`, `__ubuf__`, `__cbuf__`…);
classes/structs (members, constructors with init lists, methods, access specifiers, default
member initialisers, single inheritance); function and class templates (with specialisations);
constexpr/const globals and members; enums; object-like and function-like macros; namespaces,
`using`; for/while/do/if/switch/break/continue/return, ternary, compound assignment, ++/--,
bit operations, sizeof, C/static/reinterpret casts, references to objects, auto, GM pointer
arithmetic; printf, DumpTensor, assert/ascendc_assert, tiling-data macros.
"""
