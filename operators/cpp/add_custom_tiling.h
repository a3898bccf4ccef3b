/* Tiling data of add_custom: what the host computes once per launch. */
#ifndef ADD_CUSTOM_TILING_H
#define ADD_CUSTOM_TILING_H

#include <cstdint>

struct AddCustomTilingData {
    uint32_t totalLength;  // elements of x, y and z
    uint32_t blockLength;  // elements per block (a multiple of 32 B); the last block takes the rest
};

#endif
