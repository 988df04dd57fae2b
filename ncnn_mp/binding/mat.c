// SPDX-License-Identifier: MIT
// Mat: ncnn's n-dimensional blob (ncnn_mat_*), with the buffer protocol over its storage.
#include <string.h>

#include "ncnn_mp.h"

// Largest storage ncnn_mp lets ncnn allocate for one Mat: ncnn indexes with int in places.
#define NCNN_MP_MAT_MAX_BYTES ((size_t)INT32_MAX)

static ncnn_mp_mat_obj_t *ncnn_mp_mat_new(bool finaliser) {
    // A lent Mat owns nothing: it needs no finaliser, which makes it cheaper to make and to collect.
    ncnn_mp_mat_obj_t *self = finaliser ? mp_obj_malloc_with_finaliser(ncnn_mp_mat_obj_t, &ncnn_mp_type_Mat)
        : mp_obj_malloc(ncnn_mp_mat_obj_t, &ncnn_mp_type_Mat);
    self->handle = NULL;
    self->keep = MP_OBJ_NULL;
    self->lent = NULL;
    self->owner = NULL;
    self->allocator = NULL;
    self->external = NULL;
    self->users = 0;
    self->int8_scale = 0.f;
    self->kind = NCNN_MP_MAT_OWNED;
    self->readonly = false;
    return self;
}

// Wraps a new handle that ncnn_mp owns. The wrapper is allocated before it takes the
// handle: should that raise MemoryError, the handle is destroyed here instead of leaking.
static mp_obj_t ncnn_mp_mat_wrap(ncnn_mat_t handle, mp_obj_t keep, ncnn_mp_allocator_native_t *allocator,
    const char *where) {
    nlr_buf_t nlr;
    ncnn_mp_mat_obj_t *self;
    if (nlr_push(&nlr) == 0) {
        self = ncnn_mp_mat_new(true);
        nlr_pop();
    } else {
        if (handle) {
            ncnn_mat_destroy(handle);
        }
        nlr_jump(nlr.ret_val);
    }
    if (handle == NULL) {
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: ncnn could not allocate the Mat"), where);
    }
    self->handle = handle;
    self->keep = keep;
    self->allocator = ncnn_mp_allocator_native_ref(allocator);
    return MP_OBJ_FROM_PTR(self);
}

static size_t ncnn_mp_mat_storage_bytes(ncnn_mat_t m);

// At the callback's end: a lent Mat forgets ncnn's handle, a lent view destroys its own.
static void ncnn_mp_mat_expire(mp_obj_t mat) {
    ncnn_mp_mat_obj_t *self = MP_OBJ_TO_PTR(mat);
    if (self->kind == NCNN_MP_MAT_LENT_VIEW && self->handle) {
        ncnn_mat_destroy(self->handle);  // now, while the storage it may share is alive
    }
    self->handle = NULL;
    self->lent = NULL;
    ncnn_mp_allocator_native_assign(&self->allocator, NULL);
}

// Whether the lent Mat's storage holds address p (a memoryview of a lent blob carries no
// trace of the blob but its address).
static bool ncnn_mp_mat_holds(mp_obj_t mat, const void *p) {
    ncnn_mat_t h = ((ncnn_mp_mat_obj_t *)MP_OBJ_TO_PTR(mat))->handle;
    const uint8_t *data = h ? ncnn_mat_get_data(h) : NULL;
    return data && (const uint8_t *)p >= data && (const uint8_t *)p < data + ncnn_mp_mat_storage_bytes(h);
}

static const ncnn_mp_lent_kind_t ncnn_mp_mat_lent = { ncnn_mp_mat_expire, ncnn_mp_mat_holds };

mp_obj_t ncnn_mp_mat_lend(ncnn_mat_t handle, ncnn_mp_lent_t *lent) {
    ncnn_mp_mat_obj_t *self = ncnn_mp_mat_new(false);
    self->kind = NCNN_MP_MAT_BORROWED;
    self->lent = lent;
    self->owner = ncnn_mp_thread();
    ncnn_mp_lend(lent, MP_OBJ_FROM_PTR(self), &ncnn_mp_mat_lent);
    self->handle = handle;  // only now: a failed lend leaves nothing that could outlive ncnn's blob
    return MP_OBJ_FROM_PTR(self);
}

// Why the Mat itself cannot be used now, or NULL when it can.
static mp_rom_error_text_t ncnn_mp_mat_unusable(ncnn_mp_mat_obj_t *m) {
    if (m->handle == NULL) {
        return m->kind == NCNN_MP_MAT_OWNED ? NCNN_MP_TEXT("the Mat was released")
            : NCNN_MP_TEXT("Mat used after the callback it was lent to returned (clone() it inside the callback to keep it)");
    }
    if (m->kind != NCNN_MP_MAT_OWNED && m->owner != ncnn_mp_thread()) {
        return NCNN_MP_TEXT("the Mat was lent to a callback running in another thread (clone() it there to share it)");
    }
    return NULL;
}

// Mat(data=buf), batch(b): whether the storage of `keep` is still where the Mat was made
// over, and still holds every byte the Mat spans (a bytearray that grew may have moved; a
// Mat given new storage by create() or release() freed its old one). The address alone is
// not enough: freed, the old storage's address can come back as smaller storage of the
// same keep (a large block split by the C heap for a later create()), and a view checked
// by address only would then reach past its end.
static bool ncnn_mp_mat_external_moved(ncnn_mp_mat_obj_t *m) {
    const uint8_t *now = NULL;
    size_t now_len = 0;
    if (mp_obj_is_type(m->keep, &ncnn_mp_type_Mat)) {
        ncnn_mp_mat_obj_t *k = MP_OBJ_TO_PTR(m->keep);
        if (k->handle) {
            now = ncnn_mat_get_data(k->handle);
            now_len = ncnn_mp_mat_storage_bytes(k->handle);
        }
    } else {
        mp_buffer_info_t info;
        if (mp_get_buffer(m->keep, &info, MP_BUFFER_READ)) {
            now = info.buf;
            now_len = info.len;
        }
    }
    if (now == NULL || (const void *)now != m->external) {
        return true;
    }
    const uint8_t *data = ncnn_mat_get_data(m->handle);
    size_t len = ncnn_mp_mat_storage_bytes(m->handle);
    return len > 0 && (data < now || (size_t)(data - now) > now_len || len > now_len - (size_t)(data - now));
}

// One rule for every way into a Mat: it is usable when it and every Mat it may share
// storage with (its `keep` chain: the Mats it was computed from, or lies over) are.
static mp_rom_error_text_t ncnn_mp_mat_chain_unusable(ncnn_mp_mat_obj_t *m) {
    for (;;) {
        mp_rom_error_text_t why = ncnn_mp_mat_unusable(m);
        if (why != NULL || m->keep == MP_OBJ_NULL) {
            return why;
        }
        if (mp_obj_is_type(m->keep, &mp_type_tuple) || mp_obj_is_type(m->keep, &mp_type_list)) {
            // The bottoms of a Layer.forward: one level per such call.
            size_t n;
            mp_obj_t *items;
            mp_obj_get_array(m->keep, &n, &items);
            for (size_t i = 0; i < n && why == NULL; i++) {
                if (mp_obj_is_type(items[i], &ncnn_mp_type_Mat)) {
                    why = ncnn_mp_mat_chain_unusable(MP_OBJ_TO_PTR(items[i]));
                }
            }
            return why;
        }
        if (mp_obj_is_type(m->keep, &ncnn_mp_type_Mat)) {
            why = ncnn_mp_mat_unusable(MP_OBJ_TO_PTR(m->keep));
            if (why != NULL) {
                return why;
            }
        }
        if (m->external && ncnn_mp_mat_external_moved(m)) {
            return NCNN_MP_TEXT("the storage under this Mat was resized, moved or given back (keep data= buffers at a fixed size, and a Mat that views share unchanged)");
        }
        if (!mp_obj_is_type(m->keep, &ncnn_mp_type_Mat)) {
            return NULL;
        }
        m = MP_OBJ_TO_PTR(m->keep);
    }
}

ncnn_mp_mat_obj_t *ncnn_mp_get_mat(mp_obj_t obj, const char *where) {
    ncnn_mp_mat_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_Mat, where);
    mp_rom_error_text_t why = ncnn_mp_mat_chain_unusable(self);
    if (why) {
        ncnn_mp_raise_value(where, why);
    }
    return self;
}

