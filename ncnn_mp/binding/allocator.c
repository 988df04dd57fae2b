// SPDX-License-Identifier: MIT
// Allocator: ncnn's pool allocators (ncnn_allocator_create_[unlocked_]pool_allocator), one
// that counts what it hands out (cxx_allocator.cpp), or an arena of fixed size (cxx_arena.cpp).
#include <stdlib.h>

#include "ncnn_mp.h"
#include "cxx_seam.h"

typedef struct _ncnn_mp_allocator_obj_t {
    mp_obj_base_t base;
    ncnn_mp_allocator_native_t *native;  // counted; NULL after close()
    bool unlocked;
    bool counting;  // Allocator(counting=True): cxx_allocator.cpp's counting allocator
    bool arena;     // Allocator(arena=...): cxx_arena.cpp's arena
} ncnn_mp_allocator_obj_t;

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

void ncnn_mp_allocator_set_share(ncnn_mp_allocator_set_t dst, ncnn_mp_allocator_native_t *const *src) {
    for (int i = 0; i < NCNN_MP_ALLOCATOR_KINDS; i++) {
        dst[i] = src[i];
        if (dst[i]) {
            dst[i]->refs++;  // (the caller holds the lock)
        }
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

void ncnn_mp_check_mat_alloc(unsigned long long bytes, const ncnn_mp_allocator_native_t *a, const char *where) {
    (a != NULL && a->arena ? ncnn_mp_check_alloc_bound : ncnn_mp_check_alloc)(bytes, where, "the Mat");
}

static ncnn_mp_allocator_obj_t *ncnn_mp_get_allocator(mp_obj_t obj, const char *where) {
    ncnn_mp_allocator_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_Allocator, where);
    if (self->native == NULL) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the Allocator was closed"));
    }
    return self;
}

ncnn_mp_allocator_native_t *ncnn_mp_get_allocator_native_or_none(mp_obj_t obj, const char *where) {
    return obj == mp_const_none ? NULL : ncnn_mp_get_allocator(obj, where)->native;
}

