// SPDX-License-Identifier: MIT
// Lending: what ncnn hands a Python callback lives only as long as the callback.
//
// A callback from ncnn (a custom layer's method in trampoline.c, a Python DataReader's
// read() in datareader.c) runs in a frame: the frame finds the thread's call in progress
// (calls.c), takes the GIL back if that call let it go, runs the Python under nlr_push,
// and keeps an exception for the public method that entered ncnn (it re-raises it once
// ncnn has returned: no MicroPython exception unwinds through ncnn's C++ frames).
//
// The objects wrapped for a callback (ncnn's blobs, ParamDict, ModelBin, Option, and the
// Mats computed from them that may share their storage) are lent: listed in the frame's
// lent list with their kind, and expired, newest first, when the callback returns. Each
// class that lends says how its objects expire (an ncnn_mp_lent_kind_t), so this file
// knows no class.
#include <string.h>

#include "ncnn_mp.h"

// ---------------------------------------------------------------------------
// Lent lists.

void ncnn_mp_lent_init(ncnn_mp_lent_t *lent) {
    lent->items = lent->small;
    lent->n = 0;
    lent->cap = MP_ARRAY_SIZE(lent->small);
}

mp_obj_t ncnn_mp_lend(ncnn_mp_lent_t *lent, mp_obj_t obj, const ncnn_mp_lent_kind_t *kind) {
    if (lent->n == lent->cap) {
        // (The old array stays reachable from the C stack or the heap until this returns.)
        ncnn_mp_lent_item_t *more = m_new(ncnn_mp_lent_item_t, lent->cap * 2);
        memcpy(more, lent->items, lent->n * sizeof(*more));
        lent->items = more;
        lent->cap *= 2;
    }
    lent->items[lent->n].obj = obj;
    lent->items[lent->n].kind = kind;
    lent->n++;
    return obj;
}

// In reverse: views go before the objects they were computed from.
static void ncnn_mp_lent_expire(ncnn_mp_lent_t *lent) {
    while (lent->n > 0) {
        ncnn_mp_lent_item_expire(&lent->items[--lent->n]);
    }
}

ncnn_mp_lent_t *ncnn_mp_lent_holding(const void *p) {
    ncnn_mp_lent_t *found = NULL;
    mp_uint_t l = ncnn_mp_lock();  // (other threads link and unlink calls meanwhile)
    for (ncnn_mp_call_t *c = ncnn_mp_call_current_locked(); c && !found; c = ncnn_mp_call_outer_locked(c)) {
        ncnn_mp_lent_t *lent = c->lent;
        for (size_t i = 0; lent && i < lent->n && !found; i++) {
            const ncnn_mp_lent_item_t *it = &lent->items[i];
            if (it->kind->holds && it->kind->holds(it->obj, p)) {
                found = lent;
            }
        }
    }
    ncnn_mp_unlock(l);
    return found;
}

void ncnn_mp_check_owner(const void *owner, const char *where) {
    if (owner != ncnn_mp_thread()) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("it was lent to a callback running in another thread (copy what you need there)"));
    }
}

// ---------------------------------------------------------------------------
// The kept error.

void ncnn_mp_keep_error(mp_obj_t exc, ncnn_layer_t layer, qstr method) {
    nlr_buf_t nlr;
    #if NCNN_STRING
    if (layer && nlr_push(&nlr) == 0) {
        vstr_t where;
        vstr_init(&where, 48);
        vstr_printf(&where, "<ncnn layer '%s' of type %s>", ncnn_mp_layer_name(layer), ncnn_mp_layer_type(layer));
        mp_obj_exception_add_traceback(exc, qstr_from_strn(where.buf, where.len), 0, method);
        vstr_clear(&where);
        nlr_pop();
    }  // else: no memory to annotate; the exception itself is kept all the same
    #else
    (void)layer;
    (void)method;
    #endif
    ncnn_mp_call_t *call = ncnn_mp_call_current();
    if (call == NULL) {
        // ncnn called back outside any call of ours (a Net's __del__ called by hand):
        // nobody can receive it. Report it as MicroPython reports a failing __del__,
        // guarded: printing may raise too.
        if (nlr_push(&nlr) == 0) {
            mp_printf(MICROPY_ERROR_PRINTER, "ncnn_mp: exception in a callback outside any call, ignored:\n");
            mp_obj_print_exception(MICROPY_ERROR_PRINTER, exc);
            nlr_pop();
        }
        return;
    }
    if (call->error == MP_OBJ_NULL) {
        call->error = exc;
    }
}

// ---------------------------------------------------------------------------
// Callback frames.

bool ncnn_mp_frame_open(ncnn_mp_frame_t *f, ncnn_layer_t layer, mp_obj_t instance) {
    f->layer = layer;
    f->instance = MP_OBJ_NULL;
    f->gil = false;
    ncnn_mp_lent_init(&f->lent);
    const void *thread = ncnn_mp_thread();
    #if MICROPY_PY_THREAD
    if (thread == NULL) {
        return false;
    }
    #endif
    if (ncnn_mp_in_collection()) {
        return false;
    }
    if (instance != MP_OBJ_NULL) {  // (a Python DataReader: its caller holds it)
        f->instance = instance;
        f->call = ncnn_mp_call_current();
    } else {
        f->instance = ncnn_mp_root_get_in_call(layer, thread, &f->call);
    }
    if (f->instance == MP_OBJ_NULL) {
        return false;
    }
    f->gil = ncnn_mp_call_take_gil(f->call);
    if (f->call) {
        f->outer_lent = f->call->lent;
        f->call->lent = &f->lent;
    }
    return true;
}

int ncnn_mp_frame_close(ncnn_mp_frame_t *f, nlr_buf_t *failed, qstr method) {
    ncnn_mp_lent_expire(&f->lent);
    if (f->call) {
        f->call->lent = f->outer_lent;
    }
    if (failed) {
        ncnn_mp_keep_error(MP_OBJ_FROM_PTR(failed->ret_val), f->layer, method);
    }
    if (f->gil) {
        ncnn_mp_call_give_gil();
    }
    return failed ? -1 : 0;
}

// ---------------------------------------------------------------------------
// The guarded callback.

bool ncnn_mp_callback(mp_obj_t instance, ncnn_layer_t layer, qstr method, void (*fun)(mp_obj_t instance, void *arg),
    void *arg) {
    ncnn_mp_frame_t f;
    if (!ncnn_mp_frame_open(&f, layer, instance)) {
        return false;
    }
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        fun(f.instance, arg);
        nlr_pop();
        return ncnn_mp_frame_close(&f, NULL, method) == 0;
    }
    ncnn_mp_frame_close(&f, &nlr, method);
    return false;
}
