"""The C++ front end: run users' Ascend C kernels (`.asc`/`.cpp`) on the kernel API twin.

Pipeline, one module per job:

- `preprocess` — `#include "local.h"` (guards, `#pragma once`), `#define`/`#if`/`#ifdef`, with
  every line and column kept; Ascend C qualifiers blanked with spaces and remembered.
- `parse` — tree-sitter with the CUDA grammar (C++ plus `<<<...>>>` host launches).
- `symbols` — namespaces, classes, functions, templates, globals, enums, aliases of the unit.
- `codegen` (+ `classes`, `typeres`, `names`, `expr`, `calls`, `stmt`, `loops`, `emit`, `scope`,
  `ctype`) — translation on demand from the `__global__` entry with static C++ types, each
  statement on its C++ line.
- `runtime`, `api`, `cmath` — what generated code calls where plain Python is not exact C++,
  and what the translator knows about the twin.
- `acl`, `host` (+ `hostexpr`, `hostvalues`, `hostapi`), `hostrun` — a sample's host `main()`,
  interpreted onto the ACL runtime twin; its launches run the translated kernels;
  `files` also knows the sample directory layout.
- `translate`, `cache` — the driver and the content-hash cache; `operator` — C++ operators for
  the loader (kernel + spec); `apply` — `--apply` into C++ literals; `errors` — CxxError with
  file:line:col and a caret.

The subset: function qualifiers (`__global__`, `__aicore__`, `__vector__`, `__cube__`,
`__mix__(…)`, `inline`, `extern "C"`) and address spaces (`__gm__`, `__ubuf__`, `__cbuf__`…);
classes/structs (members, constructors with init lists, methods, access specifiers, default
member initialisers, single inheritance); function and class templates (with specialisations);
constexpr/const globals and members; enums; object-like and function-like macros; namespaces,
`using`; for/while/do/if/switch/break/continue/return, ternary, compound assignment, ++/--,
bit operations, sizeof, C/static/reinterpret casts, references to objects, auto, GM pointer
arithmetic; printf, DumpTensor, assert/ascendc_assert, tiling-data macros.
"""
