// SPDX-License-Identifier: MIT
// A convolution's input as the kernels read it (kernels.h): padded as ncnn's make_padding
// pads it, and for int8 quantized as ncnn's Quantize does, in one pass over the input
// (ncnn quantizes into one workspace blob, then copies it into a padded one); a band of its
// rows at a time where a copy is needed, so that no padded copy of the whole input exists.
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

// One channel's padded rows [r0, r0 + n) (row 0: the first row of top padding): source
// rows of src_w elements from src (src_rows of them), each converted by convert(dst, src, n).
template<typename T, typename S, typename Convert>
void pad_rows(T *d, const S *src, int src_w, int src_rows, const Pads &p, const Extents &e, int r0, int n, T value,
              Convert convert) {
    for (int r = r0; r < r0 + n; r++, d += e.w) {
        int y = r - e.top;
        if (y < 0 || y >= src_rows) {
            fill(d, e.w, value);
            continue;
        }
        fill(d, p.left, value);
        convert(d + p.left, src + y * src_w, src_w);
        fill(d + p.left + src_w, p.right, value);
    }
}

// The planes a kernel reads: `data`, e's width, n rows, channels cstep apart.
template<typename T>
int planes_over(Planes<T> &out, const T *data, const Extents &e, int n, size_t cstep) {
    out.data = data;
    out.w = e.w;
    out.h = n;
    out.c = e.c;
    out.cstep = cstep;
    return 0;
}

// ws holding at least `bytes` (made once with opt's workspace allocator, reused by the next band).
int workspace(ncnn::Mat &ws, size_t bytes, const ncnn::Option &opt) {
    if (ws.empty() || ws.total() * ws.elemsize < bytes) {
        ws.create(static_cast<int>(bytes), static_cast<size_t>(1u), opt.workspace_allocator);
    }
    return ws.empty() ? -100 : 0;
}

}  // namespace

int input_rows(const ncnn::Mat &b, const Pads &p) {
    return extents(b, p).h;
}

int input_int8(const ncnn::Mat &b, const float *scales, int channels_per_scale, const Pads &p, int r0, int n,
               ncnn::Mat &ws, Planes<signed char> &out, const ncnn::Option &opt) {
    Extents e = extents(b, p);
    bool quantize = b.elemsize != 1;
    bool padded = e.w != b.w || e.top != 0 || e.bottom != 0;
    int rows = b.dims == 1 ? 1 : b.h;
    if (!quantize && !padded) {
        size_t cstep = b.dims >= 3 ? b.cstep : static_cast<size_t>(e.w) * e.h;
        return planes_over(out, static_cast<const signed char *>(b.data) + static_cast<size_t>(r0) * e.w, e, n, cstep);
    }
    size_t plane = static_cast<size_t>(e.w) * n;
    if (workspace(ws, plane * e.c, opt) != 0) {
        return -100;
    }
    // ncnn pads the quantized blob with static_cast<signed char>(pad_value) (its Padding)
    signed char value = p.value > -129.f && p.value < 128.f ? static_cast<signed char>(p.value) : 0;
    for (int q = 0; q < e.c; q++) {
        signed char *d = static_cast<signed char *>(ws.data) + q * plane;
        if (quantize) {
            const float *src = static_cast<const float *>(b.data) + (b.dims >= 3 ? q * b.cstep : 0);
            float scale = scales[q / channels_per_scale];
            pad_rows(d, src, b.w, rows, p, e, r0, n, value, [scale](signed char *dst, const float *s, int k) {
                for (int i = 0; i < k; i++) {
                    dst[i] = float2int8(mul_ff(s[i], scale));  // (s[i] * scale, kernel_float.h)
                }
            });
        } else {
            const signed char *src = static_cast<const signed char *>(b.data) + (b.dims >= 3 ? q * b.cstep : 0);
            pad_rows(d, src, b.w, rows, p, e, r0, n, value, [](signed char *dst, const signed char *s, int k) {
                memcpy(dst, s, k);
            });
        }
    }
    return planes_over(out, static_cast<const signed char *>(ws.data), e, n, plane);
}

int input_int8(const ncnn::Mat &b, const float *scales, int channels_per_scale, const Pads &p, ncnn::Mat &ws,
               Planes<signed char> &out, const ncnn::Option &opt) {
    return input_int8(b, scales, channels_per_scale, p, 0, input_rows(b, p), ws, out, opt);
}

int input_fp32(const ncnn::Mat &b, const Pads &p, int r0, int n, ncnn::Mat &ws, Planes<float> &out,
               const ncnn::Option &opt) {
    Extents e = extents(b, p);
    int rows = b.dims == 1 ? 1 : b.h;
    if (e.w == b.w && e.top == 0 && e.bottom == 0) {
        size_t cstep = b.dims >= 3 ? b.cstep : static_cast<size_t>(e.w) * e.h;
        return planes_over(out, static_cast<const float *>(b.data) + static_cast<size_t>(r0) * e.w, e, n, cstep);
    }
    size_t plane = static_cast<size_t>(e.w) * n;
    if (workspace(ws, plane * e.c * sizeof(float), opt) != 0) {
        return -100;
    }
    for (int q = 0; q < e.c; q++) {
        const float *src = static_cast<const float *>(b.data) + (b.dims >= 3 ? q * b.cstep : 0);
        pad_rows(static_cast<float *>(ws.data) + q * plane, src, b.w, rows, p, e, r0, n, p.value,
                 [](float *dst, const float *s, int k) {
            memcpy(dst, s, k * sizeof(float));
        });
    }
    return planes_over(out, static_cast<const float *>(ws.data), e, n, plane);
}

}  // namespace ncnn_mp_kernels

#endif  // NCNN_MP_KERNELS