bool ncnn_mp_mat_counted(mp_obj_t obj) {
    ncnn_mp_mat_obj_t *m = MP_OBJ_TO_PTR(obj);
    for (;;) {
        if (m->external) {
            return false;
        }
        if (m->keep != MP_OBJ_NULL && (mp_obj_is_type(m->keep, &mp_type_tuple) || mp_obj_is_type(m->keep, &mp_type_list))) {
            size_t n;
            mp_obj_t *items;
            mp_obj_get_array(m->keep, &n, &items);
            for (size_t i = 0; i < n; i++) {
                if (mp_obj_is_type(items[i], &ncnn_mp_type_Mat) && !ncnn_mp_mat_counted(items[i])) {
                    return false;
                }
            }
            return true;
        }
        if (m->keep == MP_OBJ_NULL || !mp_obj_is_type(m->keep, &ncnn_mp_type_Mat)) {
            return true;
        }
        m = MP_OBJ_TO_PTR(m->keep);
    }
}

ncnn_mat_t ncnn_mp_get_mat_handle(mp_obj_t obj, const char *where) {
    return ncnn_mp_get_mat(obj, where)->handle;
}

// Takes uses of m and of the Mats along its keep chain (as ncnn_mp_mat_chain_unusable walks it).
static void ncnn_mp_mat_use_chain(ncnn_mp_use_t *u, ncnn_mp_mat_obj_t *m) {
    for (;;) {
        ncnn_mp_use_reserve(u, 1);
        mp_uint_t l = ncnn_mp_lock();
        ncnn_mp_use_add_locked(u, &m->users);
        ncnn_mp_unlock(l);
        if (m->keep != MP_OBJ_NULL && (mp_obj_is_type(m->keep, &mp_type_tuple) || mp_obj_is_type(m->keep, &mp_type_list))) {
            size_t n;
            mp_obj_t *items;
            mp_obj_get_array(m->keep, &n, &items);
            for (size_t i = 0; i < n; i++) {
                if (mp_obj_is_type(items[i], &ncnn_mp_type_Mat)) {
                    ncnn_mp_mat_use_chain(u, MP_OBJ_TO_PTR(items[i]));
                }
            }
            return;
        }
        if (m->keep == MP_OBJ_NULL || !mp_obj_is_type(m->keep, &ncnn_mp_type_Mat)) {
            return;
        }
        m = MP_OBJ_TO_PTR(m->keep);
    }
}

// (Checked first, then used: storage changes only through ncnn_mp_mat_replace, which refuses
// once the use is taken; a check that passed stays true until the use ends.)
ncnn_mat_t ncnn_mp_mat_use(ncnn_mp_use_t *u, mp_obj_t obj, const char *where) {
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat(obj, where);
    ncnn_mp_mat_use_chain(u, self);
    return ncnn_mp_get_mat(obj, where)->handle;
}

// ---------------------------------------------------------------------------
// Results (see ncnn_mp_result_t).

void ncnn_mp_result_from_option(ncnn_mp_result_t *r, mp_obj_t opt_in, mp_obj_t source, const char *where) {
    ncnn_mp_option_obj_t *o = ncnn_mp_get_option(opt_in, where);
    r->source = source;
    r->opt = o->handle;
    switch (o->kind) {
        case NCNN_MP_OPTION_OWNED:
            r->allocator = o->allocators[NCNN_MP_BLOB_ALLOCATOR];
            break;
        case NCNN_MP_OPTION_NET_VIEW:
            r->allocator = o->net->allocators[NCNN_MP_BLOB_ALLOCATOR];
            break;
        default:
            r->opt = ncnn_mp_option_new_copy(o->handle);
            r->allocator = NULL;
            break;
    }
}

void ncnn_mp_result_from_allocator(ncnn_mp_result_t *r, mp_obj_t alloc_in, mp_obj_t source, const char *where) {
    r->opt = NULL;
    r->allocator = ncnn_mp_get_allocator_native_or_none(alloc_in, where);
    r->source = source;
}

// The lent list of the innermost callback among a lent source Mat's, or NULL. Callbacks
// nest on one C stack (lent Mats are usable in their own thread only) and the stack grows
// down on every target: the innermost list is the lowest address.
static ncnn_mp_lent_t *ncnn_mp_result_lender(mp_obj_t source, bool *readonly) {
    size_t n = 1;
    mp_obj_t *items = &source;
    if (source == MP_OBJ_NULL) {
        return NULL;
    }
    if (mp_obj_is_type(source, &mp_type_tuple) || mp_obj_is_type(source, &mp_type_list)) {
        mp_obj_get_array(source, &n, &items);
    }
    ncnn_mp_lent_t *lender = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!mp_obj_is_type(items[i], &ncnn_mp_type_Mat)) {
            continue;
        }
        ncnn_mp_mat_obj_t *m = MP_OBJ_TO_PTR(items[i]);
        *readonly |= m->readonly;
        if (m->lent && (lender == NULL || (uintptr_t)m->lent < (uintptr_t)lender)) {
            lender = m->lent;
        }
    }
    return lender;
}

// Makes `out` a view lent by the callback of `lender`: it expires with it.
static void ncnn_mp_mat_lend_view(mp_obj_t out, ncnn_mp_lent_t *lender) {
    ncnn_mp_mat_obj_t *m = MP_OBJ_TO_PTR(out);
    m->kind = NCNN_MP_MAT_LENT_VIEW;
    m->lent = lender;
    m->owner = ncnn_mp_thread();
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        ncnn_mp_lend(lender, out, &ncnn_mp_mat_lent);
        nlr_pop();
    } else {
        ncnn_mp_mat_expire(out);  // not listed: it must not outlive the lent storage
        nlr_jump(nlr.ret_val);
    }
}

ncnn_mp_allocator_native_t *ncnn_mp_mat_data_allocator(ncnn_mat_t h, mp_obj_t mat, ncnn_mp_allocator_native_t *otherwise) {
    ncnn_mp_mat_obj_t *m = MP_OBJ_TO_PTR(mat);
    const uint8_t *data = h ? ncnn_mat_get_data(h) : NULL;
    const uint8_t *base = m->handle ? ncnn_mat_get_data(m->handle) : NULL;
    if (data && base && data >= base && data < base + ncnn_mp_mat_storage_bytes(m->handle)) {
        return m->allocator;
    }
    return otherwise;
}

mp_obj_t ncnn_mp_result_wrap(const ncnn_mp_result_t *r, ncnn_mat_t handle, const char *where) {
    bool readonly = false;
    ncnn_mp_lent_t *lender = ncnn_mp_result_lender(r->source, &readonly);
    // The allocator its data came from: a source's, where ncnn handed back (part of) the
    // source's storage; the Option's otherwise. (Held: within one collection the source's
    // finaliser may run first and drop the source's reference.)
    ncnn_mp_allocator_native_t *allocator = r->allocator;
    size_t n = 0;
    mp_obj_t *items = NULL;
    if (r->source != MP_OBJ_NULL && (mp_obj_is_type(r->source, &mp_type_tuple) || mp_obj_is_type(r->source, &mp_type_list))) {
        mp_obj_get_array(r->source, &n, &items);
    } else if (r->source != MP_OBJ_NULL) {
        n = 1;
        items = (mp_obj_t *)&r->source;
    }
    for (size_t i = 0; i < n; i++) {
        if (mp_obj_is_type(items[i], &ncnn_mp_type_Mat)) {
            allocator = ncnn_mp_mat_data_allocator(handle, items[i], allocator);
        }
    }
    mp_obj_t out = ncnn_mp_mat_wrap(handle, r->source, allocator, where);
    ncnn_mp_mat_obj_t *m = MP_OBJ_TO_PTR(out);
    m->readonly = readonly;
    if (lender) {
        ncnn_mp_mat_lend_view(out, lender);
    }
    return out;
}

mp_obj_t ncnn_mp_mat_wrap_over_buffer(ncnn_mat_t handle, mp_obj_t buffer, const void *base, bool readonly, const char *where) {
    ncnn_mp_result_t over;  // over a lent Mat, it is lent too
    ncnn_mp_result_from_allocator(&over, mp_const_none, buffer, where);
    mp_obj_t out = ncnn_mp_result_wrap(&over, handle, where);
    ncnn_mp_mat_obj_t *self = MP_OBJ_TO_PTR(out);
    self->external = base;
    self->readonly |= readonly;
    return out;
}

static ncnn_mp_mat_obj_t *ncnn_mp_get_mat_writable(mp_obj_t obj, const char *where) {
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat(obj, where);
    if (self->readonly) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the Mat is over an immutable buffer (bytes); use a bytearray or clone()"));
    }
    return self;
}

// A Mat's batch count and the elements from one batch to the next (ncnn's n / nstep;
// without NCNN_BATCH every Mat is a single batch).
static int ncnn_mp_mat_n(ncnn_mat_t m) {
    #if NCNN_BATCH
    return ncnn_mat_get_n(m) > 0 ? ncnn_mat_get_n(m) : 1;
    #else
    (void)m;
    return 1;
    #endif
}

