// SPDX-License-Identifier: MIT
// Option: ncnn's runtime options (ncnn_option_*), owned, a view of a Net's, or lent to a callback.
#include <string.h>

#include "ncnn_mp.h"

// The most ncnn worker threads an Option may ask for. With GCC's OpenMP (the desktop build)
// each is a thread of its own with the default stack reserved (8 MiB on Linux), and a thread
// libgomp cannot create ends the process ("libgomp: Thread creation failed", exit 1; under a
// 1 GiB address-space limit that was 200 threads for SqueezeNet, where 64 ran). More workers
// than cores only wait for each other.
#ifndef NCNN_MP_MAX_THREADS
#define NCNN_MP_MAX_THREADS 64
#endif

// The boolean switches, as data: one row per ncnn_option_get_/set_ pair.
// `pipeline`: ncnn's layers read it in create_pipeline (during load_model) to pick
// kernels and lay out weights; running with another value than the net was loaded
// with gives wrong numbers or worse, so it may not change on a loaded net.
typedef struct {
    qstr name;
    int (*get)(const ncnn_option_t);
    void (*set)(ncnn_option_t, int);
    bool pipeline;
} ncnn_mp_option_flag_t;

#define NCNN_MP_OPTION_FLAG(n) { MP_QSTR_##n, ncnn_option_get_##n, ncnn_option_set_##n, true }
static const ncnn_mp_option_flag_t ncnn_mp_option_flags[] = {
    NCNN_MP_OPTION_FLAG(use_vulkan_compute),
    { MP_QSTR_use_local_pool_allocator, ncnn_option_get_use_local_pool_allocator,
      ncnn_option_set_use_local_pool_allocator, false },
    NCNN_MP_OPTION_FLAG(use_winograd_convolution),
    NCNN_MP_OPTION_FLAG(use_sgemm_convolution),
    NCNN_MP_OPTION_FLAG(use_packing_layout),
    NCNN_MP_OPTION_FLAG(use_fp16_packed),
    NCNN_MP_OPTION_FLAG(use_fp16_storage),
    NCNN_MP_OPTION_FLAG(use_fp16_arithmetic),
    NCNN_MP_OPTION_FLAG(use_int8_packed),
    NCNN_MP_OPTION_FLAG(use_int8_storage),
    NCNN_MP_OPTION_FLAG(use_int8_arithmetic),
    NCNN_MP_OPTION_FLAG(use_int16_packed),
    NCNN_MP_OPTION_FLAG(use_int16_storage),
    NCNN_MP_OPTION_FLAG(use_bf16_packed),
    NCNN_MP_OPTION_FLAG(use_bf16_storage),
    NCNN_MP_OPTION_FLAG(use_shader_local_memory),
    NCNN_MP_OPTION_FLAG(use_cooperative_matrix),
};
#undef NCNN_MP_OPTION_FLAG

static ncnn_mp_option_obj_t *ncnn_mp_option_new(const mp_obj_type_t *type, bool finaliser) {
    // A lent Option owns nothing: no finaliser.
    ncnn_mp_option_obj_t *self = finaliser ? mp_obj_malloc_with_finaliser(ncnn_mp_option_obj_t, type)
        : mp_obj_malloc(ncnn_mp_option_obj_t, type);
    self->handle = NULL;
    self->net = NULL;
    memset(self->allocators, 0, sizeof(self->allocators));
    self->owner = NULL;
    self->kind = NCNN_MP_OPTION_OWNED;
    return self;
}

void ncnn_mp_option_copy_flags(ncnn_option_t dst, const ncnn_option_t src) {
    ncnn_option_set_num_threads(dst, ncnn_option_get_num_threads(src));
    for (size_t i = 0; i < MP_ARRAY_SIZE(ncnn_mp_option_flags); i++) {
        ncnn_mp_option_flags[i].set(dst, ncnn_mp_option_flags[i].get(src));
    }
}

qstr ncnn_mp_option_pipeline_mismatch(const ncnn_option_t a, const ncnn_option_t b) {
    for (size_t i = 0; i < MP_ARRAY_SIZE(ncnn_mp_option_flags); i++) {
        const ncnn_mp_option_flag_t *f = &ncnn_mp_option_flags[i];
        if (f->pipeline && !f->get(a) != !f->get(b)) {
            return f->name;
        }
    }
    return MP_QSTRnull;
}

