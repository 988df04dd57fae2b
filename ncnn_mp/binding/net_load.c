// SPDX-License-Identifier: MIT
// Loading a Net's params and weights (Net.load_param*, load_model*): where the bytes come
// from, what copy=False demands of a buffer, ncnn's loader run with its exceptions caught,
// where the net stands after, and the errors.
#include <stdio.h>
#include <string.h>
#if defined(__GLIBC__) || defined(_NEWLIB_VERSION) || defined(__PICOLIBC__)
#include <malloc.h>
#endif
#ifdef ESP_PLATFORM
#include "esp_heap_caps.h"
#endif

#include "py/gc.h"
#include "py/objarray.h"
#include "ncnn_mp.h"
#include "cxx_seam.h"

static const char *const ncnn_mp_load_what[] = { "param", "binary param", "model weights" };

// Bytes of C heap in use (where ncnn's weights and blobs live), or -1 where the C library
// cannot say (a sanitizer's or valgrind's malloc reports nothing).
static long ncnn_mp_c_heap_in_use(void) {
    long used = -1;
    #if defined(ESP_PLATFORM)
    used = (long)(heap_caps_get_total_size(MALLOC_CAP_DEFAULT) - heap_caps_get_free_size(MALLOC_CAP_DEFAULT));
    #elif defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    // One thread at a time: where another malloc replaces glibc's (AddressSanitizer's), this
    // can be glibc's first malloc call, which initialises its malloc without a lock and hands
    // its main arena to the calling thread; two threads' first loads at once both took it, and
    // the second to exit aborted ("malloc assertion failure in __malloc_arena_thread_freeres")
    // or one read it half made (tests/test_first_load_threads.py: 1 run in 7 before the lock).
    mp_uint_t l = ncnn_mp_lock();
    struct mallinfo2 mi = mallinfo2();
    ncnn_mp_unlock(l);
    used = (long)(mi.uordblks + mi.hblkhd);
    #elif defined(_NEWLIB_VERSION) || defined(__PICOLIBC__)
    struct mallinfo mi = mallinfo();
    used = (long)mi.uordblks;
    #endif
    return used > 0 ? used : -1;
}

// Runs ncnn's loader of `kind` from a path or from a DataReader.
static int ncnn_mp_net_run_loader(ncnn_net_t net, ncnn_mp_load_kind_t kind, const char *path, ncnn_datareader_t dr) {
    #if NCNN_STDIO
    if (path) {
        #if NCNN_STRING
        if (kind == NCNN_MP_LOAD_PARAM) {
            return ncnn_net_load_param(net, path);
        }
        #endif
        return kind == NCNN_MP_LOAD_PARAM_BIN ? ncnn_net_load_param_bin(net, path) : ncnn_net_load_model(net, path);
    }
    #endif
    #if NCNN_STRING
    if (kind == NCNN_MP_LOAD_PARAM) {
        return ncnn_net_load_param_datareader(net, dr);
    }
    #endif
    return kind == NCNN_MP_LOAD_PARAM_BIN ? ncnn_net_load_param_bin_datareader(net, dr)
        : ncnn_net_load_model_datareader(net, dr);
}

// Where the board keeps what never changes (flash, a ROMFS image), for copy=False: a board's
// glue overrides it (ci/mcu/board.c); the Unix port has none (bytes are taken by their type).
MP_WEAK bool ncnn_mp_port_read_only(const void *p, size_t len) {
    (void)p;
    (void)len;
    return false;
}

#if MICROPY_GC_SPLIT_HEAP
#define NCNN_MP_NEXT_AREA(area) ((area)->next)
#else
#define NCNN_MP_NEXT_AREA(area) ((mp_state_mem_area_t *)NULL)
#endif

