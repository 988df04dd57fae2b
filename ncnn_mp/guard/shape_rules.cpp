// SPDX-License-Identifier: MIT
// The shape guard's rules for the layer kinds whose weights or parameters fix their input in
// ways other than a count of channels or values (shape_guard.h): the 1D and 3D convolutions,
// the recurrent layers, the normalisations, Gemm with a constant operand, MatMul, SDPA and
// MultiHeadAttention, DeformableConv2D, Embed's table. Read from ncnn 1.0.20261020's
// src/layer/*.cpp: each rule refuses what would read or write past a weight, a blob or a
// parameter array, or divide by zero (SDPA's heads), not every input ncnn would compute
// nonsense from.
#include <math.h>
#include <stdio.h>

#include <ncnn/layer_type.h>
#include <ncnn/mat.h>
#include <ncnn/paramdict.h>

#include "shape_guard.h"
#include "shape_math.h"

namespace {

// The parameter arrays a wrapped layer's forward indexes by its input's extent, beyond a count
// of channels or values (those: shape_guard.cpp's Reads), per type: each is checked whole
// against what the forward reads of it (refusal NCNN_MP_ARRAY, naming the row). ncnn does not:
// an Eltwise SUM with fewer coefficients than inputs read past them (garbage: 1.9e34), a Gemm's
// constant C with fewer rows or columns than the output read past it (SIGSEGV).
// tests/test_param_arrays.py reads this table and builds, for each row, a model one element short.
enum ParamArrayRow { ELTWISE_COEFFS, GEMM_C_ROWS, GEMM_C_COLUMNS, PARAM_ARRAY_ROWS };
const ncnn_mp_param_array_t param_arrays[PARAM_ARRAY_ROWS] = {
    /* ELTWISE_COEFFS */ { "Eltwise", "coeffs (param 1; op_type 1, SUM)", "one per input" },
    /* GEMM_C_ROWS */ { "Gemm", "constant C's rows (constantM, param 7; broadcast type 1 to 3)", "the output's rows (M)" },
    /* GEMM_C_COLUMNS */ { "Gemm", "constant C's columns (constantN, param 8; broadcast type 3, 4)", "the output's columns (N)" },
};

bool refuse(ncnn_mp_shape_refusal_t &r, ncnn_mp_shape_rule_t rule, int expected, int got, int input,
            const ncnn_mp_blob_shape_t &s) {
    r.rule = rule;
    r.expected = expected;
    r.got = got;
    r.input = input;
    r.shape = s;
    return true;
}

// A parameter array (row of the table) holding `has` elements, where the forward reads `reads`.
bool refuse_array(ncnn_mp_shape_refusal_t &r, ParamArrayRow row, int has, int reads, int input,
                  const ncnn_mp_blob_shape_t &s) {
    refuse(r, NCNN_MP_ARRAY, has, reads, input, s);
    r.axis = row;
    return true;
}

// The most values an Interp may make (its rule: NCNN_MP_MORE_INTERP).
const double INTERP_MAX_VALUES = 268435456.0;  // 2^28

// A Slice's piece from `from` (0 or more) to `to`, where the input has `extent` along the axis;
// `from` -1: an axis outside the input (extent: the axis as given), -2 or -3: too many pieces
// (extent: how many; shape_guard.h NCNN_MP_SLICES).
bool refuse_slice(ncnn_mp_shape_refusal_t &r, int from, int to, int extent, const ncnn_mp_blob_shape_t &s) {
    refuse(r, NCNN_MP_SLICES, to, extent, 0, s);
    r.axis = from;
    return true;
}

// A Gemm's constant C against the output it is added to: M rows (A's, `a`: its h, or c, or w
// transposed) and N columns (B's, `b`: its w, or h, or c transposed). NULL: that side is a
// constant operand, of constantM rows or constantN columns, as C was loaded.
bool gemm_c_refuses(const ncnn_mp_more_rule_t &m, const ncnn_mp_blob_shape_t *a, int a_input,
                    const ncnn_mp_blob_shape_t *b, int b_input, bool b_transposed, ncnn_mp_shape_refusal_t &r) {
    if (m.c_rows > 0 && a != nullptr) {
        int rows = m.trans_a ? a->w : a->dims == 3 ? a->c : a->h;
        if (rows > m.c_rows) {
            return refuse_array(r, GEMM_C_ROWS, m.c_rows, rows, a_input, *a);
        }
    }
    if (m.c_cols > 0 && b != nullptr) {
        int cols = b_transposed ? (b->dims == 3 ? b->c : b->h) : b->w;
        if (cols > m.c_cols) {
            return refuse_array(r, GEMM_C_COLUMNS, m.c_cols, cols, b_input, *b);
        }
    }
    return false;
}

// A Spectrogram (spectrogram.cpp) frames its input's first row, w values (padded by n_fft / 2
// on both sides with center 1: zeros, the edge, or reflected, pad_type 0 to 2), n_fft values a
// frame, hoplen apart: (size - n_fft) / hoplen + 1 frames, which ncnn does not check. A row
// shorter than n_fft gave a frame read past it (hoplen past the shortfall: the division comes
// to 0), or none and a Mat of a negative size (valgrind: memalign of -316, then a write past a
// block); a reflection as deep as the row reads past it. The output: frames x freqs (n_fft / 2
// + 1 one-sided, or n_fft), twice for a complex one (power 0), below 2^28 values.
bool spectrogram_refuses(const ncnn_mp_more_rule_t &m, const ncnn_mp_blob_shape_t &s, ncnn_mp_shape_refusal_t &r) {
    if (m.fft_n < 1 || m.fft_hop < 1) {
        return false;  // (its load_param refused these: NCNN_VALIDATION)
    }
    const long long half = m.fft_n / 2, pad = m.fft_center == 1 ? 2 * half : 0;
    if (m.fft_center == 1 && m.fft_pad == 2 && half >= s.w) {
        refuse(r, NCNN_MP_REFLECT, 0, s.w, 0, s);
        r.axis = 0;
        r.input = static_cast<int>(half);  // (the reflection's depth, as the padding rule reports it)
        return true;
    }
    if (s.w + pad < m.fft_n) {
        return refuse(r, NCNN_MP_KERNEL1D, static_cast<int>(m.fft_n - pad), s.w, 0, s);
    }
    const long long frames = (s.w + pad - m.fft_n) / m.fft_hop + 1;
    const long long values = frames * (m.fft_onesided ? half + 1 : m.fft_n) * (m.fft_power == 0 ? 2 : 1);
    return values >= (1LL << 28) &&
           refuse(r, NCNN_MP_SPECTRUM, values < 0x7fffffffLL ? static_cast<int>(values) : -1,
                  frames < 0x7fffffffLL ? static_cast<int>(frames) : -1, 0, s);
}

// An InverseSpectrogram (inversespectrogram.cpp) reads its input as frames (h) of complex
// values (w: 2 read of each row) in channels of frequencies: one-sided where there are n_fft / 2
// + 1 of them, else n_fft channels read; (frames - 1) x hoplen + n_fft (n_fft % 2 with center)
// output values, twice for a complex one (returns 0). ncnn reads channel k of a vector or a
// matrix past its end, and sizes its output unchecked (0 or negative: an empty or wrapped Mat).
bool inverse_spectrogram_refuses(const ncnn_mp_more_rule_t &m, const ncnn_mp_blob_shape_t &s,
                                 ncnn_mp_shape_refusal_t &r) {
    if (m.fft_n < 1 || m.fft_hop < 1) {
        return false;  // (its load_param refused these: NCNN_VALIDATION)
    }
    if (s.dims < 3) {
        return refuse(r, NCNN_MP_DIMS, 4, s.dims, 0, s);
    }
    if (s.w < 2) {
        return refuse(r, NCNN_MP_WIDTH, 2, s.w, 0, s);
    }
    if (s.c != m.fft_n / 2 + 1 && s.c < m.fft_n) {
        return refuse(r, NCNN_MP_CHANNELS, m.fft_n, s.c, 0, s);
    }
    const long long outsize = (static_cast<long long>(s.h) - 1) * m.fft_hop + (m.fft_center ? m.fft_n % 2 : m.fft_n);
    const long long values = outsize * (m.fft_power == 0 ? 2 : 1);
    return (outsize < 1 || values + m.fft_n >= (1LL << 28)) &&
           refuse(r, NCNN_MP_SPECTRUM, values < 0x7fffffffLL ? static_cast<int>(values) : -1, s.h, 0, s);
}

// A Pooling1D or Pooling3D (pooling1d.cpp, pooling3d.cpp) pads its input by its pad_mode as
// ncnn's make_padding does (0: a tail up to a whole stride at the end; 1: as given; 2, 3:
// SAME, Pooling3D's depth split as in mode 2 either way; any other: none), then slides its
// window. ncnn checks none of it: a pad of the wrong sign (given, or SAME's on one axis while
// another pads) made copy_make_border crop or write past its output, a stride of 2^30 made a
// tail pad that wrapped the size (valgrind: memalign of -18364), a window wider than the padded
// input took one window by truncation. Refused: a pad below 0 or past 2^30, a window wider than
// the padded extent, a padded blob of 2^28 values or more.
bool pool_refuses(const ncnn_mp_more_rule_t &m, const ncnn_mp_blob_shape_t &s, ncnn_mp_shape_refusal_t &r) {
    const bool three = m.expected == 3;
    if (three ? s.dims < 3 : s.dims > 2) {
        return refuse(r, NCNN_MP_DIMS, three ? 4 : 2, s.dims, 0, s);
    }
    if (m.pool_any) {
        return false;  // (global or adaptive: every value once, no window)
    }
    const long long ext[3] = { s.w, three ? s.h : 1, three && s.dims == 4 ? s.d : 1 };
    long long pads[6], volume = three ? s.c : (s.dims == 2 ? s.h : 1);
    bool padded = m.pool_mode == 0 || m.pool_mode == 1;
    for (int a = 0; a < (three ? 3 : 1); a++) {
        const long long k = m.pool_k[a], st = m.pool_s[a], p0 = m.pool_p[2 * a], p1 = m.pool_p[2 * a + 1];
        if (k < 1 || st < 1) {
            return false;  // (its load_param refused these: NCNN_VALIDATION)
        }
        pads[2 * a] = pads[2 * a + 1] = 0;
        if (m.pool_mode == 0 || m.pool_mode == 1) {
            const long long tail = m.pool_mode == 0 ? (ext[a] + p0 + p1 - k) % st : 0;
            pads[2 * a] = p0;
            pads[2 * a + 1] = p1 + (tail != 0 ? st - tail : 0);
        } else if (m.pool_mode == 2 || m.pool_mode == 3) {
            const long long pad = k + (ext[a] - 1) / st * st - ext[a];
            const bool lower = m.pool_mode == 3 && a < 2;  // (SAME_LOWER: the odd pad before, but along d)
            pads[2 * a] = lower ? pad - pad / 2 : pad / 2;
            pads[2 * a + 1] = lower ? pad / 2 : pad - pad / 2;
            padded = padded || pad > 0;
        }
    }
    for (int a = 0; a < (three ? 3 : 1); a++) {
        const long long before = padded ? pads[2 * a] : 0, after = padded ? pads[2 * a + 1] : 0;
        const long long extent = ext[a] + before + after;
        const int axis = a == 0 ? 0 : a == 1 ? 1 : 2;  // (w, h, d)
        if (before < 0 || after < 0 || before > (1 << 30) || after > (1 << 30)) {
            refuse(r, NCNN_MP_PADDING, to_int(before), to_int(after), 0, s);
            r.axis = axis;
            return true;
        }
        if (extent < m.pool_k[a]) {
            return refuse(r, NCNN_MP_KERNEL1D, to_int(m.pool_k[a] - before - after), to_int(ext[a]), 0, s);
        }
        volume = capped(volume * extent);
    }
    if (volume < (1LL << 28)) {
        return false;
    }
    return refuse(r, NCNN_MP_PADDED_SIZE, to_int(volume), 0, 0, s);
}

// A Fold (fold.cpp, col2im) adds its input's rows, a kernel position each (kw x kh of them a
// channel), into an output of output_w x output_h once padded: each row's first inw x inh values,
// for the windows the dilated kernel takes at its stride there. ncnn checks none of it: a kernel
// wider than the padded output still took one window (the division truncates) and wrote past
// the plane, rows shorter than inw x inh were read past, a kernel of 0 divided by zero.
bool fold_refuses(const ncnn_mp_more_rule_t &m, const ncnn_mp_blob_shape_t &s, ncnn_mp_shape_refusal_t &r) {
    const long long ext_w = static_cast<long long>(m.fold_dw) * (m.fold_kw - 1) + 1;
    const long long ext_h = static_cast<long long>(m.fold_dh) * (m.fold_kh - 1) + 1;
    const long long maxk = static_cast<long long>(m.fold_kw) * m.fold_kh, rows = s.dims >= 2 ? s.h : 1;
    bool fits = m.fold_kw >= 1 && m.fold_kh >= 1 && m.fold_dw >= 1 && m.fold_dh >= 1 && m.fold_sw >= 1 &&
                m.fold_sh >= 1 && m.fold_w >= ext_w && m.fold_h >= ext_h &&
                static_cast<long long>(m.fold_w) * m.fold_h * (rows / maxk) < (1LL << 28);
    r.axis = -1;
    if (!fits) {
        refuse(r, NCNN_MP_FOLD, m.fold_w, m.fold_h, 0, s);
        r.axis = -1;
        return true;
    }
    const long long need = ((m.fold_w - ext_w) / m.fold_sw + 1) * ((m.fold_h - ext_h) / m.fold_sh + 1);
    if (s.w < need || rows < maxk) {
        refuse(r, NCNN_MP_FOLD, m.fold_w, m.fold_h, 0, s);
        r.axis = to_int(need);
        return true;
    }
    return false;
}

// A Reshape's output shape replayed as ncnn's Reshape::forward resolves it (0: the input's
// extent; -1: the input's values over the other extents, in ncnn's order, truncated): every
// extent 1 or more and holding the input's values. ncnn divided by zero where a -1 resolved to
// 0 (SIGFPE), and a reshape that keeps the channels set the Mat's w and h unchecked: a larger
// plane read past each channel.
bool reshape_refuses(const ncnn_mp_more_rule_t &m, const ncnn_mp_blob_shape_t &s, ncnn_mp_shape_refusal_t &r) {
    if (m.ndim < 1 || m.ndim > 4) {
        return false;  // (ncnn's load refuses it)
    }
    const long long in[4] = { s.w, s.dims >= 2 ? s.h : 1, s.dims == 4 ? s.d : 1, s.dims >= 3 ? s.c : 1 };
    const long long total = capped(capped(in[0] * in[1]) * capped(in[2] * in[3]));
    // the axes ncnn uses for ndim (w, h, d, c): 1 w; 2 w h; 3 w h c; 4 w h d c
    static const bool used[5][4] = { { false }, { true }, { true, true }, { true, true, false, true }, { true, true, true, true } };
    long long e[4];
    for (int k = 0; k < 4; k++) {
        e[k] = !used[m.ndim][k] ? 1 : m.shape[k] == 0 ? in[k] : m.shape[k];
    }
    bool zero = false;  // (a division by zero ncnn would have made)
    static const int order[4] = { 0, 1, 2, 3 };  // (ncnn resolves w, h, d, c in turn, each over the others as they stand)
    for (int k : order) {
        if (used[m.ndim][k] && m.shape[k] == -1) {
            long long v = total;
            for (int j = 0; j < 4; j++) {
                if (j != k && used[m.ndim][j]) {
                    zero = zero || e[j] == 0;
                    v = e[j] == 0 ? 0 : v / e[j];
                }
            }
            e[k] = v;
        }
    }
    long long product = 1;
    bool fits = !zero;
    for (int k = 0; k < 4; k++) {
        fits = fits && e[k] >= 1 && e[k] < NCNN_MP_CAP;
        product = capped(product * capped(e[k]));
    }
    if (fits && product == total) {
        return false;
    }
    refuse(r, NCNN_MP_RESHAPE, static_cast<int>(total), static_cast<int>(product), 0, s);
    r.axis = zero;  // (resolved through a division by zero)
    r.first.dims = m.ndim;
    r.first.w = static_cast<int>(capped(e[0]));
    r.first.h = static_cast<int>(capped(e[1]));
    r.first.d = static_cast<int>(capped(e[2]));
    r.first.c = static_cast<int>(capped(e[3]));
    return true;
}

// An SDPA's mask and kv cache (sdpa.cpp). The mask (attn_mask, input 3) is added to each head's
// scores: a row of past + current keys' length for each query row, per head where it has more
// than one channel. The past key and value (kv_cache, the next two inputs) are copied whole,
// channel by channel, into caches of the current key's and value's width and heads, and the
// value's past is taken to be as long as the key's. ncnn reads and copies them unchecked.
bool sdpa_extras_refuse(const ncnn_mp_more_rule_t &m, const ncnn_mp_blob_shape_t &q, const ncnn_mp_blob_shape_t &k,
                        const ncnn_mp_blob_shape_t &v, const ncnn::Mat *blobs, int n, ncnn_mp_shape_refusal_t &r) {
    int at = 3, qc = q.dims >= 3 ? q.c : 1, kc = k.dims >= 3 ? k.c : 1, past = 0;
    const bool cache = m.extent != 0 && n >= at + (m.expected ? 3 : 2);
    if (cache) {
        ncnn_mp_blob_shape_t pk = unpacked(blobs[at + (m.expected ? 1 : 0)]), pv = unpacked(blobs[at + (m.expected ? 2 : 1)]);
        int ki = at + (m.expected ? 1 : 0);
        if (pk.dims != 0) {  // (an empty past: the first step)
            if (pk.w != k.w) {
                return refuse(r, NCNN_MP_WIDTH, k.w, pk.w, ki, pk);
            }
            if ((pk.dims >= 3 ? pk.c : 1) != kc) {
                return refuse(r, NCNN_MP_CHANNELS, kc, pk.dims >= 3 ? pk.c : 1, ki, pk);
            }
            past = pk.dims >= 2 ? pk.h : 1;
        }
        if (pv.dims != 0 || pk.dims != 0) {
            if (pv.w != v.w) {
                return refuse(r, NCNN_MP_WIDTH, v.w, pv.w, ki + 1, pv);
            }
            if ((pv.dims >= 3 ? pv.c : 1) != kc) {
                return refuse(r, NCNN_MP_CHANNELS, kc, pv.dims >= 3 ? pv.c : 1, ki + 1, pv);
            }
            if ((pv.dims >= 2 ? pv.h : 1) != past) {
                return refuse(r, NCNN_MP_ROWS, past, pv.dims >= 2 ? pv.h : 1, ki + 1, pv);
            }
        }
    }
    if (m.expected && n > at) {
        ncnn_mp_blob_shape_t mask = unpacked(blobs[at]);
        int keys = past + (k.dims >= 2 ? k.h : 1), rows = mask.dims >= 2 ? mask.h : 1, mc = mask.dims >= 3 ? mask.c : 1;
        if (mask.w < keys) {
            return refuse(r, NCNN_MP_WIDTH, keys, mask.w, at, mask);
        }
        if (rows < (q.dims >= 2 ? q.h : 1)) {
            return refuse(r, NCNN_MP_ROWS, q.dims >= 2 ? q.h : 1, rows, at, mask);
        }
        if (mc > 1 && mc < qc) {
            return refuse(r, NCNN_MP_CHANNELS, qc, mc, at, mask);
        }
    }
    return false;
}

// ncnn's shape expressions (expression.cpp, eval_list_expression: prefix operators over
// "0w".."9n", the blobs' extents, and literals, split at '(', ')' and ','), evaluated here
// as ncnn evaluates them, but checked: ncnn takes the top of an empty stack for a malformed
// one (an operator short of operands, or no token at all: Crop evaluates its axes expression
// even when it has none), overflows ints, and casts a float out of int's range. Any of those,
// a blob the layer is not given, a division by zero, or more than EXPR_MAX tokens: -1. Else the
// number of values, written to out (at most max of them; more: -1), the stack from its top.
const int EXPR_MAX = 64;

struct ExprValue {
    bool is_float;
    int i;
    float f;
    float as_float() const { return is_float ? f : static_cast<float>(i); }
};

ExprValue expr_int(long long v, bool *ok) {
    *ok = *ok && v >= -2147483647LL - 1 && v <= 2147483647LL;
    ExprValue e = { false, *ok ? static_cast<int>(v) : 0, 0.f };
    return e;
}

ExprValue expr_float(float v) {
    ExprValue e = { true, 0, v };
    return e;
}

// ncnn's typed_value::to_int, (int) of a float by truncation: defined only within int's range.
bool expr_to_int(const ExprValue &e, int *out) {
    if (!e.is_float) {
        *out = e.i;
        return true;
    }
    if (!(e.f > -2147483648.f && e.f < 2147483648.f)) {  // (NaN too)
        return false;
    }
    *out = static_cast<int>(e.f);
    return true;
}

bool token_is(const char *t, int len, const char *name) {
    return static_cast<int>(__builtin_strlen(name)) == len && __builtin_memcmp(t, name, len) == 0;
}

int token_index(const char *t, int len, const char *const *names) {
    for (int k = 0; names[k] != nullptr; k++) {
        if (token_is(t, len, names[k])) {
            return k;
        }
    }
    return -1;
}

// (expression.cpp's analyze_list_expression: its list size, the blobs it names, whether it
// names a batch; -1 where its parentheses do not balance)
int expr_analyze(const char *expr, int *list_size, int *blob_count, bool *batch) {
    int depth = 0;
    size_t len = __builtin_strlen(expr), start = 0;
    *list_size = len == 0 ? 0 : 1;
    *blob_count = 0;
    *batch = false;
    for (size_t i = 0; i <= len; i++) {
        if (i != len && expr[i] != '(' && expr[i] != ')' && expr[i] != ',') {
            continue;
        }
        if (i - start == 2 && expr[start] >= '0' && expr[start] <= '9') {
            char dim = expr[start + 1];
            if (dim == 'w' || dim == 'h' || dim == 'd' || dim == 'c' || dim == 'n') {
                *blob_count = *blob_count > expr[start] - '0' + 1 ? *blob_count : expr[start] - '0' + 1;
                *batch = *batch || dim == 'n';
            }
        }
        if (i < len) {
            depth += expr[i] == '(' ? 1 : expr[i] == ')' ? -1 : 0;
            *list_size += expr[i] == ',' && depth == 0;
            if (depth < 0) {
                return -1;
            }
        }
        start = i + 1;
    }
    return depth == 0 ? 0 : -1;
}

int expr_eval(const char *expr, const ncnn::Mat *blobs, int n, int *out, int max) {
    int start[EXPR_MAX], length[EXPR_MAX], tokens = 0;
    for (int i = 0, at = 0;; i++) {  // (split at '(', ')' and ',', as ncnn does)
        char ch = expr[i];
        if (ch == '\0' || ch == '(' || ch == ')' || ch == ',') {
            if (i > at) {
                if (tokens == EXPR_MAX) {
                    return -1;
                }
                start[tokens] = at;
                length[tokens++] = i - at;
            }
            at = i + 1;
            if (ch == '\0') {
                break;
            }
        }
    }
    static const char *const binary_int[] = { "+", "-", "*", "//", "max", "min", nullptr };
    static const char *const unary_int[] = { "abs", "neg", "sign", "square", nullptr };
    static const char *const rounding[] = { "trunc", "ceil", "floor", "round", nullptr };
    static const char *const unary_float[] = { "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh",
        "erf", "exp", "log", "log10", "reciprocal", "rsqrt", "sin", "sinh", "sqrt", "tan", "tanh", nullptr };
    static const char *const binary_float[] = { "/", "atan2", "fmod", "pow", "remainder", "logaddexp", nullptr };
    static const char *const bitwise[] = { "and", "or", "xor", "lshift", "rshift", nullptr };
    ExprValue stack[EXPR_MAX];
    int depth = 0;
    bool ok = true;
    for (int k = tokens - 1; k >= 0 && ok; k--) {
        const char *t = expr + start[k];
        int len = length[k], op;
        if (len == 2 && t[0] >= '0' && t[0] <= '9' &&
            (t[1] == 'w' || t[1] == 'h' || t[1] == 'd' || t[1] == 'c' || t[1] == 'n')) {
            int b = t[0] - '0';
            if (b >= n) {
                return -1;  // (ncnn: "blob index out of bound")
            }
            ncnn_mp_blob_shape_t s = unpacked(blobs[b]);
            int dims = blobs[b].dims;  // (ncnn's Mat::shape(): 1 past a Mat's dims, 0 for an empty one)
            int v = t[1] == 'w' ? s.w : t[1] == 'h' ? (dims >= 2 ? s.h : dims) : t[1] == 'd' ? (dims == 4 ? s.d : dims != 0)
                  : t[1] == 'c' ? (dims >= 3 ? s.c : dims != 0) :
#if NCNN_BATCH
                  blobs[b].n;
#else
                  1;
#endif
            stack[depth++] = expr_int(v, &ok);
        } else if ((op = token_index(t, len, binary_int)) >= 0 || (op = token_index(t, len, binary_float)) >= 0 ||
                   (op = token_index(t, len, bitwise)) >= 0) {
            if (depth < 2) {
                return -1;
            }
            ExprValue a = stack[--depth], b = stack[--depth];
            if (token_index(t, len, binary_int) >= 0 && !a.is_float && !b.is_float) {
                long long x = a.i, y = b.i;
                if (op == 3 && (y == 0 || (x == -2147483647LL - 1 && y == -1))) {
                    return -1;
                }
                stack[depth++] = expr_int(op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : op == 3 ? x / y
                                          : op == 4 ? (x > y ? x : y) : (x < y ? x : y), &ok);
            } else if (token_index(t, len, binary_int) >= 0) {
                float x = a.as_float(), y = b.as_float();
                stack[depth++] = expr_float(op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : op == 3 ? floorf(x / y)
                                            : op == 4 ? (x > y ? x : y) : (x < y ? x : y));
            } else if (token_index(t, len, binary_float) >= 0) {
                float x = a.as_float(), y = b.as_float(), r;
                switch (op) {
                    case 0: r = x / y; break;
                    case 1: r = atan2f(x, y); break;
                    case 2: r = fmodf(x, y); break;
                    case 3: r = powf(x, y); break;
                    case 4: r = fmodf(x, y); r += x * y < 0 ? y : 0.f; break;
                    default: r = x != x ? x : y != y ? y : x == y ? x + 0.6931471805599453f
                                 : (x > y ? x : y) + log1pf(expf((x < y ? x : y) - (x > y ? x : y))); break;
                }
                stack[depth++] = expr_float(r);
            } else {
                // (ncnn reads a float's bits here; a shift past int's width, or of a negative
                // value left, is undefined: refused)
                if (a.is_float || b.is_float || ((op == 3 || op == 4) && (b.i < 0 || b.i > 31)) || (op == 3 && a.i < 0)) {
                    return -1;
                }
                long long x = a.i;
                stack[depth++] = expr_int(op == 0 ? x & b.i : op == 1 ? x | b.i : op == 2 ? x ^ b.i
                                          : op == 3 ? x << b.i : x >> b.i, &ok);
            }
        } else if ((op = token_index(t, len, unary_int)) >= 0 || (op = token_index(t, len, rounding)) >= 0 ||
                   (op = token_index(t, len, unary_float)) >= 0) {
            if (depth < 1) {
                return -1;
            }
            ExprValue a = stack[--depth];
            if (token_index(t, len, unary_int) >= 0) {
                if (!a.is_float) {
                    long long x = a.i;
                    stack[depth++] = expr_int(op == 0 ? (x > 0 ? x : -x) : op == 1 ? -x : op == 2 ? (x > 0) - (x < 0) : x * x, &ok);
                } else {
                    float x = a.f;
                    stack[depth++] = expr_float(op == 0 ? fabsf(x) : op == 1 ? -x : op == 2 ? (x > 0.f ? 1.f : x == 0.f ? 0.f : -1.f) : x * x);
                }
            } else if (token_index(t, len, rounding) >= 0) {
                float x = a.f;
                float r = op == 0 ? x : op == 1 ? ceilf(x) : op == 2 ? floorf(x) : roundf(x);
                ExprValue rounded = expr_float(r);
                int v = a.i;
                if (a.is_float && !expr_to_int(rounded, &v)) {
                    return -1;
                }
                stack[depth++] = expr_int(v, &ok);
            } else {
                float x = a.as_float();
                static float (*const fns[])(float) = { acosf, acoshf, asinf, asinhf, atanf, atanhf, cosf, coshf, erff,
                    expf, logf, log10f, nullptr, nullptr, sinf, sinhf, sqrtf, tanf, tanhf };
                stack[depth++] = expr_float(op == 12 ? 1.f / x : op == 13 ? 1.f / sqrtf(x) : fns[op](x));
            }
        } else {  // a literal, read as ncnn reads it (an int where %d and %f agree)
            char text[32];
            if (len >= static_cast<int>(sizeof text)) {
                return -1;
            }
            __builtin_memcpy(text, t, len);
            text[len] = '\0';
            int vi;
            float vf;
            int ni = sscanf(text, "%d", &vi), nf = sscanf(text, "%f", &vf);
            if (ni == 1 && nf == 1 && static_cast<float>(vi) == vf) {
                stack[depth++] = expr_int(vi, &ok);
            } else if (nf == 1) {
                stack[depth++] = expr_float(vf);
            } else {
                return -1;  // (ncnn: "malformed literal token")
            }
        }
    }
    if (!ok || depth == 0 || depth > max) {
        return -1;
    }
    for (int k = 0; k < depth; k++) {  // (the top first)
        if (!expr_to_int(stack[depth - 1 - k], &out[k])) {
            return -1;
        }
    }
    return depth;
}

// The k-th of a layer's expressions (ncnn_mp_more_exprs: NUL-terminated, one after another).
const char *expr_at(const char *exprs, int k) {
    for (; exprs != nullptr && k > 0; k--) {
        exprs += __builtin_strlen(exprs) + 1;
    }
    return exprs;
}

// How a Crop finds its region (crop.cpp): from its offsets and sizes (params 0-8, 13-15), from
// numpy-style starts, ends and axes (9-11), from expressions of them (19-21), and given a second
// input, from that blob's shape or, where woffset is -233, from the ints it holds.
enum CropMode { CROP_PARAMS, CROP_NUMPY, CROP_EXPR };

// One axis of a numpy-style slice as ncnn resolves it (-233: the whole extent; a negative start
// from the end; an end of 0 or less from the end too), into the offset and size (64-bit: ncnn
// adds in int, which refused values would overflow).
void crop_slice(long long start, long long end, long long extent, long long *offset, long long *size) {
    start = start == -233 ? 0 : start;
    end = end == -233 ? extent : end;
    *offset = start >= 0 ? start : extent + start;
    long long stop = end > 0 ? end : extent + end;
    *size = (stop < extent ? stop : extent) - *offset;
}

// A Crop's region over an input of ext (w, h, d, c: as its dims have them) replayed as ncnn
// resolves it: off and size per axis (w, h, d, c). False where ncnn would read past a list
// (fewer starts or ends than the axes it walks, more than 4 axes) or its expressions fail.
bool crop_region(const ncnn_mp_more_rule_t &m, const char *exprs, const ncnn::Mat *blobs, int n,
                 const ncnn_mp_blob_shape_t &s, long long *off, long long *size, int *failed) {
    const long long ext[4] = { s.w, s.dims >= 2 ? s.h : 1, s.dims == 4 ? s.d : 1, s.dims >= 3 ? s.c : 1 };
    for (int k = 0; k < 4; k++) {
        off[k] = 0;
        size[k] = ext[k];
    }
    // the axes as ncnn numbers them for each dims (0 first), as w, h, d, c
    static const int axis_of[5][4] = { { 0 }, { 0 }, { 1, 0 }, { 3, 1, 0 }, { 3, 2, 1, 0 } };
    if (n >= 2 && m.crop_mode != CROP_EXPR) {  // (a reference: its shape, or the ints it holds)
        const int *p = nullptr;
        if (m.region[0] == -233) {
            static const int needs[5] = { 0, 4, 5, 6, 8 };
            ncnn_mp_blob_shape_t ref = unpacked(blobs[1]);
            if (ref.dims != 1 || blobs[1].elemsize != 4u * static_cast<size_t>(blobs[1].elempack) || ref.w < needs[s.dims]) {
                *failed = 1;
                return false;
            }
            p = static_cast<const int *>(blobs[1].data);
        }
        ncnn_mp_blob_shape_t ref = unpacked(blobs[1]);
        // offsets w, h, d, c and sizes w, h, d, c as ncnn reads them for each dims
        if (p != nullptr) {
            static const int at[5][8] = { { 0 }, { 0, -1, -1, -1, 3, -1, -1, -1 }, { 0, 1, -1, -1, 3, 4, -1, -1 },
                                          { 0, 1, -1, 2, 3, 4, -1, 5 }, { 0, 1, 2, 3, 4, 5, 6, 7 } };
            for (int k = 0; k < 4; k++) {
                off[k] = at[s.dims][k] >= 0 ? p[at[s.dims][k]] : 0;
                size[k] = at[s.dims][k + 4] >= 0 ? p[at[s.dims][k + 4]] : ext[k];
            }
        } else {
            const int refext[4] = { ref.w, ref.dims >= 2 ? ref.h : 1, ref.dims == 4 ? ref.d : 1, ref.dims >= 3 ? ref.c : 1 };
            for (int k = 0; k < 4; k++) {
                bool used = k == 0 || (k == 1 && s.dims >= 2) || (k == 2 && s.dims == 4) || (k == 3 && s.dims >= 3);
                off[k] = used ? m.region[k] : 0;
                size[k] = !used ? ext[k] : k < 3 ? refext[k] : ref.dims == s.dims ? refext[3] : ext[3];
            }
        }
        return true;
    }
    if (m.crop_mode == CROP_PARAMS) {
        for (int k = 0; k < 4; k++) {
            bool used = k == 0 || (k == 1 && s.dims >= 2) || (k == 2 && s.dims == 4) || (k == 3 && s.dims >= 3);
            if (used) {
                off[k] = m.region[k];
                size[k] = ext[k] - m.region[k] - m.region[8 + k];
                size[k] = m.region[4 + k] != -233 && m.region[4 + k] < size[k] ? m.region[4 + k] : size[k];
            }
        }
        return true;
    }
    int starts[8], ends[8], axes[8], count = 0, n_starts = m.crop_starts, n_ends = m.crop_starts, n_axes = m.crop_axes;
    if (m.crop_mode == CROP_NUMPY) {
        for (int k = 0; k < 4; k++) {
            starts[k] = m.region[k];
            ends[k] = m.region[4 + k];
            axes[k] = m.region[8 + k];
        }
    } else {
        n_starts = expr_eval(expr_at(exprs, 0), blobs, n, starts, 8);
        n_ends = expr_eval(expr_at(exprs, 1), blobs, n, ends, 8);
        n_axes = expr_eval(expr_at(exprs, 2), blobs, n, axes, 8);
        if (n_starts < 0 || n_ends < 0 || n_axes < 0) {
            *failed = 19 + (n_starts < 0 ? 0 : n_ends < 0 ? 1 : 2);
            return false;
        }
    }
    count = n_axes == 0 ? s.dims : n_axes;
    if (count > 4 || n_starts < count || n_ends < count) {
        *failed = m.crop_mode == CROP_EXPR ? 19 : 9;
        return false;
    }
    for (int i = 0; i < count; i++) {
        int axis = n_axes == 0 ? i : axes[i] < 0 ? axes[i] + s.dims : axes[i];
        if (s.dims == 1) {
            axis = 0;  // (ncnn slices w for any axis of a vector)
        }
        if (axis < 0 || axis >= s.dims) {
            continue;  // (ncnn ignores it)
        }
        int k = axis_of[s.dims][axis];
        crop_slice(starts[i], ends[i], ext[k], &off[k], &size[k]);
    }
    return true;
}

bool crop_refuses(const ncnn_mp_more_rule_t &m, const char *exprs, const ncnn::Mat *blobs, int n,
                  const ncnn_mp_blob_shape_t &s, ncnn_mp_shape_refusal_t &r) {
    long long off[4], size[4];
    int failed = 0;
    if (s.dims < 1 || s.dims > 4) {
        return false;
    }
    if (!crop_region(m, exprs, blobs, n, s, off, size, &failed)) {
        refuse(r, NCNN_MP_EXPRESSION, failed, 0, failed == 1 ? 1 : 0, failed == 1 ? unpacked(blobs[1]) : s);
        return true;
    }
    const long long ext[4] = { s.w, s.dims >= 2 ? s.h : 1, s.dims == 4 ? s.d : 1, s.dims >= 3 ? s.c : 1 };
    bool whole = true;  // (a region the input's size every way: ncnn hands the input on, whatever the offsets)
    for (int k = 0; k < 4; k++) {
        whole = whole && size[k] == ext[k];
    }
    for (int k = 0; k < 4 && !whole; k++) {
        if (off[k] < 0 || size[k] < 1 || off[k] + size[k] > ext[k]) {
            refuse(r, NCNN_MP_REGION, to_int(off[k]), to_int(size[k]), to_int(ext[k]), s);
            r.axis = k;
            return true;
        }
    }
    return false;
}

// An Einsum (einsum.cpp) indexes input b by its term's letters, one a dim, each letter's extent
// taken from the last input that has it: every input needs as many dims as its term has
// letters, and a letter the same extent in each. Its trace (ii) reads a square matrix's diagonal.
bool einsum_refuses(const ncnn_mp_more_rule_t &m, const ncnn::Mat *blobs, int n, ncnn_mp_shape_refusal_t &r) {
    ncnn_mp_blob_shape_t s = unpacked(blobs[0]);
    if (m.transposed) {
        return (s.dims != 2 || s.w != s.h) && refuse(r, NCNN_MP_EINSUM, -2, s.dims, 0, s);
    }
    if (m.list_n > NCNN_MP_MORE_LIST) {
        return refuse(r, NCNN_MP_EINSUM, -1, m.list_n, 0, s);
    }
    int extent[16] = { 0 };
    for (int b = 0; b < n && b < m.list_n; b++) {
        ncnn_mp_blob_shape_t e = unpacked(blobs[b]);
        int letters = 0;
        while (letters < 4 && ((m.list[b] >> (8 * letters)) & 0xff) != 0) {
            letters++;
        }
        if (e.dims != letters) {
            return refuse(r, NCNN_MP_EINSUM, letters, e.dims, b, e);
        }
        const int ext[4] = { e.w, e.h, e.d, e.c };
        static const int order[5][4] = { { 0 }, { 0 }, { 1, 0 }, { 3, 1, 0 }, { 3, 2, 1, 0 } };  // dim s -> w h d c
        for (int k = 0; k < letters; k++) {
            int letter = ((m.list[b] >> (8 * k)) & 0xff) - 'i';
            int size = ext[order[letters][k]];
            if (letter < 0 || letter >= 16) {
                return refuse(r, NCNN_MP_EINSUM, letters, e.dims, b, e);  // (ncnn's load refuses it)
            }
            if (extent[letter] != 0 && extent[letter] != size) {
                refuse(r, NCNN_MP_EINSUM, extent[letter], size, b, e);
                r.axis = letter + 1;
                return true;
            }
            extent[letter] = size;
        }
    }
    return false;
}

// A MultiHeadAttention (multiheadattention.cpp and its x86 form) of q, k, v (one input: q is k
// and v; two: k is v), then a mask, then the past key and value: the rows of q, k and v are
// read qdim, kdim and vdim wide, as many value rows as key rows; the mask (added to each head's
// scores) is a row of the keys (past and current) for each query, one channel or one a head;
// the past key and value are copied whole, a head a channel, into caches of a head's width.
bool mha_refuses(const ncnn_mp_more_rule_t &m, const ncnn::Mat *blobs, int n, ncnn_mp_shape_refusal_t &r) {
    int extra = (m.mha_mask ? 1 : 0) + (m.mha_cache ? 2 : 0), qkv = n - extra;
    if (qkv < 1 || qkv > 3) {
        return false;  // (the blob counts are checked first)
    }
    const int qi = 0, ki = qkv >= 2 ? 1 : 0, vi = qkv == 3 ? 2 : ki, at = qkv;
    const int widths[3] = { m.mha_qdim, m.mha_kdim, m.mha_vdim }, which[3] = { qi, ki, vi };
    for (int k = 0; k < 3; k++) {
        ncnn_mp_blob_shape_t x = unpacked(blobs[which[k]]);
        if (x.dims > 2) {
            return refuse(r, NCNN_MP_DIMS, 2, x.dims, which[k], x);
        }
        if (x.w != widths[k]) {
            return refuse(r, NCNN_MP_WIDTH, widths[k], x.w, which[k], x);
        }
    }
    ncnn_mp_blob_shape_t q = unpacked(blobs[qi]), k = unpacked(blobs[ki]), v = unpacked(blobs[vi]);
    int queries = q.dims == 2 ? q.h : 1, current = k.dims == 2 ? k.h : 1, past = 0;
    if ((v.dims == 2 ? v.h : 1) != current) {
        return refuse(r, NCNN_MP_ROWS, current, v.dims == 2 ? v.h : 1, vi, v);
    }
    if (m.mha_cache) {
        int pk = at + (m.mha_mask ? 1 : 0);
        for (int i = 0; i < 2; i++) {
            ncnn_mp_blob_shape_t c = unpacked(blobs[pk + i]);
            if (c.dims == 0 && i == 0) {
                continue;  // (no past key: the first step)
            }
            int rows = c.dims >= 2 ? c.h : 1, heads = c.dims >= 3 ? c.c : 1;
            if (c.dims > 3 || c.w != m.mha_head_dim) {
                return refuse(r, NCNN_MP_WIDTH, m.mha_head_dim, c.dims > 3 ? -1 : c.w, pk + i, c);
            }
            if (heads != m.mha_heads) {
                return refuse(r, NCNN_MP_CHANNELS, m.mha_heads, heads, pk + i, c);
            }
            if (i == 0) {
                past = rows;
            } else if (rows != past) {
                return refuse(r, NCNN_MP_ROWS, past, rows, pk + i, c);
            }
        }
        if (past == 0 && unpacked(blobs[pk + 1]).dims != 0) {
            return refuse(r, NCNN_MP_ROWS, 0, 1, pk + 1, unpacked(blobs[pk + 1]));
        }
    }
    if (m.mha_mask) {
        // (ncnn's key length: past and current for self-attention, the past alone for a cached cross one)
        int keys = past > 0 ? (ki == qi ? past + current : past) : current;
        ncnn_mp_blob_shape_t mask = unpacked(blobs[at]);
        int rows = mask.dims >= 2 ? mask.h : 1, heads = mask.dims >= 3 ? mask.c : 1;
        if (mask.dims > 3 || mask.w != keys) {
            return refuse(r, NCNN_MP_WIDTH, keys, mask.dims > 3 ? -1 : mask.w, at, mask);
        }
        if (rows != queries) {
            return refuse(r, NCNN_MP_ROWS, queries, rows, at, mask);
        }
        if (heads != 1 && heads != m.mha_heads) {
            return refuse(r, NCNN_MP_CHANNELS, m.mha_heads, heads, at, mask);
        }
    }
    return false;
}

// (every byte zero, whichever part of the union a kind uses)
ncnn_mp_more_rule_t none_rule() {
    ncnn_mp_more_rule_t m;
    __builtin_memset(&m, 0, sizeof m);
    return m;
}

enum { DYN_CONV = 0, DYN_DECONV = 1, DYN_GROUPED = 2, DYN_1D = 4 };

// A convolution given its weights (and bias) as inputs (dynamic_weight): the kernel and the
// outputs are the weight blob's extents, and ncnn reads kernel x inputs-per-group values of
// it for every output (per type, where the outputs lie: a Convolution's weight is (kw, kh,
// inputs, outputs), a Deconvolution's (kw, kh, outputs, inputs), the 1D forms one rank less).
ncnn_mp_more_rule_t dynamic_rule(int typeindex, const ncnn::ParamDict &pd) {
    namespace T = ncnn::LayerType;
    ncnn_mp_more_rule_t m = none_rule();
    m.kind = NCNN_MP_MORE_DYNAMIC;
    switch (typeindex) {
        case T::Convolution: m.dynamic = DYN_CONV; break;
        case T::ConvolutionDepthWise: m.dynamic = DYN_CONV | DYN_GROUPED; break;
        case T::Deconvolution: m.dynamic = DYN_DECONV; break;
        case T::DeconvolutionDepthWise: m.dynamic = DYN_DECONV | DYN_GROUPED; break;
        case T::Convolution1D: m.dynamic = DYN_CONV | DYN_1D; break;
        case T::ConvolutionDepthWise1D: m.dynamic = DYN_CONV | DYN_GROUPED | DYN_1D; break;
        case T::Deconvolution1D: m.dynamic = DYN_DECONV | DYN_1D; break;
        default: m.dynamic = DYN_DECONV | DYN_GROUPED | DYN_1D; break;
    }
    m.group = m.dynamic & DYN_GROUPED ? pd.get(7, 1) : 1;
    m.int8 = pd.get(8, 0) != 0;  // (int8 scales for weights that come as an input: ncnn has none to read)
    m.bias = pd.get(5, 0) != 0;
    int left = pd.get(4, 0), right = pd.get(15, left), top = pd.get(14, left), bottom = pd.get(16, top);
    m.dilation_w = pd.get(2, 1);
    m.dilation_h = pd.get(12, m.dilation_w);
    m.pad_w = left < 0 || right < 0 ? -1 : static_cast<int>(capped(static_cast<long long>(left) + right));
    m.pad_h = top < 0 || bottom < 0 ? -1 : static_cast<int>(capped(static_cast<long long>(top) + bottom));
    return m;
}

// Whether a dynamic convolution's inputs fit each other (ncnn_mp_more_refuses).
bool dynamic_refuses(const ncnn_mp_more_rule_t &m, const ncnn::Mat *blobs, int n, ncnn_mp_shape_refusal_t &r) {
    if (n < 2) {
        return false;
    }
    ncnn_mp_blob_shape_t s = unpacked(blobs[0]), w = unpacked(blobs[1]);
    bool one_d = (m.dynamic & DYN_1D) != 0, deconv = (m.dynamic & DYN_DECONV) != 0;
    if (m.int8) {
        return refuse(r, NCNN_MP_DYNAMIC, 0, 0, 1, w);
    }
    if (one_d && s.dims > 2) {
        return refuse(r, NCNN_MP_DIMS, 2, s.dims, 0, s);
    }
    int inch = one_d ? (s.dims == 2 ? s.h : 1) : (s.dims >= 3 ? s.c : 1);
    int kw = w.w, kh = one_d ? 1 : w.h;
    long long outch = one_d ? (deconv ? w.h : w.c) : (deconv ? w.d : w.c);
    if (deconv && (m.dynamic & DYN_GROUPED)) {
        outch = capped(outch * m.group);  // (the weight holds one group's outputs)
    }
    long long total = capped(capped(static_cast<long long>(w.w) * w.h) * capped(static_cast<long long>(w.d) * w.c));
    if (m.group <= 0 || inch % m.group != 0 || outch <= 0 || kw <= 0 || kh <= 0) {
        return refuse(r, NCNN_MP_DYNAMIC, m.group, inch, 1, w);
    }
    long long expected = capped(capped(static_cast<long long>(kw) * kh) * capped(outch * (inch / m.group)));
    if (total != expected) {
        return refuse(r, NCNN_MP_DYNAMIC, m.group, inch, 1, w);
    }
    if (m.bias) {
        if (n < 3) {
            return false;  // (the blob count is checked first)
        }
        ncnn_mp_blob_shape_t b = unpacked(blobs[2]);
        long long values = capped(capped(static_cast<long long>(b.w) * b.h) * capped(static_cast<long long>(b.d) * b.c));
        if (values < outch) {
            return refuse(r, NCNN_MP_VALUES, static_cast<int>(outch), static_cast<int>(values), 2, b);
        }
    }
    if (deconv || m.dilation_w <= 0 || m.dilation_h <= 0) {
        return false;
    }
    // The dilated kernel must fit the padded input (padding to fit: it does).
    long long ew = capped(static_cast<long long>(kw - 1) * m.dilation_w) + 1, eh = capped(static_cast<long long>(kh - 1) * m.dilation_h) + 1;
    bool short_w = m.pad_w >= 0 && s.w + static_cast<long long>(m.pad_w) < ew;
    bool short_h = !one_d && m.pad_h >= 0 && (s.dims >= 2 ? s.h : 1) + static_cast<long long>(m.pad_h) < eh;
    return (short_w || short_h) && refuse(r, NCNN_MP_KERNEL, kw, kh, 0, s);
}

}  // namespace

