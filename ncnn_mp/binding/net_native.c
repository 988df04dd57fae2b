// SPDX-License-Identifier: MIT
// A Net's native record (ncnn_mp_net_native_t): counted by the Net object, its Extractors
// and its Option views; who is inside ncnn on it; the buffers its layers keep weights in;
// its custom layer types' records. Below the classes: option.c and extractor.c hold it
// without knowing the Net class.
#include <stdlib.h>
#include <string.h>

#include "ncnn_mp.h"
#include "cxx_seam.h"

// Keeps `buffer` alive for as long as the net's layers may point into it (a failed reload
// leaves layers in the old buffers too: every one is kept). The list is made anew and
// rooted, not appended to: a longer list's storage is a new block too, which root_add
// settles with the list (the list in the roots may be marked already by a collection in
// another thread).
void ncnn_mp_net_keep_weights(ncnn_mp_net_native_t *n, mp_obj_t buffer) {
    mp_obj_t kept = n->kept_weights ? ncnn_mp_root_get(&n->kept_weights) : MP_OBJ_NULL;
    size_t len = 0;
    mp_obj_t *items = NULL;
    if (kept != MP_OBJ_NULL) {
        mp_obj_list_get(kept, &len, &items);
    }
    mp_obj_t more = mp_obj_new_list(len + 1, NULL);
    mp_obj_t *to;
    mp_obj_list_get(more, &len, &to);
    if (len > 1) {
        memcpy(to, items, (len - 1) * sizeof(mp_obj_t));
    }
    to[len - 1] = buffer;
    ncnn_mp_root_add(&n->kept_weights, more);
    n->kept_weights = true;
}

// "layer 'name' (Type)" of layer i of the net (without names, as a binary param leaves them:
// "layer 3 (type 6)"); where the net has no such layer, as refusal r recorded it (a load_param
// that failed: ncnn dropped the layers), or "layer i". (With the net entered: the name lives in it.)
void ncnn_mp_layer_label(vstr_t *out, ncnn_net_t net, int i, const ncnn_mp_shape_refusal_t *r) {
    const char *name = NULL, *type = NULL;
    int typeindex;
    if (i >= 0 && i < ncnn_mp_cxx_layer_count(net)) {
        ncnn_mp_layer_info_t l;
        ncnn_mp_cxx_layer_info(net, i, &l);
        name = l.name;
        type = l.type;
        typeindex = l.typeindex;
    } else if (r != NULL && i >= 0) {
        name = r->name;
        type = r->type;
        typeindex = r->typeindex;
    } else {
        vstr_printf(out, "layer %d", i);
        return;
    }
    if (name != NULL && *name != '\0') {  // (NULL without NCNN_STRING)
        vstr_printf(out, "layer '%s' (%s)", name, type);
    } else {
        vstr_printf(out, "layer %d (type %d)", i, typeindex);
    }
}

// Once ncnn destroyed the layers. Never allocates: a finaliser may call it.
void ncnn_mp_net_release_weights(ncnn_mp_net_native_t *n) {
    if (n->kept_weights) {
        ncnn_mp_root_remove(&n->kept_weights);
        n->kept_weights = false;
    }
    n->weights_counted = false;
}

// With the net destroyed: drop the custom layer types' records and their roots (no
// allocation: maybe in a finaliser).
static void ncnn_mp_net_free_factories(ncnn_mp_net_native_t *net) {
    while (net->factories) {
        ncnn_mp_factory_t *f = net->factories;
        net->factories = f->next;
        ncnn_mp_root_remove(f);
        free(f);
    }
}

ncnn_mp_net_native_t *ncnn_mp_net_native_ref(ncnn_mp_net_native_t *n) {
    if (n) {
        ncnn_mp_count(&n->refs, 1);
    }
    return n;
}

void ncnn_mp_net_native_destroy(ncnn_mp_net_native_t *n) {
    // Every Extractor holds a reference, so none is left here.
    ncnn_net_destroy(n->handle);
    ncnn_mp_net_release_weights(n);
    ncnn_mp_net_free_factories(n);
    ncnn_mp_allocator_set_assign(n->allocators, NULL);
    free(n);
}

void ncnn_mp_net_native_unref(ncnn_mp_net_native_t *n) {
    if (n && ncnn_mp_count(&n->refs, -1) == 0) {
        ncnn_mp_net_native_destroy(n);
    }
}

NORETURN void ncnn_mp_net_raise_busy(const char *where) {
    mp_raise_msg_varg(&mp_type_RuntimeError, NCNN_MP_FORMAT("%s: ncnn is loading, clearing or running this net (from one of its custom layers, or in another thread)"), where);
}

bool ncnn_mp_net_try_enter(ncnn_mp_net_native_t *n, bool alone) {
    bool free_to_enter = alone ? n->users == 0 : n->users >= 0;
    if (free_to_enter) {
        n->users = alone ? -1 : n->users + 1;
    }
    return free_to_enter;
}

void ncnn_mp_net_exit(ncnn_mp_net_native_t *n) {
    n->users = n->users < 0 ? 0 : n->users - 1;
}

void ncnn_mp_net_leave(ncnn_mp_net_native_t *n) {
    mp_uint_t l = ncnn_mp_lock();
    ncnn_mp_net_exit(n);
    ncnn_mp_unlock(l);
}

void ncnn_mp_net_check_idle(ncnn_mp_net_native_t *n, const char *where) {
    if (n->users != 0) {
        ncnn_mp_net_raise_busy(where);
    }
}

// (With the net entered alone: no Extractor is in use, none is being made.)
void ncnn_mp_net_native_drop_extractors(ncnn_mp_net_native_t *n) {
    mp_uint_t l = ncnn_mp_lock();
    for (ncnn_mp_extractor_native_t *e = n->extractors; e; e = e->next) {
        if (e->handle) {
            ncnn_extractor_destroy(e->handle);  // frees memory only: no callback
            e->handle = NULL;
        }
    }
    ncnn_mp_unlock(l);
}
