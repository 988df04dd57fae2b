// SPDX-License-Identifier: MIT
// Calls in progress: every public method that lets ncnn call back into Python links a
// record (on its C stack) here for as long as ncnn runs. A callback finds its thread's
// innermost call: where its exception waits for the public method to re-raise it, whether
// that method let the GIL go, what the callback lends (lend.c), a shape guard's refusal.
// One list for every thread, under the lock (state.c).
#include <string.h>

#include "py/gc.h"
#include "ncnn_mp.h"

MP_REGISTER_ROOT_POINTER(struct _ncnn_mp_call_t *ncnn_mp_calls);
// How many calls in progress have a hook: with none, a layer asks no further (the lock and
// the list walk are for extracts that were given one).
MP_REGISTER_ROOT_POINTER(size_t ncnn_mp_hooked);

// (Under the lock.) The innermost call of `thread`, or NULL.
static ncnn_mp_call_t *ncnn_mp_call_find(const void *thread) {
    ncnn_mp_call_t *c = MP_STATE_VM(ncnn_mp_calls);
    while (c && c->thread != thread) {
        c = c->next;
    }
    return c;
}

ncnn_mp_call_t *ncnn_mp_call_outer_locked(const ncnn_mp_call_t *call) {
    ncnn_mp_call_t *c = call->next;
    while (c && c->thread != call->thread) {
        c = c->next;
    }
    return c;
}

ncnn_mp_call_t *ncnn_mp_call_current_locked(void) {
    return ncnn_mp_call_find(ncnn_mp_thread());
}

mp_obj_t ncnn_mp_root_get_in_call(const void *key, const void *thread, ncnn_mp_call_t **call) {
    mp_uint_t l = ncnn_mp_lock();
    mp_obj_t value = ncnn_mp_root_find_locked(key);
    *call = ncnn_mp_call_find(thread);
    ncnn_mp_unlock(l);
    return value;
}

bool ncnn_mp_in_collection(void) {
    #if defined(GC_COLLECT_FLAG)
    return GC_COLLECT_FLAG && (MP_STATE_THREAD(gc_lock_depth) & GC_COLLECT_FLAG);
    #else
    return gc_is_locked();  // older MicroPython cannot tell the two apart
    #endif
}

void ncnn_mp_call_link(ncnn_mp_call_t *call) {
    call->thread = ncnn_mp_thread();
    call->error = MP_OBJ_NULL;
    call->lent = NULL;
    call->weights = MP_OBJ_NULL;
    call->option.obj = MP_OBJ_NULL;
    call->refusal.rule = NCNN_MP_FITS;
    call->hook = MP_OBJ_NULL;
    call->gil_released = false;
    call->next = MP_STATE_VM(ncnn_mp_calls);
    MP_STATE_VM(ncnn_mp_calls) = call;
}

void ncnn_mp_call_unlink(ncnn_mp_call_t *call) {
    ncnn_mp_call_t **link = &MP_STATE_VM(ncnn_mp_calls);
    while (*link && *link != call) {
        link = &(*link)->next;
    }
    if (*link) {
        *link = call->next;
        if (call->hook != MP_OBJ_NULL) {
            MP_STATE_VM(ncnn_mp_hooked)--;
        }
    }
}

void ncnn_mp_call_hook(ncnn_mp_call_t *call, mp_obj_t hook) {
    mp_uint_t l = ncnn_mp_lock();
    call->hook = hook;
    MP_STATE_VM(ncnn_mp_hooked)++;
    ncnn_mp_unlock(l);
}

void ncnn_mp_call_leave_gil(ncnn_mp_call_t *call) {
    // Never inside a collection: the collecting thread holds the GC's lock, and another
    // thread given the GIL would wait for that lock while this one waits for the GIL.
    call->gil_released = MICROPY_PY_THREAD_GIL && !ncnn_mp_in_collection();
    if (call->gil_released) {
        MP_THREAD_GIL_EXIT();
    }
}

