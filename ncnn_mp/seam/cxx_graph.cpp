// SPDX-License-Identifier: MIT
// The C++ seam, a Net's graph (cxx_seam.h): its layers and blobs as Net.layers() and
// Net.blobs() show them, and how deep ncnn's recursion can go in an extract (stack.c).
#include <stdlib.h>
#include <string.h>

#include <ncnn/blob.h>
#include <ncnn/layer.h>
#include <ncnn/net.h>

#include "cxx_seam.h"

static const ncnn::Net *net_of(ncnn_net_t net) {
    return static_cast<const ncnn::Net *>(net->pthis);
}

#if NCNN_STRING
static const char *text_of(const std::string &s) {
    const char *t = s.c_str();
    return t ? t : "";
}
#endif

extern "C" int ncnn_mp_cxx_layer_count(ncnn_net_t net) {
    return static_cast<int>(net_of(net)->layers().size());
}

void ncnn_mp_cxx_layer_names(const ncnn::Layer &layer, const char **name, const char **type) {
    #if NCNN_STRING
    *name = text_of(layer.name);
    *type = text_of(layer.type);
    #else
    (void)layer;
    *name = *type = nullptr;
    #endif
}

extern "C" void ncnn_mp_cxx_layer_info(ncnn_net_t net, int i, ncnn_mp_layer_info_t *out) {
    const ncnn::Layer *layer = net_of(net)->layers()[i];
    ncnn_mp_cxx_layer_names(*layer, &out->name, &out->type);
    out->typeindex = layer->typeindex;
    out->n_bottoms = static_cast<int>(layer->bottoms.size());
    out->n_tops = static_cast<int>(layer->tops.size());
    out->bottoms = out->n_bottoms ? &layer->bottoms[0] : nullptr;
    out->tops = out->n_tops ? &layer->tops[0] : nullptr;
}

extern "C" int ncnn_mp_cxx_blob_count(ncnn_net_t net) {
    return static_cast<int>(net_of(net)->blobs().size());
}

extern "C" void ncnn_mp_cxx_blob_info(ncnn_net_t net, int i, ncnn_mp_blob_info_t *out) {
    const ncnn::Blob &blob = net_of(net)->blobs()[i];
    #if NCNN_STRING
    out->name = text_of(blob.name);
    #else
    out->name = nullptr;
    #endif
    out->producer = blob.producer;
    out->consumer = blob.consumer;
    out->dims = blob.shape.dims;
    out->w = blob.shape.w;
    out->h = blob.shape.h;
    out->d = blob.shape.d;
    out->c = blob.shape.c;
}

namespace {

// The longest chain of layers ending at each layer (the bound ncnn's recursion cannot pass:
// each nested forward_layer runs a producer of the one above). depth: one int per layer.
int longest_chain(const std::vector<ncnn::Layer *> &layers, const std::vector<ncnn::Blob> &blobs, int *depth) {
    int n = static_cast<int>(layers.size()), deepest = 0;
    for (int i = 0; i < n; i++) {
        int d = 0;
        const ncnn::Layer *layer = layers[i];
        for (size_t k = 0; layer != nullptr && k < layer->bottoms.size(); k++) {
            int b = layer->bottoms[k];
            int p = b >= 0 && b < static_cast<int>(blobs.size()) ? blobs[b].producer : -1;
            // A text param names a blob only after its producer; a binary one might not:
            // then the whole net counts as one chain.
            d = p < 0 ? d : p < i ? (depth[p] > d ? depth[p] : d) : n;
        }
        depth[i] = d >= n ? n : d + 1;
        deepest = depth[i] > deepest ? depth[i] : deepest;
    }
    return deepest;
}

// How deep ncnn's forward_layer recursion goes extracting `blob` from a fresh Extractor: its
// walk (bottoms in order, into a producer while the blob is not computed yet, a layer's tops
// computed once it returns) replayed with an explicit stack. At most `n` deep (a cycle, which
// ncnn's loader refuses, stops there). stack: n (layer, next bottom) pairs; computed: per blob.
int walk_depth(const std::vector<ncnn::Layer *> &layers, const std::vector<ncnn::Blob> &blobs, int blob,
    int *stack, unsigned char *computed) {
    int n = static_cast<int>(layers.size()), nb = static_cast<int>(blobs.size());
    memset(computed, 0, nb);
    int p = blobs[blob].producer;
    if (p < 0 || p >= n) {
        return 0;
    }
    int top = 0, deepest = 1;
    stack[0] = p;
    stack[1] = 0;
    while (top >= 0) {
        const ncnn::Layer *layer = layers[stack[2 * top]];
        int k = stack[2 * top + 1]++;
        if (layer != nullptr && k < static_cast<int>(layer->bottoms.size())) {
            int b = layer->bottoms[k];
            int q = b >= 0 && b < nb && !computed[b] ? blobs[b].producer : -1;
            if (q >= 0 && q < n) {
                if (++top >= n) {
                    return n;
                }
                stack[2 * top] = q;
                stack[2 * top + 1] = 0;
                deepest = top + 1 > deepest ? top + 1 : deepest;
            }
            continue;
        }
        for (size_t t = 0; layer != nullptr && t < layer->tops.size(); t++) {
            int b = layer->tops[t];
            if (b >= 0 && b < nb) {
                computed[b] = 1;
            }
        }
        top--;
    }
    return deepest;
}

}  // namespace

extern "C" int ncnn_mp_cxx_graph_depth(ncnn_net_t net) {
    const std::vector<ncnn::Layer *> &layers = net_of(net)->layers();
    const std::vector<ncnn::Blob> &blobs = net_of(net)->blobs();
    int n = static_cast<int>(layers.size()), nb = static_cast<int>(blobs.size());
    int *ints = static_cast<int *>(malloc(sizeof(int) * (2 * n + 1)));
    unsigned char *flags = static_cast<unsigned char *>(malloc(nb + 1));
    int deepest = n;  // (no memory for the walk: every layer in one chain, never less than the truth)
    if (ints != nullptr && flags != nullptr) {
        // The walk from a fresh Extractor bounds every later extract on it only while each
        // blob has one consumer (ncnn's converters add Split layers for more): a blob computed
        // earlier then has all its ancestors computed. opt.lightmode releases a blob once its
        // one consumer ran, which then never needs it again. A blob read by two layers (a
        // hand-written param) could be released and walked again deeper: the longest chain.
        memset(flags, 0, nb + 1);
        bool shared = false;
        for (int i = 0; i < n && !shared; i++) {
            for (size_t k = 0; layers[i] != nullptr && k < layers[i]->bottoms.size() && !shared; k++) {
                int b = layers[i]->bottoms[k];
                shared = b >= 0 && b < nb && flags[b]++;
            }
        }
        if (shared) {
            deepest = longest_chain(layers, blobs, ints);
        } else {
            deepest = 0;
            for (int b = 0; b < nb; b++) {
                int d = walk_depth(layers, blobs, b, ints, flags);
                deepest = d > deepest ? d : deepest;
            }
        }
    }
    free(ints);
    free(flags);
    return deepest;
}