// Allocator(unlocked=False, *, counting=False, arena=None, spare=0)
//   ncnn_allocator_create_pool_allocator / _unlocked_pool_allocator; counting: no pool, each
//   block from ncnn's fastMalloc, the bytes in use and their peak counted (Allocator.peak);
//   arena: every block from one block taken from the C heap now (cxx_arena.cpp): `arena`
//   bytes handed out first fit, or a plan (bytes from Allocator.plan()) laid out as planned,
//   with `spare` bytes more for first fit
static mp_obj_t ncnn_mp_Allocator_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *all_args) {
    const char *where = "Allocator()";
    enum { ARG_unlocked, ARG_counting, ARG_arena, ARG_spare };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_unlocked, MP_ARG_BOOL, {.u_bool = false} },
        { MP_QSTR_counting, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = false} },
        { MP_QSTR_arena, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = mp_const_none} },
        { MP_QSTR_spare, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = mp_const_none} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed)];
    ncnn_mp_parse_args_kw_array(where, n_args, n_kw, all_args, MP_ARRAY_SIZE(allowed), allowed, args);
    mp_obj_t arena_in = args[ARG_arena].u_obj;
    bool arena = arena_in != mp_const_none;
    if ((int)args[ARG_unlocked].u_bool + (int)args[ARG_counting].u_bool + (int)arena > 1) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("give one of unlocked=, counting= and arena=, not two"));
    }
    // The arena: a size (first fit), or a plan and spare bytes beside it. (Its blocks keep
    // ncnn's alignment: a size holds at least one block and its header.)
    size_t spare = 0;
    mp_buffer_info_t plan = { .buf = NULL, .len = 0 };
    if (arena && mp_obj_is_int(arena_in)) {
        spare = (size_t)ncnn_mp_get_int_in(arena_in, 64, INT32_MAX, where, "arena");
    } else if (arena) {
        if (mp_obj_is_str(arena_in)) {
            mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: arena must be a size (int) or a plan (bytes), not str"), where);
        }
        ncnn_mp_get_buffer(arena_in, &plan, MP_BUFFER_READ, where, "arena");
        size_t planned;
        if (ncnn_mp_cxx_arena_plan_check(plan.buf, plan.len, &planned) < 0) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("arena is not a plan (bytes from Allocator.plan(), or a size in bytes)"));
        }
    }
    if (args[ARG_spare].u_obj != mp_const_none) {
        if (plan.buf == NULL) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("spare= goes with arena=plan (an arena of a size is all spare)"));
        }
        spare = (size_t)ncnn_mp_get_int_in(args[ARG_spare].u_obj, 0, INT32_MAX, where, "spare");
    }
    #if !NCNN_MP_HAS_COUNTING_ALLOCATOR
    if (args[ARG_counting].u_bool || arena) {
        ncnn_mp_raise_left_out(where, "NCNN_MP_HAS_COUNTING_ALLOCATOR");
    }
    #endif
    // Allocate the Python object first: if that raises MemoryError, nothing native leaks.
    ncnn_mp_allocator_obj_t *self = mp_obj_malloc_with_finaliser(ncnn_mp_allocator_obj_t, type);
    self->native = NULL;
    self->unlocked = args[ARG_unlocked].u_bool;
    self->counting = args[ARG_counting].u_bool;
    self->arena = arena;
    ncnn_mp_allocator_native_t *native = malloc(sizeof(*native));
    ncnn_allocator_t handle = native == NULL ? NULL
        #if NCNN_MP_HAS_COUNTING_ALLOCATOR
        : self->counting ? ncnn_mp_cxx_counting_allocator_create()
        // (a plan in the board's flash is read there: a plan's 8 bytes a block stay out of RAM)
        : self->arena ? ncnn_mp_cxx_arena_allocator_create(spare, plan.buf, plan.len,
            plan.buf != NULL && ncnn_mp_port_read_only(plan.buf, plan.len))
        #endif
        : self->unlocked ? ncnn_allocator_create_unlocked_pool_allocator()
        : ncnn_allocator_create_pool_allocator();
    if (handle == NULL) {
        free(native);
        if (arena) {
            size_t planned = 0;
            if (plan.buf != NULL) {
                ncnn_mp_cxx_arena_plan_check(plan.buf, plan.len, &planned);
            }
            mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: the C heap has no block of %u bytes for the arena"),
                where, (unsigned)(planned + spare));
        }
        ncnn_mp_raise_text(&mp_type_MemoryError, where, NCNN_MP_TEXT("out of memory"));
    }
    native->refs = 1;
    native->handle = handle;
    native->arena = arena;
    self->native = native;
    return MP_OBJ_FROM_PTR(self);
}

// Allocator.in_use / .peak / .size / .unplanned: int | None   a counting allocator's bytes
// handed out and not yet back, and the most at once since it was made (or reset_peak()); an
// arena's bytes of blocks in use, the most of the arena ever used (what an extract needs of
// it), its size, and the blocks that did not follow its plan; None otherwise
static void ncnn_mp_Allocator_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    if (attr != MP_QSTR_in_use && attr != MP_QSTR_peak && attr != MP_QSTR_size && attr != MP_QSTR_unplanned) {
        dest[1] = MP_OBJ_SENTINEL;  // methods go to locals_dict
        return;
    }
    if (dest[0] != MP_OBJ_NULL) {
        ncnn_mp_raise_attr_fixed("Allocator", attr, dest);
    }
    char where[NCNN_MP_WHERE_LEN];
    ncnn_mp_allocator_obj_t *self = ncnn_mp_get_allocator(self_in, ncnn_mp_attr_where(where, "Allocator", attr));
    dest[0] = mp_const_none;
    #if NCNN_MP_HAS_COUNTING_ALLOCATOR
    size_t value;
    if (self->counting && (attr == MP_QSTR_in_use || attr == MP_QSTR_peak)) {
        size_t in_use, peak;
        ncnn_mp_cxx_counting_allocator_stats(self->native->handle, &in_use, &peak);
        value = attr == MP_QSTR_in_use ? in_use : peak;
    } else if (self->arena) {
        ncnn_mp_arena_stats_t st;
        ncnn_mp_cxx_arena_allocator_stats(self->native->handle, &st);
        value = attr == MP_QSTR_in_use ? st.in_use : attr == MP_QSTR_peak ? st.peak
            : attr == MP_QSTR_size ? st.size : st.unplanned;
    } else {
        return;
    }
    dest[0] = mp_obj_new_int_from_uint(value);
    #else
    (void)self;  // (checked all the same: a closed Allocator raises)
    #endif
}

