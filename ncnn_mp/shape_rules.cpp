// The shape guard's rules for the layer kinds whose weights or parameters fix their input in
// ways other than a count of channels or values (shape_guard.h): the 1D and 3D convolutions,
// the recurrent layers, the normalisations, Gemm with a constant operand, MatMul, SDPA and
// MultiHeadAttention, DeformableConv2D, Embed's table. Read from ncnn 1.0.20261020's
// src/layer/*.cpp: each rule refuses what would read or write past a weight, a blob or a
// parameter array, or divide by zero (SDPA's heads), not every input ncnn would compute
// nonsense from.
#include <ncnn/layer_type.h>
#include <ncnn/mat.h>
#include <ncnn/paramdict.h>

#include "shape_guard.h"

namespace {

const long long CAP = 1LL << 31;

long long capped(long long v) {
    return v > CAP ? CAP : v < -CAP ? -CAP : v;
}

// a / (b * c * d) when exact and positive, else 0 (no rule)
int exact(long long a, long long b, long long c = 1, long long d = 1) {
    if (a <= 0 || b <= 0 || c <= 0 || d <= 0) {
        return 0;
    }
    long long q = capped(capped(b * c) * capped(d));
    return a % q == 0 ? static_cast<int>(a / q) : 0;
}

ncnn_mp_blob_shape_t unpacked(const ncnn::Mat &m) {
    ncnn_mp_blob_shape_t s = { m.dims, m.w, m.h, m.d, m.c };
    long long pack = m.elempack > 0 ? m.elempack : 1;
    if (m.dims == 1) {
        s.w = static_cast<int>(capped(s.w * pack));
    } else if (m.dims == 2) {
        s.h = static_cast<int>(capped(s.h * pack));
    } else {
        s.c = static_cast<int>(capped(s.c * pack));
    }
    return s;
}

bool refuse(ncnn_mp_shape_refusal_t &r, ncnn_mp_shape_rule_t rule, int expected, int got, int input,
            const ncnn_mp_blob_shape_t &s) {
    r.rule = rule;
    r.expected = expected;
    r.got = got;
    r.input = input;
    r.shape = s;
    return true;
}

}  // namespace

