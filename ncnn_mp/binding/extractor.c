// SPDX-License-Identifier: MIT
// Extractor: one inference session on a Net (ncnn_extractor_*).
#include <stdlib.h>
#include <string.h>

#include "py/gc.h"
#include "ncnn_mp.h"
#include "cxx_seam.h"

typedef struct _ncnn_mp_extractor_obj_t {
    mp_obj_base_t base;
    ncnn_mp_extractor_native_t *native;  // owned: freed in __del__
    mp_obj_t net;     // the Net object (its custom layers stay alive)
    // The Mats given to input(), which ncnn points at: a GC array { count, key0, mat0,
    // key1, mat1, ... } (count a small int; a key a blob name or index), or NULL. Not a
    // dict: that is two more allocations per Extractor (extractor.c, ncnn_mp_inputs_*).
    mp_obj_t *inputs;
} ncnn_mp_extractor_obj_t;

// The inputs: see ncnn_mp_extractor_obj_t. A GC array holds them (not the C record):
// results keep the Extractor object, and so its inputs, alive after close().
static size_t ncnn_mp_inputs_count(const mp_obj_t *inputs) {
    return inputs ? (size_t)MP_OBJ_SMALL_INT_VALUE(inputs[0]) : 0;
}

// The slot of `key`'s Mat (keys compare as dict keys do), or NULL.
static mp_obj_t *ncnn_mp_inputs_find(mp_obj_t *inputs, mp_obj_t key) {
    size_t n = ncnn_mp_inputs_count(inputs);
    for (size_t i = 0; i < n; i++) {
        if (inputs[1 + 2 * i] == key || mp_obj_equal(inputs[1 + 2 * i], key)) {
            return &inputs[2 + 2 * i];
        }
    }
    return NULL;
}

// Net.create_extractor: the checks, ncnn's Extractor, its references to the net and the
// net's allocators, all under one lock (a load, clear or close in another thread enters
// the net alone under it, and may swap the option's allocators then).
mp_obj_t ncnn_mp_extractor_new(mp_obj_t net_in, ncnn_mp_net_obj_t *net) {
    const char *where = "Net.create_extractor";
    ncnn_mp_extractor_obj_t *self = mp_obj_malloc_with_finaliser(ncnn_mp_extractor_obj_t, &ncnn_mp_type_Extractor);
    self->native = NULL;
    self->net = net_in;
    self->inputs = NULL;
    ncnn_mp_extractor_native_t *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        ncnn_mp_raise_text(&mp_type_MemoryError, where, NCNN_MP_TEXT("out of memory"));
    }
    mp_uint_t l = ncnn_mp_lock();
    ncnn_mp_net_native_t *n = net->native;
    // users < 0: a load, clear or close is under way (the stage says nothing meanwhile).
    enum { MADE, CLOSED, BUSY, NOT_READY } refused = n == NULL ? CLOSED : n->users < 0 ? BUSY
        : n->stage != NCNN_MP_NET_READY ? NOT_READY : MADE;
    if (refused == MADE) {
        e->net = n;
        n->refs++;
        // ncnn's Extractor copies the net's option, allocators included: it holds them from
        // now on, whatever the net is given later.
        ncnn_mp_allocator_set_share(e->allocators, n->allocators);
        e->handle = ncnn_extractor_create(n->handle);  // memory only: no callback
        e->next = n->extractors;
        n->extractors = e;
        self->native = e;
    }
    ncnn_mp_unlock(l);
    if (refused != MADE) {
        self->net = MP_OBJ_NULL;  // the unused object keeps nothing alive (a stale word may find it)
        free(e);
        if (refused == CLOSED) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("the Net was closed"));
        }
        if (refused == BUSY) {
            ncnn_mp_net_raise_busy(where);
        }
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("no weights loaded since the last load_param or clear (load_model failed or was not called; a weightless net loads DataReader(zeros=True))"));
    }
    return MP_OBJ_FROM_PTR(self);
}

// An Extractor is used by one method at a time, in one thread: `running` from use to
// done (or to the method raising: an nlr jump callback). That also keeps its custom
// layers from calling back into the Extractor that runs them, and its Net from being
// loaded, cleared or closed meanwhile (the net is entered). extract() links its call
// (where its custom layers' exceptions wait) under the same locks: one lock to start,
// one to end.
typedef struct {
    nlr_jump_callback_node_t done;  // first: the callback gets its address
    ncnn_mp_extractor_native_t *native;
    ncnn_mp_call_t *call;           // linked from use to done, or NULL
} ncnn_mp_extractor_use_t;

static void ncnn_mp_extractor_release(void *use) {
    ncnn_mp_extractor_use_t *u = use;
    ncnn_mp_extractor_native_t *e = u->native;
    mp_uint_t l = ncnn_mp_lock();
    if (u->call) {
        ncnn_mp_call_unlink(u->call);
    }
    ncnn_mp_net_exit(e->net);
    e->running = false;
    ncnn_mp_unlock(l);
}

