// SPDX-License-Identifier: MIT
// The C++ seam: what ncnn_mp's C calls in C++, where c_api.h cannot express it. Plain C on
// both sides: the C++ files include no MicroPython header, raise nothing and call nothing
// that can raise, so no nlr jump ever crosses their frames. By role:
//   cxx_load.cpp       loading weights in place, ending pipelines before a reload
//   cxx_graph.cpp      a Net's layers and blobs, and the depth of its graph
//   cxx_allocator.cpp  the counting allocator
//   cxx_arena.cpp      the arena and its memory plan
//   cxx_catch.cpp      ncnn's C++ exceptions caught (the one file built with exceptions)
//   cxx_pixels_int8.cpp  a camera frame's values to an int8 input (Mat.from_pixels_int8)
// (The shape guard, shape_guard.h, is the other C++ part: ncnn's layers wrapped.)
#ifndef NCNN_MP_CXX_SEAM_H
#define NCNN_MP_CXX_SEAM_H

#include <stddef.h>
#include <ncnn/c_api.h>

// Whether this build's ncnn throws and the seam catches (the desktop's: micropython.mk), or
// neither (the boards: ncnn built without exceptions).
#ifndef NCNN_MP_CXX_CATCHES
#define NCNN_MP_CXX_CATCHES 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

// ---- Called from C++: the bounded reader (datareader.c) ----

struct _ncnn_mp_reader_t;

// The bounded reader's two ways of handing ncnn model bytes (datareader.c): a copy, or
// a pointer into the buffer (size bytes at the reader's position, if it has them).
size_t ncnn_mp_reader_read(struct _ncnn_mp_reader_t *r, void *buf, size_t size);
size_t ncnn_mp_reader_reference(struct _ncnn_mp_reader_t *r, size_t size, const void **buf);

// ---- Loading (cxx_load.cpp) ----

// ncnn's Net::load_model through `r` with its reference() implemented: ncnn keeps raw
// fp32, int8 and bias/scale data where they lie instead of copying them (c_api.h's
// DataReader has only scan/read, so ncnn_net_load_model_datareader always copies).
// ncnn's return code.
int ncnn_mp_cxx_load_model_in_place(ncnn_net_t net, struct _ncnn_mp_reader_t *r);

// Ends the pipelines of the net's layers (each layer's destroy_pipeline, as Net::clear does
// before it deletes them) so that a model load may create them again: ncnn's load_model
// calls create_pipeline on every layer it loads without ending the last one first, which
// leaks what each layer made (an x86 InnerProduct's Flatten, a Convolution's activation).
void ncnn_mp_cxx_destroy_pipelines(ncnn_net_t net);
// After a param load: frees the layers' shape hint lists that hold no hints (cxx_load.cpp).
void ncnn_mp_cxx_drop_empty_shape_hints(ncnn_net_t net);

// ---- Extraction (cxx_extract.cpp) ----

// ncnn's Extractor::extract of blob `index` (by `name` where given, NCNN_STRING) into a new
// Mat *out (also on failure, as c_api.h's does): with int8, an int8 output as its int8 values
// (unpacked), not cast to floats. ncnn's return code.
int ncnn_mp_cxx_extract(ncnn_extractor_t ex, int index, const char *name, bool int8, ncnn_mat_t *out);

// ---- A Net's graph (cxx_graph.cpp) ----

// What a Net's layers and blobs are (Net.layers(), Net.blobs()), read while the caller has
// the net entered (ncnn_mp_net_use): pointers into ncnn's own vectors, valid until then.
// Names are NULL without NCNN_STRING; an empty one is "" (SIMPLESTL's c_str() is NULL).
typedef struct {
    const char *name, *type;
    int typeindex;
    int n_bottoms, n_tops;
    const int *bottoms, *tops;
} ncnn_mp_layer_info_t;
typedef struct {
    const char *name;
    int producer, consumer;  // layer indexes, -1: none
    int dims, w, h, d, c;    // the param's shape hint (dims 0: none)
} ncnn_mp_blob_info_t;
int ncnn_mp_cxx_layer_count(ncnn_net_t net);
void ncnn_mp_cxx_layer_info(ncnn_net_t net, int i, ncnn_mp_layer_info_t *out);
int ncnn_mp_cxx_blob_count(ncnn_net_t net);
void ncnn_mp_cxx_blob_info(ncnn_net_t net, int i, ncnn_mp_blob_info_t *out);

// How deep ncnn's forward_layer recursion can go in an extract of any blob of the net (the
// layers nested at once: a layer, the producer of a bottom it lacks, and so on), replayed
// over the graph; the longest chain of layers where that replay would not bound it.
int ncnn_mp_cxx_graph_depth(ncnn_net_t net);

// ---- The counting allocator (cxx_allocator.cpp) ----