ncnn_mp_more_rule_t ncnn_mp_more_rule(int typeindex, const ncnn::ParamDict &pd) {
    namespace T = ncnn::LayerType;
    ncnn_mp_more_rule_t m = {};
    int n = pd.get(0, 0), kw = pd.get(1, 0), size = pd.get(6, 0);
    switch (typeindex) {
        case T::Convolution1D:
        case T::ConvolutionDepthWise1D:
        case T::Deconvolution1D:
        case T::DeconvolutionDepthWise1D: {
            bool depthwise = typeindex == T::ConvolutionDepthWise1D || typeindex == T::DeconvolutionDepthWise1D;
            bool deconv = typeindex == T::Deconvolution1D || typeindex == T::DeconvolutionDepthWise1D;
            if (pd.get(deconv ? 28 : 19, 0) != 0) {
                break;  // its weights are an input
            }
            int group = depthwise ? pd.get(7, 1) : 1;
            m.kind = NCNN_MP_MORE_ROWS;  // (w: the length, h: the channels)
            m.expected = group > 0 ? static_cast<int>(capped(static_cast<long long>(exact(size, n, kw)) * group)) : 0;
            if (!deconv) {  // the dilated kernel must fit the padded length
                int left = pd.get(4, 0), right = pd.get(15, left), dilation = pd.get(2, 1);
                if (left >= 0 && right >= 0 && kw > 0 && dilation > 0) {
                    m.extent = static_cast<int>(capped(capped(static_cast<long long>(kw - 1) * dilation) + 1 - left - right));
                }
            }
            break;
        }
        case T::Convolution3D:
        case T::ConvolutionDepthWise3D:
        case T::Deconvolution3D:
        case T::DeconvolutionDepthWise3D: {
            bool depthwise = typeindex == T::ConvolutionDepthWise3D || typeindex == T::DeconvolutionDepthWise3D;
            int group = depthwise ? pd.get(7, 1) : 1, kh = pd.get(11, kw), kd = pd.get(21, kw);
            m.kind = NCNN_MP_MORE_VOLUME;
            m.expected = group > 0 ? static_cast<int>(capped(static_cast<long long>(exact(size, n, capped(static_cast<long long>(kw) * kh), kd)) * group)) : 0;
            break;
        }
        case T::DeformableConv2D:
            m.kind = NCNN_MP_MORE_CHANNELS;
            m.expected = exact(size, n, kw, pd.get(11, kw));
            break;
        case T::RNN:
        case T::GRU:
        case T::LSTM: {  // each step's input: the width a weight row holds
            int dirs = pd.get(2, 0) == 2 ? 2 : 1, gates = typeindex == T::RNN ? 1 : typeindex == T::GRU ? 3 : 4;
            int units = typeindex == T::LSTM ? pd.get(3, n) : n;
            m.kind = NCNN_MP_MORE_WIDTH;
            m.expected = exact(pd.get(1, 0), capped(static_cast<long long>(dirs) * gates), units);
            break;
        }
        case T::MultiHeadAttention: {  // the query's width: the q projection's rows
            m.kind = NCNN_MP_MORE_WIDTH;
            m.expected = exact(pd.get(2, 0), n);
            break;
        }
        case T::LayerNorm:
        case T::RMSNorm:  // gamma (and beta) of affine_size: a row, a channel's plane, or a volume
            if (pd.get(2, 1) != 0 && n > 0) {  // (affine)
                m.kind = NCNN_MP_MORE_NORM;
                m.expected = n;
            }
            break;
        case T::GroupNorm:  // ncnn walks `channels` (param 1) of the input's channel axis, in place
            m.kind = NCNN_MP_MORE_AXIS;
            m.expected = pd.get(1, 0);
            break;
        case T::Normalize:  // one scale per channel unless shared
            if (pd.get(1, 0) == 0) {
                m.kind = NCNN_MP_MORE_CHANNELS;
                m.expected = pd.get(3, 0);
            }
            break;
        case T::Gemm: {  // the operand given as an input must have the constant one's K
            bool constant_a = pd.get(4, 0) != 0, constant_b = pd.get(5, 0) != 0;
            if (constant_a != constant_b) {
                m.kind = NCNN_MP_MORE_GEMM;
                m.expected = pd.get(9, 0);                                 // constantK
                m.transposed = constant_b ? pd.get(2, 0) != 0 : pd.get(3, 0) == 0;  // K along h/c, not w
            }
            break;
        }
        case T::MatMul:
            m.kind = NCNN_MP_MORE_MATMUL;
            m.transposed = pd.get(0, 0) != 0;
            break;
        case T::SDPA:
            m.kind = NCNN_MP_MORE_SDPA;
            break;
        case T::Slice: {  // the slices given (-233: the rest) must fit along the axis (ncnn copies unbounded)
            ncnn::Mat slices = pd.get(0, ncnn::Mat());
            const int *p = slices;
            long long sum = 0;
            for (int i = 0; p != nullptr && i < slices.w; i++) {
                sum = capped(sum + (p[i] > 0 ? p[i] : 0));
            }
            if (sum > 0) {
                m.kind = NCNN_MP_MORE_SLICE;
                m.expected = static_cast<int>(sum);
                m.extent = pd.get(1, 0);  // (the axis)
            }
            break;
        }
        default:
            break;
    }
    if (m.expected == 0 && (m.kind == NCNN_MP_MORE_ROWS || m.kind == NCNN_MP_MORE_VOLUME ||
                            m.kind == NCNN_MP_MORE_CHANNELS || m.kind == NCNN_MP_MORE_WIDTH ||
                            m.kind == NCNN_MP_MORE_AXIS || m.kind == NCNN_MP_MORE_GEMM)) {
        m.kind = NCNN_MP_MORE_NOTHING;  // (ncnn's own load refuses such parameters, or there is nothing to fit)
    }
    return m;
}

