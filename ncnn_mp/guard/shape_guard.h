// SPDX-License-Identifier: MIT
// The shape guard (shape_guard.cpp): ncnn trusts that the blobs reaching a layer fit its
// weights. A Convolution given more channels than its weights were made for reads past
// them, an InnerProduct given a bigger image too, a Concat of misfitting blobs writes past
// its output. ncnn_mp's Nets wrap the layers whose parameters fix their input's shape and
// refuse a forward that does not fit, before the layer runs. Plain C on both sides, as
// cxx_seam.h: nothing here raises.
#ifndef NCNN_MP_SHAPE_GUARD_H
#define NCNN_MP_SHAPE_GUARD_H

#include <ncnn/c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

// What a refused layer returns to ncnn (which hands it back from extract unchanged).
#define NCNN_MP_SHAPE_REFUSED (-0x5348)

typedef enum {
    NCNN_MP_FITS = 0,
    NCNN_MP_CHANNELS,  // expected/got: channels (a convolution's, or one parameter each)
    NCNN_MP_VALUES,    // expected/got: the elements an InnerProduct's weights take
    NCNN_MP_MATCH,     // the inputs must match outside `axis` (-1: everywhere)
    NCNN_MP_KERNEL,    // expected x got: a convolution's kernel, wider or taller than its padded input
    NCNN_MP_IMAGE,     // a convolution's input must be an image (dims 2 or 3); got: its dims
    NCNN_MP_BROADCAST, // a BinaryOp's two inputs: each extent equal, or 1 in one of them
    NCNN_MP_BOTTOMS,   // expected..axis: the inputs the layer reads (axis -1: no bound; got: given)
    NCNN_MP_TOPS,      // expected..axis: the outputs it writes (got: asked for)
    NCNN_MP_INT8_WEIGHTS,  // int8 weights in a layer without int8 scales (param 8): ncnn reads none
    NCNN_MP_WEIGHTS_SHORT, // a weight (scales, bias) ran out: ncnn would read an empty Mat
    NCNN_MP_DIMS,      // expected: the dims the layer takes (2: at most 2; 4: 3 or 4); got: the input's
    NCNN_MP_KERNEL1D,  // expected: a 1D convolution's dilated kernel less its padding; got: the length
    NCNN_MP_WIDTH,     // expected/got: the width each row must have
    NCNN_MP_NORM,      // expected: affine_size, which w, w*h (dims 3, 4) or w*h*d (dims 4) must be
    NCNN_MP_INNER,     // expected/got: the inner size (K) of a product, the constant operand's and the input's
    NCNN_MP_HEADS,     // SDPA: expected the query's heads, got the key's (which must divide them)
    NCNN_MP_MATCH_KV,  // SDPA: the value's rows (got) and heads must cover the key's (expected)
    NCNN_MP_TABLE,     // Embed: its table holds fewer than num_output * input_dim values
    NCNN_MP_SLICES,    // Slice: a piece from axis to expected, outside the extent along its axis (got) or empty;
                       // axis -1: an axis outside the input (got, as given); -2: more pieces asked for (got)
                       // than it has; -3: more pieces (got) than the guard follows (NCNN_MP_MORE_LIST)
    NCNN_MP_GRID,      // GridSample: expected, the components a point has; got, the input's dims
    NCNN_MP_COPYTO,    // CopyTo: expected 1, the source does not lie inside; 0, its starts/axes do not fit
    NCNN_MP_DYNAMIC,   // a convolution's weight input does not fit its input (expected: groups, got: channels)
    NCNN_MP_DETECTION, // DetectionOutput: its priorbox input is not one (expected 0), or a top_k is negative (1)
    NCNN_MP_GROUPS,    // expected: the groups the channels (got) must divide into
    NCNN_MP_STATE,     // a recurrent layer's state input: expected its width, got the rows (directions)
    NCNN_MP_SCALE,     // a Scale of two inputs: expected the scales needed, got those given (0, 0: a bias asked for)
    NCNN_MP_PADDING,   // axis (0 w, 1 h, 2 d, 3 c) padded by expected before and got after: one is negative or past 2^30
    NCNN_MP_REFLECT,   // a reflected pad (input) along axis as deep as the input's extent there (got) or deeper
    NCNN_MP_OUTPUT_SIZE,    // Interp: expected x got, the output's w x h it computes from its parameters (each must be 1 or
                            // more, the output's values fewer than 2^28)
    NCNN_MP_RESHAPE,   // Reshape: the shape it resolves (first) holds got values, not the input's expected, or
                       // has an extent below 1 (axis 1: a -1 resolved through a division by zero)
    NCNN_MP_ROWS,      // expected: the rows input (input) must have (at least, or as many), got: those it has
    NCNN_MP_ARRAY,     // a parameter array of axis's row of the table (ncnn_mp_param_array) holds expected
                       // elements, and the forward reads got of them
    NCNN_MP_REGION,    // Crop: along axis (0 w, 1 h, 2 d, 3 c) the region starts at expected and is got long,
                       // which must lie in the input (its extent there: input) and be 1 or more
    NCNN_MP_EXPRESSION, // a shape expression (param expected: Crop 19-21, Interp 9, Reshape 6) ncnn cannot
                       // evaluate to a list it reads safely (malformed, overflowing, or too short: got)
    NCNN_MP_EINSUM,    // Einsum: axis 0, input `input` has got dims where its term has expected letters (expected
                       // -1: more than NCNN_MP_MORE_LIST terms; -2: its trace, ii, takes a square matrix); axis
                       // > 0: letter 'i' + axis - 1 is got long there and expected long in an input before
    NCNN_MP_SPECTRUM,  // Spectrogram, InverseSpectrogram: the output of expected values (-1: past 2^31) it computes
                       // from got frames must come to 1 or more and fewer than 2^28
    NCNN_MP_FOLD,      // Fold: expected x got, the output once padded; axis -1: the dilated kernel does not fit it (or
                       // a kernel, stride or dilation below 1, or 2^28 values or more), else the row length input 0 needs
    NCNN_MP_PADDED_SIZE, // Pooling1D, Pooling3D: its input padded (tail and SAME pads as ncnn makes them) comes to
                       // expected values (capped at 2^31 - 1), 2^28 or more
    NCNN_MP_THREW,     // not a misfit: the layer threw a C++ exception; expected: what the seam caught (cxx_seam.h)
    NCNN_MP_LOAD_FAILED, // not a misfit: the layer's own load_param (expected 0) or load_model (1) returned got
} ncnn_mp_shape_rule_t;