static size_t ncnn_mp_mat_nstep(ncnn_mat_t m) {
    #if NCNN_BATCH
    return ncnn_mat_get_nstep(m);
    #else
    return ncnn_mat_get_cstep(m) * ncnn_mat_get_c(m);
    #endif
}

// Where channel `ch` of batch `b` starts.
static uint8_t *ncnn_mp_mat_channel(ncnn_mat_t m, int b, int ch) {
    return (uint8_t *)ncnn_mat_get_data(m)
        + ((size_t)b * ncnn_mp_mat_nstep(m) + (size_t)ch * ncnn_mat_get_cstep(m)) * ncnn_mat_get_elemsize(m);
}

// Bytes from the first element to the last: the padding between channels (cstep)
// and between batches (nstep) included, the padding after the last element left out.
static size_t ncnn_mp_mat_storage_bytes(ncnn_mat_t m) {
    if (ncnn_mat_get_dims(m) <= 0 || ncnn_mat_get_data(m) == NULL) {
        return 0;
    }
    size_t plane = (size_t)ncnn_mat_get_w(m) * ncnn_mat_get_h(m) * ncnn_mat_get_d(m);
    return ((size_t)(ncnn_mp_mat_n(m) - 1) * ncnn_mp_mat_nstep(m)
        + (size_t)(ncnn_mat_get_c(m) - 1) * ncnn_mat_get_cstep(m) + plane) * ncnn_mat_get_elemsize(m);
}

// Checks a shape before ncnn sees it: every dimension of a `dims`-dimensional Mat
// is at least 1 and the storage (with channel padding) stays below 2 GiB.
static void ncnn_mp_mat_check_shape(const char *where, int dims, const int *shape, size_t elemsize, int n) {
    static const char *const names[] = { "w", "h", "d", "c" };
    (void)names;  // (no error reporting: unused)
    unsigned long long total = elemsize * (unsigned long long)n;
    for (int i = 0; i < dims; i++) {
        if (shape[i] < 1) {
            mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: %s must be >= 1 (got %d)"),
                where, names[dims == 3 && i == 2 ? 3 : i], shape[i]);
        }
        total *= (unsigned long long)shape[i];
        if (total + 16 * (unsigned long long)shape[i] > NCNN_MP_MAT_MAX_BYTES) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("Mat too large (more than 2 GiB of storage)"));
        }
    }
}

// Checks an element layout before ncnn sees it: elempack elements of 8, 16 or 32 bits each
// (int8, fp16/bf16, fp32: what ncnn's layers take), elempack a power of two. ncnn's Mat
// takes any size, but its layers (Flatten behind flatten(), Packing, Padding...) then read
// such elements as float32: an elemsize-3 Mat made flatten() write past its output.
static void ncnn_mp_mat_check_elements(const char *where, size_t elemsize, int elempack) {
    if (elempack < 1 || elempack > 32 || (elempack & (elempack - 1)) != 0) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("elempack must be 1, 2, 4, 8, 16 or 32"));
    }
    size_t bits = elemsize * 8;
    if (bits % (size_t)elempack != 0 || (bits / elempack != 8 && bits / elempack != 16 && bits / elempack != 32)) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("elemsize must be elempack times 1, 2 or 4 bytes (int8, fp16/bf16 or fp32 elements)"));
    }
}

// Creates an ncnn Mat of 1..4 dims (shape is w, h, [d,] c in ncnn's order).
static ncnn_mat_t ncnn_mp_mat_create(const char *where, int dims, const int *shape, size_t elemsize, int elempack,
    int n, void *data, ncnn_allocator_t alloc) {
    ncnn_mp_mat_check_elements(where, elemsize, elempack);
    ncnn_mp_mat_check_shape(where, dims, shape, elemsize, n);
    const int *s = shape;
    ncnn_mat_t m = NULL;
    if (data) {
        switch (dims) {
            case 1: m = ncnn_mat_create_external_1d_elem(s[0], data, elemsize, elempack, alloc); break;
            case 2: m = ncnn_mat_create_external_2d_elem(s[0], s[1], data, elemsize, elempack, alloc); break;
            case 3: m = ncnn_mat_create_external_3d_elem(s[0], s[1], s[2], data, elemsize, elempack, alloc); break;
            default: m = ncnn_mat_create_external_4d_elem(s[0], s[1], s[2], s[3], data, elemsize, elempack, alloc); break;
        }
        return m;
    }
    #if NCNN_BATCH
    if (n > 1) {
        switch (dims) {
            case 1: m = ncnn_mat_create_1d_elem_batch(s[0], elemsize, elempack, n, alloc); break;
            case 2: m = ncnn_mat_create_2d_elem_batch(s[0], s[1], elemsize, elempack, n, alloc); break;
            case 3: m = ncnn_mat_create_3d_elem_batch(s[0], s[1], s[2], elemsize, elempack, n, alloc); break;
            default: m = ncnn_mat_create_4d_elem_batch(s[0], s[1], s[2], s[3], elemsize, elempack, n, alloc); break;
        }
    } else
    #endif
    {
        switch (dims) {
            case 1: m = ncnn_mat_create_1d_elem(s[0], elemsize, elempack, alloc); break;
            case 2: m = ncnn_mat_create_2d_elem(s[0], s[1], elemsize, elempack, alloc); break;
            case 3: m = ncnn_mat_create_3d_elem(s[0], s[1], s[2], elemsize, elempack, alloc); break;
            default: m = ncnn_mat_create_4d_elem(s[0], s[1], s[2], s[3], elemsize, elempack, alloc); break;
        }
    }
    if (m && ncnn_mat_get_data(m) == NULL) {
        ncnn_mat_destroy(m);
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: ncnn could not allocate the Mat's data"), where);
    }
    return m;
}

// Reads w, h, d, c into shape[] (ncnn order, d left out when 0) and returns dims.
// min_w: 0 where w=0 means an empty Mat (Mat()), else 1.
static int ncnn_mp_mat_parse_shape(const char *where, mp_arg_val_t *whdc, int *shape, int min_w) {
    static const char *const names[] = { "w", "h", "d", "c" };
    int v[4];
    for (int i = 0; i < 4; i++) {
        v[i] = ncnn_mp_get_int_in(whdc[i].u_obj, i ? 0 : min_w, INT32_MAX, where, names[i]);
    }
    if (v[0] == 0) {
        if (v[1] || v[2] || v[3]) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("w must be >= 1 when h, d or c is given"));
        }
        return 0;
    }
    if (v[2] && !v[3]) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("a Mat with d needs c too (Mat(w, h, d, c))"));
    }
    int dims = 1;
    shape[0] = v[0];
    if (v[1] || v[3]) {
        shape[dims++] = v[1] ? v[1] : 1;
    }
    if (v[2]) {
        shape[dims++] = v[2];
    }
    if (v[3]) {
        shape[dims++] = v[3];
    }
    return dims;
}

