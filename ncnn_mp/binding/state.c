// SPDX-License-Identifier: MIT
// ncnn_mp's per-interpreter state, and the lock over what threads share.
//
// The lock: MicroPython's atomic section (a recursive mutex on the Unix port, which runs
// threads without a GIL; interrupts masked on a bare-metal port; a spinlock on esp32).
// It guards ncnn_mp's lists, tables and reference counts, and a Net's lifecycle. It is
// held for a few loads and stores only: never across an allocation (a collection there
// runs finalisers, which take it, while another thread collecting holds the GC's own
// lock and waits for this one), never across a Python call or a call into ncnn that can
// call back.
//
// The state lives in MP_STATE_VM root pointers. Soft reboot (ports/qemu, esp32) frees
// every heap block without clearing root pointers, so the roots table is a GC object
// with a finaliser: the root pointer keeps it alive, so only the sweep of a soft reboot
// (or of the Unix port's exit) runs that finaliser, and it forgets the whole state
// there. The lists of calls, readers and ModelBin arrays are empty by then anyway
// (their records live on C stacks or with objects whose finalisers unlink them).
#include <string.h>

#include "py/gc.h"
#include "ncnn_mp.h"

MP_REGISTER_ROOT_POINTER(struct _ncnn_mp_roots_t *ncnn_mp_roots);
MP_REGISTER_ROOT_POINTER(struct _ncnn_mp_reader_t *ncnn_mp_readers);
MP_REGISTER_ROOT_POINTER(struct _ncnn_mp_mat_array_t *ncnn_mp_mat_arrays);

mp_uint_t ncnn_mp_lock(void) {
    return MICROPY_BEGIN_ATOMIC_SECTION();
}

void ncnn_mp_unlock(mp_uint_t state) {
    MICROPY_END_ATOMIC_SECTION(state);
}

int ncnn_mp_count(int *refs, int delta) {
    mp_uint_t l = ncnn_mp_lock();
    int now = *refs += delta;
    ncnn_mp_unlock(l);
    return now;
}

const void *ncnn_mp_thread(void) {
    #if MICROPY_PY_THREAD
    return mp_thread_get_state();
    #else
    return NULL;
    #endif
}

// ---------------------------------------------------------------------------
// Roots: the Python objects only ncnn's memory refers to (custom layer instances,
// their creators), found by the address of the C record ncnn holds. An open-addressed
// table in one GC block, grown outside the lock.

typedef struct {
    const void *key;
    mp_obj_t value;
} ncnn_mp_root_t;

typedef struct _ncnn_mp_roots_t {
    mp_obj_base_t base;
    ncnn_mp_root_t *table;  // GC block of `alloc` slots (a power of two), `used` of them filled
    size_t alloc, used;
    size_t live_layers;     // Python layer instances ncnn holds
} ncnn_mp_roots_t;

static mp_obj_t ncnn_mp_roots_del(mp_obj_t self_in) {
    if (MP_STATE_VM(ncnn_mp_roots) == MP_OBJ_TO_PTR(self_in)) {  // (a table that lost a race is not the state)
        MP_STATE_VM(ncnn_mp_roots) = NULL;
        MP_STATE_VM(ncnn_mp_calls) = NULL;
        MP_STATE_VM(ncnn_mp_hooked) = 0;
        MP_STATE_VM(ncnn_mp_readers) = NULL;
        MP_STATE_VM(ncnn_mp_mat_arrays) = NULL;
    }
    return mp_const_none;
}
// (Not public: no self check; the function compares self with the state's table only.)
static NCNN_MP_METHOD_OBJ(ncnn_mp_roots_del_obj, "ncnn_mp_roots.__del__", NULL, NCNN_MP_SELF_NONE, NCNN_MP_CALL_1, 1, 1,
    _1, ncnn_mp_roots_del);

static const mp_rom_map_elem_t ncnn_mp_roots_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___del__), MP_ROM_PTR(&ncnn_mp_roots_del_obj) },
};
static MP_DEFINE_CONST_DICT(ncnn_mp_roots_locals, ncnn_mp_roots_locals_table);

static MP_DEFINE_CONST_OBJ_TYPE(
    ncnn_mp_type_roots, MP_QSTR_ncnn_mp_roots, MP_TYPE_FLAG_NONE,
    locals_dict, &ncnn_mp_roots_locals
    );

static size_t ncnn_mp_root_slot(const ncnn_mp_root_t *table, size_t alloc, const void *key) {
    size_t i = (size_t)(((uintptr_t)key >> 3) * 2654435761u) & (alloc - 1);
    while (table[i].key != NULL && table[i].key != key) {
        i = (i + 1) & (alloc - 1);
    }
    return i;
}