ncnn_mp_option_obj_t *ncnn_mp_get_option(mp_obj_t obj, const char *where) {
    ncnn_mp_option_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_Option, where);
    if (self->handle == NULL) {
        ncnn_mp_raise_value(where, self->kind == NCNN_MP_OPTION_BORROWED
            ? NCNN_MP_TEXT("used after the callback it was lent to returned (copy what you need inside the callback)")
            : NCNN_MP_TEXT("the Option was released"));
    }
    if (self->kind == NCNN_MP_OPTION_BORROWED) {
        ncnn_mp_check_owner(self->owner, where);
    }
    return self;
}

ncnn_option_t ncnn_mp_option_new_copy(const ncnn_option_t src) {
    ncnn_mp_option_obj_t *copy = ncnn_mp_option_new(&ncnn_mp_type_Option, true);  // collected with its handle
    copy->handle = ncnn_option_create();
    ncnn_mp_option_copy_flags(copy->handle, src);
    return copy->handle;
}

mp_obj_t ncnn_mp_option_wrap_net_view(ncnn_mp_net_native_t *net) {
    ncnn_mp_option_obj_t *self = ncnn_mp_option_new(&ncnn_mp_type_Option, true);
    self->kind = NCNN_MP_OPTION_NET_VIEW;
    self->net = ncnn_mp_net_native_ref(net);
    self->handle = ncnn_net_get_option(net->handle);
    return MP_OBJ_FROM_PTR(self);
}

static void ncnn_mp_option_expire(mp_obj_t obj) {
    ((ncnn_mp_option_obj_t *)MP_OBJ_TO_PTR(obj))->handle = NULL;
}

static const ncnn_mp_lent_kind_t ncnn_mp_option_lent = { ncnn_mp_option_expire, NULL };

// A wrapper for an Option ncnn lends, without its handle until it is listed to expire.
static ncnn_mp_option_obj_t *ncnn_mp_option_new_lent(void) {
    ncnn_mp_option_obj_t *self = ncnn_mp_option_new(&ncnn_mp_type_Option, false);
    self->kind = NCNN_MP_OPTION_BORROWED;
    self->owner = ncnn_mp_thread();
    self->handle = NULL;
    return self;
}

mp_obj_t ncnn_mp_option_lend(ncnn_option_t handle, ncnn_mp_lent_t *lent) {
    ncnn_mp_option_obj_t *self = ncnn_mp_option_new_lent();
    ncnn_mp_lend(lent, MP_OBJ_FROM_PTR(self), &ncnn_mp_option_lent);
    self->handle = handle;
    return MP_OBJ_FROM_PTR(self);
}

mp_obj_t ncnn_mp_option_lend_to_call(ncnn_option_t handle, ncnn_mp_lent_item_t *slot) {
    if (slot->obj != MP_OBJ_NULL && ((ncnn_mp_option_obj_t *)MP_OBJ_TO_PTR(slot->obj))->handle == handle) {
        return slot->obj;
    }
    ncnn_mp_option_obj_t *self = ncnn_mp_option_new_lent();  // (may raise: nothing changed yet)
    ncnn_mp_lent_item_expire(slot);
    slot->obj = MP_OBJ_FROM_PTR(self);
    slot->kind = &ncnn_mp_option_lent;
    self->handle = handle;
    return slot->obj;
}

// Option()   ncnn_option_create
static mp_obj_t ncnn_mp_Option_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    ncnn_mp_parse_args_kw_array("Option()", n_args, n_kw, args, 0, NULL, NULL);
    ncnn_mp_option_obj_t *self = ncnn_mp_option_new(type, true);
    self->handle = ncnn_option_create();
    return MP_OBJ_FROM_PTR(self);
}

