/* Tiling data of matmul: the problem shape. The tile sizes are the kernel's constexprs. */
#ifndef MATMUL_TILING_H
#define MATMUL_TILING_H

#include <cstdint>

struct MatmulTilingData {
    uint32_t m;
    uint32_t n;
    uint32_t k;
};

#endif
