// SPDX-License-Identifier: MIT
// The shape guard's arithmetic (shape_guard.cpp, shape_rules.cpp, C++ only). Parameters come
// from the model file, any int: it is 64-bit, each step capped, so a hostile value cannot
// overflow it (UBSan: signed overflow).
#ifndef NCNN_MP_SHAPE_MATH_H
#define NCNN_MP_SHAPE_MATH_H

#include <ncnn/mat.h>

#include "shape_guard.h"

static const long long NCNN_MP_CAP = 1LL << 31;  // (a product of two capped values fits in 63 bits)

static inline long long capped(long long v) {
    return v > NCNN_MP_CAP ? NCNN_MP_CAP : v < -NCNN_MP_CAP ? -NCNN_MP_CAP : v;
}

static inline long long product(long long a, long long b) {
    return capped(capped(a) * capped(b));
}

static inline int to_int(long long v) {
    return v > 0x7fffffff ? 0x7fffffff : v < -0x7fffffff ? -0x7fffffff : static_cast<int>(v);
}

// size / (a * b * c) when that is exact and positive, else 0 (no rule: ncnn's own
// load_param refuses such parameters, or the layer takes its weights as an input).
static inline int quotient(long long size, long long a, long long b = 1, long long c = 1) {
    if (a <= 0 || b <= 0 || c <= 0 || size <= 0) {
        return 0;
    }
    long long q = product(product(a, b), c);
    return size % q == 0 ? to_int(size / q) : 0;
}

// A blob's shape with elempack unpacked: what the user would see in a Mat.
static inline ncnn_mp_blob_shape_t unpacked(const ncnn::Mat &m) {
    ncnn_mp_blob_shape_t s = { m.dims, m.w, m.h, m.d, m.c };
    int pack = m.elempack > 0 ? m.elempack : 1;
    if (m.dims == 1) {
        s.w = to_int(product(s.w, pack));
    } else if (m.dims == 2) {
        s.h = to_int(product(s.h, pack));
    } else {
        s.c = to_int(product(s.c, pack));
    }
    return s;
}

// The elements of a shape (w*h*d*c as its dims have them), capped.
static inline long long values(const ncnn_mp_blob_shape_t &s) {
    return product(product(s.w, s.dims >= 2 ? s.h : 1), product(s.dims == 4 ? s.d : 1, s.dims >= 3 ? s.c : 1));
}

#endif // NCNN_MP_SHAPE_MATH_H