// How many blobs a layer's forward reads (bottoms) and writes (tops): arity.cpp.
// max -1: no bound; max_tops -2: no more than the bottoms. All 0: no count is safe.
typedef struct {
    int min_bottoms, max_bottoms, min_tops, max_tops;
} ncnn_mp_arity_t;

typedef struct {
    int dims, w, h, d, c;  // elempack unpacked: what the user would see in a Mat
} ncnn_mp_blob_shape_t;

typedef struct {
    int layer;  // the refused layer's index in the net, -1: none refused
    ncnn_mp_shape_rule_t rule;
    int expected, got, axis;
    int input;                      // which of the layer's inputs
    ncnn_mp_blob_shape_t shape, first;  // that input's shape; the first input's (NCNN_MP_MATCH)
    // The layer's type and, with NCNN_STRING, its name and type as the net had them (cut short,
    // NUL-terminated): what names it once ncnn has dropped the net's layers (a load_param that
    // failed) and the index no longer finds it.
    int typeindex;
    char name[64], type[32];
} ncnn_mp_shape_refusal_t;

// Makes `net` (just made by ncnn_net_create) one whose loads wrap the layers the guard
// knows. 0, or -1 out of memory (the net is left as it was).
int ncnn_mp_cxx_guard_net(ncnn_net_t net);

// Wraps a standalone layer just made by ncnn_layer_create_by_type / _by_typeindex (any
// type: the blob counts of every forward are checked; the shapes where the guard knows
// the type). Layer.forward refuses then as an extract does.
void ncnn_mp_cxx_guard_layer(ncnn_layer_t layer);