// Whether the read-only buffer `src` lies in memory that neither moves nor is freed while
// the Net keeps src: a bytes object's data (its own, or constants in flash); memory the port
// calls read-only; or a GC heap allocation that src's pointer keeps alive (the collector
// follows a pointer into an allocation's first block only, so a view into the middle of
// another object does not keep it). Not a Mat's storage, nor any other C heap memory.
static bool ncnn_mp_memory_stays(mp_obj_t src, const mp_buffer_info_t *info) {
    if (mp_obj_is_type(src, &mp_type_bytes) || ncnn_mp_port_read_only(info->buf, info->len)) {
        return true;
    }
    // (a memoryview's slice keeps the pointer it was made over, and an offset from it)
    const void *held = mp_obj_is_type(src, &mp_type_memoryview) ? ((mp_obj_array_t *)MP_OBJ_TO_PTR(src))->items : info->buf;
    size_t block = gc_nbytes(held);
    if (block == 0) {
        return false;
    }
    for (mp_state_mem_area_t *area = &MP_STATE_MEM(area); area; area = NCNN_MP_NEXT_AREA(area)) {
        uintptr_t pool = (uintptr_t)area->gc_pool_start, h = (uintptr_t)held, p = (uintptr_t)info->buf;
        if (h >= pool && h < (uintptr_t)area->gc_pool_end) {
            uintptr_t start = pool + (h - pool) / MICROPY_BYTES_PER_GC_BLOCK * MICROPY_BYTES_PER_GC_BLOCK;
            return p >= start && p - start <= block && info->len <= block - (p - start);
        }
    }
    return false;
}

// One load, as the C++ seam calls it (cxx_seam.h: what ncnn throws is caught there).
typedef struct {
    ncnn_net_t net;
    ncnn_mp_load_kind_t kind;
    const char *path;
    ncnn_datareader_t dr;
    ncnn_mp_reader_t *in_place;  // load_model(copy=False): the reader ncnn keeps weights through
    int ret;
} ncnn_mp_load_call_t;

static void ncnn_mp_net_load_call(void *arg) {
    ncnn_mp_load_call_t *c = arg;
    c->ret = c->in_place ? ncnn_mp_cxx_load_model_in_place(c->net, c->in_place)
        : ncnn_mp_net_run_loader(c->net, c->kind, c->path, c->dr);
}

// The checks a buffer passes before ncnn may keep weights in it (load_model(copy=False)).
static void ncnn_mp_net_check_in_place(mp_obj_t src, const mp_buffer_info_t *info, const char *where) {
    if (mp_obj_cast_to_native_base(src, MP_OBJ_FROM_PTR(&ncnn_mp_type_Mat)) != MP_OBJ_NULL) {
        // Even over bytes: create() or clone_from() give it new storage and let the old go.
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("copy=False cannot keep weights in a Mat (its storage can be replaced): pass the bytes or memoryview it lies over"));
    }
    mp_buffer_info_t rw;
    if (mp_get_buffer(src, &rw, MP_BUFFER_WRITE)) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: copy=False needs a read-only buffer (bytes, a view of bytes or flash, a ROMFS file): a writable %s can change under the net (copy=True)"), where, mp_obj_get_type_str(src));
    }
    if (ncnn_mp_lent_holding(info->buf) != NULL) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("copy=False cannot keep weights in a blob ncnn lent a callback (it dies when the callback returns): copy=True"));
    }
    if ((uintptr_t)info->buf % 4 != 0) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: copy=False needs 4-byte aligned weights (ncnn reads floats where they lie), this buffer is %u bytes past (ncnn_mp_tools.romfs_pack; copy=True)"), where, (unsigned)((uintptr_t)info->buf % 4));
    }
    if (!ncnn_mp_memory_stays(src, info)) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: copy=False needs weights in memory that stays while the net lives (bytes, a view of bytes or flash, a ROMFS file), not in this %s: copy=True"),
            where, mp_obj_get_type_str(src));
    }
}

