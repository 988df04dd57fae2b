// The layers an int8 activation passes through between two int8 layers (docs/kernels.md "int8
// between layers"): ReLU, max Pooling, Concat, Slice and ShuffleChannel. Each is ncnn's
// own layer for float input and this wrapper's int8 forward for int8 input: ReLU and max
// Pooling here (ncnn's generic ones read every blob as floats: past the end of an int8
// one), Concat, Slice and ShuffleChannel through ncnn's generic layer (which copies
// elements of any size; the x86 ones read int8 as floats or refuse it).
//
// Which layers may read an int8 blob is decided once, when the param loads
// (shape_guard.cpp, ncnn_mp_cxx_int8_misfit): a ReLU with a slope, an average or adaptive
// Pooling, or a Concat of int8 and float inputs never gets one here.
#include <ncnn/layer_type.h>
#include <ncnn/paramdict.h>

#include "kernels.h"
#include "shape_guard.h"

#if NCNN_MP_KERNELS

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2")
#endif

using namespace ncnn_mp_kernels;

namespace {

bool is_int8(const ncnn::Mat &m) {
    return m.elempack > 0 && m.elemsize == static_cast<size_t>(m.elempack);  // (a byte an element)
}

class PassLayer : public ncnn::Layer {
public:
    PassLayer(int type, ncnn::Layer *native, ncnn::Layer *naive) : native_(native), naive_(naive) {
        typeindex = type;
        copy_flags();
    }
    ~PassLayer() override {
        delete native_;
        delete naive_;
    }

    int load_param(const ncnn::ParamDict &pd) override {
        int ret = native_->load_param(pd);
        if (ret == 0 && naive_ != nullptr) {
            ret = naive_->load_param(pd);
        }
        copy_flags();
        kernel_w_ = pd.get(1, 0);
        kernel_h_ = pd.get(11, kernel_w_);
        stride_w_ = pd.get(2, 1);
        stride_h_ = pd.get(12, stride_w_);
        pad_left_ = pd.get(3, 0);
        pad_right_ = pd.get(14, pad_left_);
        pad_top_ = pd.get(13, pad_left_);
        pad_bottom_ = pd.get(15, pad_top_);
        global_ = pd.get(4, 0);
        pad_mode_ = pd.get(5, 0);
        max_ = pd.get(0, 0) == 0 && pd.get(7, 0) == 0;  // (max, not adaptive)
        return ret;
    }
    int load_model(const ncnn::ModelBin &mb) override {
        return native_->load_model(mb);  // (none of these has weights)
    }
    int create_pipeline(const ncnn::Option &opt) override {
        int ret = native_->create_pipeline(opt);
        copy_flags();
        return ret == 0 && naive_ != nullptr ? naive_->create_pipeline(opt) : ret;
    }
    int destroy_pipeline(const ncnn::Option &opt) override {
        int ret = native_->destroy_pipeline(opt);
        int ret2 = naive_ != nullptr ? naive_->destroy_pipeline(opt) : 0;
        return ret != 0 ? ret : ret2;
    }

    int forward(const std::vector<ncnn::Mat> &bottoms, std::vector<ncnn::Mat> &tops,
                const ncnn::Option &opt) const override {
        if (bottoms.empty() || !is_int8(bottoms[0])) {
            return native_->forward(bottoms, tops, opt);
        }
        std::vector<ncnn::Mat> unpacked(bottoms.size());
        for (size_t i = 0; i < bottoms.size(); i++) {
            if (!is_int8(bottoms[i])) {
                return -1;  // (int8 and float together: the param check refuses such a Concat)
            }
            if (unpack(bottoms[i], unpacked[i], opt) != 0) {
                return -100;
            }
        }
        return naive_ != nullptr ? naive_->forward(unpacked, tops, opt) : -1;
    }
    int forward(const ncnn::Mat &bottom, ncnn::Mat &top, const ncnn::Option &opt) const override {
        if (!is_int8(bottom)) {
            return native_->forward(bottom, top, opt);
        }
        ncnn::Mat b;
        if (unpack(bottom, b, opt) != 0) {
            return -100;
        }
        if (NCNN_MP_LAYER_Pooling && typeindex == ncnn::LayerType::Pooling) {
            return max_pool_int8(b, top, opt);
        }
        return naive_ != nullptr ? naive_->forward(b, top, opt) : -1;
    }
    int forward_inplace(std::vector<ncnn::Mat> &blobs, const ncnn::Option &opt) const override {
        return native_->forward_inplace(blobs, opt);
    }
    int forward_inplace(ncnn::Mat &blob, const ncnn::Option &opt) const override {
        if (!is_int8(blob)) {
            return native_->forward_inplace(blob, opt);
        }
        return NCNN_MP_LAYER_ReLU && typeindex == ncnn::LayerType::ReLU ? relu_int8(blob) : -1;  // (any packing)
    }

private:
    void copy_flags() {
        ncnn_mp_copy_flags(*this, *native_);
        support_int8_storage = true;
    }

    // An int8 blob as the int8 forwards and ncnn's generic layers read it: one element per
    // byte (ncnn's own int8 layers may write 8 to a byte-group on the desktop).
    static int unpack(const ncnn::Mat &in, ncnn::Mat &out, const ncnn::Option &opt) {
        if (in.elempack == 1) {
            out = in;
            return 0;
        }
        ncnn::Option o = opt;
        o.blob_allocator = opt.workspace_allocator;
        ncnn::convert_packing(in, out, 1, o);
        return out.empty() ? -100 : 0;
    }