// A standalone layer's (wrapped: ncnn_mp_cxx_guard_layer) blob counts, by the parameters it
// loaded; false if n bottoms and n_top tops do not fit them (*out says what does).
bool ncnn_mp_cxx_arity_fits(ncnn_layer_t layer, int n, int n_top, ncnn_mp_arity_t *out);

// After a param load: the first layer given an int8 blob it cannot read (*why 1), int8
// and float blobs together (*why 2), or an int8 BinaryOp given only float blobs (*why 3), as
// its index and that int8 (for 3: float) blob's; false if none.
// Which layers read int8 (docs/kernels.md "int8 between layers"): int8 Convolution,
// ConvolutionDepthWise and InnerProduct, Split, a user's custom layer; with NCNN_MP_KERNELS
// also Concat, Slice, ShuffleChannel, ReLU without a slope, max Pooling, Crop, Interp,
// Reshape and Permute, which pass it on (a Reshape or Permute with its input's scale, param
// 20, and a Sigmoid with it read int8 into floats), and BinaryOp add and mul with int8 scales.
bool ncnn_mp_cxx_int8_misfit(ncnn_net_t net, int *layer, int *blob, int *why);

// Whether blob `blob` may be given as an int8 Mat (a camera frame quantized straight to the
// first layer's int8 input: Mat.from_pixels_int8): OK when every layer reading it (through
// Splits) is an int8 Convolution, ConvolutionDepthWise or InnerProduct, all with one input
// scale, *scale; FLOAT when one reads float (*layer: it, or -1 when nothing reads the
// blob); SCALES when two readers' scales differ (*layer: the second); MISSING when the net
// has no such blob. The blob by `name` where that is not NULL (NCNN_STRING), else `blob`.
enum { NCNN_MP_INT8_INPUT_OK, NCNN_MP_INT8_INPUT_FLOAT, NCNN_MP_INT8_INPUT_SCALES, NCNN_MP_INT8_INPUT_MISSING };
int ncnn_mp_cxx_int8_input(ncnn_net_t net, int blob, const char *name, float *scale, int *layer);

// The scale of an int8 network output (quantize_int8 --int8-outputs: the layer that writes
// it carries it as param 21), 0 for a float one, -1 for no such blob (by `name` if given).
float ncnn_mp_cxx_int8_output(ncnn_net_t net, int blob, const char *name);
// Padding, one rule (shape_padding.cpp): the pads ncnn applies to an input of w x h (dims 1:
// sideways only) for a layer's padding as its parameters give it, and whether they leave
// what the layer reads. Every layer that pads asks it: the guard for ncnn's Convolution,
// ConvolutionDepthWise, Pooling and Padding, ncnn_mp's kernels (kernels.h), Mat.copy_make_border.
typedef enum {
    NCNN_MP_PAD_GIVEN,  // the pads as given (a Padding layer, copy_make_border)
    NCNN_MP_PAD_CONV,   // a convolution's: as given where one is positive, else -233 / -234 (SAME)
    NCNN_MP_PAD_POOL,   // a Pooling's, by its pad_mode: 0 up to a whole stride, 1 as given, 2 / 3 SAME
} ncnn_mp_pad_kind_t;
typedef struct {
    ncnn_mp_pad_kind_t kind;
    int pool_mode;              // POOL: pad_mode
    int border;                 // 0 constant, 1 replicate, 2 reflect (which reads the input pad deep)
    int kernel_w, kernel_h;     // the (dilated) window the layer slides, 0: none
    int stride_w, stride_h;
    int top, bottom, left, right;  // as the parameters give them
} ncnn_mp_padding_t;
typedef struct {
    int top, bottom, left, right;
} ncnn_mp_pads_t;
typedef enum {
    NCNN_MP_PAD_FITS,
    NCNN_MP_PAD_OUT_OF_RANGE,  // a pad is negative (ncnn's padding writes past its output: it copies
                               // every input row whole) or past 2^30: *out says which
    NCNN_MP_PAD_REFLECT,       // a reflected pad as deep as the input or deeper (it would read outside)
    NCNN_MP_PAD_WINDOW,        // the window does not fit the padded input
} ncnn_mp_pad_verdict_t;
ncnn_mp_pad_verdict_t ncnn_mp_padding(const ncnn_mp_padding_t *p, int w, int h, bool vector, ncnn_mp_pads_t *out);