// __del__   ncnn_option_destroy (owned only); drops the allocator and net references.
static mp_obj_t ncnn_mp_Option_del(mp_obj_t self_in) {
    ncnn_mp_option_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (self->kind == NCNN_MP_OPTION_OWNED && self->handle) {
        ncnn_option_destroy(self->handle);
    }
    self->handle = NULL;
    ncnn_mp_allocator_set_assign(self->allocators, NULL);
    ncnn_mp_net_native_unref(self->net);
    self->net = NULL;
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Option_del_obj, Option, __del__, ncnn_mp_Option_del);

// Sets one of the Option's allocators; it is held (counted) in the Option itself, or,
// for a view, in the Net whose option it is, for as long as ncnn may use it.
static void ncnn_mp_option_set_allocator(mp_obj_t self_in, mp_obj_t alloc_in, ncnn_mp_allocator_kind_t which,
    const char *where) {
    ncnn_mp_option_obj_t *self = ncnn_mp_get_option(self_in, where);
    ncnn_mp_allocator_native_t *a = ncnn_mp_get_allocator_native_or_none(alloc_in, where);
    if (self->kind == NCNN_MP_OPTION_BORROWED) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("cannot set allocators on an Option lent to a callback"));
    }
    ncnn_mp_allocator_native_t **set = self->kind == NCNN_MP_OPTION_NET_VIEW ? self->net->allocators : self->allocators;
    if (self->kind == NCNN_MP_OPTION_NET_VIEW) {
        ncnn_mp_net_check_idle(self->net, where);  // ncnn may be using the old one
    }
    ncnn_mp_allocator_set_t next;
    memcpy(next, set, sizeof(next));
    next[which] = a;
    ncnn_mp_allocator_set_apply(self->handle, next);
    ncnn_mp_allocator_native_assign(&set[which], a);
}

// Option.set_blob_allocator(a: Allocator | None)   ncnn_option_set_blob_allocator
static mp_obj_t ncnn_mp_Option_set_blob_allocator(mp_obj_t self_in, mp_obj_t a) {
    ncnn_mp_option_set_allocator(self_in, a, NCNN_MP_BLOB_ALLOCATOR, "Option.set_blob_allocator");
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Option_set_blob_allocator_obj, Option, set_blob_allocator, ncnn_mp_Option_set_blob_allocator);

// Option.set_workspace_allocator(a: Allocator | None)   ncnn_option_set_workspace_allocator
static mp_obj_t ncnn_mp_Option_set_workspace_allocator(mp_obj_t self_in, mp_obj_t a) {
    ncnn_mp_option_set_allocator(self_in, a, NCNN_MP_WORKSPACE_ALLOCATOR, "Option.set_workspace_allocator");
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Option_set_workspace_allocator_obj, Option, set_workspace_allocator, ncnn_mp_Option_set_workspace_allocator);

// Option.set_kvcache_allocator(a: Allocator | None)   ncnn_option_set_kvcache_allocator
static mp_obj_t ncnn_mp_Option_set_kvcache_allocator(mp_obj_t self_in, mp_obj_t a) {
    ncnn_mp_option_set_allocator(self_in, a, NCNN_MP_KVCACHE_ALLOCATOR, "Option.set_kvcache_allocator");
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Option_set_kvcache_allocator_obj, Option, set_kvcache_allocator, ncnn_mp_Option_set_kvcache_allocator);

// Option.set_kvcache_max_seqlen_hint(n: int)   ncnn_option_set_kvcache_max_seqlen_hint
static mp_obj_t ncnn_mp_Option_set_kvcache_max_seqlen_hint(mp_obj_t self_in, mp_obj_t n) {
    const char *where = "Option.set_kvcache_max_seqlen_hint";
    ncnn_mp_option_obj_t *self = ncnn_mp_get_option(self_in, where);
    ncnn_option_set_kvcache_max_seqlen_hint(self->handle, ncnn_mp_get_int_in(n, 0, INT32_MAX, where, "max_seqlen_hint"));
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Option_set_kvcache_max_seqlen_hint_obj, Option, set_kvcache_max_seqlen_hint, ncnn_mp_Option_set_kvcache_max_seqlen_hint);