// Why an Extractor cannot be used now, and the exception that says so.
typedef enum {
    NCNN_MP_EX_OK, NCNN_MP_EX_CLOSED, NCNN_MP_EX_RUNNING, NCNN_MP_EX_BUSY, NCNN_MP_EX_STALE
} ncnn_mp_extractor_refusal_t;

static NORETURN void ncnn_mp_extractor_refuse(ncnn_mp_extractor_refusal_t why, const char *where) {
    switch (why) {
        case NCNN_MP_EX_CLOSED:
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("the Extractor was closed"));
        case NCNN_MP_EX_RUNNING:
            mp_raise_msg_varg(&mp_type_RuntimeError, NCNN_MP_FORMAT("%s: this Extractor is in use (by one of its custom layers, or in another thread)"), where);
        case NCNN_MP_EX_BUSY:
            ncnn_mp_net_raise_busy(where);
        default:
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("the Net was cleared or loaded again since this Extractor was made (create a new one)"));
    }
}

// (Under the lock.) Why the Extractor cannot be used now (it or its net in use, closed,
// its net loaded again since), or NCNN_MP_EX_OK: every method asks this one question.
static ncnn_mp_extractor_refusal_t ncnn_mp_extractor_refusal_locked(const ncnn_mp_extractor_native_t *e) {
    return e == NULL ? NCNN_MP_EX_CLOSED : e->running ? NCNN_MP_EX_RUNNING : e->net->users < 0 ? NCNN_MP_EX_BUSY
        : e->handle == NULL ? NCNN_MP_EX_STALE : NCNN_MP_EX_OK;
}

// Marks the Extractor running and enters its net (shared) in one go, under one lock, and
// links `call` (if not NULL) there too.
static ncnn_mp_extractor_obj_t *ncnn_mp_extractor_use(ncnn_mp_extractor_use_t *u, mp_obj_t obj, ncnn_mp_call_t *call,
    const char *where) {
    ncnn_mp_extractor_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_Extractor, where);
    mp_uint_t l = ncnn_mp_lock();  // (close() takes self->native under it)
    ncnn_mp_extractor_native_t *e = self->native;
    ncnn_mp_extractor_refusal_t why = ncnn_mp_extractor_refusal_locked(e);
    if (why == NCNN_MP_EX_OK) {
        ncnn_mp_net_try_enter(e->net, false);  // (enters: the refusal found no one alone inside)
        e->running = true;
        if (call) {
            ncnn_mp_call_link(call);
        }
    }
    ncnn_mp_unlock(l);
    if (why != NCNN_MP_EX_OK) {
        ncnn_mp_extractor_refuse(why, where);
    }
    u->native = e;
    u->call = call;
    nlr_push_jump_callback(&u->done, ncnn_mp_extractor_release);
    return self;
}

static void ncnn_mp_extractor_done(ncnn_mp_extractor_use_t *u) {
    (void)u;
    nlr_pop_jump_callback(true);
}

// Extractor.close() / __del__   ncnn_extractor_destroy; the Net is released once nothing uses it.
static mp_obj_t ncnn_mp_Extractor_close(mp_obj_t self_in) {
    ncnn_mp_extractor_obj_t *self = MP_OBJ_TO_PTR(self_in);
    bool last = false;
    // One lock: the handle goes (a load or clear in another thread destroys it there too),
    // the record leaves the net's list, and the net loses this reference.
    mp_uint_t l = ncnn_mp_lock();
    ncnn_mp_extractor_native_t *e = self->native;
    bool running = e && e->running;
    if (e && !running) {
        self->native = NULL;
        if (e->handle) {
            ncnn_extractor_destroy(e->handle);  // frees memory only: no callback
            e->handle = NULL;
        }
        ncnn_mp_extractor_native_t **link = &e->net->extractors;
        while (*link && *link != e) {
            link = &(*link)->next;
        }
        if (*link) {
            *link = e->next;
        }
        last = --e->net->refs == 0;
    }
    ncnn_mp_unlock(l);
    if (running) {
        ncnn_mp_raise_text(&mp_type_RuntimeError, "Extractor.close", NCNN_MP_TEXT("this Extractor is in use (by one of its custom layers, or in another thread)"));
    }
    if (e) {
        ncnn_mp_net_native_t *net = e->net;
        ncnn_mp_allocator_set_assign(e->allocators, NULL);
        free(e);
        if (last) {
            ncnn_mp_call_t call;  // the last reference to a Net: ncnn runs destroy_pipeline callbacks
            ncnn_mp_call_begin(&call);
            ncnn_mp_net_native_destroy(net);
            ncnn_mp_call_end(&call);
        }
    }
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Extractor_close_obj, Extractor, close, ncnn_mp_Extractor_close);
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Extractor_del_obj, Extractor, __del__, ncnn_mp_Extractor_close);
NCNN_MP_DEFINE_CONTEXT_MANAGER_CLOSING(Extractor, ncnn_mp_Extractor_close);



