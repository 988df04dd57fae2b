// The C++ seam, a camera frame's values to int8 (cxx_seam.h): Mat.from_pixels_int8's rows,
// computed as ncnn computes them on the float path, so that the int8 input is the one the
// first int8 layer would have made from the float frame, bit for bit:
//   substract_mean_normalize (mat.cpp): mean only, its Bias layer: v + (-mean); norm only,
//   its Scale layer: v * norm; both, Scale with a bias: v * norm + (-mean * norm);
//   then the layer's quantize: float2int8(v * scale) (kernel_input.cpp, ncnn's Quantize).
// Each a float32 operation of its own (kernel_float.h's, IEEE-exact on soft-float RISC-V),
// never fused into one multiply-add: ncnn's generic layers round twice.
#include "cxx_seam.h"
#include "kernels.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2", "fp-contract=off")  // (a row of a frame: the per-element loop)
#endif

using namespace ncnn_mp_kernels;

extern "C" void ncnn_mp_int8_step(ncnn_mp_int8_step_t *s, const float *mean, const float *norm, float scale) {
    s->norm = norm != nullptr ? *norm : 1.f;
    s->add = mean == nullptr ? 0.f : norm == nullptr ? -*mean : mul_ff(-*mean, *norm);
    s->op = (mean != nullptr ? 1 : 0) | (norm != nullptr ? 2 : 0);
    s->scale = scale;
}

extern "C" void ncnn_mp_pixels_int8_row(const float *v, int n, const ncnn_mp_int8_step_t *s, signed char *out) {
    const float norm = s->norm, add = s->add, scale = s->scale;
    switch (s->op) {
        case 1:
            for (int i = 0; i < n; i++) {
                out[i] = float2int8(mul_ff(add_ff(v[i], add), scale));
            }
            break;
        case 2:
            for (int i = 0; i < n; i++) {
                out[i] = float2int8(mul_ff(mul_ff(v[i], norm), scale));
            }
            break;
        case 3:
            for (int i = 0; i < n; i++) {
                out[i] = float2int8(mul_ff(add_ff(mul_ff(v[i], norm), add), scale));
            }
            break;
        default:
            for (int i = 0; i < n; i++) {
                out[i] = float2int8(mul_ff(v[i], scale));
            }
            break;
    }
}