// Whether the param just loaded gives a layer an int8 blob it cannot read (shape_guard.h:
// ncnn's layers would read it as floats, past its end); if so, what, in `buf`. Raises
// nothing (the load's caller holds ncnn's callbacks open).
static bool ncnn_mp_net_int8_misfit(ncnn_mp_net_native_t *n, char *buf, size_t len) {
    int layer, blob, why;
    if (!ncnn_mp_cxx_int8_misfit(n->handle, &layer, &blob, &why)) {
        return false;
    }
    ncnn_mp_layer_info_t l;
    ncnn_mp_blob_info_t b;
    ncnn_mp_cxx_layer_info(n->handle, layer, &l);
    ncnn_mp_cxx_blob_info(n->handle, blob, &b);
    const char *what = why == 3 ? "has int8 scales (params 20, 21, 22) but is given the float blob"
        : why == 2 ? "takes int8 and float blobs together, int8 from"
        : "cannot read the int8 blob";
    #if NCNN_STRING
    snprintf(buf, len, "layer '%s' (%s) %s '%s'", l.name, l.type, what, b.name);
    #else
    snprintf(buf, len, "layer %d (type %d) %s %d", layer, l.typeindex, what, blob);
    #endif
    return true;
}

// Where a load reads from: a path ncnn opens itself, a DataReader (its use held for the
// load), or a buffer read through a bounded reader of the load's own (ncnn_net_load_*_memory
// would read past its end).
typedef struct {
    const char *path;
    ncnn_datareader_t dr;
    ncnn_mp_reader_t *counted;  // the reader that counts what ncnn read, or NULL (a path)
    mp_buffer_info_t buffer;    // a buffer's bytes, if is_buffer
    ncnn_mp_use_t reader_use;   // a DataReader's, if is_reader
    ncnn_mp_reader_t own;       // a buffer's reader, open from ncnn_mp_load_source_open to close
    bool is_reader, is_buffer;
} ncnn_mp_load_source_t;

// Takes `src` apart (a path, a DataReader or a buffer) and checks it; may raise, before
// anything is linked where ncnn's callbacks find it (the DataReader's use is an nlr
// callback: it ends if this or a later check raises).
static void ncnn_mp_load_source_take(ncnn_mp_load_source_t *s, mp_obj_t src, bool in_place, const char *where) {
    memset(s, 0, sizeof(*s));
    s->is_reader = !mp_obj_is_str(src) && mp_obj_cast_to_native_base(src, MP_OBJ_FROM_PTR(&ncnn_mp_type_DataReader)) != MP_OBJ_NULL;
    if (in_place && (mp_obj_is_str(src) || s->is_reader)) {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: copy=False needs the weights in a buffer (bytes, a memoryview, a ROMFS file), not %s"), where, mp_obj_get_type_str(src));
    }
    if (mp_obj_is_str(src)) {
        s->path = mp_obj_str_get_str(src);
        #if NCNN_STDIO
        // ncnn reports a missing file and a malformed one alike (-1): look first.
        FILE *fp = fopen(s->path, "rb");
        if (fp == NULL) {
            mp_raise_msg_varg(&mp_type_OSError, NCNN_MP_FORMAT("%s: cannot open '%s'"), where, s->path);
        }
        fclose(fp);
        #else
        ncnn_mp_raise_not_built(where, NCNN_MP_TEXT("NCNN_STDIO (load from a buffer or DataReader instead)"));
        #endif
    } else if (s->is_reader) {
        ncnn_mp_use_begin(&s->reader_use, 1);  // (pushed after the net's use: ended before it)
        s->dr = ncnn_mp_reader_use(&s->reader_use, src, &s->counted, where);
    } else if (mp_get_buffer(src, &s->buffer, MP_BUFFER_READ)) {
        s->is_buffer = true;
    } else {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: expected a path (str), a DataReader or a buffer, not %s"),
            where, mp_obj_get_type_str(src));
    }
}

// Opens a buffer's reader (linked where ncnn's callbacks find it: nothing may raise from
// here until ncnn_mp_load_source_close) and zeroes what the counting reader counts.
static void ncnn_mp_load_source_open(ncnn_mp_load_source_t *s) {
    if (s->is_buffer) {
        ncnn_mp_reader_open(&s->own, s->buffer.buf, s->buffer.len, false);
        s->dr = s->own.handle;
        s->counted = &s->own;
    }
    if (s->counted) {
        memset(&s->counted->counts, 0, sizeof(s->counted->counts));
    }
}

