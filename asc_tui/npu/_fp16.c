/* fp16 <-> fp32 conversions of (strided) numpy arrays, bit-identical to numpy's astype.

Why: numpy's float16 casts convert element by element in scalar code (x86-64 wheels are built
for a baseline without F16C): 1.5-3.5 ns an element on the dev box, a fifth of a 1024^3 fp16
matmul's full emulation. These loops are branch-free integer and float arithmetic that the
compiler vectorises, and they release the GIL (the cube's conversions run on the numbers
thread beside the emulating one, npu/offload.py).

Exactness: every fp16 value has one fp32 value (widen: sign, rebiased exponent, shifted
significand; subnormals through an exact int -> float product). fp32 -> fp16 rounds to nearest
even as numpy's npy_floatbits_to_halfbits does, with its NaN rule (the significand's top bits
kept, a NaN never becomes inf) and overflow to inf. No product or sum here has a subnormal
operand or result that matters, so flush-to-zero modes a library may set cannot change a bit.
tests/test_npu_fp16.py checks every fp16 value and a sweep of fp32 bit patterns against numpy.

Python side: asc_tui/npu/fp16.py (falls back to numpy where this module is not built).
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <stdint.h>
#include <string.h>

/* The subnormal rounding below needs floats evaluated as floats (not in x87's wider format). */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "asc_tui/npu/_fp16.c needs FLT_EVAL_METHOD 0 (the install falls back to numpy)"
#endif

/* all ones where `c`, else 0: selects as masks keep the loops free of branches (vectorised) */
static inline uint32_t when(int c)
{
    return 0u - (uint32_t)c;
}

static inline uint32_t pick(uint32_t mask, uint32_t yes, uint32_t no)
{
    return (yes & mask) | (no & ~mask);
}

static inline uint32_t h2f(uint32_t h)
{
    uint32_t sign = (h & 0x8000u) << 16;
    uint32_t em = h & 0x7fffu;
    uint32_t normal = (em << 13) + 0x38000000u; /* exponent 15 -> 127 bias */
    float sub = (float)(int32_t)(h & 0x3ffu) * 0x1p-24f; /* exact: < 2^10 times a power of 2 */
    uint32_t subbits;
    memcpy(&subbits, &sub, 4);
    uint32_t special = 0x7f800000u | ((h & 0x3ffu) << 13); /* inf, NaN with its payload */
    uint32_t r = pick(when(em < 0x0400u), subbits, normal);
    return pick(when(em >= 0x7c00u), special, r) | sign;
}

static inline uint16_t f2h(uint32_t f)
{
    uint32_t sign = (f >> 16) & 0x8000u;
    uint32_t a = f & 0x7fffffffu;
    /* normal: drop 13 bits, rounding to nearest even (a carry may reach the exponent: right) */
    uint32_t normal = (a - 0x38000000u + 0x0fffu + ((a >> 13) & 1u)) >> 13;
    /* subnormal: |x| * 2^24 is exact, and adding then removing 2^23 rounds it to an integer,
       to nearest even (it is below 2^10). Larger inputs are clamped first (their `sub` is not
       used): no float -> int conversion out of range, no invalid or overflow flag left set. */
    float x;
    uint32_t small = pick(when((int32_t)a < 0x38800000), a, 0x38800000u);
    memcpy(&x, &small, 4);
    float y = x * 0x1p24f;
    float r = (y + 0x1p23f) - 0x1p23f;
    uint32_t sub = (uint32_t)(int32_t)r;
    uint32_t nan = 0x7c00u + ((a & 0x7fffffu) >> 13);
    nan += when(nan == 0x7c00u) & 1u; /* numpy keeps a NaN a NaN */
    /* (a < 2^31: signed compares, which SSE2 has) */
    uint32_t h = pick(when((int32_t)a >= 0x38800000), normal, sub);
    h = pick(when((int32_t)a >= 0x47800000), 0x7c00u, h);
    h = pick(when((int32_t)a > 0x7f800000), nan, h);
    return (uint16_t)(h | sign);
}

