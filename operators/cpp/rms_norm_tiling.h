/* Tiling data of rms_norm. */
#ifndef RMS_NORM_TILING_H
#define RMS_NORM_TILING_H

#include <cstdint>

struct RmsNormTilingData {
    uint32_t rows;
    uint32_t cols;
    uint32_t rowsPerBlock;
    float eps;
};

#endif