static void ncnn_mp_load_source_close(ncnn_mp_load_source_t *s) {
    if (s->is_buffer) {
        ncnn_mp_reader_close(&s->own);
    }
    if (s->is_reader) {
        ncnn_mp_use_end(&s->reader_use);
    }
}

// How a load ended, for ncnn_mp_net_load_raise.
typedef struct {
    int ret;        // ncnn's return code, or NCNN_MP_INT8_MISFIT
    int caught;     // what ncnn threw (cxx_seam.h: a param's layer list too large, a layer's step), or 0
    bool ran_out;   // a weight read asked for more than the .bin had
    char misfit[192];
} ncnn_mp_load_outcome_t;

// Runs ncnn's loader (weights kept in place through the source's reader if in_place).
static void ncnn_mp_net_load_run(ncnn_mp_net_native_t *n, ncnn_mp_load_source_t *s, ncnn_mp_load_kind_t kind,
    bool in_place, ncnn_mp_load_outcome_t *out) {
    if (kind == NCNN_MP_LOAD_MODEL && n->pipelines) {
        ncnn_mp_cxx_destroy_pipelines(n->handle);  // (ncnn would create them over the old ones)
    }
    ncnn_mp_load_call_t load = { n->handle, kind, s->path, s->dr, in_place ? &s->own : NULL, 0 };
    out->caught = ncnn_mp_cxx_catch(ncnn_mp_net_load_call, &load);
    out->ret = out->caught ? NCNN_MP_OUT_OF_MEMORY : load.ret;
    // ncnn ignores some short reads (an int8 layer's scales): any one fails the load.
    out->ran_out = kind == NCNN_MP_LOAD_MODEL && s->counted != NULL && s->counted->counts.short_read;
}

// Where the net stands after a weights load, and what the load did with the .bin
// (Net.weights_info). ok: ncnn and the custom layers succeeded.
static void ncnn_mp_net_loaded_model(ncnn_mp_net_native_t *n, const ncnn_mp_load_source_t *s, bool ok, long heap_before) {
    bool has_layers = n->stage == NCNN_MP_NET_PARAMS || n->stage == NCNN_MP_NET_READY;
    n->pipelines = has_layers;
    n->stage = ok ? NCNN_MP_NET_READY : has_layers ? NCNN_MP_NET_PARAMS : NCNN_MP_NET_PARAMS_FAILED;
    long heap_after = ncnn_mp_c_heap_in_use();
    n->weights_heap = heap_before >= 0 && heap_after >= 0 ? heap_after - heap_before : -1;
    const ncnn_mp_reader_t *c = s->counted;
    n->weights_counted = c != NULL;
    if (c) {
        n->weights = c->counts;
        n->weights.unused = c->zeros || c->python ? 0 : c->len - c->offset;
        n->weights.stream = c->python;
    }
}

// Where the net stands after a param load: its layers made (even a failed load may have
// prepared some with the option), their int8 blobs checked, its depth measured.
static void ncnn_mp_net_loaded_params(ncnn_mp_net_native_t *n, ncnn_mp_load_kind_t kind, ncnn_mp_load_outcome_t *out) {
    if (out->ret == 0 && ncnn_mp_net_int8_misfit(n, out->misfit, sizeof(out->misfit))) {
        out->ret = NCNN_MP_INT8_MISFIT;
    }
    n->stage = out->ret == 0 ? NCNN_MP_NET_PARAMS : NCNN_MP_NET_PARAMS_FAILED;
    n->named = kind == NCNN_MP_LOAD_PARAM && out->ret == 0;
    n->depth = ncnn_mp_cxx_graph_depth(n->handle);
    n->pipelines = false;
    ncnn_mp_net_release_weights(n);  // ncnn destroyed the old layers first
}

