// The shape guard (shape_guard.cpp): ncnn trusts that the blobs reaching a layer fit its
// weights. A Convolution given more channels than its weights were made for reads past
// them, an InnerProduct given a bigger image too, a Concat of misfitting blobs writes past
// its output. ncnn_mp's Nets wrap the layers whose parameters fix their input's shape and
// refuse a forward that does not fit, before the layer runs. Plain C on both sides, as
// net_cxx.h: nothing here raises.
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
} ncnn_mp_shape_rule_t;

typedef struct {
    int dims, w, h, d, c;  // elempack unpacked: what the user would see in a Mat
} ncnn_mp_blob_shape_t;

typedef struct {
    int layer;  // the refused layer's index in the net, -1: none refused
    ncnn_mp_shape_rule_t rule;
    int expected, got, axis;
    int input;                      // which of the layer's inputs
    ncnn_mp_blob_shape_t shape, first;  // that input's shape; the first input's (NCNN_MP_MATCH)
} ncnn_mp_shape_refusal_t;

// Makes `net` (just made by ncnn_net_create) one whose loads wrap the layers the guard
// knows. 0, or -1 out of memory (the net is left as it was).
int ncnn_mp_cxx_guard_net(ncnn_net_t net);

// Wraps a standalone layer just made by ncnn_layer_create_by_type / _by_typeindex, if the
// guard knows its type (Layer.forward refuses then as an extract does).
void ncnn_mp_cxx_guard_layer(ncnn_layer_t layer);

// Given by ncnn_mp's C side: keeps a refusal for the calling thread's call in progress
// (an extract, a standalone Layer.forward), which raises it once ncnn has returned. Called
// without the GIL.
void ncnn_mp_shape_refused(const ncnn_mp_shape_refusal_t *refusal);

#ifdef __cplusplus
}
#endif

#endif // NCNN_MP_SHAPE_GUARD_H