// Mat(w=0, h=0, d=0, c=0, *, data=None, elemsize=0, elempack=0, allocator=None)
// Positional like ncnn's C++: Mat(w), Mat(w, h), Mat(w, h, c), Mat(w, h, d, c).
//   ncnn_mat_create[_external]_{1,2,3,4}d_elem, ncnn_mat_create
static mp_obj_t ncnn_mp_Mat_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *all_args) {
    const char *where = "Mat()";
    (void)type;
    enum { ARG_w, ARG_h, ARG_d, ARG_c, ARG_data, ARG_elemsize, ARG_elempack, ARG_allocator, ARG_n };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_w, MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(0)} },
        { MP_QSTR_h, MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(0)} },
        { MP_QSTR_d, MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(0)} },
        { MP_QSTR_c, MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(0)} },
        { MP_QSTR_data, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = mp_const_none} },
        { MP_QSTR_elemsize, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(0)} },
        { MP_QSTR_elempack, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(0)} },
        { MP_QSTR_allocator, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = mp_const_none} },
        { MP_QSTR_n, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(1)} },
    };
    if (n_args > 4) {  // (the keywords are parsed alone below: the positionals are laid over them)
        ncnn_mp_raise_arg_count(where, 0, 4, n_args, true);
    }
    mp_obj_t pos[4];
    for (size_t i = 0; i < n_args; i++) {  // (all_args may be NULL when there are none)
        pos[i] = all_args[i];
    }
    if (n_args == 3) {  // Mat(w, h, c): the third positional is c, as in ncnn's C++
        pos[3] = pos[2];
        pos[2] = MP_OBJ_NEW_SMALL_INT(0);
    }
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed)];
    // Parse keywords only, then lay the positionals over the defaults.
    ncnn_mp_parse_args_kw_array(where, 0, n_kw, all_args + n_args, MP_ARRAY_SIZE(allowed), allowed, args);
    for (size_t i = 0; i < n_args; i++) {
        size_t slot = (n_args == 3 && i == 2) ? 3 : i;
        if (args[slot].u_obj != allowed[slot].defval.u_obj) {
            mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: %q given twice"), where, allowed[slot].qst);
        }
        args[slot].u_obj = pos[slot];
    }
    int shape[4];
    int dims = ncnn_mp_mat_parse_shape(where, args, shape, 0);
    int elemsize = ncnn_mp_get_int_in(args[ARG_elemsize].u_obj, 0, 64, where, "elemsize");
    int elempack = ncnn_mp_get_int_in(args[ARG_elempack].u_obj, 0, 64, where, "elempack");
    if (elemsize == 0) {
        elemsize = 4 * (elempack ? elempack : 1);
    }
    if (elempack == 0) {
        elempack = 1;
    }
    ncnn_mp_result_t r;
    ncnn_mp_result_from_allocator(&r, args[ARG_allocator].u_obj, MP_OBJ_NULL, where);
    mp_obj_t data = args[ARG_data].u_obj;
    int n = ncnn_mp_get_int_in(args[ARG_n].u_obj, 1, INT32_MAX, where, "n");
    #if !NCNN_BATCH
    if (n > 1) {
        ncnn_mp_raise_not_built(where, NCNN_MP_TEXT("NCNN_BATCH"));
    }
    #endif
    if (n > 1 && data != mp_const_none) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("data= cannot hold a batch (ncnn's C API has no external batch Mats)"));
    }
    if (dims == 0) {
        if (data != mp_const_none) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("data= needs a shape (w, and h, d, c as needed)"));
        }
        return ncnn_mp_mat_wrap(ncnn_mat_create(), MP_OBJ_NULL, NULL, where);
    }
    if (data == mp_const_none) {
        ncnn_allocator_t a = r.allocator ? r.allocator->handle : NULL;
        return ncnn_mp_result_wrap(&r, ncnn_mp_mat_create(where, dims, shape, elemsize, elempack, n, NULL, a), where);
    }
    // Zero-copy over a Python buffer, which the Mat keeps alive.
    mp_buffer_info_t info;
    bool readonly = !mp_get_buffer(data, &info, MP_BUFFER_RW);
    if (readonly) {
        ncnn_mp_get_buffer(data, &info, MP_BUFFER_READ, where, "data");
    }
    ncnn_mat_t m = ncnn_mp_mat_create(where, dims, shape, elemsize, elempack, 1, info.buf, NULL);
    // ncnn rounds every channel (and a 1-D/2-D Mat's single plane) up to 16 bytes,
    // and fill() and some layers write that padding too: the buffer must hold it all.
    size_t need = ncnn_mat_get_cstep(m) * ncnn_mat_get_c(m) * elemsize;
    if (info.len < need) {
        ncnn_mat_destroy(m);
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: data holds %u bytes, the Mat needs %u (each channel padded to 16 bytes: cstep * c * elemsize)"), where, (unsigned)info.len, (unsigned)need);
    }
    mp_obj_t out = ncnn_mp_mat_wrap_over_buffer(m, data, info.buf, readonly, where);
    ncnn_mp_mat_obj_t *self = MP_OBJ_TO_PTR(out);
    ncnn_mp_lent_t *lender = self->kind == NCNN_MP_MAT_OWNED ? ncnn_mp_lent_holding(info.buf) : NULL;
    if (lender) {  // over a memoryview of a lent blob: lent too
        ncnn_mp_mat_lend_view(out, lender);
    }
    return out;
}

// __del__   ncnn_mat_destroy (not a lent Mat's: ncnn's), then the allocator reference.
static mp_obj_t ncnn_mp_Mat_del(mp_obj_t self_in) {
    ncnn_mp_mat_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (self->kind != NCNN_MP_MAT_BORROWED && self->handle) {
        ncnn_mat_destroy(self->handle);
    }
    self->handle = NULL;
    ncnn_mp_allocator_native_assign(&self->allocator, NULL);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Mat_del_obj, Mat, __del__, ncnn_mp_Mat_del);

// Mat.fill(v: float) -> None   ncnn_mat_fill_float
static mp_obj_t ncnn_mp_Mat_fill(mp_obj_t self_in, mp_obj_t v) {
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat_writable(self_in, "Mat.fill");
    if (ncnn_mat_get_elemsize(self->handle) != 4u * ncnn_mat_get_elempack(self->handle)) {
        ncnn_mp_raise_value("Mat.fill", NCNN_MP_TEXT("fill needs float32 elements"));
    }
    ncnn_mat_fill_float(self->handle, ncnn_mp_get_float(v, "Mat.fill", "v"));
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Mat_fill_obj, Mat, fill, ncnn_mp_Mat_fill);

// Mat.clone(allocator=None) -> Mat   ncnn_mat_clone
static mp_obj_t ncnn_mp_Mat_clone(size_t n_args, const mp_obj_t *args) {
    const char *where = "Mat.clone";
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat(args[0], where);
    ncnn_mp_result_t r;  // a copy: it shares nothing with self
    ncnn_mp_result_from_allocator(&r, n_args > 1 ? args[1] : mp_const_none, MP_OBJ_NULL, where);
    return ncnn_mp_result_wrap(&r, ncnn_mat_clone(self->handle, r.allocator ? r.allocator->handle : NULL), where);
}
static NCNN_MP_DEFINE_METHOD_VAR_BETWEEN(ncnn_mp_Mat_clone_obj, Mat, clone, 1, 2, ncnn_mp_Mat_clone);

// Mat.reshape(w[, h[, c]][, allocator]) / reshape(w, h, d, c[, allocator]) -> Mat   ncnn_mat_reshape_{1,2,3,4}d
static mp_obj_t ncnn_mp_Mat_reshape(size_t n_args, const mp_obj_t *args) {
    const char *where = "Mat.reshape";
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat(args[0], where);
    size_t n = n_args - 1;
    mp_obj_t alloc_in = mp_const_none;
    if (n > 0 && !mp_obj_is_int(args[n_args - 1])) {
        alloc_in = args[n_args - 1];
        n--;
    }
    if (n < 1 || n > 4) {
        ncnn_mp_raise_type(where, NCNN_MP_TEXT("expected reshape(w[, h[, c]][, allocator]) or reshape(w, h, d, c[, allocator])"));
    }
    ncnn_mp_result_t r;  // a reshape may share self's storage (which may be a Python buffer or lent)
    ncnn_mp_result_from_allocator(&r, alloc_in, args[0], where);
    ncnn_allocator_t a = r.allocator ? r.allocator->handle : NULL;
    int s[4];
    static const char *const names[] = { "w", "h", "d", "c" };
    for (size_t i = 0; i < n; i++) {
        s[i] = ncnn_mp_get_int_in(args[1 + i], 1, INT32_MAX, where, names[n == 3 && i == 2 ? 3 : i]);
    }
    ncnn_mp_mat_check_shape(where, (int)n, s, ncnn_mat_get_elemsize(self->handle), 1);
    if (ncnn_mp_mat_n(self->handle) > 1) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("reshape a batch one batch(b) at a time"));
    }
    ncnn_mat_t m;
    switch (n) {
        case 1: m = ncnn_mat_reshape_1d(self->handle, s[0], a); break;
        case 2: m = ncnn_mat_reshape_2d(self->handle, s[0], s[1], a); break;
        case 3: m = ncnn_mat_reshape_3d(self->handle, s[0], s[1], s[2], a); break;
        default: m = ncnn_mat_reshape_4d(self->handle, s[0], s[1], s[2], s[3], a); break;
    }
    if (m && ncnn_mat_get_dims(m) == 0) {
        ncnn_mat_destroy(m);
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the new shape holds a different number of elements"));
    }
    return ncnn_mp_result_wrap(&r, m, where);
}
static NCNN_MP_DEFINE_METHOD_VAR_BETWEEN(ncnn_mp_Mat_reshape_obj, Mat, reshape, 1, 6, ncnn_mp_Mat_reshape);

// Gives the Mat object `obj` the new handle `m` (from create / clone_from). A Mat
// lent by ncnn cannot change its storage: ncnn owns the ncnn::Mat behind it.
static void ncnn_mp_mat_replace(mp_obj_t obj, ncnn_mat_t m, ncnn_mp_allocator_native_t *alloc, const char *where) {
    ncnn_mp_mat_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_Mat, where);
    if (self->kind != NCNN_MP_MAT_OWNED) {
        ncnn_mat_destroy(m);
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("a Mat lent by ncnn, or a view of one, cannot get new storage (write into it, or return a new Mat)"));
    }
    mp_uint_t l = ncnn_mp_lock();
    bool in_use = self->users > 0;
    ncnn_mat_t old = in_use ? m : self->handle;
    if (!in_use) {
        self->handle = m;
    }
    ncnn_mp_unlock(l);
    if (old) {
        ncnn_mat_destroy(old);
    }
    if (in_use) {
        ncnn_mp_raise_in_use(where);
    }
    self->keep = MP_OBJ_NULL;
    self->external = NULL;
    self->readonly = false;
    ncnn_mp_allocator_native_assign(&self->allocator, alloc);
}