// What a failed load raises. Where a layer the guard wraps failed it (the refusal r: the guard's
// own, what the layer threw, or a failure code its load_param or load_model returned), the
// message names that layer; on the boards, whose nets wrap only the layers the guard checks,
// another layer's failure is the load's alone.
static void ncnn_mp_net_load_raise(ncnn_mp_net_native_t *n, const ncnn_mp_load_outcome_t *out,
    const ncnn_mp_shape_refusal_t *r, ncnn_mp_load_kind_t kind, const char *where) {
    (void)ncnn_mp_load_what;  // (no error reporting: unused)
    if (!out->ran_out && !out->caught && out->ret == 0) {
        return;
    }
    const char *label = NULL;
    vstr_t text;
    if (r->rule != NCNN_MP_FITS) {
        vstr_init(&text, 32);
        ncnn_mp_layer_label(&text, n->handle, r->layer, r);
        label = vstr_null_terminated_str(&text);
    }
    if (out->ran_out) {
        if (label) {
            mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: the weights ran out at %s: the .bin is shorter than the model needs (truncated, or another model's)"),
                where, label);
        }
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: the weights ran out: the .bin is shorter than the model needs (truncated, or another model's)"), where);
    }
    if (out->caught) {
        ncnn_mp_raise_caught(where, label, out->caught);
    }
    if (out->ret == NCNN_MP_INT8_MISFIT) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: %s (docs/models.md: int8 between layers)"), where, out->misfit);
    }
    if (r->rule == NCNN_MP_LOAD_FAILED) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: %s could not load its %s (error %d; ncnn's log on stderr says why)"),
            where, label, r->expected ? "weights" : "parameters", r->got);
    }
    if (label) {  // (the guard's refusal of the layer's weights)
        ncnn_mp_raise_shape_refused(where, "model", label, r);
    }
    mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: ncnn could not load the %s (error %d; ncnn's log on stderr says why)"),
        where, ncnn_mp_load_what[kind], out->ret);
}

void ncnn_mp_net_load(ncnn_mp_net_native_t *n, mp_obj_t src, ncnn_mp_load_kind_t kind, bool in_place, const char *where) {
    ncnn_mp_stack_check(0, where);
    #if !NCNN_STRING
    if (kind == NCNN_MP_LOAD_PARAM) {
        ncnn_mp_raise_not_built(where, NCNN_MP_TEXT("NCNN_STRING (use load_param_bin)"));
    }
    #endif
    ncnn_mp_load_source_t s;
    ncnn_mp_load_source_take(&s, src, in_place, where);
    if (in_place) {
        ncnn_mp_net_check_in_place(src, &s.buffer, where);
        ncnn_mp_net_keep_weights(n, src);
    }
    ncnn_mp_load_source_open(&s);
    ncnn_mp_net_native_drop_extractors(n);
    // Nothing raises from here to ncnn_mp_call_end: custom layers' exceptions wait there.
    long heap_before = kind == NCNN_MP_LOAD_MODEL ? ncnn_mp_c_heap_in_use() : -1;
    ncnn_mp_call_t call;
    ncnn_mp_call_begin(&call);
    // The buffer the weights stay in: the trampoline gives it to the ModelBin it lends a
    // custom layer's load_model, whose load() then hands out Mats over it.
    call.weights = in_place ? src : MP_OBJ_NULL;
    ncnn_mp_load_outcome_t out;
    ncnn_mp_net_load_run(n, &s, kind, in_place, &out);
    if (call.refusal.rule == NCNN_MP_THREW) {
        out.caught = call.refusal.expected;  // (a layer's step threw: GuardLayer::caught)
    }
    ncnn_mp_shape_refusal_t refusal = call.refusal;  // (the call record goes at ncnn_mp_call_end)
    if (kind == NCNN_MP_LOAD_MODEL) {
        ncnn_mp_net_loaded_model(n, &s, out.ret == 0 && !out.ran_out && call.error == MP_OBJ_NULL, heap_before);
    } else {
        ncnn_mp_net_loaded_params(n, kind, &out);
        ncnn_mp_cxx_drop_empty_shape_hints(n->handle);  // (before the weights load: its peak the lower)
    }
    ncnn_mp_load_source_close(&s);
    ncnn_mp_call_end(&call);
    ncnn_mp_net_load_raise(n, &out, &refusal, kind, where);
}