/* The contiguous loops also in AVX2, chosen when the library loads (GCC on x86-64 glibc: an
   ifunc). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

CLONES static void widen_contiguous(uint32_t *restrict d, const uint16_t *restrict s, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        d[i] = h2f(s[i]);
}

CLONES static void narrow_contiguous(uint16_t *restrict d, const uint32_t *restrict s, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        d[i] = f2h(s[i]);
}

static void widen_run(char *d, Py_ssize_t ds, const char *s, Py_ssize_t ss, Py_ssize_t n)
{
    if (ds == 4 && ss == 2 && (uintptr_t)d % 4 == 0 && (uintptr_t)s % 2 == 0) {
        widen_contiguous((uint32_t *)d, (const uint16_t *)s, n);
        return;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, s + i * ss, 2);
        uint32_t v = h2f(h);
        memcpy(d + i * ds, &v, 4);
    }
}

static void narrow_run(char *d, Py_ssize_t ds, const char *s, Py_ssize_t ss, Py_ssize_t n)
{
    if (ds == 2 && ss == 4 && (uintptr_t)d % 2 == 0 && (uintptr_t)s % 4 == 0) {
        narrow_contiguous((uint16_t *)d, (const uint32_t *)s, n);
        return;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t f;
        memcpy(&f, s + i * ss, 4);
        uint16_t v = f2h(f);
        memcpy(d + i * ds, &v, 2);
    }
}

typedef void (*run_fn)(char *, Py_ssize_t, const char *, Py_ssize_t, Py_ssize_t);

/* dst[...] = convert(src) over two buffers of one shape: every run along the last axis (or one
   run when both are C-contiguous) goes through `run`. */
static PyObject *convert(PyObject *args, Py_ssize_t dsize, Py_ssize_t ssize, run_fn run)
{
    PyObject *dst_obj, *src_obj;
    if (!PyArg_ParseTuple(args, "OO", &dst_obj, &src_obj))
        return NULL;
    Py_buffer d, s;
    if (PyObject_GetBuffer(dst_obj, &d, PyBUF_RECORDS) < 0)
        return NULL;
    if (PyObject_GetBuffer(src_obj, &s, PyBUF_RECORDS_RO) < 0) {
        PyBuffer_Release(&d);
        return NULL;
    }
    int nd = d.ndim;
    const char *bad = NULL;
    if (d.itemsize != dsize || s.itemsize != ssize)
        bad = "element sizes do not match the conversion";
    else if (s.ndim != nd || nd > 64)
        bad = "source and destination differ in shape";
    else
        for (int k = 0; k < nd; k++)
            if (d.shape[k] != s.shape[k])
                bad = "source and destination differ in shape";
    if (bad != NULL) {
        PyBuffer_Release(&d);
        PyBuffer_Release(&s);
        PyErr_SetString(PyExc_ValueError, bad);
        return NULL;
    }
    Py_ssize_t total = 1;
    for (int k = 0; k < nd; k++)
        total *= d.shape[k];
    int contiguous = PyBuffer_IsContiguous(&d, 'C') && PyBuffer_IsContiguous(&s, 'C');
    if (total > 0) {
        Py_BEGIN_ALLOW_THREADS
        if (nd == 0) {
            run(d.buf, dsize, s.buf, ssize, 1);
        } else if (contiguous) {
            run(d.buf, dsize, s.buf, ssize, total);
        } else {
            Py_ssize_t idx[64] = {0};
            Py_ssize_t inner = d.shape[nd - 1];
            Py_ssize_t outer = total / inner;
            char *dp = d.buf;
            const char *sp = s.buf;
            for (Py_ssize_t o = 0; o < outer; o++) {
                run(dp, d.strides[nd - 1], sp, s.strides[nd - 1], inner);
                for (int k = nd - 2; k >= 0; k--) { /* the next run: an odometer over the rest */
                    dp += d.strides[k];
                    sp += s.strides[k];
                    if (++idx[k] < d.shape[k])
                        break;
                    dp -= d.strides[k] * d.shape[k];
                    sp -= s.strides[k] * s.shape[k];
                    idx[k] = 0;
                }
            }
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&d);
    PyBuffer_Release(&s);
    Py_RETURN_NONE;
}

static PyObject *widen(PyObject *self, PyObject *args)
{
    (void)self;
    return convert(args, 4, 2, widen_run);
}

static PyObject *narrow(PyObject *self, PyObject *args)
{
    (void)self;
    return convert(args, 2, 4, narrow_run);
}

static PyMethodDef methods[] = {
    {"widen", widen, METH_VARARGS, "widen(dst, src): dst[...] = src (fp16 bits) as fp32 bits."},
    {"narrow", narrow, METH_VARARGS, "narrow(dst, src): dst[...] = src (fp32 bits) as fp16 bits."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fp16", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fp16(void)
{
    return PyModule_Create(&module);
}
