// SPDX-License-Identifier: MIT
// The C++ seam, loading (cxx_seam.h): ncnn's Net::load_model with weights kept in place,
// and ending the layers' pipelines before a model is loaded again. ncnn_net_t is c_api.h's
// public struct: its pthis is the ncnn::Net.
#include <ncnn/datareader.h>
#include <ncnn/layer.h>
#include <ncnn/net.h>

#include "cxx_seam.h"
#include "shape_guard.h"

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

// A layer's shape hint lists, freed if they hold no hints. ncnn sizes both for every layer at
// load_param (a Mat a blob: 52 bytes and a heap block on a 32-bit board) and reads them only
// in create_pipeline (load_model), where an empty one says nothing: kept where a param gave
// hints (the layer's kernels choose by them, at every weights load).
void ncnn_mp_drop_empty_hints(ncnn::Layer &layer) {
    bool hinted = false;
    for (const ncnn::Mat &m : layer.bottom_shapes) {
        hinted = hinted || m.dims != 0;
    }
    for (const ncnn::Mat &m : layer.top_shapes) {
        hinted = hinted || m.dims != 0;
    }
    if (!hinted) {
#if NCNN_SIMPLESTL
        layer.bottom_shapes.clear();  // (ncnn's own vector: clear gives its storage back)
        layer.top_shapes.clear();
#else
        std::vector<ncnn::Mat>().swap(layer.bottom_shapes);  // (std's clear keeps the storage)
        std::vector<ncnn::Mat>().swap(layer.top_shapes);
#endif
    }
}

// After a param load, every layer's (the guard frees those of the layers before it as the
// load goes: GuardLayer::load_param).
extern "C" void ncnn_mp_cxx_drop_empty_shape_hints(ncnn_net_t net) {
    for (ncnn::Layer *layer : static_cast<ncnn::Net *>(net->pthis)->mutable_layers()) {
        if (layer != nullptr) {
            ncnn_mp_drop_empty_hints(*layer);
        }
    }
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