// Hands one Mat to ncnn under blob `name` (index < 0) or `index`. Raises nothing: Extractor.input
// calls it under the lock.
static int ncnn_mp_extractor_input_at(ncnn_extractor_t ex, int index, const char *name, ncnn_mat_t mat) {
    #if NCNN_STRING
    if (index < 0) {
        return ncnn_extractor_input(ex, name, mat);
    }
    #else
    (void)name;
    #endif
    return ncnn_extractor_input_index(ex, index, mat);
}

// Hands one Mat to ncnn under `key` (a blob name or index).
static int ncnn_mp_extractor_input(ncnn_extractor_t ex, mp_obj_t key, ncnn_mat_t mat, const char *where) {
    int index = ncnn_mp_blob_key(key, where);
    return ncnn_mp_extractor_input_at(ex, index, index < 0 ? mp_obj_str_get_str(key) : NULL, mat);
}

// A copy of an input Mat ncnn does not count references to (see below), or MemoryError.
static ncnn_mat_t ncnn_mp_input_copy(ncnn_mat_t h, const char *where) {
    ncnn_mat_t copy = ncnn_mat_clone(h, NULL);
    if (copy == NULL || ncnn_mat_get_data(copy) == NULL) {
        if (copy) {
            ncnn_mat_destroy(copy);
        }
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: ncnn could not allocate the input's copy"), where);
    }
    return copy;
}

// Why a Mat cannot be an input, or NULL: what input() requires, asked again before every
// re-input (the Mat may have been given new storage since: create, clone_from, release).
static mp_rom_error_text_t ncnn_mp_input_refusal(const ncnn_mp_mat_obj_t *mat) {
    ncnn_mat_t h = mat->handle;
    if (ncnn_mat_get_dims(h) == 0) {
        return NCNN_MP_TEXT("the Mat is empty");
    }
    // ncnn's layers take float32 input and convert inside; other element sizes would be
    // read as floats, past the end of the data. An int8 Mat (one byte an element, unpacked)
    // goes where the layers reading it read int8 (ncnn_mp_int8_fit, asked with the net).
    size_t elemsize = ncnn_mat_get_elemsize(h);
    if (elemsize != 4u * ncnn_mat_get_elempack(h) && !(elemsize == 1u && ncnn_mat_get_elempack(h) == 1)) {
        return NCNN_MP_TEXT("the Mat must hold float32 elements (or int8, for an int8 input)");
    }
    #if NCNN_BATCH
    if (ncnn_mat_get_n(h) > 1) {
        // Not every layer walks the batches of its input: feed them one batch(b) at a time.
        return NCNN_MP_TEXT("a batch Mat (n > 1) is not an input: give one batch(b) at a time");
    }
    #endif
    if (mat->kind != NCNN_MP_MAT_OWNED) {
        return NCNN_MP_TEXT("a Mat lent to a callback, or a view of one, cannot be an input (clone() it)");
    }
    return NULL;
}

// Whether an int8 Mat may be input blob `index` (or `name`): every layer reading it reads
// int8 (ncnn_mp_cxx_int8_input), with the scale the Mat was quantized with where that is
// known. A float32 Mat always fits. (Under the lock, or with the net entered: it reads the
// net's layers.)
typedef struct {
    int code;     // NCNN_MP_INT8_INPUT_*, or NCNN_MP_INT8_INPUT_WRONG_SCALE
    int layer;    // the layer it is about, or -1
    float scale;  // the readers' input scale
} ncnn_mp_int8_fit_t;
#define NCNN_MP_INT8_INPUT_WRONG_SCALE (-1)

static ncnn_mp_int8_fit_t ncnn_mp_int8_fit(ncnn_net_t net, int index, const char *name, const ncnn_mp_mat_obj_t *mat) {
    ncnn_mp_int8_fit_t f = { NCNN_MP_INT8_INPUT_OK, -1, 0.f };
    if (ncnn_mat_get_elemsize(mat->handle) != 1u) {
        return f;
    }
    f.code = ncnn_mp_cxx_int8_input(net, index, name, &f.scale, &f.layer);
    // (the scale as a Python float and back, or typed from a report: within 1e-5)
    float d = mat->int8_scale - f.scale;
    if (f.code == NCNN_MP_INT8_INPUT_OK && mat->int8_scale != 0.f && (d < 0 ? -d : d) > 1e-5f * f.scale) {
        f.code = NCNN_MP_INT8_INPUT_WRONG_SCALE;
    }
    return f;
}