bool ncnn_mp_more_refuses(const ncnn_mp_more_rule_t &m, const ncnn::Mat *blobs, int n, ncnn_mp_shape_refusal_t &r) {
    if (m.kind == NCNN_MP_MORE_NOTHING || n == 0) {
        return false;
    }
    ncnn_mp_blob_shape_t s = unpacked(blobs[0]);
    switch (m.kind) {
        case NCNN_MP_MORE_ROWS: {  // dims 2 (w length, h channels), or a vector of one channel
            if (s.dims > 2) {
                return refuse(r, NCNN_MP_DIMS, 2, s.dims, 0, s);
            }
            int channels = s.dims == 2 ? s.h : 1;
            if (channels != m.expected) {
                return refuse(r, NCNN_MP_CHANNELS, m.expected, channels, 0, s);
            }
            return m.extent > s.w && refuse(r, NCNN_MP_KERNEL1D, m.extent, s.w, 0, s);
        }
        case NCNN_MP_MORE_VOLUME:
            if (s.dims < 3) {
                return refuse(r, NCNN_MP_DIMS, 4, s.dims, 0, s);
            }
            return s.c != m.expected && refuse(r, NCNN_MP_CHANNELS, m.expected, s.c, 0, s);
        case NCNN_MP_MORE_CHANNELS: {
            int c = s.dims >= 3 ? s.c : 1;
            return c != m.expected && refuse(r, NCNN_MP_CHANNELS, m.expected, c, 0, s);
        }
        case NCNN_MP_MORE_AXIS: {
            int c = s.dims == 1 ? s.w : s.dims == 2 ? s.h : s.c;
            return c != m.expected && refuse(r, NCNN_MP_CHANNELS, m.expected, c, 0, s);
        }
        case NCNN_MP_MORE_WIDTH:
            if (s.dims > 2) {
                return refuse(r, NCNN_MP_DIMS, 2, s.dims, 0, s);
            }
            return s.w != m.expected && refuse(r, NCNN_MP_WIDTH, m.expected, s.w, 0, s);
        case NCNN_MP_MORE_NORM: {
            long long plane = capped(static_cast<long long>(s.w) * s.h), volume = capped(plane * s.d);
            bool fits = s.w == m.expected || (s.dims >= 3 && plane == m.expected) || (s.dims == 4 && volume == m.expected);
            return !fits && refuse(r, NCNN_MP_NORM, m.expected, s.w, 0, s);
        }
        case NCNN_MP_MORE_GEMM: {
            int k = !m.transposed || s.dims == 1 ? s.w : s.dims == 2 ? s.h : s.c;
            return k != m.expected && refuse(r, NCNN_MP_INNER, m.expected, k, 0, s);
        }
        case NCNN_MP_MORE_MATMUL: {  // A's w is B's K (B's h, or w transposed), reading B's rows
            if (n < 2) {
                return false;
            }
            ncnn_mp_blob_shape_t b = unpacked(blobs[1]);
            if (s.dims == 1 && b.dims == 1) {
                return s.w > b.w && refuse(r, NCNN_MP_INNER, b.w, s.w, 1, b);
            }
            int k = m.transposed || b.dims == 1 ? b.w : b.h;
            if (s.w != k) {
                return refuse(r, NCNN_MP_INNER, s.w, k, 1, b);
            }
            int ca = s.dims >= 3 ? s.c : 1, cb = b.dims >= 3 ? b.c : 1;
            return ca != cb && ca != 1 && cb != 1 && refuse(r, NCNN_MP_CHANNELS, ca, cb, 1, b);
        }
        case NCNN_MP_MORE_SLICE: {
            int e[4], dims = s.dims;
            e[0] = dims == 1 ? s.w : dims == 2 ? s.h : s.c;  // (axis 0 first, as ncnn counts)
            e[1] = dims == 2 ? s.w : dims == 3 ? s.h : s.d;
            e[2] = dims == 3 ? s.w : s.h;
            e[3] = s.w;
            int axis = m.extent < 0 ? m.extent + dims : m.extent;
            if (axis < 0 || axis >= dims) {
                return false;  // (ncnn refuses its own axis)
            }
            return e[axis] < m.expected && refuse(r, NCNN_MP_SLICES, m.expected, e[axis], 0, s);
        }
        case NCNN_MP_MORE_SDPA: {  // query (w E, h Lq, c heads), key and value (c groups)
            if (n < 3) {
                return false;
            }
            ncnn_mp_blob_shape_t k = unpacked(blobs[1]), v = unpacked(blobs[2]);
            int qc = s.dims >= 3 ? s.c : 1, kc = k.dims >= 3 ? k.c : 1, vc = v.dims >= 3 ? v.c : 1;
            if (kc > qc || qc % kc != 0) {
                return refuse(r, NCNN_MP_HEADS, qc, kc, 1, k);
            }
            if (k.w < s.w) {
                return refuse(r, NCNN_MP_WIDTH, s.w, k.w, 1, k);
            }
            return (v.h < k.h || vc < kc) && refuse(r, NCNN_MP_MATCH_KV, k.h, v.h, 2, v);
        }
        default:
            return false;
    }
}

// Embed's table must hold num_output values for every index its clamp allows (ncnn does not check).
bool ncnn_mp_embed_table_short(const ncnn::ParamDict &pd) {
    long long rows = pd.get(1, 0), width = pd.get(0, 0), size = pd.get(3, 0);
    return rows <= 0 || width <= 0 || size < capped(rows * width);
}