// Option.num_threads: int and the use_* flags: bool   ncnn_option_get_* / ncnn_option_set_*
static void ncnn_mp_Option_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    const ncnn_mp_option_flag_t *flag = NULL;
    for (size_t i = 0; i < MP_ARRAY_SIZE(ncnn_mp_option_flags); i++) {
        if (ncnn_mp_option_flags[i].name == attr) {
            flag = &ncnn_mp_option_flags[i];
        }
    }
    if (flag == NULL && attr != MP_QSTR_num_threads) {
        dest[1] = MP_OBJ_SENTINEL;  // not ours: continue lookup in locals_dict
        return;
    }
    if (dest[0] != MP_OBJ_NULL && dest[1] == MP_OBJ_NULL) {
        ncnn_mp_raise_attr_fixed("Option", attr, dest);
    }
    char where[NCNN_MP_WHERE_LEN];
    ncnn_mp_attr_where(where, "Option", attr);
    if (dest[0] == MP_OBJ_NULL) {
        ncnn_mp_option_obj_t *self = ncnn_mp_get_option(self_in, where);
        dest[0] = flag ? mp_obj_new_bool(flag->get(self->handle))
            : mp_obj_new_int(ncnn_option_get_num_threads(self->handle));
    } else if (dest[1] != MP_OBJ_NULL) {
        ncnn_mp_option_obj_t *self = ncnn_mp_get_option(self_in, where);
        if (flag && flag->pipeline && self->kind == NCNN_MP_OPTION_NET_VIEW && self->net->stage != NCNN_MP_NET_EMPTY
            && !flag->get(self->handle) != !mp_obj_is_true(dest[1])) {
            mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: this is a Net's option (net.opt), and the net's layers were prepared with it when the model was loaded; set it before loading (or clear() first)"), where);
        }
        #if !NCNN_VULKAN
        if ((attr == MP_QSTR_use_vulkan_compute || attr == MP_QSTR_use_shader_local_memory
             || attr == MP_QSTR_use_cooperative_matrix) && mp_obj_is_true(dest[1])) {
            // ncnn without Vulkan ignores these GPU switches: say so instead of pretending.
            ncnn_mp_raise_not_built(where, NCNN_MP_TEXT("NCNN_VULKAN"));
        }
        #endif
        if (flag) {
            flag->set(self->handle, mp_obj_is_true(dest[1]));
        } else {
            ncnn_option_set_num_threads(self->handle,
                ncnn_mp_get_int_in(dest[1], 1, NCNN_MP_MAX_THREADS, where, "num_threads"));
        }
        dest[0] = MP_OBJ_NULL;  // success
    }
}

static void ncnn_mp_Option_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    (void)kind;
    ncnn_mp_option_obj_t *self = MP_OBJ_TO_PTR(self_in);
    static const char *const kinds[] = { "", " of a Net", " lent to a callback" };
    if (self->handle == NULL) {
        mp_printf(print, "<Option%s, released>", kinds[self->kind]);
    } else {
        mp_printf(print, "<Option%s num_threads=%d>", kinds[self->kind], ncnn_option_get_num_threads(self->handle));
    }
}

static const mp_rom_map_elem_t ncnn_mp_Option_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_set_blob_allocator), MP_ROM_PTR(&ncnn_mp_Option_set_blob_allocator_obj) },
    { MP_ROM_QSTR(MP_QSTR_set_workspace_allocator), MP_ROM_PTR(&ncnn_mp_Option_set_workspace_allocator_obj) },
    { MP_ROM_QSTR(MP_QSTR_set_kvcache_allocator), MP_ROM_PTR(&ncnn_mp_Option_set_kvcache_allocator_obj) },
    { MP_ROM_QSTR(MP_QSTR_set_kvcache_max_seqlen_hint), MP_ROM_PTR(&ncnn_mp_Option_set_kvcache_max_seqlen_hint_obj) },
    { MP_ROM_QSTR(MP_QSTR___del__), MP_ROM_PTR(&ncnn_mp_Option_del_obj) },
};
static MP_DEFINE_CONST_DICT(ncnn_mp_Option_locals, ncnn_mp_Option_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    ncnn_mp_type_Option, MP_QSTR_Option, MP_TYPE_FLAG_NONE,
    make_new, ncnn_mp_Option_make_new,
    print, ncnn_mp_Option_print,
    attr, ncnn_mp_Option_attr,
    locals_dict, &ncnn_mp_Option_locals
    );