// Raises what ncnn_mp_int8_fit found (no refusal: returns). A blob the net lacks is left to
// ncnn's input(), which says so as for any Mat.
static void ncnn_mp_int8_fit_raise(ncnn_net_t net, const ncnn_mp_int8_fit_t *f, mp_obj_t key, float given,
    const char *where) {
    if (f->code == NCNN_MP_INT8_INPUT_OK || f->code == NCNN_MP_INT8_INPUT_MISSING) {
        return;
    }
    vstr_t blob, layer;
    vstr_init(&blob, 16);
    vstr_init(&layer, 32);
    if (mp_obj_is_str(key)) {
        vstr_printf(&blob, "'%s'", mp_obj_str_get_str(key));
    } else {
        vstr_printf(&blob, "%d", (int)mp_obj_get_int(key));
    }
    ncnn_mp_layer_label(&layer, net, f->layer, NULL);
    const char *b = vstr_null_terminated_str(&blob), *ls = vstr_null_terminated_str(&layer);
    if (f->layer < 0) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: input %s cannot be int8: no layer reads it (give a float32 Mat)"),
            where, b);
    }
    if (f->code == NCNN_MP_INT8_INPUT_WRONG_SCALE) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: the int8 Mat for input %s was quantized with scale %g, but %s reads it with scale %g (Net.input_int8_scale)"),
            where, b, (double)given, ls, (double)f->scale);
    }
    if (f->code == NCNN_MP_INT8_INPUT_SCALES) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: input %s cannot be int8: %s reads it with another scale than the layer before it (give a float32 Mat)"),
            where, b, ls);
    }
    mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: input %s cannot be int8: %s reads it as float32 (give a float32 Mat, or a model quantized to int8 from its first layer)"),
        where, b, ls);
}

// Hands the Mat object `mat` to ncnn under `key`: its storage, or a copy where ncnn does
// not count references to it (ncnn_mp_mat_counted: an in-place layer taking the blob would
// crash, and would write into the caller's buffer; a result could point into it too).
static int ncnn_mp_extractor_input_mat(ncnn_extractor_t ex, ncnn_net_t net, mp_obj_t key, mp_obj_t mat,
    const char *where) {
    ncnn_mat_t h = ncnn_mp_get_mat_handle(mat, where);
    mp_rom_error_text_t why = ncnn_mp_input_refusal(MP_OBJ_TO_PTR(mat));
    ncnn_mp_text_buf_t buf;
    if (why && mp_obj_is_str(key)) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: the Mat given to input('%s') was changed since: %s (give input() a Mat again)"), where, mp_obj_str_get_str(key),
            ncnn_mp_text(why, &buf));
    }
    if (why) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: the Mat given to input(%d) was changed since: %s (give input() a Mat again)"), where, (int)mp_obj_get_int(key),
            ncnn_mp_text(why, &buf));
    }
    int index = ncnn_mp_blob_key(key, where);
    ncnn_mp_mat_obj_t *m = MP_OBJ_TO_PTR(mat);
    ncnn_mp_int8_fit_t fit = ncnn_mp_int8_fit(net, index, index < 0 ? mp_obj_str_get_str(key) : NULL, m);
    ncnn_mp_int8_fit_raise(net, &fit, key, m->int8_scale, where);
    if (ncnn_mp_mat_counted(mat)) {
        return ncnn_mp_extractor_input(ex, key, h, where);
    }
    ncnn_mat_t copy = ncnn_mp_input_copy(h, where);
    int ret = ncnn_mp_extractor_input(ex, key, copy, where);
    ncnn_mat_destroy(copy);  // ncnn holds its own reference
    return ret;
}

// Whether the net has the blob `key`, asked of a throwaway Extractor, whose input() refuses
// a blob the net does not have (ncnn's C API tells neither the blob count nor the names).
// (With the net entered.)
static bool ncnn_mp_net_has_blob(ncnn_mp_net_native_t *net, mp_obj_t key, const char *where) {
    mp_uint_t l = ncnn_mp_lock();  // as every Extractor is made: not during set_option's swap
    ncnn_extractor_t probe = ncnn_extractor_create(net->handle);
    ncnn_mp_unlock(l);
    ncnn_mat_t empty = ncnn_mat_create();
    int ret = ncnn_mp_extractor_input(probe, key, empty, where);
    ncnn_mat_destroy(empty);
    ncnn_extractor_destroy(probe);
    return ret == 0;
}

// Give ncnn the inputs again. With lightmode (ncnn's default) ncnn frees a blob once
// its consumer ran, input blobs included: extracting a blob that was freed on the way
// to an earlier extract re-runs its producers, and re-running an Input layer whose blob
// is gone reads past the end of its (empty) list of bottoms. Before the first extract
// (`all` false) only the inputs ncnn was given a copy of: the copy would miss what was
// written into the Mat's buffer since; ncnn shares every other input's storage.
static void ncnn_mp_extractor_restore_inputs(ncnn_mp_extractor_obj_t *self, ncnn_extractor_t handle, bool all,
    const char *where) {
    size_t n = ncnn_mp_inputs_count(self->inputs);
    for (size_t i = 0; i < n; i++) {
        mp_obj_t mat = self->inputs[2 + 2 * i];
        if (all || !ncnn_mp_mat_counted(mat)) {
            ncnn_mp_extractor_input_mat(handle, self->native->net->handle, self->inputs[1 + 2 * i], mat, where);
        }
    }
}