// Mat.release() -> None   (CPython ncnn) gives the storage back now, not when the GC
// collects the Mat (ncnn's C heap, which MicroPython's collector does not see): the Mat
// becomes empty. Mats computed from it that share a counted storage keep it alive.
static mp_obj_t ncnn_mp_Mat_release(mp_obj_t self_in) {
    const char *where = "Mat.release";
    ncnn_mp_mat_obj_t *self = ncnn_mp_cast(self_in, &ncnn_mp_type_Mat, where);
    if (self->kind != NCNN_MP_MAT_OWNED) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("a Mat lent by ncnn, or a view of one, is not released (it expires when the callback returns)"));
    }
    ncnn_mp_mat_replace(self_in, ncnn_mat_create(), NULL, where);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Mat_release_obj, Mat, release, ncnn_mp_Mat_release);

// Bytes of one channel without padding, and the number of channels (of all batches).
static void ncnn_mp_mat_packed_layout(ncnn_mat_t m, size_t *plane, size_t *channels) {
    size_t elemsize = ncnn_mat_get_elemsize(m);
    int dims = ncnn_mat_get_dims(m);
    *plane = (size_t)ncnn_mat_get_w(m) * ncnn_mat_get_h(m) * (dims == 4 ? ncnn_mat_get_d(m) : 1) * elemsize;
    *channels = (dims >= 3 ? (size_t)ncnn_mat_get_c(m) : 1) * (size_t)ncnn_mp_mat_n(m);
}

// Channel i counted over all batches (batch 0's channels first).
static uint8_t *ncnn_mp_mat_nth_channel(ncnn_mat_t m, size_t i) {
    int c = ncnn_mat_get_dims(m) >= 3 ? ncnn_mat_get_c(m) : 1;
    return ncnn_mp_mat_channel(m, (int)(i / c), (int)(i % c));
}

// Mat.to_bytes() -> bytes   the elements packed, channel padding left out
static mp_obj_t ncnn_mp_Mat_to_bytes(mp_obj_t self_in) {
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat(self_in, "Mat.to_bytes");
    size_t plane, channels;
    ncnn_mp_mat_packed_layout(self->handle, &plane, &channels);
    if (ncnn_mat_get_data(self->handle) == NULL) {
        return mp_const_empty_bytes;
    }
    vstr_t vstr;
    vstr_init_len(&vstr, plane * channels);
    for (size_t i = 0; i < channels; i++) {
        memcpy(vstr.buf + i * plane, ncnn_mp_mat_nth_channel(self->handle, i), plane);
    }
    return mp_obj_new_bytes_from_vstr(&vstr);
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Mat_to_bytes_obj, Mat, to_bytes, ncnn_mp_Mat_to_bytes);

// Mat.from_bytes(buf) -> None   fills the elements from packed bytes (the layout to_bytes() gives)
static mp_obj_t ncnn_mp_Mat_from_bytes(mp_obj_t self_in, mp_obj_t buf) {
    const char *where = "Mat.from_bytes";
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat_writable(self_in, where);
    mp_buffer_info_t info;
    ncnn_mp_get_buffer(buf, &info, MP_BUFFER_READ, where, "buf");
    size_t plane, channels;
    ncnn_mp_mat_packed_layout(self->handle, &plane, &channels);
    if (ncnn_mat_get_data(self->handle) == NULL) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the Mat is empty"));
    }
    if (info.len != plane * channels) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: got %u bytes, the Mat holds %u"),
            where, (unsigned)info.len, (unsigned)(plane * channels));
    }
    for (size_t i = 0; i < channels; i++) {
        memmove(ncnn_mp_mat_nth_channel(self->handle, i), (const uint8_t *)info.buf + i * plane, plane);
    }
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Mat_from_bytes_obj, Mat, from_bytes, ncnn_mp_Mat_from_bytes);

// Mat.clone_from(other: Mat, allocator=None) -> None   (CPython ncnn) self becomes a deep copy of other
static mp_obj_t ncnn_mp_Mat_clone_from(size_t n_args, const mp_obj_t *args) {
    const char *where = "Mat.clone_from";
    ncnn_mp_get_mat_writable(args[0], where);
    ncnn_mp_mat_obj_t *src = ncnn_mp_get_mat(args[1], where);
    ncnn_mp_allocator_native_t *alloc = ncnn_mp_get_allocator_native_or_none(n_args > 2 ? args[2] : mp_const_none, where);
    ncnn_mat_t copy = ncnn_mat_clone(src->handle, alloc ? alloc->handle : NULL);
    if (copy == NULL || (ncnn_mat_get_dims(src->handle) && ncnn_mat_get_data(copy) == NULL)) {
        if (copy) {
            ncnn_mat_destroy(copy);
        }
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: ncnn could not allocate the copy"), where);
    }
    ncnn_mp_mat_replace(args[0], copy, alloc, where);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_VAR_BETWEEN(ncnn_mp_Mat_clone_from_obj, Mat, clone_from, 2, 3, ncnn_mp_Mat_clone_from);

// Mat.create(w, h=0, d=0, c=0, *, elemsize=4, elempack=1, allocator=None) -> None   (CPython ncnn)
// Gives self new storage of that shape (uninitialised), as ncnn::Mat::create does.
static mp_obj_t ncnn_mp_Mat_create(size_t n_args, const mp_obj_t *pos_args, mp_map_t *kw_args) {
    const char *where = "Mat.create";
    ncnn_mp_get_mat(pos_args[0], where);
    enum { ARG_w, ARG_h, ARG_d, ARG_c, ARG_elemsize, ARG_elempack, ARG_allocator };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_w, MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
        { MP_QSTR_h, MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(0)} },
        { MP_QSTR_d, MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(0)} },
        { MP_QSTR_c, MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(0)} },
        { MP_QSTR_elemsize, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(4)} },
        { MP_QSTR_elempack, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(1)} },
        { MP_QSTR_allocator, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = mp_const_none} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed)];
    ncnn_mp_parse_args(where, n_args - 1, pos_args + 1, kw_args, MP_ARRAY_SIZE(allowed), allowed, args);
    if (args[ARG_w].u_obj == MP_OBJ_NULL) {
        ncnn_mp_raise_type(where, NCNN_MP_TEXT("missing w (create(w[, h[, c]]) or create(w, h, d, c))"));
    }
    if (n_args - 1 == 3) {  // create(w, h, c), as in ncnn's C++
        args[ARG_c] = args[ARG_d];
        args[ARG_d].u_obj = MP_OBJ_NEW_SMALL_INT(0);
    }
    int shape[4];
    int dims = ncnn_mp_mat_parse_shape(where, args, shape, 1);
    int elemsize = ncnn_mp_get_int_in(args[ARG_elemsize].u_obj, 1, 64, where, "elemsize");
    int elempack = ncnn_mp_get_int_in(args[ARG_elempack].u_obj, 1, 64, where, "elempack");
    ncnn_mp_allocator_native_t *alloc = ncnn_mp_get_allocator_native_or_none(args[ARG_allocator].u_obj, where);
    ncnn_mat_t m = ncnn_mp_mat_create(where, dims, shape, elemsize, elempack, 1, NULL, alloc ? alloc->handle : NULL);
    ncnn_mp_mat_replace(pos_args[0], m, alloc, where);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_KW(ncnn_mp_Mat_create_obj, Mat, create, 1, 5, ncnn_mp_Mat_create);

// Mat.flatten(opt: Option) -> Mat   ncnn_flatten
static mp_obj_t ncnn_mp_Mat_flatten(mp_obj_t self_in, mp_obj_t opt_in) {
    const char *where = "Mat.flatten";
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat(self_in, where);
    if (ncnn_mat_get_dims(self->handle) == 0) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the Mat is empty"));  // ncnn's Flatten divides by its size
    }
    ncnn_mp_require_layer(NCNN_MP_HELPER_FLATTEN, where);
    ncnn_mp_result_t r;  // a flat Mat comes back as itself
    ncnn_mp_result_from_option(&r, opt_in, self_in, where);
    ncnn_mat_t dst = NULL;
    ncnn_flatten(self->handle, &dst, r.opt);
    return ncnn_mp_result_wrap(&r, dst, where);
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Mat_flatten_obj, Mat, flatten, ncnn_mp_Mat_flatten);