    // A ReLU without a slope (the only one the param check lets int8 into): negatives to 0.
    static int relu_int8(ncnn::Mat &blob) {
        const size_t size = static_cast<size_t>(blob.w) * blob.h * blob.d * blob.elempack;  // (bytes)
        for (int q = 0; q < blob.c; q++) {
            signed char *p = static_cast<signed char *>(blob.data) + q * blob.cstep * blob.elemsize;
            for (size_t i = 0; i < size; i++) {
                p[i] = p[i] < 0 ? 0 : p[i];
            }
        }
        return 0;
    }

    // ncnn's max Pooling (pooling.cpp: global, or padded as its make_padding pads, with
    // -128 where ncnn pads an int8 blob) on int8 values: the max of int8 values is exact.
    int max_pool_int8(const ncnn::Mat &bottom, ncnn::Mat &top, const ncnn::Option &opt) const {
        if (!max_) {
            return -1;
        }
        const int channels = bottom.dims >= 3 ? bottom.c : 1;
        if (global_) {
            top.create(channels, static_cast<size_t>(1u), opt.blob_allocator);
            if (top.empty()) {
                return -100;
            }
            const int size = bottom.w * bottom.h;
            for (int q = 0; q < channels; q++) {
                const signed char *p = static_cast<const signed char *>(bottom.data) + q * bottom.cstep;
                signed char m = p[0];
                for (int i = 1; i < size; i++) {
                    m = p[i] > m ? p[i] : m;
                }
                static_cast<signed char *>(top.data)[q] = m;
            }
            return 0;
        }
        Pads pads;
        if (padding(bottom.w, bottom.h, pads) != 0) {
            return -1;
        }
        ncnn::Mat ws;
        Planes<signed char> in = {};
        int ret = input_int8(bottom, NULL, 1, pads, ws, in, opt);
        if (ret != 0) {
            return ret;
        }
        const int outw = (in.w - kernel_w_) / stride_w_ + 1, outh = (in.h - kernel_h_) / stride_h_ + 1;
        if (outw <= 0 || outh <= 0) {
            return -100;
        }
        top.create(outw, outh, channels, static_cast<size_t>(1u), opt.blob_allocator);
        if (top.empty()) {
            return -100;
        }
        for (int q = 0; q < channels; q++) {
            const signed char *plane = in.data + q * in.cstep;
            signed char *out = static_cast<signed char *>(top.data) + q * top.cstep;
            for (int i = 0; i < outh; i++) {
                for (int j = 0; j < outw; j++) {
                    const signed char *win = plane + i * stride_h_ * in.w + j * stride_w_;
                    signed char m = -128;
                    for (int y = 0; y < kernel_h_; y++) {
                        for (int x = 0; x < kernel_w_; x++) {
                            m = win[y * in.w + x] > m ? win[y * in.w + x] : m;
                        }
                    }
                    *out++ = m;
                }
            }
        }
        return 0;
    }

    // Pooling::make_padding's pads for a w x h input (pad_mode 0: up to a whole stride at the
    // end; 1: as given; 2, 3: SAME, the odd pixel after or before), as the padding rule
    // replays them (shape_guard.h ncnn_mp_padding), with -128 where ncnn pads an int8 blob: 0,
    // or -1 for pads that do not fit (a negative one wrote before the workspace).
    int padding(int w, int h, Pads &out) const {
        ncnn_mp_padding_t rule = {};
        rule.kind = NCNN_MP_PAD_POOL;
        rule.pool_mode = pad_mode_;
        rule.kernel_w = kernel_w_;
        rule.kernel_h = kernel_h_;
        rule.stride_w = stride_w_;
        rule.stride_h = stride_h_;
        rule.left = pad_left_;
        rule.right = pad_right_;
        rule.top = pad_top_;
        rule.bottom = pad_bottom_;
        ncnn_mp_pads_t q;
        if (kernel_w_ <= 0 || kernel_h_ <= 0 || stride_w_ <= 0 || stride_h_ <= 0 ||
            ncnn_mp_padding(&rule, w, h, false, &q) != NCNN_MP_PAD_FITS) {
            return -1;
        }
        out = { q.top, q.bottom, q.left, q.right, -128.f };
        return 0;
    }

    ncnn::Layer *native_;  // this build's own layer (x86 on the desktop), for float blobs
    ncnn::Layer *naive_;   // ncnn's generic layer, for int8 blobs: Concat, Slice, ShuffleChannel
    int kernel_w_ = 1, kernel_h_ = 1, stride_w_ = 1, stride_h_ = 1;
    int pad_left_ = 0, pad_right_ = 0, pad_top_ = 0, pad_bottom_ = 0, global_ = 0, pad_mode_ = 0;
    bool max_ = false;
};

}  // namespace

namespace ncnn_mp_kernels {

ncnn::Layer *pass_layer_create(int typeindex) {
    bool copies = (NCNN_MP_LAYER_Concat && typeindex == ncnn::LayerType::Concat) ||
                  (NCNN_MP_LAYER_Slice && typeindex == ncnn::LayerType::Slice) ||
                  (NCNN_MP_LAYER_ShuffleChannel && typeindex == ncnn::LayerType::ShuffleChannel);
    if (!copies && !(NCNN_MP_LAYER_ReLU && typeindex == ncnn::LayerType::ReLU) &&
        !(NCNN_MP_LAYER_Pooling && typeindex == ncnn::LayerType::Pooling)) {
        return nullptr;
    }
    ncnn::Layer *native = ncnn::create_layer_cpu(typeindex);
    ncnn::Layer *naive = copies && native != nullptr ? ncnn::create_layer_naive(typeindex) : nullptr;
    if (native == nullptr || (copies && naive == nullptr)) {
        delete native;
        return nullptr;  // (not in this build: ncnn's own lookup fails the same way)
    }
    return new PassLayer(typeindex, native, naive);
}

}  // namespace ncnn_mp_kernels

#endif  // NCNN_MP_KERNELS