// An ncnn allocator (for Option's blob/workspace allocators) that takes every block from
// ncnn's own fastMalloc and counts the bytes in use and their peak: what a net needs for one
// extract, measured on any port. Destroyed with ncnn_allocator_destroy. NULL: out of memory.
ncnn_allocator_t ncnn_mp_cxx_counting_allocator_create(void);
// The bytes it has handed out and not had back, and the most at once (since the last reset).
void ncnn_mp_cxx_counting_allocator_stats(ncnn_allocator_t a, size_t *in_use, size_t *peak);
void ncnn_mp_cxx_counting_allocator_reset_peak(ncnn_allocator_t a);

// ---- The arena (cxx_arena.cpp) ----

// An ncnn allocator handing out blocks of one block taken from the C heap now
// (Allocator(arena=...)): the `len` bytes of `plan` (NULL: none) laid out as planned, then
// `spare` bytes for first fit. in_place: the plan is read where it lies for as long as the
// allocator lives (the caller keeps it unchanged), else copied. NULL if the plan is not one
// (ncnn_mp_cxx_arena_plan_check) or the block cannot be had.
ncnn_allocator_t ncnn_mp_cxx_arena_allocator_create(size_t spare, const unsigned char *plan, size_t len,
                                                    bool in_place);
// A plan's block count and planned size (*planned), or -1 if `plan` is not a plan.
int ncnn_mp_cxx_arena_plan_check(const unsigned char *plan, size_t len, size_t *planned);
typedef struct {
    size_t in_use;     // bytes of the blocks in use (first fit's headers included)
    size_t peak;       // the most of the arena ever used: what an extract needed of it
    size_t size;       // the planned part and the spare part
    size_t unplanned;  // blocks that did not follow the plan (first fit), since made or reset
    int recorded;      // blocks recorded for plan() since made or reset
} ncnn_mp_arena_stats_t;
void ncnn_mp_cxx_arena_allocator_stats(ncnn_allocator_t a, ncnn_mp_arena_stats_t *stats);
// The peak starts again from what is in use; the recording starts again (empty).
void ncnn_mp_cxx_arena_allocator_reset_peak(ncnn_allocator_t a);
// The recorded blocks laid out as a plan, into out (cap bytes); its length in bytes (more
// than cap: out was too small, nothing written), -1 if nothing (or more than a plan holds)
// was recorded, -2 out of memory.
long ncnn_mp_cxx_arena_allocator_plan(ncnn_allocator_t a, unsigned char *out, size_t cap);

// ---- A frame to int8 (cxx_pixels_int8.cpp) ----

// One channel's way from a frame's value to the int8 an int8 first layer reads: ncnn's
// substract_mean_normalize with this mean and norm (NULL: none), then its quantize with scale;
// and its result for each whole value 0..255 (a frame's values where it is not resized).
typedef struct {
    float norm, add, scale;
    int op;  // 1: mean, 2: norm, 3: both (0: neither)
    signed char table[256];
} ncnn_mp_int8_step_t;
void ncnn_mp_int8_step(ncnn_mp_int8_step_t *s, const float *mean, const float *norm, float scale);
// n values (from_pixels_resize's, exactly) of one row to int8, the same float operations in
// the same order as that float path, so the same bytes.
void ncnn_mp_pixels_int8_row(const float *v, int n, const ncnn_mp_int8_step_t *s, signed char *out);

// ---- Exceptions (cxx_catch.cpp) ----

// fn(arg), which calls into ncnn, with ncnn's C++ exceptions caught: 0, or what was caught.
// C frames between the seam and ncnn need unwind tables (micropython.mk). Every entry into
// ncnn that can throw goes through it: the loads, extract, a standalone layer's steps, the
// pixel helpers and drawing; and every call ncnn makes into a layer the shape guard wraps
// (shape_guard.cpp), which turns what it caught into that layer's refusal (NCNN_MP_THREW).
// ncnn_mp_raise_caught (checks.c) raises it.
#define NCNN_MP_CAUGHT_BAD_ALLOC (-1)  // std::bad_alloc: out of memory (MemoryError)
#define NCNN_MP_CAUGHT_OTHER (-2)      // any other exception (RuntimeError)
#define NCNN_MP_CAUGHT_BAD_SIZE (-3)   // std::bad_array_new_length or std::length_error: a size
                                       // ncnn computed from parameters or an input is negative
                                       // or beyond any array (ValueError)
#if NCNN_MP_CXX_CATCHES
int ncnn_mp_cxx_catch(void (*fn)(void *arg), void *arg);
#else
// (Where ncnn is built without exceptions (the boards) nothing is thrown: the call goes straight
// through, inlined, so that the seam adds no frame to the stack of a board's extract, where the
// collector scans for stale words.)
static inline int ncnn_mp_cxx_catch(void (*fn)(void *arg), void *arg) {
    fn(arg);
    return 0;
}
#endif

#ifdef __cplusplus
}

namespace ncnn {
class Layer;
}
// A layer's name and type, as ncnn_mp_cxx_layer_info gives them (cxx_graph.cpp): NULL without
// NCNN_STRING, "" for an empty one. (The shape guard's refusals record them.)
void ncnn_mp_cxx_layer_names(const ncnn::Layer &layer, const char **name, const char **type);
#endif

#endif // NCNN_MP_CXX_SEAM_H
