// A convolution's input as the kernels read it (kernels.h): padded as ncnn's make_padding
// pads it, and for int8 quantized as ncnn's Quantize does, in one pass over the input
// (ncnn quantizes into one workspace blob, then copies it into a padded one).
#include "kernels.h"

#if NCNN_MP_KERNELS

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2")  // (the MCU builds are -Os: this is the per-element loop)
#endif

namespace ncnn_mp_kernels {

namespace {

// The padded extents. ncnn's Padding pads a 1-D blob sideways only, and a 2-D blob is one
// channel.
struct Extents {
    int top, bottom, w, h, c;
};

Extents extents(const ncnn::Mat &b, const Pads &p) {
    Extents e;
    e.top = b.dims == 1 ? 0 : p.top;
    e.bottom = b.dims == 1 ? 0 : p.bottom;
    e.w = b.w + p.left + p.right;
    e.h = (b.dims == 1 ? 1 : b.h) + e.top + e.bottom;
    e.c = b.dims >= 3 ? b.c : 1;
    return e;
}

template<typename T>
void fill(T *d, int n, T v) {
    for (int i = 0; i < n; i++) {
        d[i] = v;
    }
}

// One channel: rows of `rows` elements from src (row stride src_w), written padded.
// convert(dst, src, n) writes one row's n values.
template<typename T, typename S, typename Convert>
void pad_channel(T *d, const S *src, int src_w, int rows, const Pads &p, const Extents &e, T value, Convert convert) {
    fill(d, e.top * e.w, value);
    d += e.top * e.w;
    for (int y = 0; y < rows; y++) {
        fill(d, p.left, value);
        convert(d + p.left, src + y * src_w, src_w);
        fill(d + p.left + src_w, p.right, value);
        d += e.w;
    }
    fill(d, e.bottom * e.w, value);
}

// The planes a kernel reads: `data`, e's extents, channels cstep apart.
template<typename T>
int planes_over(Planes<T> &out, const T *data, const Extents &e, size_t cstep) {
    out.data = data;
    out.w = e.w;
    out.h = e.h;
    out.c = e.c;
    out.cstep = cstep;
    return 0;
}

}  // namespace

int input_int8(const ncnn::Mat &b, const float *scales, int channels_per_scale, const Pads &p, ncnn::Mat &ws,
               Planes<signed char> &out, const ncnn::Option &opt) {
    Extents e = extents(b, p);
    bool quantize = b.elemsize != 1;
    bool padded = e.w != b.w || e.top != 0 || e.bottom != 0;
    int rows = b.dims == 1 ? 1 : b.h;
    if (!quantize && !padded) {
        return planes_over(out, static_cast<const signed char *>(b.data), e,
                           b.dims >= 3 ? b.cstep : static_cast<size_t>(e.w) * e.h);
    }
    size_t plane = static_cast<size_t>(e.w) * e.h;
    ws.create(static_cast<int>(plane * e.c), static_cast<size_t>(1u), opt.workspace_allocator);
    if (ws.empty()) {
        return -100;
    }
    // ncnn pads the quantized blob with static_cast<signed char>(pad_value) (its Padding)
    signed char value = p.value > -129.f && p.value < 128.f ? static_cast<signed char>(p.value) : 0;
    for (int q = 0; q < e.c; q++) {
        signed char *d = static_cast<signed char *>(ws.data) + q * plane;
        if (quantize) {
            const float *src = static_cast<const float *>(b.data) + (b.dims >= 3 ? q * b.cstep : 0);
            float scale = scales[q / channels_per_scale];
            pad_channel(d, src, b.w, rows, p, e, value, [scale](signed char *dst, const float *s, int n) {
                for (int i = 0; i < n; i++) {
                    dst[i] = float2int8(mul_ff(s[i], scale));  // (s[i] * scale, kernel_float.h)
                }
            });
        } else {
            const signed char *src = static_cast<const signed char *>(b.data) + (b.dims >= 3 ? q * b.cstep : 0);
            pad_channel(d, src, b.w, rows, p, e, value, [](signed char *dst, const signed char *s, int n) {
                memcpy(dst, s, n);
            });
        }
    }
    return planes_over(out, static_cast<const signed char *>(ws.data), e, plane);
}

int input_fp32(const ncnn::Mat &b, const Pads &p, ncnn::Mat &ws, Planes<float> &out, const ncnn::Option &opt) {
    Extents e = extents(b, p);
    int rows = b.dims == 1 ? 1 : b.h;
    if (e.w == b.w && e.top == 0 && e.bottom == 0) {
        return planes_over(out, static_cast<const float *>(b.data), e, b.dims >= 3 ? b.cstep : static_cast<size_t>(e.w) * e.h);
    }
    size_t plane = static_cast<size_t>(e.w) * e.h;
    ws.create(static_cast<int>(plane * e.c), static_cast<size_t>(4u), opt.workspace_allocator);
    if (ws.empty()) {
        return -100;
    }
    for (int q = 0; q < e.c; q++) {
        const float *src = static_cast<const float *>(b.data) + (b.dims >= 3 ? q * b.cstep : 0);
        pad_channel(static_cast<float *>(ws.data) + q * plane, src, b.w, rows, p, e, p.value,
                    [](float *dst, const float *s, int n) {
            memcpy(dst, s, n * sizeof(float));
        });
    }
    return planes_over(out, static_cast<const float *>(ws.data), e, plane);
}

}  // namespace ncnn_mp_kernels

#endif  // NCNN_MP_KERNELS