extern "C" const ncnn_mp_param_array_t *ncnn_mp_param_array(int row) {
    return row >= 0 && row < PARAM_ARRAY_ROWS ? &param_arrays[row] : nullptr;
}

ncnn_mp_more_rule_t ncnn_mp_more_rule(int typeindex, const ncnn::ParamDict &pd) {
    namespace T = ncnn::LayerType;
    ncnn_mp_more_rule_t m = none_rule();
    if ((typeindex == T::Convolution || typeindex == T::ConvolutionDepthWise) && pd.get(19, 0) != 0) {
        return dynamic_rule(typeindex, pd);
    }
    if ((typeindex == T::Deconvolution || typeindex == T::DeconvolutionDepthWise) && pd.get(28, 0) != 0) {
        return dynamic_rule(typeindex, pd);
    }
    int n = pd.get(0, 0), kw = pd.get(1, 0), size = pd.get(6, 0);
    switch (typeindex) {
        case T::Convolution1D:
        case T::ConvolutionDepthWise1D:
        case T::Deconvolution1D:
        case T::DeconvolutionDepthWise1D: {
            bool depthwise = typeindex == T::ConvolutionDepthWise1D || typeindex == T::DeconvolutionDepthWise1D;
            bool deconv = typeindex == T::Deconvolution1D || typeindex == T::DeconvolutionDepthWise1D;
            if (pd.get(deconv ? 28 : 19, 0) != 0) {
                return dynamic_rule(typeindex, pd);  // its weights are an input
            }
            int group = depthwise ? pd.get(7, 1) : 1;
            m.kind = NCNN_MP_MORE_ROWS;  // (w: the length, h: the channels)
            m.expected = group > 0 ? static_cast<int>(capped(static_cast<long long>(quotient(size, n, kw)) * group)) : 0;
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
            m.expected = group > 0 ? static_cast<int>(capped(static_cast<long long>(quotient(size, n, capped(static_cast<long long>(kw) * kh), kd)) * group)) : 0;
            break;
        }
        case T::DeformableConv2D:
            m.kind = NCNN_MP_MORE_CHANNELS;
            m.expected = quotient(size, n, kw, pd.get(11, kw));
            break;
        case T::RNN:
        case T::GRU:
        case T::LSTM: {  // each step's input: the width a weight row holds; the states' shapes
            int dirs = pd.get(2, 0) == 2 ? 2 : 1, gates = typeindex == T::RNN ? 1 : typeindex == T::GRU ? 3 : 4;
            int units = typeindex == T::LSTM ? pd.get(3, n) : n;
            m.kind = NCNN_MP_MORE_WIDTH;
            m.expected = n > 0 ? quotient(pd.get(1, 0), capped(static_cast<long long>(dirs) * gates), units) : 0;
            m.expected = m.expected > 0 ? m.expected : -1;  // (no width fits parameters that do not divide)
            m.group = dirs;
            m.pad_w = n;      // the hidden state's width
            m.pad_h = typeindex == T::LSTM ? units : 0;  // the cell state's (LSTM)
            break;
        }
        case T::Pooling1D:
        case T::Pooling3D: {  // its window and padding as its load_param reads them (pooling1d/3d.cpp)
            bool three = typeindex == T::Pooling3D;
            m.kind = NCNN_MP_MORE_POOL;
            m.expected = three ? 3 : 1;  // (the spatial dims it pools)
            m.pool_any = pd.get(4, 0) != 0 || pd.get(7, 0) != 0;
            m.pool_mode = pd.get(5, 0);
            m.pool_k[0] = pd.get(1, 0);
            m.pool_s[0] = pd.get(2, 1);
            m.pool_p[0] = pd.get(3, 0);
            m.pool_p[1] = pd.get(14, m.pool_p[0]);
            m.pool_k[1] = three ? pd.get(11, m.pool_k[0]) : 1;
            m.pool_k[2] = three ? pd.get(21, m.pool_k[0]) : 1;
            m.pool_s[1] = three ? pd.get(12, m.pool_s[0]) : 1;
            m.pool_s[2] = three ? pd.get(22, m.pool_s[0]) : 1;
            m.pool_p[2] = three ? pd.get(13, m.pool_p[0]) : 0;
            m.pool_p[3] = three ? pd.get(15, m.pool_p[2]) : 0;
            m.pool_p[4] = three ? pd.get(23, m.pool_p[0]) : 0;
            m.pool_p[5] = three ? pd.get(16, m.pool_p[4]) : 0;
            break;
        }
        case T::MultiHeadAttention: {  // q, k and v as wide as their projections; the mask and kv cache
            int heads = pd.get(1, 1);
            m.kind = n > 0 && heads > 0 && n % heads == 0 && quotient(pd.get(2, 0), n) > 0 ? NCNN_MP_MORE_MHA
                                                                                           : NCNN_MP_MORE_NOTHING;
            m.mha_qdim = quotient(pd.get(2, 0), n);
            m.mha_kdim = pd.get(3, n);
            m.mha_vdim = pd.get(4, n);
            m.mha_heads = heads;
            m.mha_head_dim = heads > 0 ? n / heads : 0;
            m.mha_mask = pd.get(5, 0) != 0;
            m.mha_cache = pd.get(7, 0) != 0;
            break;  // (other parameters: ncnn's load refuses them)
        }
        case T::Crop: {
            ncnn::Mat starts = pd.get(9, ncnn::Mat()), ends = pd.get(10, ncnn::Mat()), axes = pd.get(11, ncnn::Mat());
            bool numpy = !starts.empty() && !ends.empty();
            m.kind = NCNN_MP_MORE_CROP;
            m.crop_mode = !pd.get(19, std::string()).empty() && !pd.get(20, std::string()).empty() ? CROP_EXPR
                          : numpy ? CROP_NUMPY : CROP_PARAMS;
            // (offsets w, h, d, c; sizes; offsets from the end: as crop.cpp reads them)
            static const int keys[12] = { 0, 1, 13, 2, 3, 4, 14, 5, 6, 7, 15, 8 };
            for (int k = 0; k < 12; k++) {
                m.region[k] = pd.get(keys[k], 0);
            }
            if (m.crop_mode == CROP_NUMPY) {  // (ncnn's load refuses more than 4, or as many ends as starts)
                m.crop_starts = starts.w < ends.w ? starts.w : ends.w;
                m.crop_starts = m.crop_starts < 4 ? m.crop_starts : 4;
                m.crop_axes = axes.empty() ? 0 : axes.w < 4 ? axes.w : 4;
                for (int k = 0; k < 4; k++) {
                    m.region[k] = k < m.crop_starts ? static_cast<const int *>(starts)[k] : 0;
                    m.region[4 + k] = k < m.crop_starts ? static_cast<const int *>(ends)[k] : 0;
                    m.region[8 + k] = k < m.crop_axes ? static_cast<const int *>(axes)[k] : 0;
                }
            }
            break;
        }
        case T::Einsum: {  // its terms, left of "->" (ncnn's load refuses a malformed equation)
            ncnn::Mat eq = pd.get(0, ncnn::Mat());
            const int *p = eq;
            m.kind = NCNN_MP_MORE_EINSUM;
            m.transposed = eq.w == 2 && p != nullptr && p[0] == 'i' && p[1] == 'i';
            int letters = 0;
            m.list_n = 1;
            for (int i = 0; p != nullptr && i < eq.w && !m.transposed && p[i] != '-'; i++) {
                if (p[i] == ',') {
                    m.list_n++;
                    letters = 0;
                } else if (m.list_n <= NCNN_MP_MORE_LIST && letters < 4) {
                    m.list[m.list_n - 1] |= (p[i] & 0xff) << (8 * letters++);
                }
            }
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
                m.extent = constant_b;  // (the input is A, else B)
            } else if (!constant_a) {  // both inputs: A's K is B's (as MatMul)
                m.kind = NCNN_MP_MORE_GEMM2;
                m.transposed = pd.get(3, 0) != 0;
            }
            // A constant C (6=1) of broadcast type 10=1 (M), 2 (Mx1), 3 (MxN), 4 (1xN), loaded as
            // constantM rows and constantN columns (gemm.cpp), is read over the output's M x N.
            int type_c = pd.get(6, 0) != 0 ? pd.get(10, 0) : 0;
            m.trans_a = pd.get(2, 0);
            m.c_rows = type_c >= 1 && type_c <= 3 ? pd.get(7, 0) : 0;
            m.c_cols = type_c == 3 || type_c == 4 ? pd.get(8, 0) : 0;
            break;
        }
        case T::Eltwise:  // SUM with coefficients: one per input
            if (pd.get(0, 0) == 1) {
                ncnn::Mat coeffs = pd.get(1, ncnn::Mat());
                m.kind = coeffs.empty() ? NCNN_MP_MORE_NOTHING : NCNN_MP_MORE_COEFFS;
                m.expected = coeffs.empty() ? 0 : coeffs.w;
            }
            break;
        case T::MatMul:
            m.kind = NCNN_MP_MORE_MATMUL;
            m.transposed = pd.get(0, 0) != 0;
            break;
        case T::SDPA:
            m.kind = NCNN_MP_MORE_SDPA;
            m.expected = pd.get(5, 0) != 0;  // attn_mask: a fourth input
            m.extent = pd.get(7, 0) != 0;    // kv_cache: past key and value as the next two
            break;
        case T::Proposal:
            m.kind = NCNN_MP_MORE_PROPOSAL;
            break;
        case T::DetectionOutput:
            m.kind = NCNN_MP_MORE_DETECTION;
            m.expected = pd.get(0, 0);  // num_class (-233: mxnet-ssd style, the classes are the confidence's rows)
            // (a negative nms_top_k or keep_top_k resizes a std::vector to it: the process aborts)
            m.extent = pd.get(2, 300) < 0 || pd.get(3, 100) < 0;
            break;
        case T::ShuffleChannel:  // whole groups of channels (x86 divides by channels / group, unchecked)
            m.kind = NCNN_MP_MORE_GROUPS;
            m.expected = pd.get(0, 1);
            break;
        case T::CopyTo: {
            m.kind = NCNN_MP_MORE_COPYTO;
            m.copyto_offsets[0] = pd.get(0, 0);   // w
            m.copyto_offsets[1] = pd.get(1, 0);   // h
            m.copyto_offsets[2] = pd.get(13, 0);  // d
            m.copyto_offsets[3] = pd.get(2, 0);   // c
            ncnn::Mat starts = pd.get(9, ncnn::Mat()), axes = pd.get(11, ncnn::Mat());
            m.starts = starts.empty() ? 0 : starts.w;
            m.axes = axes.empty() ? 0 : axes.w;
            for (int i = 0; i < 4 && i < m.starts; i++) {
                m.start[i] = static_cast<const int *>(starts)[i];
            }
            for (int i = 0; i < 4 && i < m.axes; i++) {
                m.axis[i] = static_cast<const int *>(axes)[i];
            }
            break;
        }
        case T::Quantize:
        case T::Dequantize:
        case T::Requantize:  // scales (and biases) per row or channel, where there is more than one
            m.kind = NCNN_MP_MORE_QUANT;
            m.list_n = typeindex == T::Requantize ? 3 : typeindex == T::Dequantize ? 2 : 1;
            for (int i = 0; i < m.list_n; i++) {
                m.list[i] = pd.get(i, i == 0 || (typeindex == T::Requantize && i == 1) ? 1 : 0);  // (defaults: 1 scale, 0 biases)
            }
            break;
        case T::Interp:  // the output size from its parameters, a reference blob's (5=1), or an expression's (9)
            m.kind = NCNN_MP_MORE_INTERP;
            m.extent = pd.get(5, 0) != 0;
            {
                m.scale_h = pd.get(1, 1.f);
                m.scale_w = pd.get(2, 1.f);
                m.out_h = pd.get(3, 0);
                m.out_w = pd.get(4, 0);
            }
            break;
        case T::Reshape:  // its shape from its parameters or its expression (not batches: ncnn's batch path checks them)
            if (!pd.get(6, std::string()).empty()) {
                int list_size, blobs;
                bool batch;
                m.kind = NCNN_MP_MORE_RESHAPE;
                m.ndim = -1;
                m.transposed = expr_analyze(pd.get(6, std::string()).c_str(), &list_size, &blobs, &batch) != 0 ||
                               blobs > 1 || batch || pd.type(12) != 0 || pd.type(13) != 0;
            } else if (pd.type(12) == 0 && pd.type(13) == 0) {
                m.kind = NCNN_MP_MORE_RESHAPE;
                m.shape[0] = pd.get(0, -233);
                m.shape[1] = pd.get(1, -233);
                m.shape[2] = pd.get(11, -233);
                m.shape[3] = pd.get(2, -233);
                m.ndim = m.shape[0] == -233 ? 0 : m.shape[1] == -233 ? 1 : m.shape[3] == -233 ? 2 : m.shape[2] == -233 ? 3 : 4;
            }
            break;
        case T::RotaryEmbed:  // (the cos and sin tables against the input: no parameter fixes them)
            m.kind = NCNN_MP_MORE_ROTARY;
            break;
        case T::Spectrogram:  // (its parameters as its load_param reads them)
        case T::InverseSpectrogram:
            m.kind = typeindex == T::Spectrogram ? NCNN_MP_MORE_SPECTRO : NCNN_MP_MORE_ISPECTRO;
            m.fft_n = pd.get(0, 0);
            m.fft_power = pd.get(1, 0);
            m.fft_hop = pd.get(2, m.fft_n / 4);
            m.fft_center = pd.get(5, 1);
            m.fft_pad = pd.get(6, 2);
            m.fft_onesided = pd.get(8, 1);
            break;
        case T::Fold: {  // (its parameters as its load_param reads them)
            m.kind = NCNN_MP_MORE_FOLD;
            m.fold_kw = pd.get(1, 0);
            m.fold_kh = pd.get(11, m.fold_kw);
            m.fold_dw = pd.get(2, 1);
            m.fold_dh = pd.get(12, m.fold_dw);
            m.fold_sw = pd.get(3, 1);
            m.fold_sh = pd.get(13, m.fold_sw);
            const int left = pd.get(4, 0), right = pd.get(15, left), top = pd.get(14, left), bottom = pd.get(16, top);
            const int out_w = pd.get(20, 0), out_h = pd.get(21, out_w);
            m.fold_w = to_int(static_cast<long long>(out_w) + left + right);
            m.fold_h = to_int(static_cast<long long>(out_h) + top + bottom);
            break;
        }
        case T::GridSample:
            m.kind = NCNN_MP_MORE_GRID;
            m.transposed = pd.get(3, 0) != 0;  // permute_fusion: the grid's components are its channels
            break;
        case T::Slice: {  // the pieces, as ncnn cuts them, must lie in the input (it copies unbounded)
            ncnn::Mat indices = pd.get(2, ncnn::Mat()), slices = pd.get(0, ncnn::Mat());
            const ncnn::Mat &list = indices.empty() ? slices : indices;
            m.kind = NCNN_MP_MORE_SLICE;
            m.extent = pd.get(1, 0);  // (the axis)
            m.indices = !indices.empty();
            m.list_n = list.empty() ? 0 : list.w;
            for (int i = 0; i < m.list_n && i < NCNN_MP_MORE_LIST; i++) {
                m.list[i] = static_cast<const int *>(list)[i];
            }
            break;
        }
        case T::Scale:  // scales as a second input (size -233): no bias is loaded then, but ncnn adds it
            if (pd.get(0, 0) == -233) {
                m.kind = NCNN_MP_MORE_SCALE2;
                m.expected = pd.get(1, 0) != 0;
            }
            break;
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

char *ncnn_mp_more_exprs(int typeindex, const ncnn::ParamDict &pd) {
    namespace T = ncnn::LayerType;
    static const int crop[3] = { 19, 20, 21 }, interp[1] = { 9 }, reshape[1] = { 6 };
    const int *keys = typeindex == T::Crop ? crop : typeindex == T::Interp ? interp : typeindex == T::Reshape ? reshape : nullptr;
    int count = typeindex == T::Crop ? 3 : 1;
    size_t size = 0;
    bool any = false;
    for (int k = 0; keys != nullptr && k < count; k++) {
        std::string e = pd.get(keys[k], std::string());
        size += e.size() + 1;
        any = any || !e.empty();
    }
    char *exprs = any ? new char[size] : nullptr;
    for (size_t at = 0, k = 0; exprs != nullptr && k < static_cast<size_t>(count); k++) {
        std::string e = pd.get(keys[k], std::string());
        __builtin_memcpy(exprs + at, e.c_str(), e.size());
        exprs[at + e.size()] = '\0';
        at += e.size() + 1;
    }
    return exprs;
}

bool ncnn_mp_more_refuses(const ncnn_mp_more_rule_t &m, const char *exprs, const ncnn::Mat *blobs, int n, int n_top,
                          ncnn_mp_shape_refusal_t &r) {
    if (m.kind == NCNN_MP_MORE_NOTHING || n == 0) {
        return false;
    }
    if (m.kind == NCNN_MP_MORE_DYNAMIC) {
        return dynamic_refuses(m, blobs, n, r);
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
        case NCNN_MP_MORE_WIDTH: {
            if (s.dims > 2) {
                return refuse(r, NCNN_MP_DIMS, 2, s.dims, 0, s);
            }
            if (s.w != m.expected) {
                return refuse(r, NCNN_MP_WIDTH, m.expected, s.w, 0, s);
            }
            // A recurrent layer's states: a row of the hidden (and cell) state per direction.
            for (int i = 1; i < n && m.group > 0; i++) {
                ncnn_mp_blob_shape_t st = unpacked(blobs[i]);
                int width = i == 2 && m.pad_h > 0 ? m.pad_h : m.pad_w;
                if (st.dims > 2 || st.w != width || (st.dims == 2 ? st.h : 1) != m.group) {
                    return refuse(r, NCNN_MP_STATE, width, m.group, i, st);
                }
            }
            return false;
        }
        case NCNN_MP_MORE_POOL:
            return pool_refuses(m, s, r);
        case NCNN_MP_MORE_NORM: {
            long long plane = capped(static_cast<long long>(s.w) * s.h), volume = capped(plane * s.d);
            bool fits = s.w == m.expected || (s.dims >= 3 && plane == m.expected) || (s.dims == 4 && volume == m.expected);
            return !fits && refuse(r, NCNN_MP_NORM, m.expected, s.w, 0, s);
        }
        case NCNN_MP_MORE_GEMM: {
            int k = !m.transposed ? s.w : s.dims == 3 ? s.c : s.h;  // (a vector's h: 1, as ncnn reads it)
            if (k != m.expected) {
                return refuse(r, NCNN_MP_INNER, m.expected, k, 0, s);
            }
            bool a = m.extent != 0;  // (else the input is B: transB is !m.transposed)
            return gemm_c_refuses(m, a ? &s : nullptr, 0, a ? nullptr : &s, 0, !a && !m.transposed, r);
        }
        case NCNN_MP_MORE_GEMM2: {
            if (n < 2) {
                return false;
            }
            ncnn_mp_blob_shape_t b = unpacked(blobs[1]);
            // K as ncnn's Gemm reads it (gemm.cpp, gemm_x86.cpp): A's w, or transposed its h (c for
            // dims 3); B's h (c), or transposed its w. A vector's h is 1: a vector B of width K not
            // transposed is one row (K = 1), and Gemm read K rows of it, past its end.
            int ka = m.trans_a == 0 ? s.w : s.dims == 3 ? s.c : s.h;
            int kb = m.transposed ? b.w : b.dims == 3 ? b.c : b.h;
            if (ka != kb) {
                return refuse(r, NCNN_MP_INNER, ka, kb, 1, b);
            }
            return gemm_c_refuses(m, &s, 0, &b, 1, m.transposed, r);
        }
        case NCNN_MP_MORE_COEFFS:
            return n > m.expected && refuse_array(r, ELTWISE_COEFFS, m.expected, n, 0, s);
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
                return refuse_slice(r, -1, 0, m.extent, s);
            }
            // ncnn's cut, replayed: each piece from where the last ended, none past the end, none
            // empty (ncnn cannot make an empty top: it returned -100, out of memory). With indices,
            // piece i ends at index i (from the end if negative), the last at the end; the count
            // of indices against the tops is arity.cpp's.
            if (n_top > NCNN_MP_MORE_LIST) {
                return refuse_slice(r, -3, 0, n_top, s);
            }
            long long extent = e[axis], at = 0;
            for (int i = 0; i < n_top; i++) {
                if (i >= m.list_n && !(m.indices && i == n_top - 1)) {  // (arity.cpp's count refuses it first)
                    return refuse_slice(r, -2, 0, n_top, s);
                }
                long long piece;
                if (m.indices) {
                    long long index = i == n_top - 1 ? extent : m.list[i] < 0 ? extent + m.list[i] : m.list[i];
                    piece = index - at;
                } else {
                    piece = m.list[i] == -233 ? (extent - at) / (n_top - i) : m.list[i];
                }
                if (piece < 1 || at + piece > extent) {
                    return refuse_slice(r, static_cast<int>(at), to_int(at + piece),
                                        static_cast<int>(extent), s);
                }
                at += piece;
            }
            return false;
        }
        case NCNN_MP_MORE_INTERP: {
            // ncnn's Interp::forward: output_width and output_height where both are given, else
            // the input's w and h (1 and 1 for a vector) times the scales, truncated. A size
            // below 1 (a negative or NaN scale) made ncnn allocate an array of negative length
            // (std::bad_array_new_length on the desktop) or a Mat of a wrapped size. A matrix
            // (dims 2) is resized along w only.
            // With a reference blob (5=1) its w and h; with an expression (9), its one or two values
            // (one: w, and the input's h).
            double w = s.dims == 1 ? 1 : s.w, h = s.dims == 1 ? 1 : s.h, ow, oh;
            const char *expr = expr_at(exprs, 0);
            if (expr != nullptr && *expr != '\0') {
                int size[2], k = expr_eval(expr, blobs, n, size, 2);
                if (k < 1) {
                    return refuse(r, NCNN_MP_EXPRESSION, 9, k, 0, s);
                }
                ow = size[0];
                oh = k == 2 ? size[1] : blobs[0].h;
            } else if (m.extent && n >= 2) {  // (one input: ncnn's one-blob forward sizes by its parameters)
                ow = blobs[1].w;
                oh = blobs[1].h;
            } else if (n != 1) {
                return false;
            } else {
                bool given = m.out_w != 0 && m.out_h != 0;
                ow = given ? m.out_w : w * static_cast<double>(m.scale_w);
                oh = given ? m.out_h : h * static_cast<double>(m.scale_h);
            }
            bool fits = ow >= 1 && ow < NCNN_MP_CAP && (s.dims == 2 || (oh >= 1 && oh < NCNN_MP_CAP));
            // The output's values (a vector's: ow x oh planes, one per element; a matrix's: ow x its
            // h): below 2^28, 1 GiB of float32. Beyond, a 32-bit board's byte counts wrap (from 2^30
            // values), its heap could never hold it, and a board's ncnn, built without exceptions,
            // ends the program where the desktop's throws: refused here on every build, before
            // ncnn allocates.
            double planes = s.dims == 1 ? s.w : s.dims == 2 ? 1 : s.c, rows = s.dims == 2 ? s.h : oh;
            fits = fits && ow * rows * planes < INTERP_MAX_VALUES;
            // (a size as ncnn truncates it; one that is not a number, or past 2^31 either way, as -1)
            return !fits && refuse(r, NCNN_MP_OUTPUT_SIZE, ow > -NCNN_MP_CAP && ow < NCNN_MP_CAP ? static_cast<int>(ow) : -1,
                                   oh > -NCNN_MP_CAP && oh < NCNN_MP_CAP ? static_cast<int>(oh) : -1, 0, s);
        }
        case NCNN_MP_MORE_SPECTRO:
            return spectrogram_refuses(m, s, r);
        case NCNN_MP_MORE_FOLD:
            return fold_refuses(m, s, r);
        case NCNN_MP_MORE_ISPECTRO:
            return inverse_spectrogram_refuses(m, s, r);
        case NCNN_MP_MORE_RESHAPE: {
            if (m.ndim != -1) {
                return reshape_refuses(m, s, r);
            }
            // its shape from its expression (reshape.cpp eval_shape_expr: w, h, (d,) c as listed),
            // resolved as from parameters, of as many dims as ncnn's load counted
            const char *expr = expr_at(exprs, 0);
            int list[5], k = expr_eval(expr != nullptr ? expr : "", blobs, n, list, 5), list_size = 0, blob_count;
            bool batch;
            if (k >= 0 && m.transposed) {
                return false;  // (ncnn's batch path checks the shape it resolves)
            }
            if (k < 1 || k > 4 || expr_analyze(expr, &list_size, &blob_count, &batch) != 0 || list_size != k) {
                return refuse(r, NCNN_MP_EXPRESSION, 6, k, 0, s);
            }
            ncnn_mp_more_rule_t e = m;
            e.ndim = k;
            e.shape[0] = list[0];
            e.shape[1] = k >= 2 ? list[1] : 1;
            e.shape[2] = k == 4 ? list[2] : 1;
            e.shape[3] = k == 3 ? list[2] : k == 4 ? list[3] : 1;
            return reshape_refuses(e, s, r);
        }
        case NCNN_MP_MORE_CROP:
            return crop_refuses(m, exprs, blobs, n, s, r);
        case NCNN_MP_MORE_EINSUM:
            return einsum_refuses(m, blobs, n, r);
        case NCNN_MP_MORE_MHA:
            return mha_refuses(m, blobs, n, r);
        case NCNN_MP_MORE_ROTARY: {
            // x (w embed_dim, h seqlen, c heads), then the cos and sin tables: row i of each is read
            // for every position i < seqlen, embed_dim / 2 values of it, or embed_dim where the cos
            // table is that wide (then both halves have their own: rotaryembed.cpp). ncnn reads
            // them unchecked.
            if (n < 3) {
                return false;
            }
            int half = s.w / 2, rows = s.dims >= 2 ? s.h : 1;
            ncnn_mp_blob_shape_t cos = unpacked(blobs[1]);
            int width = cos.w == s.w ? s.w : half;
            for (int i = 1; i < 3; i++) {
                ncnn_mp_blob_shape_t t = i == 1 ? cos : unpacked(blobs[i]);
                if (t.w < width) {
                    return refuse(r, NCNN_MP_WIDTH, width, t.w, i, t);
                }
                if ((t.dims >= 2 ? t.h : 1) < rows) {
                    return refuse(r, NCNN_MP_ROWS, rows, t.dims >= 2 ? t.h : 1, i, t);
                }
            }
            return false;
        }
        case NCNN_MP_MORE_SCALE2: {
            if (m.expected) {
                return refuse(r, NCNN_MP_SCALE, 0, 0, 0, s);
            }
            if (n < 2) {
                return false;
            }
            ncnn_mp_blob_shape_t sc = unpacked(blobs[1]);
            int along = s.dims == 1 ? s.w : s.dims == 2 ? s.h : s.c;
            return values(sc) < along && refuse(r, NCNN_MP_SCALE, along, static_cast<int>(values(sc)), 1, sc);
        }
        case NCNN_MP_MORE_PROPOSAL: {
            // score (w, h, 2 channels an anchor), bbox (4 an anchor, at least as wide and
            // tall), im_info (h, w, scale). ncnn's Proposal makes 9 anchors (3 ratios, 3 scales,
            // fixed in its constructor).
            const int anchors = 9;
            if (n < 3) {
                return false;
            }
            ncnn_mp_blob_shape_t bbox = unpacked(blobs[1]), info = unpacked(blobs[2]);
            if (s.dims != 3 || s.c < 2 * anchors) {
                return refuse(r, NCNN_MP_CHANNELS, 2 * anchors, s.dims == 3 ? s.c : 1, 0, s);
            }
            if (bbox.dims != 3 || bbox.c < 4 * anchors || bbox.w < s.w || bbox.h < s.h) {
                return refuse(r, NCNN_MP_CHANNELS, 4 * anchors, bbox.dims == 3 ? bbox.c : 1, 1, bbox);
            }
            long long values = capped(capped(static_cast<long long>(info.w) * (info.dims >= 2 ? info.h : 1)) *
                                      (info.dims >= 3 ? info.c : 1));
            return values < 3 && refuse(r, NCNN_MP_VALUES, 3, static_cast<int>(values), 2, info);
        }
        case NCNN_MP_MORE_QUANT: {
            int along = s.dims == 2 ? s.h : s.c;
            for (int i = 0; i < m.list_n && s.dims >= 2; i++) {
                if (m.list[i] > 1 && m.list[i] != along) {
                    return refuse(r, NCNN_MP_CHANNELS, m.list[i], along, 0, s);
                }
            }
            return false;
        }
        case NCNN_MP_MORE_GROUPS: {
            int c = s.dims >= 3 ? s.c : 1;
            return (m.expected <= 0 || c < m.expected || c % m.expected != 0) &&
                   refuse(r, NCNN_MP_GROUPS, m.expected, c, 0, s);
        }
        case NCNN_MP_MORE_DETECTION: {
            // location (4 a prior), confidence (num_class a prior), priorbox (4 a prior in a
            // row; variances in a second row unless mxnet-ssd style, one prior a row)
            if (n < 3) {
                return false;
            }
            ncnn_mp_blob_shape_t conf = unpacked(blobs[1]), prior = unpacked(blobs[2]);
            bool mxnet = m.expected == -233;
            if (m.extent) {
                return refuse(r, NCNN_MP_DETECTION, 1, 0, 2, prior);
            }
            long long priors = mxnet ? (prior.dims >= 2 ? prior.h : 1) : prior.w / 4;
            long long classes = mxnet ? (conf.dims >= 2 ? conf.h : 1) : m.expected;
            if (classes <= 0 || (mxnet ? prior.w < 4 : prior.dims < 2 || prior.h < 2)) {
                return refuse(r, NCNN_MP_DETECTION, 0, 0, 2, prior);
            }
            if (values(s) < capped(priors * 4)) {
                return refuse(r, NCNN_MP_VALUES, static_cast<int>(capped(priors * 4)), static_cast<int>(values(s)), 0, s);
            }
            return values(conf) < capped(priors * classes) &&
                   refuse(r, NCNN_MP_VALUES, static_cast<int>(capped(priors * classes)), static_cast<int>(values(conf)), 1, conf);
        }
        case NCNN_MP_MORE_COPYTO: {
            // src copied into a clone of self at offsets (params, or numpy-style starts and
            // axes resolved against self's shape as ncnn does): it must lie inside self.
            if (n < 2) {
                return false;
            }
            ncnn_mp_blob_shape_t src = unpacked(blobs[1]);
            if (src.dims == s.dims && src.w == s.w && src.h == s.h && src.d == s.d && src.c == s.c) {
                return false;  // (ncnn hands src on as it is)
            }
            int dims = s.dims, ext[4] = { s.w, s.h, s.d, s.c }, off[4] = { m.copyto_offsets[0], m.copyto_offsets[1],
                m.copyto_offsets[2], m.copyto_offsets[3] };
            if (m.starts > 0) {
                int count = m.axes > 0 ? m.axes : dims;
                if (count > 4 || m.starts < count) {
                    return refuse(r, NCNN_MP_COPYTO, 0, 0, 1, src);  // (ncnn reads past starts, or writes past its axes)
                }
                off[0] = off[1] = off[2] = off[3] = 0;
                static const int which[4][4] = { { 0 }, { 1, 0 }, { 3, 1, 0 }, { 3, 2, 1, 0 } };  // axis -> w h d c
                for (int i = 0; i < count; i++) {
                    int axis = m.axes > 0 ? (m.axis[i] < 0 ? m.axis[i] + dims : m.axis[i]) : i;
                    if (axis < 0 || axis >= dims) {
                        continue;  // (ncnn ignores it)
                    }
                    int k = which[dims - 1][axis], start = m.start[i] == -233 ? 0 : m.start[i];
                    off[k] = start >= 0 ? start : ext[k] + start;
                }
            }
            int sext[4] = { src.w, src.h, src.d, src.c };
            bool fits = src.dims == dims;
            for (int k = 0; k < 4 && fits; k++) {
                bool used = k == 0 || (k == 1 && dims >= 2) || (k == 2 && dims == 4) || (k == 3 && dims >= 3);
                fits = !used || (off[k] >= 0 && static_cast<long long>(off[k]) + sext[k] <= ext[k]);
            }
            return !fits && refuse(r, NCNN_MP_COPYTO, 1, 0, 1, src);
        }
        case NCNN_MP_MORE_GRID: {
            // An image (dims 3) is sampled at 2 components a point, a volume (dims 4) at 3.
            // Without permute_fusion a point's components lie along the grid's w; with it,
            // in its channels. ncnn's generic code writes as many offset channels as there
            // are components into a buffer of the grid's channels: it needs that many too.
            if (n < 2) {
                return false;
            }
            if (s.dims != 3 && s.dims != 4) {
                return refuse(r, NCNN_MP_DIMS, 4, s.dims, 0, s);
            }
            ncnn_mp_blob_shape_t g = unpacked(blobs[1]);
            int parts = s.dims - 1;
            // (x86's GridSample takes a point's components as exactly the grid's w, or its
            // channels: anything else it reads and writes past its buffers)
            bool fits = g.dims == s.dims && (m.transposed ? g.c == parts : g.w == parts && g.c >= parts);
            return !fits && refuse(r, NCNN_MP_GRID, parts, s.dims, 1, g);
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
            if (v.h < k.h || vc < kc) {
                return refuse(r, NCNN_MP_MATCH_KV, k.h, v.h, 2, v);
            }
            return sdpa_extras_refuse(m, s, k, v, blobs, n, r);
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