// Mat.convert_packing(elempack: int, opt: Option) -> Mat   ncnn_convert_packing
static mp_obj_t ncnn_mp_Mat_convert_packing(mp_obj_t self_in, mp_obj_t elempack_in, mp_obj_t opt_in) {
    const char *where = "Mat.convert_packing";
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat(self_in, where);
    int elempack = ncnn_mp_get_int_in(elempack_in, 1, 16, where, "elempack");
    if (elempack != 1 && elempack != 4 && elempack != 8 && elempack != 16) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("elempack must be 1, 4, 8 or 16 (the packings ncnn converts between)"));
    }
    ncnn_mp_require_layer(NCNN_MP_HELPER_PACKING, where);
    ncnn_mp_result_t r;  // the same packing comes back as itself
    ncnn_mp_result_from_option(&r, opt_in, self_in, where);
    ncnn_mat_t dst = NULL;
    ncnn_convert_packing(self->handle, &dst, elempack, r.opt);
    return ncnn_mp_result_wrap(&r, dst, where);
}
static NCNN_MP_DEFINE_METHOD_3(ncnn_mp_Mat_convert_packing_obj, Mat, convert_packing, ncnn_mp_Mat_convert_packing);

// Mat.copy_make_border(top, bottom, left, right, type, v, opt, *, front=-1, behind=-1) -> Mat
//   ncnn_copy_make_border / _3d (front/behind >= 0: the depth too)
// Mat.copy_cut_border(top, bottom, left, right, opt, *, front=-1, behind=-1) -> Mat
//   ncnn_copy_cut_border / _3d
static mp_obj_t ncnn_mp_mat_border(size_t n_args, const mp_obj_t *pos_args, mp_map_t *kw_args, bool make) {
    const char *where = make ? "Mat.copy_make_border" : "Mat.copy_cut_border";
    enum { ARG_top, ARG_bottom, ARG_left, ARG_right, ARG_type, ARG_v, ARG_opt, ARG_front, ARG_behind };
    static const mp_arg_t allowed_make[] = {
        { MP_QSTR_top, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
        { MP_QSTR_bottom, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
        { MP_QSTR_left, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
        { MP_QSTR_right, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
        { MP_QSTR_type, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
        { MP_QSTR_v, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
        { MP_QSTR_opt, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
        { MP_QSTR_front, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(-1)} },
        { MP_QSTR_behind, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(-1)} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed_make)];
    if (make) {
        ncnn_mp_parse_args(where, n_args - 1, pos_args + 1, kw_args, MP_ARRAY_SIZE(allowed_make), allowed_make, args);
    } else {
        // copy_cut_border has no type and v: the same table without those two rows.
        static const mp_arg_t allowed_cut[] = {
            { MP_QSTR_top, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
            { MP_QSTR_bottom, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
            { MP_QSTR_left, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
            { MP_QSTR_right, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
            { MP_QSTR_opt, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
            { MP_QSTR_front, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(-1)} },
            { MP_QSTR_behind, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = MP_OBJ_NEW_SMALL_INT(-1)} },
        };
        mp_arg_val_t cut[MP_ARRAY_SIZE(allowed_cut)];
        ncnn_mp_parse_args(where, n_args - 1, pos_args + 1, kw_args, MP_ARRAY_SIZE(allowed_cut), allowed_cut, cut);
        for (int i = 0; i < 4; i++) {
            args[i] = cut[i];
        }
        args[ARG_type].u_obj = MP_OBJ_NEW_SMALL_INT(0);
        args[ARG_v].u_obj = MP_OBJ_NEW_SMALL_INT(0);
        args[ARG_opt] = cut[4];
        args[ARG_front] = cut[5];
        args[ARG_behind] = cut[6];
    }
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat(pos_args[0], where);
    ncnn_mat_t m = self->handle;
    if (ncnn_mat_get_dims(m) == 0) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the Mat is empty"));
    }
    static const char *const names[] = { "top", "bottom", "left", "right" };
    int b[6];
    for (int i = 0; i < 4; i++) {
        b[i] = ncnn_mp_get_int_in(args[i].u_obj, 0, 1 << 15, where, names[i]);
    }
    b[4] = ncnn_mp_get_int_in(args[ARG_front].u_obj, -1, 1 << 15, where, "front");
    b[5] = ncnn_mp_get_int_in(args[ARG_behind].u_obj, -1, 1 << 15, where, "behind");
    // A 4-D Mat always through the _3d functions: ncnn's 2-D cut gives it d=0 and cstep=0.
    bool depth = b[4] >= 0 || b[5] >= 0 || ncnn_mat_get_dims(m) == 4;
    b[4] = b[4] < 0 ? 0 : b[4];
    b[5] = b[5] < 0 ? 0 : b[5];
    int type = ncnn_mp_get_int_in(args[ARG_type].u_obj, 0, 2, where, "type");
    float v = ncnn_mp_get_float(args[ARG_v].u_obj, where, "v");
    int w = ncnn_mat_get_w(m), h = ncnn_mat_get_h(m), d = ncnn_mat_get_d(m);
    // ncnn reads src rows and columns by index without checking them: a reflected or
    // cut border as wide as the Mat would read outside it. The pads made are the padding
    // rule's (shape_guard.h ncnn_mp_padding), as every layer that pads asks it: sideways and
    // up and down, then in depth.
    if (make) {
        ncnn_mp_padding_t rule = { .kind = NCNN_MP_PAD_GIVEN, .border = type, .top = b[0], .bottom = b[1],
                                   .left = b[2], .right = b[3] };
        ncnn_mp_padding_t deep = { .kind = NCNN_MP_PAD_GIVEN, .border = type, .left = b[4], .right = b[5] };
        ncnn_mp_pads_t pads;
        ncnn_mp_pad_verdict_t v = ncnn_mp_padding(&rule, w, h, false, &pads);
        v = v == NCNN_MP_PAD_FITS && depth ? ncnn_mp_padding(&deep, d, 1, true, &pads) : v;
        if (v == NCNN_MP_PAD_REFLECT) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("a reflected border must be narrower than the Mat"));
        }
        if (v != NCNN_MP_PAD_FITS) {  // (the pads are 0..2^15 here: not reached)
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("the borders do not fit the Mat"));
        }
    }
    if (!make && (b[0] + b[1] >= h || b[2] + b[3] >= w || b[4] + b[5] >= d)) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the borders cut away the whole Mat"));
    }
    if (make) {  // the new Mat's storage stays within what ncnn_mp lets ncnn allocate
        unsigned long long bytes = (unsigned long long)(w + b[2] + b[3]) * (h + b[0] + b[1]) * (d + b[4] + b[5])
            * ncnn_mat_get_c(m) * ncnn_mat_get_elemsize(m);
        if (bytes > NCNN_MP_MAT_MAX_BYTES) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("Mat too large (more than 2 GiB of storage)"));
        }
    }
    ncnn_mp_require_layer(make ? NCNN_MP_HELPER_PADDING : NCNN_MP_HELPER_CROP, where);
    ncnn_mp_result_t r;  // zero borders give back the Mat itself
    ncnn_mp_result_from_option(&r, args[ARG_opt].u_obj, pos_args[0], where);
    ncnn_option_t opt = r.opt;
    ncnn_mat_t dst = ncnn_mat_create();
    if (make && depth) {
        ncnn_copy_make_border_3d(m, dst, b[0], b[1], b[2], b[3], b[4], b[5], type, v, opt);
    } else if (make) {
        ncnn_copy_make_border(m, dst, b[0], b[1], b[2], b[3], type, v, opt);
    } else if (depth) {
        ncnn_copy_cut_border_3d(m, dst, b[0], b[1], b[2], b[3], b[4], b[5], opt);
    } else {
        ncnn_copy_cut_border(m, dst, b[0], b[1], b[2], b[3], opt);
    }
    if (ncnn_mat_get_dims(dst) == 0) {
        ncnn_mat_destroy(dst);
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("ncnn could not make the new Mat (unsupported element size or shape)"));
    }
    return ncnn_mp_result_wrap(&r, dst, where);
}

static mp_obj_t ncnn_mp_Mat_copy_make_border(size_t n_args, const mp_obj_t *pos_args, mp_map_t *kw_args) {
    return ncnn_mp_mat_border(n_args, pos_args, kw_args, true);
}
static NCNN_MP_DEFINE_METHOD_KW(ncnn_mp_Mat_copy_make_border_obj, Mat, copy_make_border, 1, 8, ncnn_mp_Mat_copy_make_border);