// Extractor.set_option(opt: Option) -> None
// ncnn's C API ignores ncnn_extractor_set_option, so the extractor is made again
// (ncnn_extractor_create) with the net's option set to `opt` for that moment (under the
// lock: no other Extractor is made meanwhile), and the inputs given so far are handed
// to the new one.
static mp_obj_t ncnn_mp_Extractor_set_option(mp_obj_t self_in, mp_obj_t opt_in) {
    const char *where = "Extractor.set_option";
    ncnn_mp_option_obj_t *o = ncnn_mp_get_option(opt_in, where);
    if (o->kind == NCNN_MP_OPTION_BORROWED) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("cannot use an Option lent to a callback"));
    }
    ncnn_mp_extractor_use_t use;
    ncnn_mp_extractor_obj_t *self = ncnn_mp_extractor_use(&use, self_in, NULL, where);
    ncnn_mp_extractor_native_t *e = self->native;
    ncnn_mp_net_native_t *net = e->net;
    qstr differs = ncnn_mp_option_pipeline_mismatch(o->handle, ncnn_net_get_option(net->handle));
    if (differs != MP_QSTRnull && net->stage != NCNN_MP_NET_EMPTY) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: %q differs from the Net's option, which its layers were prepared with (only num_threads, allocators, use_local_pool_allocator may)"),
            where, differs);
    }
    ncnn_mp_allocator_native_t *const *set = o->kind == NCNN_MP_OPTION_NET_VIEW ? o->net->allocators : o->allocators;
    ncnn_option_t saved = ncnn_option_create();
    ncnn_mp_option_copy_flags(saved, ncnn_net_get_option(net->handle));
    ncnn_mp_allocator_set_apply(saved, net->allocators);
    mp_uint_t l = ncnn_mp_lock();
    ncnn_net_set_option(net->handle, o->handle);
    ncnn_extractor_t fresh = ncnn_extractor_create(net->handle);
    ncnn_net_set_option(net->handle, saved);
    ncnn_extractor_destroy(e->handle);
    e->handle = fresh;
    ncnn_mp_unlock(l);
    ncnn_option_destroy(saved);
    ncnn_mp_allocator_set_assign(e->allocators, set);
    ncnn_mp_extractor_restore_inputs(self, fresh, true, where);
    e->extracted = false;  // (the fresh one has every input)
    ncnn_mp_extractor_done(&use);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Extractor_set_option_obj, Extractor, set_option, ncnn_mp_Extractor_set_option);

// One Extractor.input in progress. The inputs array (ncnn_mp_extractor_obj_t.inputs) is
// looked at and grown outside the lock, then checked again under it: another thread using
// the same Extractor may have changed it meanwhile, and then the input starts over.
typedef struct {
    mp_obj_t key;        // the blob: a name or an index
    int index;           // the index, or -1 for a name
    const char *name;
    mp_obj_t keep;       // what the inputs keep: the native Mat (a Python subclass's instance
                         // is not a Mat object, and the inputs' readers take each for one)
    ncnn_mat_t copy;     // a copy of a Mat whose storage ncnn does not count, or NULL
    mp_obj_t *seen;      // the inputs array as last seen, its count and size in words
    size_t n, words;
    mp_obj_t *grown;     // a larger array, when `seen` has no room for one more
} ncnn_mp_input_t;

// Outside the lock: what the array holds now, a larger one if it is full, and the copy if
// ncnn needs one (ncnn_mp_extractor_input_mat says why). May raise; frees the copy then.
static void ncnn_mp_input_prepare(ncnn_mp_input_t *in, ncnn_mp_extractor_obj_t *self, ncnn_mp_mat_obj_t *mat,
    const char *where) {
    in->seen = self->inputs;
    in->n = ncnn_mp_inputs_count(in->seen);
    in->words = in->seen ? gc_nbytes(in->seen) / sizeof(mp_obj_t) : 0;
    in->grown = NULL;
    size_t need = 1 + 2 * (in->n + 1);
    if (need > in->words && ncnn_mp_inputs_find(in->seen, in->key) == NULL) {
        // (not m_new: on a second pass the copy exists, and a MemoryError would leak it)
        in->grown = m_new_maybe(mp_obj_t, need);
        if (in->grown == NULL) {
            if (in->copy) {
                ncnn_mat_destroy(in->copy);
            }
            m_malloc_fail(sizeof(mp_obj_t) * need);
        }
    }
    if (in->copy == NULL && !ncnn_mp_mat_counted(in->keep)) {
        in->copy = ncnn_mp_input_copy(mat->handle, where);
    }
}

// (Under the lock.) Whether the array is still as prepared; *slot: the key's entry, if any.
static bool ncnn_mp_input_still_fits_locked(const ncnn_mp_input_t *in, ncnn_mp_extractor_obj_t *self, mp_obj_t **slot) {
    if (self->inputs != in->seen || ncnn_mp_inputs_count(in->seen) != in->n) {
        return false;
    }
    *slot = ncnn_mp_inputs_find(in->seen, in->key);
    return *slot != NULL || 1 + 2 * (in->n + 1) <= in->words || in->grown != NULL;  // (else it filled up since)
}