// Allocator.reset_peak() -> None   a counting allocator's peak starts again from what is in use,
// an arena's from the part of it in use now
static mp_obj_t ncnn_mp_Allocator_reset_peak(mp_obj_t self_in) {
    ncnn_mp_allocator_obj_t *self = ncnn_mp_get_allocator(self_in, "Allocator.reset_peak");
    if (!self->counting && !self->arena) {
        ncnn_mp_raise_value("Allocator.reset_peak", NCNN_MP_TEXT("only a counting allocator or an arena (Allocator(counting=True), Allocator(arena=size)) has a peak"));
    }
    #if NCNN_MP_HAS_COUNTING_ALLOCATOR
    if (self->arena) {
        ncnn_mp_cxx_arena_allocator_reset_peak(self->native->handle);
    } else {
        ncnn_mp_cxx_counting_allocator_reset_peak(self->native->handle);
    }
    #endif
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Allocator_reset_peak_obj, Allocator, reset_peak, ncnn_mp_Allocator_reset_peak);

// Allocator.plan() -> bytes   an arena's memory plan: the blocks it handed out since it was
// made (or reset_peak()), sizes and lifetimes, laid out largest first at the lowest offset no
// block alive at the same time takes (cxx_arena.cpp). Allocator(arena=plan) replays it: its
// size is the plan's, len(plan) bytes more hold the plan.
static mp_obj_t ncnn_mp_Allocator_plan(mp_obj_t self_in) {
    const char *where = "Allocator.plan";
    ncnn_mp_allocator_obj_t *self = ncnn_mp_get_allocator(self_in, where);
    if (!self->arena) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("only an arena (Allocator(arena=...)) records what it hands out"));
    }
    #if NCNN_MP_HAS_COUNTING_ALLOCATOR
    long len = ncnn_mp_cxx_arena_allocator_plan(self->native->handle, NULL, 0);
    if (len < 0) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("nothing to plan: the arena handed out no block since it was made or reset_peak(), more than a plan holds, or it was made from a plan"));
    }
    vstr_t out;
    vstr_init_len(&out, (size_t)len);
    long got = ncnn_mp_cxx_arena_allocator_plan(self->native->handle, (unsigned char *)out.buf, (size_t)len);
    if (got != len) {  // (the C heap ran out, or another thread's blocks came meanwhile)
        vstr_clear(&out);
        ncnn_mp_raise_text(got == -2 ? &mp_type_MemoryError : &mp_type_RuntimeError, where, got == -2
            ? NCNN_MP_TEXT("out of memory") : NCNN_MP_TEXT("the arena changed while it was planned (plan it when no extract runs)"));
    }
    return mp_obj_new_bytes_from_vstr(&out);
    #else
    return mp_const_none;
    #endif
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Allocator_plan_obj, Allocator, plan, ncnn_mp_Allocator_plan);

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
    mp_printf(print, "<Allocator %s%s>", self->counting ? "counting" : self->arena ? "arena" : self->unlocked ? "unlocked" : "locked",
        self->native ? "" : " closed");
}

static const mp_rom_map_elem_t ncnn_mp_Allocator_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_close), MP_ROM_PTR(&ncnn_mp_Allocator_close_obj) },
    { MP_ROM_QSTR(MP_QSTR_reset_peak), MP_ROM_PTR(&ncnn_mp_Allocator_reset_peak_obj) },
    { MP_ROM_QSTR(MP_QSTR_plan), MP_ROM_PTR(&ncnn_mp_Allocator_plan_obj) },
    { MP_ROM_QSTR(MP_QSTR___del__), MP_ROM_PTR(&ncnn_mp_Allocator_del_obj) },
    { MP_ROM_QSTR(MP_QSTR___enter__), MP_ROM_PTR(&ncnn_mp_Allocator_enter_obj) },
    { MP_ROM_QSTR(MP_QSTR___exit__), MP_ROM_PTR(&ncnn_mp_Allocator_exit_obj) },
};
static MP_DEFINE_CONST_DICT(ncnn_mp_Allocator_locals, ncnn_mp_Allocator_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    ncnn_mp_type_Allocator, MP_QSTR_Allocator, MP_TYPE_FLAG_NONE,
    make_new, ncnn_mp_Allocator_make_new,
    print, ncnn_mp_Allocator_print,
    attr, ncnn_mp_Allocator_attr,
    locals_dict, &ncnn_mp_Allocator_locals
    );
