/* Small scalar helpers shared by the bundled C++ operators. */
#ifndef ASC_TUI_KERNEL_UTILS_H
#define ASC_TUI_KERNEL_UTILS_H

#include "kernel_operator.h"

__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b;
}

__aicore__ inline uint32_t AlignUp(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b * b;
}

__aicore__ inline uint32_t MinU32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

#endif