// (Under the lock.) The key's Mat recorded: in its entry, or appended (to the grown array).
static void ncnn_mp_input_store_locked(ncnn_mp_input_t *in, ncnn_mp_extractor_obj_t *self, mp_obj_t *slot) {
    if (slot) {
        *slot = in->keep;
        in->grown = NULL;
        return;
    }
    if (in->grown) {
        if (in->n) {
            memcpy(in->grown + 1, in->seen + 1, 2 * in->n * sizeof(mp_obj_t));
        }
        self->inputs = in->grown;
    }
    self->inputs[1 + 2 * in->n] = in->key;
    self->inputs[2 + 2 * in->n] = in->keep;
    self->inputs[0] = MP_OBJ_NEW_SMALL_INT(in->n + 1);
}

// What was stored waits out a collection in progress in another thread (a grown array
// holds the key and the Mat; see ncnn_mp_gc_settle).
static void ncnn_mp_input_settle(const ncnn_mp_input_t *in) {
    if (in->grown) {
        ncnn_mp_gc_settle(MP_OBJ_FROM_PTR(in->grown));
    } else {
        ncnn_mp_gc_settle(in->keep);
        if (mp_obj_is_obj(in->key)) {
            ncnn_mp_gc_settle(in->key);
        }
    }
}

// Extractor.input(blob: str | int, mat: Mat) -> None   ncnn_extractor_input / _input_index
// ncnn keeps pointing at the Mat's data until extraction: the Extractor keeps the Mat, in
// its inputs array. All of it under one lock, use()'s checks included, instead of marking
// the Extractor running for the call: no other method of this Extractor runs meanwhile
// (they mark it running, or take the lock), and a load or clear cannot destroy its handle
// meanwhile (they do that under the lock, once they entered the net alone: refused here
// while users < 0). ncnn_extractor_input only points the blob at the Mat (no callback, no
// GC allocation); the array is grown before, outside the lock.
static mp_obj_t ncnn_mp_Extractor_input(mp_obj_t self_in, mp_obj_t key, mp_obj_t mat_in) {
    const char *where = "Extractor.input";
    ncnn_mp_mat_obj_t *mat = ncnn_mp_get_mat(mat_in, where);
    mp_rom_error_text_t refused = ncnn_mp_input_refusal(mat);
    if (refused) {
        ncnn_mp_raise_value(where, refused);
    }
    ncnn_mp_input_t in = { .key = key, .keep = MP_OBJ_FROM_PTR(mat), .copy = NULL };
    in.index = ncnn_mp_blob_key(key, where);
    in.name = in.index < 0 ? mp_obj_str_get_str(key) : NULL;
    ncnn_mp_extractor_obj_t *self = ncnn_mp_cast(self_in, &ncnn_mp_type_Extractor, where);
    ncnn_mp_extractor_refusal_t why;
    ncnn_mp_int8_fit_t fit = { NCNN_MP_INT8_INPUT_OK, -1, 0.f };
    int ret = 0;
    for (;;) {
        ncnn_mp_input_prepare(&in, self, mat, where);
        mp_uint_t l = ncnn_mp_lock();
        why = ncnn_mp_extractor_refusal_locked(self->native);
        mp_obj_t *slot = NULL;
        if (why == NCNN_MP_EX_OK && !ncnn_mp_input_still_fits_locked(&in, self, &slot)) {
            ncnn_mp_unlock(l);
            continue;
        }
        if (why == NCNN_MP_EX_OK) {
            fit = ncnn_mp_int8_fit(self->native->net->handle, in.index, in.name, mat);
        }
        if (why == NCNN_MP_EX_OK && (fit.code == NCNN_MP_INT8_INPUT_OK || fit.code == NCNN_MP_INT8_INPUT_MISSING)) {
            ret = ncnn_mp_extractor_input_at(self->native->handle, in.index, in.name, in.copy ? in.copy : mat->handle);
            if (ret == 0) {
                ncnn_mp_input_store_locked(&in, self, slot);
            }
        }
        ncnn_mp_unlock(l);
        break;
    }
    if (in.copy) {
        ncnn_mat_destroy(in.copy);  // ncnn holds its own reference
    }
    if (why != NCNN_MP_EX_OK) {
        ncnn_mp_extractor_refuse(why, where);
    }
    if (ret != 0) {
        ncnn_mp_raise_blob_missing(key, where);
    }
    if (fit.code != NCNN_MP_INT8_INPUT_OK && fit.code != NCNN_MP_INT8_INPUT_MISSING) {
        // (the net may have been reloaded since the lock: its layers are named under a use)
        ncnn_mp_extractor_use_t use;
        ncnn_mp_extractor_obj_t *again = ncnn_mp_extractor_use(&use, self_in, NULL, where);
        ncnn_mp_int8_fit_raise(again->native->net->handle, &fit, key, mat->int8_scale, where);
        ncnn_mp_extractor_done(&use);
    }
    ncnn_mp_input_settle(&in);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_3(ncnn_mp_Extractor_input_obj, Extractor, input, ncnn_mp_Extractor_input);

// ncnn runs a net's Input layers on whatever they were given; an input never given
// would reach the next layer as an empty Mat, which many layers do not check.
static void ncnn_mp_extractor_check_inputs(ncnn_mp_extractor_obj_t *self, const char *where) {
    ncnn_net_t net = self->native->net->handle;
    int n = ncnn_net_get_input_count(net);
    for (int i = 0; i < n; i++) {
        int index = ncnn_net_get_input_index(net, i);
        if (ncnn_mp_inputs_find(self->inputs, MP_OBJ_NEW_SMALL_INT(index))) {
            continue;
        }
        #if NCNN_STRING
        if (!self->native->net->named) {
            mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: input blob %d was not given (call input() first)"),
                where, index);
        }
        // By name: compared as bytes (making a str of the name to look it up would allocate).
        const char *name = ncnn_net_get_input_name(net, i);
        size_t name_len = strlen(name), count = ncnn_mp_inputs_count(self->inputs);
        bool given = false;
        for (size_t k = 0; k < count && !given; k++) {
            mp_obj_t key = self->inputs[1 + 2 * k];
            size_t len;
            const char *s = mp_obj_is_str(key) ? mp_obj_str_get_data(key, &len) : NULL;
            given = s && len == name_len && memcmp(s, name, len) == 0;
        }
        if (given) {
            continue;
        }
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: input '%s' was not given (call input() first)"), where, name);
        #else
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: input blob %d was not given (call input() first)"),
            where, index);
        #endif
    }
}