// The parameter arrays the guard checks whole (shape_rules.cpp's table, one row each): the
// type's name, the array's, and what it must cover. NULL past the last row.
typedef struct {
    const char *type, *array, *covers;
} ncnn_mp_param_array_t;
const ncnn_mp_param_array_t *ncnn_mp_param_array(int row);

// Given by ncnn_mp's C side: keeps a refusal for the calling thread's call in progress
// (an extract, a standalone Layer.forward), which raises it once ncnn has returned. Called
// without the GIL.
void ncnn_mp_shape_refused(const ncnn_mp_shape_refusal_t *refusal);

// Given by ncnn_mp's C side (calls.c): the hook an extract was given (Extractor.extract's
// hook=), which a guarded layer of a net calls before it runs: whether any call in progress
// has one (no: nothing more to ask), and the call itself: 0 to run the layer, nonzero when
// the hook raised (its exception waits for extract; the layer returns NCNN_MP_HOOK_RAISED).
// index: the layer's in the net, count: the net's layers; name and type NULL without NCNN_STRING.
bool ncnn_mp_hooks_wanted(void);
int ncnn_mp_layer_hook(int index, int count, const char *name, const char *type);
#define NCNN_MP_HOOK_RAISED (-0x484b)

#ifdef __cplusplus
}

namespace ncnn {
class Layer;
class ParamDict;
class Mat;
}
ncnn_mp_arity_t ncnn_mp_arity_of(const ncnn::Layer &layer, const ncnn::ParamDict &pd);

// What a wrapped layer decides and ncnn reads on its wrapper (how to call it, what it packs
// and stores), copied onto the wrapper: the guard's and kernel_pass.cpp's.
void ncnn_mp_copy_flags(ncnn::Layer &to, const ncnn::Layer &from);
// Frees a layer's shape hint lists if they hold no hints (cxx_load.cpp).
void ncnn_mp_drop_empty_hints(ncnn::Layer &layer);
bool ncnn_mp_arity_fits(const ncnn_mp_arity_t &a, int bottoms, int tops);