static mp_obj_t ncnn_mp_Mat_copy_cut_border(size_t n_args, const mp_obj_t *pos_args, mp_map_t *kw_args) {
    return ncnn_mp_mat_border(n_args, pos_args, kw_args, false);
}
static NCNN_MP_DEFINE_METHOD_KW(ncnn_mp_Mat_copy_cut_border_obj, Mat, copy_cut_border, 1, 6, ncnn_mp_Mat_copy_cut_border);

// Mat.batch(b: int) -> Mat   a view of batch b (ncnn_mat_get_batch_data); it keeps this Mat alive
static mp_obj_t ncnn_mp_Mat_batch(mp_obj_t self_in, mp_obj_t b_in) {
    const char *where = "Mat.batch";
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat(self_in, where);
    ncnn_mat_t m = self->handle;
    int dims = ncnn_mat_get_dims(m);
    if (dims == 0) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the Mat is empty"));
    }
    int b = ncnn_mp_get_index(b_in, ncnn_mp_mat_n(m), false, where, "b", "the Mat's batch count n is");
    int shape[4] = { ncnn_mat_get_w(m), ncnn_mat_get_h(m), ncnn_mat_get_d(m), ncnn_mat_get_c(m) };
    if (dims == 3) {
        shape[2] = shape[3];
    }
    ncnn_mp_result_t r;
    ncnn_mp_result_from_allocator(&r, mp_const_none, self_in, where);
    ncnn_mat_t v = ncnn_mp_mat_create(where, dims, shape, ncnn_mat_get_elemsize(m), ncnn_mat_get_elempack(m), 1,
        ncnn_mp_mat_channel(m, b, 0), NULL);
    mp_obj_t out = ncnn_mp_result_wrap(&r, v, where);
    // It lies over self's storage without counting it: valid while self keeps that storage.
    ((ncnn_mp_mat_obj_t *)MP_OBJ_TO_PTR(out))->external = ncnn_mat_get_data(m);
    return out;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Mat_batch_obj, Mat, batch, ncnn_mp_Mat_batch);

// Reads `n` floats from a sequence of numbers or a buffer of packed float32 into out;
// None gives NULL (ncnn then skips that step).
const float *ncnn_mp_get_floats(mp_obj_t obj, size_t n, float *out, const char *where, const char *name) {
    if (obj == mp_const_none) {
        return NULL;
    }
    size_t len;
    mp_obj_t *items;
    if (mp_obj_is_type(obj, &mp_type_list) || mp_obj_is_type(obj, &mp_type_tuple)) {
        mp_obj_get_array(obj, &len, &items);
    } else {
        // Packed float32: array('f'), or raw bytes such as struct.pack('<3f', ...) gives.
        mp_buffer_info_t info;
        if (mp_obj_is_str(obj) || !mp_get_buffer(obj, &info, MP_BUFFER_READ)
            || (info.typecode != 'f' && info.typecode != 'B')) {
            mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: %s must be a list/tuple of floats, a float32 buffer or None, not %s"), where, name, mp_obj_get_type_str(obj));
        }
        if (info.len != n * sizeof(float)) {
            mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: %s holds %u bytes, expected %u float32 values"),
                where, name, (unsigned)info.len, (unsigned)n);
        }
        memcpy(out, info.buf, n * sizeof(float));
        return out;
    }
    if (len != n) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: %s has %u values, expected %u (one per channel)"),
            where, name, (unsigned)len, (unsigned)n);
    }
    for (size_t i = 0; i < n; i++) {
        out[i] = ncnn_mp_get_float(items[i], where, name);
    }
    return out;
}

// Mat.substract_mean_normalize(mean, norm) -> None   ncnn_mat_substract_mean_normalize
// mean and norm: one float per channel each (sequence or float32 buffer), or None.
static mp_obj_t ncnn_mp_Mat_substract_mean_normalize(mp_obj_t self_in, mp_obj_t mean_in, mp_obj_t norm_in) {
    const char *where = "Mat.substract_mean_normalize";
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat_writable(self_in, where);
    int dims = ncnn_mat_get_dims(self->handle);
    if (dims == 0 || ncnn_mat_get_elemsize(self->handle) != 4 || ncnn_mat_get_elempack(self->handle) != 1) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("needs a non-empty float32 Mat with elempack 1"));
    }
    if (mean_in != mp_const_none || norm_in != mp_const_none) {  // mean only: Bias; else Scale
        ncnn_mp_require_layer(norm_in == mp_const_none ? NCNN_MP_HELPER_BIAS : NCNN_MP_HELPER_SCALE, where);
    }
    size_t channels = dims >= 3 ? (size_t)ncnn_mat_get_c(self->handle) : 1;
    float *buf = m_new(float, 2 * channels);
    const float *mean = ncnn_mp_get_floats(mean_in, channels, buf, where, "mean");
    const float *norm = ncnn_mp_get_floats(norm_in, channels, buf + channels, where, "norm");
    ncnn_mat_substract_mean_normalize(self->handle, mean, norm);
    m_del(float, buf, 2 * channels);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_3(ncnn_mp_Mat_substract_mean_normalize_obj, Mat, substract_mean_normalize, ncnn_mp_Mat_substract_mean_normalize);

// Mat[i] -> float / Mat[i] = v   (CPython ncnn) the i-th float32 of the storage, channel padding included
static mp_obj_t ncnn_mp_Mat_subscr(mp_obj_t self_in, mp_obj_t index, mp_obj_t value) {
    const char *where = value == MP_OBJ_SENTINEL ? "Mat.__getitem__" : value == MP_OBJ_NULL ? "Mat.__delitem__"
        : "Mat.__setitem__";
    ncnn_mp_mat_obj_t *self = value == MP_OBJ_SENTINEL ? ncnn_mp_get_mat(self_in, where)
        : ncnn_mp_get_mat_writable(self_in, where);
    if (value == MP_OBJ_NULL) {
        ncnn_mp_raise_type(where, NCNN_MP_TEXT("Mat elements cannot be deleted"));
    }
    if (ncnn_mat_get_elemsize(self->handle) != 4u * ncnn_mat_get_elempack(self->handle)) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("indexing needs float32 elements"));
    }
    int i = ncnn_mp_get_index(index, (int)(ncnn_mp_mat_storage_bytes(self->handle) / 4), true, where, "index", "len(Mat) is");
    float *data = ncnn_mat_get_data(self->handle);
    if (value == MP_OBJ_SENTINEL) {
        return mp_obj_new_float_from_f(data[i]);
    }
    data[i] = ncnn_mp_get_float(value, where, "value");
    return mp_const_none;
}

// len(Mat): the number of float32 slots Mat[i] reaches (0 for an empty Mat).
static mp_obj_t ncnn_mp_Mat_unary_op(mp_unary_op_t op, mp_obj_t self_in) {
    switch (op) {
        case MP_UNARY_OP_LEN: {
            ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat(self_in, "Mat.__len__");
            size_t es = ncnn_mat_get_elemsize(self->handle) / (size_t)(ncnn_mat_get_elempack(self->handle) ?: 1);
            return MP_OBJ_NEW_SMALL_INT(es ? ncnn_mp_mat_storage_bytes(self->handle) / es : 0);
        }
        case MP_UNARY_OP_BOOL: {
            ncnn_mp_mat_obj_t *self = MP_OBJ_TO_PTR(self_in);
            return mp_obj_new_bool(self->handle && ncnn_mat_get_dims(self->handle) > 0);
        }
        default:
            return MP_OBJ_NULL;
    }
}

// memoryview(Mat): the storage itself, writes go into the Mat. Typecode 'f' for
// float32 elements, else 'B'. 3-D/4-D Mats include the padding between channels.
// A Mat that cannot be used (released, expired, its buffer moved) raises ValueError here
// as everywhere else: a memoryview of it would point at freed storage.
static mp_int_t ncnn_mp_Mat_get_buffer(mp_obj_t self_in, mp_buffer_info_t *info, mp_uint_t flags) {
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat(self_in, "Mat.__buffer__");
    if ((flags & MP_BUFFER_WRITE) && self->readonly) {
        return 1;
    }
    size_t elem = ncnn_mat_get_elemsize(self->handle) / (size_t)(ncnn_mat_get_elempack(self->handle) ?: 1);
    // An empty Mat has no storage: its zero bytes are at a real address all the same, as
    // MicroPython's own empty buffers are (bytes(memoryview(empty)) made a bytes object over
    // NULL, which MicroPython then compares with memcmp(NULL, ...): undefined, UBSan).
    static uint8_t no_storage;  // (never written: the length is 0)
    void *data = ncnn_mat_get_data(self->handle);
    info->buf = data ? data : &no_storage;
    info->len = data ? ncnn_mp_mat_storage_bytes(self->handle) : 0;
    info->typecode = elem == 4 ? 'f' : 'B';
    return 0;
}