void ncnn_mp_state_init(void) {
    if (MP_STATE_VM(ncnn_mp_roots) != NULL) {
        return;
    }
    ncnn_mp_roots_t *made = mp_obj_malloc_with_finaliser(ncnn_mp_roots_t, &ncnn_mp_type_roots);
    made->table = NULL;
    made->alloc = made->used = made->live_layers = 0;
    mp_uint_t l = ncnn_mp_lock();
    if (MP_STATE_VM(ncnn_mp_roots) == NULL) {
        MP_STATE_VM(ncnn_mp_roots) = made;
    }
    ncnn_mp_unlock(l);
    ncnn_mp_gc_settle(MP_OBJ_FROM_PTR(made));  // (a root pointer a collection may have read already)
}

void ncnn_mp_gc_settle(mp_obj_t value) {
    #if MICROPY_PY_THREAD && !MICROPY_PY_THREAD_GIL
    volatile mp_obj_t held = value;
    (void)gc_nbytes(MP_OBJ_TO_PTR(held));
    #else
    (void)value;
    #endif
}

void ncnn_mp_root_add(const void *key, mp_obj_t value) {
    ncnn_mp_state_init();
    ncnn_mp_roots_t *r = MP_STATE_VM(ncnn_mp_roots);
    for (;;) {
        mp_uint_t l = ncnn_mp_lock();
        if ((r->used + 1) * 4 <= r->alloc * 3) {
            size_t i = ncnn_mp_root_slot(r->table, r->alloc, key);
            r->used += r->table[i].key == NULL;
            r->table[i].key = key;
            r->table[i].value = value;
            ncnn_mp_unlock(l);
            ncnn_mp_gc_settle(value);
            return;
        }
        size_t want = r->alloc ? r->alloc * 2 : 16;
        ncnn_mp_unlock(l);
        // May collect, and finalisers may remove entries meanwhile: they take the lock.
        ncnn_mp_root_t *grown = m_new0(ncnn_mp_root_t, want);
        l = ncnn_mp_lock();
        if (r->alloc < want) {  // else another thread grew it first; ours is garbage
            for (size_t i = 0; i < r->alloc; i++) {
                if (r->table[i].key != NULL) {
                    grown[ncnn_mp_root_slot(grown, want, r->table[i].key)] = r->table[i];
                }
            }
            r->table = grown;
            r->alloc = want;
        }
        ncnn_mp_unlock(l);
        // The new table is stored in the roots object, which a collection in progress may
        // have marked already (with the old table): it is a new value there as any other.
        ncnn_mp_gc_settle(MP_OBJ_FROM_PTR(grown));
    }
}

mp_obj_t ncnn_mp_root_find_locked(const void *key) {
    ncnn_mp_roots_t *r = MP_STATE_VM(ncnn_mp_roots);
    return r != NULL && r->alloc ? r->table[ncnn_mp_root_slot(r->table, r->alloc, key)].value : MP_OBJ_NULL;
}

mp_obj_t ncnn_mp_root_get(const void *key) {
    mp_uint_t l = ncnn_mp_lock();
    mp_obj_t value = ncnn_mp_root_find_locked(key);
    ncnn_mp_unlock(l);
    return value;
}

// Removes key, shifting back the entries its slot displaced (linear probing without
// tombstones). Never allocates: finalisers call it.
mp_obj_t ncnn_mp_root_remove(const void *key) {
    ncnn_mp_roots_t *r = MP_STATE_VM(ncnn_mp_roots);
    mp_obj_t value = MP_OBJ_NULL;
    mp_uint_t l = ncnn_mp_lock();
    if (r != NULL && r->alloc) {
        size_t mask = r->alloc - 1, hole = ncnn_mp_root_slot(r->table, r->alloc, key);
        value = r->table[hole].value;
        if (r->table[hole].key != NULL) {
            r->used--;
            for (size_t i = (hole + 1) & mask; r->table[i].key != NULL; i = (i + 1) & mask) {
                size_t home = (size_t)(((uintptr_t)r->table[i].key >> 3) * 2654435761u) & mask;
                // Move entry i into the hole unless its home lies cyclically in (hole, i].
                if ((i > hole) ? (home <= hole || home > i) : (home <= hole && home > i)) {
                    r->table[hole] = r->table[i];
                    hole = i;
                }
            }
            r->table[hole].key = NULL;
            r->table[hole].value = MP_OBJ_NULL;
        }
    }
    ncnn_mp_unlock(l);
    return value;
}

void ncnn_mp_live_layers_add(int delta) {
    ncnn_mp_roots_t *r = MP_STATE_VM(ncnn_mp_roots);
    mp_uint_t l = ncnn_mp_lock();
    if (r != NULL) {
        r->live_layers += delta;
    }
    ncnn_mp_unlock(l);
}

size_t ncnn_mp_custom_live_count(void) {
    ncnn_mp_roots_t *r = MP_STATE_VM(ncnn_mp_roots);
    return r ? r->live_layers : 0;
}
