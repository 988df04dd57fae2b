// The parts of ncnn's C++ API that ncnn_mp uses and c_api.h cannot express (see
// net_cxx.h). ncnn_net_t is c_api.h's public struct: its pthis is the ncnn::Net.
#include <stdlib.h>
#include <string.h>

#include <ncnn/allocator.h>
#include <ncnn/blob.h>
#include <ncnn/datareader.h>
#include <ncnn/layer.h>
#include <ncnn/net.h>

#include "net_cxx.h"

namespace {

// A DataReader over ncnn_mp's bounded reader that lends ncnn the bytes in place
// (reference()), so ModelBin keeps fp32, int8 and bias data where they lie. Both calls
// stop at the buffer's end: a truncated .bin fails its load, it is never read past.
class InPlaceReader : public ncnn::DataReader {
public:
    explicit InPlaceReader(_ncnn_mp_reader_t *r) : r_(r) {}
#if NCNN_STRING
    int scan(const char *, void *) const override {
        return 0;  // weights only: a model load never scans text
    }
#endif
    size_t read(void *buf, size_t size) const override {
        return ncnn_mp_reader_read(r_, buf, size);
    }
    size_t reference(size_t size, const void **buf) const override {
        return ncnn_mp_reader_reference(r_, size, buf);
    }

private:
    _ncnn_mp_reader_t *r_;
};

}  // namespace

extern "C" int ncnn_mp_cxx_load_model_in_place(ncnn_net_t net, _ncnn_mp_reader_t *r) {
    InPlaceReader reader(r);
    return static_cast<ncnn::Net *>(net->pthis)->load_model(reader);
}

extern "C" void ncnn_mp_cxx_destroy_pipelines(ncnn_net_t net) {
    ncnn::Net *n = static_cast<ncnn::Net *>(net->pthis);
    for (ncnn::Layer *layer : n->mutable_layers()) {
        if (layer == nullptr) {
            continue;
        }
        // The option the layer's pipeline was made with: the net's, less what the layer's
        // featmask turns off for it (the bits of ncnn's layer.h: fp16, bf16, int8, vulkan,
        // sgemm, winograd, threads), as Net::load_model gave it.
        ncnn::Option opt = n->opt;
        int mask = layer->featmask;
        opt.use_fp16_arithmetic = opt.use_fp16_arithmetic && !(mask & 1 << 0);
        opt.use_fp16_packed = opt.use_fp16_packed && !(mask & 1 << 1);
        opt.use_fp16_storage = opt.use_fp16_storage && !(mask & 1 << 1);
        opt.use_bf16_packed = opt.use_bf16_packed && !(mask & 1 << 2);
        opt.use_bf16_storage = opt.use_bf16_storage && !(mask & 1 << 2);
        opt.use_int8_packed = opt.use_int8_packed && !(mask & 1 << 3);
        opt.use_int8_storage = opt.use_int8_storage && !(mask & 1 << 3);
        opt.use_int8_arithmetic = opt.use_int8_arithmetic && !(mask & 1 << 3);
        opt.use_vulkan_compute = opt.use_vulkan_compute && !(mask & 1 << 4);
        opt.use_tensor_storage = opt.use_tensor_storage && !(mask & 1 << 4);
        opt.use_sgemm_convolution = opt.use_sgemm_convolution && !(mask & 1 << 5);
        opt.use_winograd_convolution = opt.use_winograd_convolution && !(mask & 1 << 6);
        if (mask & 1 << 7) {
            opt.num_threads = 1;
        }
        layer->destroy_pipeline(opt);
    }
}

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

extern "C" void ncnn_mp_cxx_layer_info(ncnn_net_t net, int i, ncnn_mp_layer_info_t *out) {
    const ncnn::Layer *layer = net_of(net)->layers()[i];
    #if NCNN_STRING
    out->name = text_of(layer->name);
    out->type = text_of(layer->type);
    #else
    out->name = out->type = nullptr;
    #endif
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

// Each block carries its size in a header as long as ncnn's alignment, so the data keeps it.
class CountingAllocator : public ncnn::Allocator {
public:
    void *fastMalloc(size_t size) override {
        unsigned char *block = static_cast<unsigned char *>(ncnn::fastMalloc(size + NCNN_MALLOC_ALIGN));
        if (block == nullptr) {
            return nullptr;
        }
        *reinterpret_cast<size_t *>(block) = size;
        size_t now = __atomic_add_fetch(&in_use, size, __ATOMIC_RELAXED);
        size_t seen = __atomic_load_n(&peak, __ATOMIC_RELAXED);
        while (now > seen && !__atomic_compare_exchange_n(&peak, &seen, now, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        }
        return block + NCNN_MALLOC_ALIGN;
    }
    void fastFree(void *ptr) override {
        if (ptr != nullptr) {
            unsigned char *block = static_cast<unsigned char *>(ptr) - NCNN_MALLOC_ALIGN;
            __atomic_sub_fetch(&in_use, *reinterpret_cast<size_t *>(block), __ATOMIC_RELAXED);
            ncnn::fastFree(block);
        }
    }
    size_t in_use = 0;
    size_t peak = 0;
};

void *counting_fast_malloc(ncnn_allocator_t a, size_t size) {
    return static_cast<CountingAllocator *>(a->pthis)->fastMalloc(size);
}

void counting_fast_free(ncnn_allocator_t a, void *ptr) {
    static_cast<CountingAllocator *>(a->pthis)->fastFree(ptr);
}

}  // namespace

extern "C" ncnn_allocator_t ncnn_mp_cxx_counting_allocator_create(void) {
    // (c_api.cpp's layout: ncnn_allocator_destroy deletes pthis, then frees the struct.)
    ncnn_allocator_t a = static_cast<ncnn_allocator_t>(malloc(sizeof(*a)));
    if (a == nullptr) {
        return nullptr;
    }
    CountingAllocator *counting = new CountingAllocator();  // (as c_api.cpp makes ncnn's own)
    a->pthis = counting;
    a->fast_malloc = counting_fast_malloc;
    a->fast_free = counting_fast_free;
    return a;
}

extern "C" void ncnn_mp_cxx_counting_allocator_stats(ncnn_allocator_t a, size_t *in_use, size_t *peak) {
    CountingAllocator *c = static_cast<CountingAllocator *>(a->pthis);
    *in_use = __atomic_load_n(&c->in_use, __ATOMIC_RELAXED);
    *peak = __atomic_load_n(&c->peak, __ATOMIC_RELAXED);
}

extern "C" void ncnn_mp_cxx_counting_allocator_reset_peak(ncnn_allocator_t a) {
    CountingAllocator *c = static_cast<CountingAllocator *>(a->pthis);
    __atomic_store_n(&c->peak, __atomic_load_n(&c->in_use, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
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