// The shape guard's refusal, naming the layer in the net. Raised while the Extractor has
// the net entered (the layer's name lives in it); the use's jump callback lets the net go.
static NORETURN void ncnn_mp_extractor_raise_refused(ncnn_mp_net_native_t *net, const ncnn_mp_shape_refusal_t *r,
    const char *where) {
    vstr_t label;
    vstr_init(&label, 32);
    ncnn_mp_layer_label(&label, net->handle, r->layer, r);
    ncnn_mp_raise_shape_refused(where, "model", vstr_null_terminated_str(&label), r);
}

// One extract, as the C++ seam runs it (cxx_seam.h): what ncnn throws outside a wrapped layer
// (its Net's own bookkeeping) is caught there; a wrapped layer's is that layer's refusal.
typedef struct {
    ncnn_extractor_t ex;
    const char *name;  // or NULL: by index
    int index;
    bool int8;  // an int8 output (Net.output_int8_scale): its int8 values
    ncnn_mat_t out;
    int ret;
} ncnn_mp_extract_call_t;

static void ncnn_mp_extract_call(void *arg) {
    ncnn_mp_extract_call_t *x = arg;
    x->ret = ncnn_mp_cxx_extract(x->ex, x->index, x->name, x->int8, &x->out);
}

// Extractor.extract(blob: str | int, *, hook=None) -> Mat   ncnn_extractor_extract / _extract_index
// hook(index, name, type, count): called before each layer the shape guard checks runs (in
// this thread, with the GIL); what it raises stops the extract and comes out of it.
static mp_obj_t ncnn_mp_Extractor_extract(size_t n_args, const mp_obj_t *pos, mp_map_t *kws) {
    const char *where = "Extractor.extract";
    enum { ARG_blob, ARG_hook };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_blob, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
        { MP_QSTR_hook, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = mp_const_none} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed)];
    ncnn_mp_parse_args(where, n_args - 1, pos + 1, kws, MP_ARRAY_SIZE(allowed), allowed, args);
    mp_obj_t self_in = pos[0], key = args[ARG_blob].u_obj, hook = args[ARG_hook].u_obj;
    if (hook != mp_const_none && !mp_obj_is_callable(hook)) {
        ncnn_mp_raise_type(where, NCNN_MP_TEXT("hook must be callable, as hook(index, name, type, count), or None"));
    }
    int index = ncnn_mp_blob_key(key, where);
    ncnn_mp_extractor_use_t use;
    ncnn_mp_call_t call;  // linked by use, unlinked by done (or as the method raises)
    ncnn_mp_extractor_obj_t *self = ncnn_mp_extractor_use(&use, self_in, &call, where);
    ncnn_mp_extractor_native_t *e = self->native;
    if (ncnn_net_get_input_count(e->net->handle) == 0) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the net has no inputs (load_param first)"));
    }
    ncnn_mp_extractor_check_inputs(self, where);
    ncnn_mp_stack_check(e->net->depth, where);
    ncnn_mp_extractor_restore_inputs(self, e->handle, e->extracted, where);
    e->extracted = true;
    // The result may share storage with an input Mat or come from the extractor's blob
    // allocator: it keeps this Extractor (and so its inputs) alive, and holds the allocator
    // (wrapped while the Extractor is in use: set_option cannot swap it meanwhile).
    ncnn_mp_result_t r = { NULL, e->allocators[NCNN_MP_BLOB_ALLOCATOR], self_in };
    const char *name = index < 0 ? mp_obj_str_get_str(key) : NULL;
    float int8_scale = ncnn_mp_cxx_int8_output(e->net->handle, index, name);
    ncnn_mp_extract_call_t x = { e->handle, name, index, int8_scale > 0.f, NULL, 0 };
    if (hook != mp_const_none) {
        ncnn_mp_call_hook(&call, hook);
    }
    // Nothing raises from here to ncnn_mp_call_raise: custom layers' exceptions wait there.
    ncnn_mp_call_leave_gil(&call);
    int caught = ncnn_mp_cxx_catch(ncnn_mp_extract_call, &x);
    ncnn_mp_call_returned(&call);
    ncnn_mat_t out = caught ? NULL : x.out;
    int ret = x.ret;
    if (call.error != MP_OBJ_NULL || ret != 0 || caught != 0) {
        if (out) {
            ncnn_mat_destroy(out);
        }
        bool missing = call.error == MP_OBJ_NULL && !ncnn_mp_net_has_blob(e->net, key, where);
        if (call.error == MP_OBJ_NULL && ret == NCNN_MP_SHAPE_REFUSED && call.refusal.rule != NCNN_MP_FITS) {
            ncnn_mp_extractor_raise_refused(e->net, &call.refusal, where);
        }
        ncnn_mp_extractor_done(&use);
        ncnn_mp_call_raise(&call);
        if (caught != 0) {  // (outside the layers: a layer's own is its refusal, above)
            ncnn_mp_raise_caught(where, NULL, caught);
        }
        if (missing) {
            ncnn_mp_raise_blob_missing(key, where);
        }
        if (ret == NCNN_MP_OUT_OF_MEMORY) {
            mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: ncnn ran out of memory for the blobs (error -100): a smaller input, fewer blobs kept (opt.lightmode), or a larger arena"), where);
        }
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: a layer on the way to the blob failed (error %d; ncnn's log on stderr says why)"), where, ret);
    }
    // The blob may be an input's own storage (extract of an input blob, in-place layers).
    size_t n_inputs = ncnn_mp_inputs_count(self->inputs);
    for (size_t i = 0; i < n_inputs; i++) {
        r.allocator = ncnn_mp_mat_data_allocator(out, self->inputs[2 + 2 * i], r.allocator);
    }
    mp_obj_t result = ncnn_mp_result_wrap(&r, out, where);  // (it destroys `out` if it raises)
    if (int8_scale > 0.f && ncnn_mat_get_elemsize(out) == 1u) {
        ((ncnn_mp_mat_obj_t *)MP_OBJ_TO_PTR(result))->int8_scale = int8_scale;  // (as from_pixels_int8 marks one)
    }
    ncnn_mp_extractor_done(&use);
    return result;
}
static NCNN_MP_DEFINE_METHOD_KW(ncnn_mp_Extractor_extract_obj, Extractor, extract, 1, 2, ncnn_mp_Extractor_extract);

