// SPDX-License-Identifier: MIT
// The kernels' per-output-element step (kernels.h: Int8Out::put, Fp32Out::put) in one
// place: each kernel calls these out of line, so the activations' libm calls and the float
// steps are in the firmware once, not inlined into every block of every kernel.
#include "kernels.h"

#if NCNN_MP_KERNELS

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2", "fp-contract=off")
#endif

namespace ncnn_mp_kernels {

void store_int8(const Int8Out &out, int p, int i, int sum) {
    out.put(p, i, sum);
}

void store_fp32(const Fp32Out &out, int p, int i, float sum) {
    out.put(p, i, sum);
}

}  // namespace ncnn_mp_kernels

#endif  // NCNN_MP_KERNELS