// The rules of shape_rules.cpp: read from a layer's parameters as ncnn loads them, checked
// against its inputs before each forward (true: refused, r filled).
enum ncnn_mp_more_kind_t {
    NCNN_MP_MORE_NOTHING, NCNN_MP_MORE_ROWS, NCNN_MP_MORE_VOLUME, NCNN_MP_MORE_CHANNELS, NCNN_MP_MORE_AXIS,
    NCNN_MP_MORE_WIDTH, NCNN_MP_MORE_NORM, NCNN_MP_MORE_GEMM, NCNN_MP_MORE_MATMUL, NCNN_MP_MORE_SDPA,
    NCNN_MP_MORE_SLICE, NCNN_MP_MORE_GRID, NCNN_MP_MORE_PROPOSAL, NCNN_MP_MORE_COPYTO, NCNN_MP_MORE_DYNAMIC,
    NCNN_MP_MORE_DETECTION, NCNN_MP_MORE_GROUPS, NCNN_MP_MORE_POOL, NCNN_MP_MORE_SCALE2,
    NCNN_MP_MORE_QUANT, NCNN_MP_MORE_GEMM2, NCNN_MP_MORE_INTERP, NCNN_MP_MORE_COEFFS,
    NCNN_MP_MORE_RESHAPE, NCNN_MP_MORE_ROTARY, NCNN_MP_MORE_CROP, NCNN_MP_MORE_EINSUM, NCNN_MP_MORE_MHA,
    NCNN_MP_MORE_SPECTRO, NCNN_MP_MORE_ISPECTRO, NCNN_MP_MORE_FOLD,
};
#define NCNN_MP_MORE_LIST 16  // a Slice's pieces the guard follows (more: refused)
struct ncnn_mp_more_rule_t {
    ncnn_mp_more_kind_t kind;
    int expected;
    int extent;       // ROWS: the dilated kernel less the padding (0: fits any length); SLICE: the axis
    bool transposed;  // GEMM: K along h (or c), not w; MATMUL, GEMM2: B transposed (GEMM2: group, A's)
    union {  // (one kind's data at a time: a guarded layer on a board keeps one of these)
        struct {  // SLICE: its slices (or, `indices`, its cut points), the first NCNN_MP_MORE_LIST of list_n;
                  // QUANT: the sizes of its per-channel scales and biases; EINSUM: its terms, each up to 4
                  // letters a byte each from the lowest (transposed: the trace, ii)
            int list[NCNN_MP_MORE_LIST], list_n;
            bool indices;
        };
        struct {  // COPYTO: the offsets (w, h, d, c), or numpy-style starts along axes (up to 4 each kept)
            int copyto_offsets[4];
            int starts, axes, start[4], axis[4];
        };
        struct {
            // DYNAMIC: which convolution (shape_rules.cpp), its groups, bias, dilation and padding
            // (-1: padded to fit). WIDTH (recurrent layers): group, the directions; pad_w, pad_h:
            // the hidden and cell states' widths.
            int dynamic, group, dilation_w, dilation_h, pad_w, pad_h;
            int window[3];
            bool bias, int8;
        };
        struct {  // GEMM, GEMM2: A transposed; a constant C's rows and columns where it has them (0: none, or
                  // broadcast over them)
            int trans_a, c_rows, c_cols;
        };
        struct {  // RESHAPE: the shape its parameters give (w, h, d, c: 0 the input's, -1 the rest), its dims
                  // (-1: from its expression; transposed: ncnn's batch path, which checks the shape itself)
            int shape[4], ndim;
        };
        struct {  // CROP: how ncnn finds the region (shape_rules.cpp CropMode); with its parameters the
                  // offsets (w, h, d, c), the sizes, the offsets from the end; numpy-style: starts, ends, axes
            int crop_mode, crop_axes, crop_starts;
            int region[12];
        };
        struct {  // MHA: the widths of q, k, v rows, its heads and a head's width; a mask; a kv cache
            int mha_qdim, mha_kdim, mha_vdim, mha_heads, mha_head_dim;
            bool mha_mask, mha_cache;
        };
        struct {  // SPECTRO, ISPECTRO: n_fft, hoplen, center, pad_type, power (ISPECTRO: returns), onesided
            int fft_n, fft_hop, fft_center, fft_pad, fft_power, fft_onesided;
        };
        struct {  // POOL (Pooling1D, Pooling3D): kernel, stride (w, h, d), pads (left, right, top, bottom,
                  // front, behind), pad_mode; pool_any: global or adaptive (no window)
            int pool_k[3], pool_s[3], pool_p[6], pool_mode;
            bool pool_any;
        };
        struct {  // FOLD: kernel, dilation, stride (w, h), the output once padded (output_w/h and the pads)
            int fold_kw, fold_kh, fold_dw, fold_dh, fold_sw, fold_sh, fold_w, fold_h;
        };
        struct {  // INTERP: the output size its parameters give (0: from the scales), and its scales (extent 1:
                  // from a reference blob, dynamic_target_size; an expression: the layer's exprs)
            int out_w, out_h;
            float scale_w, scale_h;
        };
    };
};
ncnn_mp_more_rule_t ncnn_mp_more_rule(int typeindex, const ncnn::ParamDict &pd);
// A layer's shape expressions (Crop's starts, ends and axes: params 19 to 21; Interp's size: 9;
// Reshape's shape: 6), each NUL-terminated one after another in one new[] block the caller
// deletes, or NULL where it has none (most layers: nothing kept).
char *ncnn_mp_more_exprs(int typeindex, const ncnn::ParamDict &pd);
bool ncnn_mp_more_refuses(const ncnn_mp_more_rule_t &m, const char *exprs, const ncnn::Mat *blobs, int n, int n_top,
                          ncnn_mp_shape_refusal_t &r);
bool ncnn_mp_embed_table_short(const ncnn::ParamDict &pd);
#endif

#endif // NCNN_MP_SHAPE_GUARD_H