static void ncnn_mp_Mat_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    (void)kind;
    ncnn_mp_mat_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (self->handle == NULL) {
        mp_printf(print, "<Mat %s>", self->kind == NCNN_MP_MAT_BORROWED ? "expired" : "released");
        return;
    }
    ncnn_mat_t m = self->handle;
    mp_printf(print, "<Mat dims=%d w=%d h=%d d=%d c=%d elemsize=%u elempack=%d cstep=%u",
        ncnn_mat_get_dims(m), ncnn_mat_get_w(m), ncnn_mat_get_h(m), ncnn_mat_get_d(m), ncnn_mat_get_c(m),
        (unsigned)ncnn_mat_get_elemsize(m), ncnn_mat_get_elempack(m), (unsigned)ncnn_mat_get_cstep(m));
    if (ncnn_mp_mat_n(m) > 1) {
        mp_printf(print, " n=%d nstep=%u", ncnn_mp_mat_n(m), (unsigned)ncnn_mp_mat_nstep(m));
    }
    mp_print_str(print, ">");
}

// Mat.dims w h d c elemsize elempack cstep: read-only ints   ncnn_mat_get_*
static void ncnn_mp_Mat_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    static const qstr props[] = { MP_QSTR_dims, MP_QSTR_w, MP_QSTR_h, MP_QSTR_d, MP_QSTR_c,
                                  MP_QSTR_elemsize, MP_QSTR_elempack, MP_QSTR_cstep, MP_QSTR_n, MP_QSTR_nstep };
    size_t i = 0;
    while (i < MP_ARRAY_SIZE(props) && props[i] != attr) {
        i++;
    }
    if (i == MP_ARRAY_SIZE(props)) {
        dest[1] = MP_OBJ_SENTINEL;  // methods go to locals_dict
        return;
    }
    if (dest[0] != MP_OBJ_NULL) {
        ncnn_mp_raise_attr_fixed("Mat", attr, dest);
    }
    char where[NCNN_MP_WHERE_LEN];
    ncnn_mat_t m = ncnn_mp_get_mat(self_in, ncnn_mp_attr_where(where, "Mat", attr))->handle;
    mp_int_t v;
    switch (i) {
        case 0: v = ncnn_mat_get_dims(m); break;
        case 1: v = ncnn_mat_get_w(m); break;
        case 2: v = ncnn_mat_get_h(m); break;
        case 3: v = ncnn_mat_get_d(m); break;
        case 4: v = ncnn_mat_get_c(m); break;
        case 5: v = ncnn_mat_get_elemsize(m); break;
        case 6: v = ncnn_mat_get_elempack(m); break;
        case 7: v = ncnn_mat_get_cstep(m); break;
        case 8: v = ncnn_mp_mat_n(m); break;
        default: v = ncnn_mp_mat_nstep(m); break;
    }
    dest[0] = mp_obj_new_int(v);
}

static const mp_rom_map_elem_t ncnn_mp_Mat_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_fill), MP_ROM_PTR(&ncnn_mp_Mat_fill_obj) },
    { MP_ROM_QSTR(MP_QSTR_clone), MP_ROM_PTR(&ncnn_mp_Mat_clone_obj) },
    { MP_ROM_QSTR(MP_QSTR_clone_from), MP_ROM_PTR(&ncnn_mp_Mat_clone_from_obj) },
    { MP_ROM_QSTR(MP_QSTR_create), MP_ROM_PTR(&ncnn_mp_Mat_create_obj) },
    { MP_ROM_QSTR(MP_QSTR_release), MP_ROM_PTR(&ncnn_mp_Mat_release_obj) },
    { MP_ROM_QSTR(MP_QSTR_reshape), MP_ROM_PTR(&ncnn_mp_Mat_reshape_obj) },
    { MP_ROM_QSTR(MP_QSTR_flatten), MP_ROM_PTR(&ncnn_mp_Mat_flatten_obj) },
    { MP_ROM_QSTR(MP_QSTR_convert_packing), MP_ROM_PTR(&ncnn_mp_Mat_convert_packing_obj) },
    { MP_ROM_QSTR(MP_QSTR_to_bytes), MP_ROM_PTR(&ncnn_mp_Mat_to_bytes_obj) },
    { MP_ROM_QSTR(MP_QSTR_from_bytes), MP_ROM_PTR(&ncnn_mp_Mat_from_bytes_obj) },
    { MP_ROM_QSTR(MP_QSTR_substract_mean_normalize), MP_ROM_PTR(&ncnn_mp_Mat_substract_mean_normalize_obj) },
    { MP_ROM_QSTR(MP_QSTR_batch), MP_ROM_PTR(&ncnn_mp_Mat_batch_obj) },
    { MP_ROM_QSTR(MP_QSTR_copy_make_border), MP_ROM_PTR(&ncnn_mp_Mat_copy_make_border_obj) },
    { MP_ROM_QSTR(MP_QSTR_copy_cut_border), MP_ROM_PTR(&ncnn_mp_Mat_copy_cut_border_obj) },
    { MP_ROM_QSTR(MP_QSTR_BORDER_CONSTANT), MP_ROM_INT(NCNN_BORDER_CONSTANT) },
    { MP_ROM_QSTR(MP_QSTR_BORDER_REPLICATE), MP_ROM_INT(NCNN_BORDER_REPLICATE) },
    { MP_ROM_QSTR(MP_QSTR_BORDER_REFLECT), MP_ROM_INT(NCNN_BORDER_REFLECT) },
    #if NCNN_MP_HAS_PIXELS || NCNN_MP_HAS_CAMERA
    { MP_ROM_QSTR(MP_QSTR_from_pixels), MP_ROM_PTR(&ncnn_mp_Mat_from_pixels_obj) },
    { MP_ROM_QSTR(MP_QSTR_from_pixels_resize), MP_ROM_PTR(&ncnn_mp_Mat_from_pixels_resize_obj) },
    { MP_ROM_QSTR(MP_QSTR_to_pixels), MP_ROM_PTR(&ncnn_mp_Mat_to_pixels_obj) },
    #define NCNN_MP_PIXEL_CONST(name, value) { MP_ROM_QSTR(MP_QSTR_PIXEL_##name), MP_ROM_INT(value) },
    NCNN_MP_PIXEL_TYPES(NCNN_MP_PIXEL_CONST)
    #if NCNN_MP_HAS_CAMERA
    NCNN_MP_CAMERA_TYPES(NCNN_MP_PIXEL_CONST)
    { MP_ROM_QSTR(MP_QSTR_from_pixels_int8), MP_ROM_PTR(&ncnn_mp_Mat_from_pixels_int8_obj) },
    #endif
    #undef NCNN_MP_PIXEL_CONST
    #endif
    #if NCNN_MP_HAS_PIXELS
    { MP_ROM_QSTR(MP_QSTR_from_pixels_roi), MP_ROM_PTR(&ncnn_mp_Mat_from_pixels_roi_obj) },
    { MP_ROM_QSTR(MP_QSTR_from_pixels_roi_resize), MP_ROM_PTR(&ncnn_mp_Mat_from_pixels_roi_resize_obj) },
    { MP_ROM_QSTR(MP_QSTR_to_pixels_resize), MP_ROM_PTR(&ncnn_mp_Mat_to_pixels_resize_obj) },
    #endif
    #if NCNN_MP_HAS_DRAWING
    { MP_ROM_QSTR(MP_QSTR_draw_rectangle), MP_ROM_PTR(&ncnn_mp_Mat_draw_rectangle_obj) },
    { MP_ROM_QSTR(MP_QSTR_draw_circle), MP_ROM_PTR(&ncnn_mp_Mat_draw_circle_obj) },
    { MP_ROM_QSTR(MP_QSTR_draw_line), MP_ROM_PTR(&ncnn_mp_Mat_draw_line_obj) },
    { MP_ROM_QSTR(MP_QSTR_draw_text), MP_ROM_PTR(&ncnn_mp_Mat_draw_text_obj) },
    #endif
    { MP_ROM_QSTR(MP_QSTR___del__), MP_ROM_PTR(&ncnn_mp_Mat_del_obj) },
};
static MP_DEFINE_CONST_DICT(ncnn_mp_Mat_locals, ncnn_mp_Mat_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    ncnn_mp_type_Mat, MP_QSTR_Mat, MP_TYPE_FLAG_NONE,
    make_new, ncnn_mp_Mat_make_new,
    print, ncnn_mp_Mat_print,
    attr, ncnn_mp_Mat_attr,
    subscr, ncnn_mp_Mat_subscr,
    unary_op, ncnn_mp_Mat_unary_op,
    buffer, ncnn_mp_Mat_get_buffer,
    locals_dict, &ncnn_mp_Mat_locals
    );