void ncnn_mp_call_returned(ncnn_mp_call_t *call) {
    ncnn_mp_lent_item_expire(&call->option);
    if (call->gil_released) {
        MP_THREAD_GIL_ENTER();
        call->gil_released = false;
    }
    if (call->error == MP_OBJ_NULL) {  // else an interrupt stays pending, for the next branch
        call->error = ncnn_mp_take_pending();
    }
}

void ncnn_mp_call_begin(ncnn_mp_call_t *call) {
    mp_uint_t l = ncnn_mp_lock();
    ncnn_mp_call_link(call);
    ncnn_mp_unlock(l);
    ncnn_mp_call_leave_gil(call);
}

bool ncnn_mp_call_take_gil(ncnn_mp_call_t *call) {
    #if MICROPY_PY_THREAD_GIL
    if (call && call->gil_released) {
        MP_THREAD_GIL_ENTER();
        return true;
    }
    #endif
    (void)call;
    return false;
}

void ncnn_mp_call_give_gil(void) {
    MP_THREAD_GIL_EXIT();
}

ncnn_mp_call_t *ncnn_mp_call_current(void) {
    const void *me = ncnn_mp_thread();
    mp_uint_t l = ncnn_mp_lock();
    ncnn_mp_call_t *c = ncnn_mp_call_find(me);
    ncnn_mp_unlock(l);
    return c;
}

void ncnn_mp_shape_refused(const ncnn_mp_shape_refusal_t *refusal) {
    const void *me = ncnn_mp_thread();
    mp_uint_t l = ncnn_mp_lock();
    ncnn_mp_call_t *c = ncnn_mp_call_find(me);
    if (c != NULL) {
        c->refusal = *refusal;
    }
    ncnn_mp_unlock(l);
}

// ---------------------------------------------------------------------------
// The hook between layers (Extractor.extract's hook=), called by the shape guard's layers.

bool ncnn_mp_hooks_wanted(void) {
    return MP_STATE_VM(ncnn_mp_hooked) != 0;  // (read without the lock: a stale answer asks once more, or once less)
}

typedef struct {
    int index, count;
    const char *name, *type;
} ncnn_mp_hook_args_t;

static mp_obj_t ncnn_mp_hook_text(const char *s) {
    return s ? mp_obj_new_str(s, strlen(s)) : mp_const_none;
}

static void ncnn_mp_hook_call(mp_obj_t hook, void *arg) {
    const ncnn_mp_hook_args_t *a = arg;
    mp_obj_t args[4] = {
        MP_OBJ_NEW_SMALL_INT(a->index), ncnn_mp_hook_text(a->name), ncnn_mp_hook_text(a->type),
        MP_OBJ_NEW_SMALL_INT(a->count),
    };
    mp_call_function_n_kw(hook, 4, 0, args);
}

int ncnn_mp_layer_hook(int index, int count, const char *name, const char *type) {
    ncnn_mp_call_t *call = ncnn_mp_call_current();
    if (call == NULL || call->hook == MP_OBJ_NULL) {
        return 0;  // (another thread's extract has the hook, or a call inside the hook has none)
    }
    ncnn_mp_hook_args_t a = { index, count, name, type };
    if (ncnn_mp_callback(call->hook, NULL, MP_QSTR_hook, ncnn_mp_hook_call, &a)) {
        return 0;
    }
    // What it raised waits for the extract; a callback that could not start (none can
    // during an extract) lets the layer run.
    return call->error != MP_OBJ_NULL ? -1 : 0;
}

void ncnn_mp_call_stop(ncnn_mp_call_t *call) {
    ncnn_mp_call_returned(call);
    mp_uint_t l = ncnn_mp_lock();
    ncnn_mp_call_unlink(call);
    ncnn_mp_unlock(l);
}

void ncnn_mp_call_raise(ncnn_mp_call_t *call) {
    if (call->error != MP_OBJ_NULL) {
        nlr_raise(call->error);
    }
}

void ncnn_mp_call_end(ncnn_mp_call_t *call) {
    ncnn_mp_call_stop(call);
    ncnn_mp_call_raise(call);
}
