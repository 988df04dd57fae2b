// Allocator: ncnn's pool allocators (ncnn_allocator_create_[unlocked_]pool_allocator).
#include <stdlib.h>

#include "ncnn_mp.h"

ncnn_mp_allocator_native_t *ncnn_mp_allocator_native_ref(ncnn_mp_allocator_native_t *a) {
    if (a) {
        ncnn_mp_count(&a->refs, 1);
    }
    return a;
}

void ncnn_mp_allocator_native_unref(ncnn_mp_allocator_native_t *a) {
    if (a && ncnn_mp_count(&a->refs, -1) == 0) {
        ncnn_allocator_destroy(a->handle);
        free(a);
    }
}

void ncnn_mp_allocator_native_assign(ncnn_mp_allocator_native_t **slot, ncnn_mp_allocator_native_t *a) {
    ncnn_mp_allocator_native_ref(a);  // first: a may be the one already in *slot
    ncnn_mp_allocator_native_unref(*slot);
    *slot = a;
}

void ncnn_mp_allocator_set_assign(ncnn_mp_allocator_set_t dst, ncnn_mp_allocator_native_t *const *src) {
    for (int i = 0; i < NCNN_MP_ALLOCATOR_KINDS; i++) {
        ncnn_mp_allocator_native_assign(&dst[i], src ? src[i] : NULL);
    }
}

void ncnn_mp_allocator_set_apply(ncnn_option_t opt, ncnn_mp_allocator_native_t *const *set) {
    static void (*const setters[NCNN_MP_ALLOCATOR_KINDS])(ncnn_option_t, ncnn_allocator_t) = {
        ncnn_option_set_blob_allocator, ncnn_option_set_workspace_allocator, ncnn_option_set_kvcache_allocator,
    };
    for (int i = 0; i < NCNN_MP_ALLOCATOR_KINDS; i++) {
        setters[i](opt, set[i] ? set[i]->handle : NULL);
    }
}

ncnn_mp_allocator_obj_t *ncnn_mp_get_allocator(mp_obj_t obj, const char *where) {
    ncnn_mp_allocator_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_Allocator, where);
    if (self->native == NULL) {
        ncnn_mp_raise_value(where, "the Allocator was closed");
    }
    return self;
}

ncnn_mp_allocator_native_t *ncnn_mp_get_allocator_native_or_none(mp_obj_t obj, const char *where) {
    return obj == mp_const_none ? NULL : ncnn_mp_get_allocator(obj, where)->native;
}

// Allocator(unlocked=False)   ncnn_allocator_create_pool_allocator / _unlocked_pool_allocator
static mp_obj_t ncnn_mp_Allocator_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *all_args) {
    enum { ARG_unlocked };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_unlocked, MP_ARG_BOOL, {.u_bool = false} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed)];
    ncnn_mp_parse_args_kw_array("Allocator()", n_args, n_kw, all_args, MP_ARRAY_SIZE(allowed), allowed, args);
    // Allocate the Python object first: if that raises MemoryError, nothing native leaks.
    ncnn_mp_allocator_obj_t *self = mp_obj_malloc_with_finaliser(ncnn_mp_allocator_obj_t, type);
    self->native = NULL;
    self->unlocked = args[ARG_unlocked].u_bool;
    ncnn_mp_allocator_native_t *native = malloc(sizeof(*native));
    if (native == NULL) {
        mp_raise_msg(&mp_type_MemoryError, MP_ERROR_TEXT("Allocator(): out of memory"));
    }
    native->refs = 1;
    native->handle = self->unlocked ? ncnn_allocator_create_unlocked_pool_allocator()
        : ncnn_allocator_create_pool_allocator();
    self->native = native;
    return MP_OBJ_FROM_PTR(self);
}

// Allocator.close() / __del__: drop this object's reference; ncnn's allocator is
// destroyed once no Mat, Option, Net or Extractor uses it any more.
static mp_obj_t ncnn_mp_Allocator_close(mp_obj_t self_in) {
    ncnn_mp_allocator_obj_t *self = MP_OBJ_TO_PTR(self_in);
    ncnn_mp_allocator_native_unref(self->native);
    self->native = NULL;
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Allocator_close_obj, Allocator, close, ncnn_mp_Allocator_close);
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Allocator_del_obj, Allocator, __del__, ncnn_mp_Allocator_close);
NCNN_MP_DEFINE_CONTEXT_MANAGER(Allocator);


static void ncnn_mp_Allocator_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    (void)kind;
    ncnn_mp_allocator_obj_t *self = MP_OBJ_TO_PTR(self_in);
    mp_printf(print, "<Allocator %s%s>", self->unlocked ? "unlocked" : "locked",
        self->native ? "" : " closed");
}

static const mp_rom_map_elem_t ncnn_mp_Allocator_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_close), MP_ROM_PTR(&ncnn_mp_Allocator_close_obj) },
    { MP_ROM_QSTR(MP_QSTR___del__), MP_ROM_PTR(&ncnn_mp_Allocator_del_obj) },
    { MP_ROM_QSTR(MP_QSTR___enter__), MP_ROM_PTR(&ncnn_mp_Allocator_enter_obj) },
    { MP_ROM_QSTR(MP_QSTR___exit__), MP_ROM_PTR(&ncnn_mp_Allocator_exit_obj) },
};
static MP_DEFINE_CONST_DICT(ncnn_mp_Allocator_locals, ncnn_mp_Allocator_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    ncnn_mp_type_Allocator, MP_QSTR_Allocator, MP_TYPE_FLAG_NONE,
    make_new, ncnn_mp_Allocator_make_new,
    print, ncnn_mp_Allocator_print,
    locals_dict, &ncnn_mp_Allocator_locals
    );
