// SPDX-License-Identifier: MIT
// Uses: a call's hold on the objects whose native handles it hands to ncnn.
//
// A call that gives ncnn a handle and may run Python before ncnn is done with it (a
// Python reader's read(), a custom layer's callback, another thread while the GIL is let
// go) could see that Python close the object, release its storage or give it new storage:
// ncnn would then read freed memory. So the call takes a use of every such object first
// (counted in the object's `users`, under the lock), and whatever frees or moves what a
// handle points at reads `users` first, under the same lock. One mechanism for
// every class (DataReader, ModelBin, Mat): no class keeps a variant of its own.
#include <string.h>

#include "ncnn_mp.h"

static void ncnn_mp_use_leave(void *node) {
    ncnn_mp_use_t *u = node;
    mp_uint_t l = ncnn_mp_lock();
    for (size_t i = 0; i < u->n; i++) {
        (*u->users[i])--;
    }
    ncnn_mp_unlock(l);
}

void ncnn_mp_use_begin(ncnn_mp_use_t *u, size_t capacity) {
    // (allocated before the callback is pushed: an allocation may raise)
    u->users = capacity <= 1 ? &u->one : m_new(int *, capacity);
    u->capacity = capacity <= 1 ? 1 : capacity;
    u->n = 0;
    nlr_push_jump_callback(&u->leave, ncnn_mp_use_leave);
}

void ncnn_mp_use_reserve(ncnn_mp_use_t *u, size_t more) {
    if (u->n + more <= u->capacity) {
        return;
    }
    // (if this raises, the uses taken so far are given back as the caller unwinds)
    size_t capacity = (u->n + more) * 2;
    int **grown = m_new(int *, capacity);
    memcpy(grown, u->users, u->n * sizeof(int *));
    u->users = grown;
    u->capacity = capacity;
}

void ncnn_mp_use_add_locked(ncnn_mp_use_t *u, int *users) {
    (*users)++;
    u->users[u->n++] = users;
}

bool ncnn_mp_use_add(ncnn_mp_use_t *u, int *users, void *const *handle) {
    ncnn_mp_use_reserve(u, 1);
    mp_uint_t l = ncnn_mp_lock();
    bool open = *handle != NULL;
    if (open) {
        ncnn_mp_use_add_locked(u, users);
    }
    ncnn_mp_unlock(l);
    return open;
}

void ncnn_mp_use_end(ncnn_mp_use_t *u) {
    (void)u;
    nlr_pop_jump_callback(true);
}

void ncnn_mp_raise_in_use(const char *where) {
    mp_raise_msg_varg(&mp_type_RuntimeError,
        NCNN_MP_FORMAT("%s: a call in progress uses it (ncnn reads it until that call returns)"), where);
}