// Extractor(): made by Net.create_extractor only (it needs the Net).
static mp_obj_t ncnn_mp_Extractor_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    (void)type;
    (void)n_args;
    (void)n_kw;
    (void)args;
    ncnn_mp_raise_type("Extractor()", NCNN_MP_TEXT("made by Net.create_extractor(), not directly"));
}

static const mp_rom_map_elem_t ncnn_mp_Extractor_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_set_option), MP_ROM_PTR(&ncnn_mp_Extractor_set_option_obj) },
    { MP_ROM_QSTR(MP_QSTR_input), MP_ROM_PTR(&ncnn_mp_Extractor_input_obj) },
    { MP_ROM_QSTR(MP_QSTR_extract), MP_ROM_PTR(&ncnn_mp_Extractor_extract_obj) },
    { MP_ROM_QSTR(MP_QSTR_close), MP_ROM_PTR(&ncnn_mp_Extractor_close_obj) },
    { MP_ROM_QSTR(MP_QSTR___del__), MP_ROM_PTR(&ncnn_mp_Extractor_del_obj) },
    { MP_ROM_QSTR(MP_QSTR___enter__), MP_ROM_PTR(&ncnn_mp_Extractor_enter_obj) },
    { MP_ROM_QSTR(MP_QSTR___exit__), MP_ROM_PTR(&ncnn_mp_Extractor_exit_obj) },
};
static MP_DEFINE_CONST_DICT(ncnn_mp_Extractor_locals, ncnn_mp_Extractor_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    ncnn_mp_type_Extractor, MP_QSTR_Extractor, MP_TYPE_FLAG_NONE,
    make_new, ncnn_mp_Extractor_make_new,
    locals_dict, &ncnn_mp_Extractor_locals
    );
