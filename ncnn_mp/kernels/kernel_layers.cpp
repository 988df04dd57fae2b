// SPDX-License-Identifier: MIT
// ncnn_mp's Convolution, ConvolutionDepthWise and InnerProduct layers (kernels.h): ncnn's
// parameters and weights as its generic layers load them, forwards on ncnn_mp's kernels.
//
// The parameters are judged by ncnn itself: load_param hands them to a generic layer of
// the same type first (ncnn's validation, as the loader fuzzer knows it), and takes its
// flags. A layer whose weights come as a second input (dynamic_weight) keeps that generic
// layer and hands it every call: the kernels read weights from the model only.
//
// What these refuse where ncnn's code would read or write out of bounds (the forward
// returns -1): int8 weights without use_int8_inference (ncnn reads them as floats), int8
// weights without their scales (a short .bin: ncnn reads past the empty Mats), SAME
// padding that comes out negative on one side and positive on the other (ncnn's Padding
// writes past its output), packed or 4-D inputs (the guard refuses 4-D; the layer says it
// packs nothing, so ncnn unpacks before the call).
#include <ncnn/layer_type.h>
#include <ncnn/modelbin.h>
#include <ncnn/paramdict.h>

#include "kernels.h"
#include "shape_guard.h"

#if NCNN_MP_KERNELS

using namespace ncnn_mp_kernels;

namespace {

// A loaded array (weights, bias, scales, activation parameters) held as its data and
// reference, 20 bytes where an ncnn::Mat takes 52 on a 32-bit board: a kernel layer keeps six.
// Given a Mat (mb.load's, a param's), it shares the Mat's storage as a Mat copy would (none
// when the data lies in place), and lets it go as the Mat would.
class Held {
public:
    Held() = default;
    Held(const Held &) = delete;
    Held &operator=(const Held &) = delete;
    ~Held() {
        release();
    }
    Held &operator=(const ncnn::Mat &m) {
        ncnn::Mat kept = m;  // (a reference more, taken as ncnn takes one)
        release();
        data_ = kept.data;
        refcount_ = kept.refcount;
        allocator_ = kept.allocator;
        w_ = kept.dims == 0 ? 0 : kept.w;
        elemsize_ = static_cast<unsigned char>(kept.elemsize);
        kept.data = nullptr;  // (now this one's: not let go with `kept`)
        kept.refcount = nullptr;
        return *this;
    }
    bool empty() const {
        return data_ == nullptr || w_ == 0;
    }
    int w() const {
        return w_;
    }
    size_t elemsize() const {
        return elemsize_;
    }
    ncnn::Allocator *allocator() const {
        return allocator_;
    }
    template <typename T>
    operator const T *() const {
        return static_cast<const T *>(data_);
    }
    float operator[](size_t i) const {
        return static_cast<const float *>(data_)[i];
    }

private:
    void release() {
        ncnn::Mat m;  // (the Mat this was, let go as ncnn lets a Mat go)
        m.data = data_;
        m.refcount = refcount_;
        m.allocator = allocator_;
        data_ = nullptr;
        refcount_ = nullptr;
    }
    void *data_ = nullptr;
    int *refcount_ = nullptr;
    ncnn::Allocator *allocator_ = nullptr;
    int w_ = 0;
    unsigned char elemsize_ = 0;
};

class KernelLayer : public ncnn::Layer {
public:
    explicit KernelLayer(int type) {
        typeindex = type;
        one_blob_only = true;
        support_inplace = false;
    }
    ~KernelLayer() override {
        delete generic_;
    }

    int load_param(const ncnn::ParamDict &pd) override {
        delete generic_;
        generic_ = ncnn::create_layer_naive(typeindex);
        if (generic_ == nullptr) {
            return -1;
        }
        int ret = generic_->load_param(pd);
        one_blob_only = generic_->one_blob_only;
        support_inplace = generic_->support_inplace;
        support_int8_storage = generic_->support_int8_storage;
        bool dynamic = ret == 0 && typeindex != ncnn::LayerType::InnerProduct && pd.get(19, 0) != 0;
        if (ret != 0 || !dynamic) {
            delete generic_;
            generic_ = nullptr;
        }
        if (ret != 0 || dynamic) {
            return ret;
        }
        read_params(pd);
        return 0;
    }

    int load_model(const ncnn::ModelBin &mb) override {
        if (generic_ != nullptr) {
            return generic_->load_model(mb);
        }
        return typeindex == ncnn::LayerType::InnerProduct ? load_innerproduct(mb) : load_conv(mb);
    }

    int create_pipeline(const ncnn::Option &opt) override {
        return generic_ != nullptr ? generic_->create_pipeline(opt) : 0;
    }
    int destroy_pipeline(const ncnn::Option &opt) override {
        return generic_ != nullptr ? generic_->destroy_pipeline(opt) : 0;
    }

    int forward(const std::vector<ncnn::Mat> &bottoms, std::vector<ncnn::Mat> &tops,
                const ncnn::Option &opt) const override {
        return generic_ != nullptr ? generic_->forward(bottoms, tops, opt) : -1;
    }

    int forward(const ncnn::Mat &bottom, ncnn::Mat &top, const ncnn::Option &opt) const override {
        if (generic_ != nullptr) {
            return generic_->forward(bottom, top, opt);
        }
        if (bottom.elempack != 1 || bottom.dims < 1 || bottom.dims > 3) {
            return -1;
        }
        bool int8 = weight_.elemsize() == 1;
        if ((int8 && !opt.use_int8_inference) || (int8_scale_term_ && !int8_ready_) ||
            (!int8 && bottom.elemsize != 4u)) {  // (an int8 blob into fp32 weights: read as floats)
            return -1;
        }
        if (NCNN_MP_LAYER_InnerProduct && typeindex == ncnn::LayerType::InnerProduct) {
            return int8 ? innerproduct_int8(bottom, top, opt) : innerproduct_fp32(bottom, top, opt);
        }
        if (!NCNN_MP_LAYER_Convolution && !NCNN_MP_LAYER_ConvolutionDepthWise) {
            return -1;  // (not made: a firmware without either)
        }
        // ncnn's deprecated path: a 1x1 Convolution of a vector is an InnerProduct (fp32 only)
        if (!int8 && typeindex == ncnn::LayerType::Convolution && bottom.dims == 1 && kernel_w_ == 1 &&
            kernel_h_ == 1 && bottom.w == weight_data_size_ / num_output_) {
            return innerproduct_fp32(bottom, top, opt);
        }
        return conv(bottom, top, int8, opt);
    }

private:
    void read_params(const ncnn::ParamDict &pd) {
        bool ip = typeindex == ncnn::LayerType::InnerProduct;
        num_output_ = pd.get(0, 0);
        bias_term_ = pd.get(ip ? 1 : 5, 0);
        weight_data_size_ = pd.get(ip ? 2 : 6, 0);
        int8_scale_term_ = pd.get(8, 0);
        activation_type_ = pd.get(9, 0);
        ncnn::Mat params = pd.get(10, ncnn::Mat());
        if (pd.type(10) == 5 && !params.empty()) {  // integers in a text param
            ncnn::Mat converted(params.w);
            const int *p = params;
            for (int i = 0; i < params.w && !converted.empty(); i++) {
                converted[i] = static_cast<float>(p[i]);
            }
            params = converted;
        }
        activation_params_ = params;
        if (ip) {
            return;
        }
        kernel_w_ = pd.get(1, 0);
        kernel_h_ = pd.get(11, kernel_w_);
        dilation_w_ = pd.get(2, 1);
        dilation_h_ = pd.get(12, dilation_w_);
        stride_w_ = pd.get(3, 1);
        stride_h_ = pd.get(13, stride_w_);
        pad_left_ = pd.get(4, 0);
        pad_right_ = pd.get(15, pad_left_);
        pad_top_ = pd.get(14, pad_left_);
        pad_bottom_ = pd.get(16, pad_top_);
        pad_value_ = pd.get(18, 0.f);
        group_ = typeindex == ncnn::LayerType::ConvolutionDepthWise ? pd.get(7, 1) : 1;
    }

    // Weights, bias, scales as ncnn's load_model reads them.
    int load_weights(const ncnn::ModelBin &mb) {
        weight_ = mb.load(weight_data_size_, 0);
        if (weight_.empty()) {
            return -100;
        }
        if (bias_term_) {
            bias_ = mb.load(num_output_, 1);
            if (bias_.empty()) {
                return -100;
            }
        }
        return 0;
    }

    int load_innerproduct(const ncnn::ModelBin &mb) {
        int ret = load_weights(mb);
        if (ret != 0) {
            return ret;
        }
#if NCNN_INT8
        if (int8_scale_term_) {
            weight_scales_ = mb.load(num_output_, 1);
            bottom_scales_ = mb.load(1, 1);
            int8_ready_ = weight_scales_.w() >= num_output_ && !bottom_scales_.empty();
            if (weight_.elemsize() == 4u && int8_ready_) {
                ret = quantize_rows(num_output_, weight_scales_);
            }
        }
#endif
        return ret;
    }

    int load_conv(const ncnn::ModelBin &mb) {
        int ret = load_weights(mb);
        if (ret != 0) {
            return ret;
        }
#if NCNN_INT8
        bool depthwise = typeindex == ncnn::LayerType::ConvolutionDepthWise;
        if (int8_scale_term_) {
            // ConvolutionDepthWise: one weight scale per group (terms 1, 101) or one for all
            // (2, 102); Convolution: one per output channel. One input scale; with a term
            // above 100, one output scale: the output is requantized to int8.
            int scales = !depthwise ? num_output_ : (int8_scale_term_ == 2 || int8_scale_term_ == 102) ? 1 : group_;
            if (depthwise && int8_scale_term_ % 100 != 1 && int8_scale_term_ % 100 != 2) {
                scales = 0;  // (ncnn loads no scales for other terms, and reads them anyway)
            }
            if (scales > 0) {
                weight_scales_ = mb.load(scales, 1);
                bottom_scales_ = mb.load(1, 1);
            }
            if (int8_scale_term_ > 100 && scales > 0) {
                top_scales_ = mb.load(1, 1);
            }
            int8_ready_ = scales > 0 && weight_scales_.w() >= scales && !bottom_scales_.empty() &&
                          (int8_scale_term_ <= 100 || !top_scales_.empty());
            if (weight_.elemsize() == 4u && int8_ready_) {
                ret = quantize_rows(depthwise ? group_ : num_output_, weight_scales_);
            }
        }
#endif
        return ret;
    }

#if NCNN_INT8
    // fp32 weights of an int8 layer, quantized at load as ncnn's load_model does it (its
    // quantize_to_int8: float2int8(w * scale)), in `rows` rows of weight_data_size_ / rows,
    // row r with scales[r] (or scales[0] for all). Done here, not through quantize_to_int8:
    // ncnn quantizes a depthwise layer's groups into unaligned ranges of one Mat, where its
    // x86 Quantize stores 8 bytes at a time (UBSan: a misaligned store).
    int quantize_rows(int rows, const Held &scales) {
        ncnn::Mat q(weight_data_size_, static_cast<size_t>(1u), weight_.allocator());
        if (q.empty()) {
            return -100;
        }
        const int per_row = weight_data_size_ / rows;
        const float *w = weight_;
        signed char *out = static_cast<signed char *>(q.data);
        for (int r = 0; r < rows; r++) {
            float scale = scales.w() == 1 ? scales[0] : scales[r];
            for (int i = 0; i < per_row; i++) {
                out[r * per_row + i] = float2int8(mul_ff(w[r * per_row + i], scale));
            }
        }
        weight_ = q;
        return 0;
    }
#endif

    // ncnn's make_padding (explicit pads, or -233 / -234: SAME, the odd pixel after or
    // before), as the padding rule replays it (shape_guard.h ncnn_mp_padding): 0, or -1 for
    // pads that do not fit (ncnn's Padding would write past its output with them).
    int pads(const ncnn::Mat &bottom, Pads &p) const {
        ncnn_mp_padding_t rule = {};
        rule.kind = NCNN_MP_PAD_CONV;
        rule.kernel_w = dilation_w_ * (kernel_w_ - 1) + 1;
        rule.kernel_h = dilation_h_ * (kernel_h_ - 1) + 1;
        rule.stride_w = stride_w_;
        rule.stride_h = stride_h_;
        rule.left = pad_left_;
        rule.right = pad_right_;
        rule.top = pad_top_;
        rule.bottom = pad_bottom_;
        ncnn_mp_pads_t q;
        bool vector = bottom.dims == 1;
        if (ncnn_mp_padding(&rule, bottom.w, vector ? 1 : bottom.h, vector, &q) != NCNN_MP_PAD_FITS) {
            return -1;
        }
        p = { q.top, q.bottom, q.left, q.right, pad_value_ };
        return 0;
    }

    int conv(const ncnn::Mat &bottom, ncnn::Mat &top, bool int8, const ncnn::Option &opt) const {
        Pads p;
        if (pads(bottom, p) != 0) {
            return -1;
        }
        const int channels = bottom.dims >= 3 ? bottom.c : 1;
        const int group = group_ > 0 ? group_ : 1;
        const int maxk = kernel_w_ * kernel_h_;
        bool depthwise = NCNN_MP_LAYER_ConvolutionDepthWise && typeindex == ncnn::LayerType::ConvolutionDepthWise &&
                         channels == group && group == num_output_;
        if (typeindex == ncnn::LayerType::ConvolutionDepthWise && int8 &&
            (channels % group != 0 || num_output_ % group != 0)) {
            return -100;  // (ncnn's int8 forward: "reject invalid group")
        }
        // the weights this input makes the loops read, against what the model has
        long long reads = depthwise ? static_cast<long long>(channels) * maxk
                                    : static_cast<long long>(channels / group) * maxk * (num_output_ / group) * group;
        if (reads > weight_data_size_ || (!depthwise && num_output_ % group != 0)) {
            return -1;
        }
        // The padded input's extent (input_rows: a 1-D blob is padded sideways only), and the
        // dilated kernel's.
        const int w = bottom.w + p.left + p.right, h = input_rows(bottom, p);
        const int extent_w = dilation_w_ * (kernel_w_ - 1) + 1, extent_h = dilation_h_ * (kernel_h_ - 1) + 1;
        ConvShape s;
        s.kernel_w = kernel_w_;
        s.kernel_h = kernel_h_;
        s.dilation_w = dilation_w_;
        s.dilation_h = dilation_h_;
        s.stride_w = stride_w_;
        s.stride_h = stride_h_;
        s.outw = (w - extent_w) / stride_w_ + 1;
        s.outh = (h - extent_h) / stride_h_ + 1;
        s.maxk = maxk;
        if (s.outw <= 0 || s.outh <= 0) {
            return -100;
        }
        ncnn::Mat ofs(maxk, static_cast<size_t>(4u), opt.workspace_allocator);
        if (ofs.empty()) {
            return -100;
        }
        int *o = static_cast<int *>(ofs.data);
        for (int i = 0, k = 0; i < kernel_h_; i++) {
            for (int j = 0; j < kernel_w_; j++) {
                o[k++] = i * dilation_h_ * w + j * dilation_w_;
            }
        }
        s.ofs = o;
        const int inch_g = channels / group, outch_g = num_output_ / group;
        ncnn::Mat cols;
        if (!depthwise) {
            cols.create(int8 ? static_cast<int>(conv_int8_cols(inch_g * maxk)) : 2 * inch_g * maxk,
                        static_cast<size_t>(int8 ? 1u : 4u), opt.workspace_allocator);
            if (cols.empty()) {
                return -100;
            }
        }
        bool requantize = int8 && int8_scale_term_ > 100;
        top.create(s.outw, s.outh, num_output_, static_cast<size_t>(requantize ? 1u : 4u), opt.blob_allocator);
        if (top.empty()) {
            return -100;
        }
        ncnn::Mat scales, requant, sums;
        int ret = 0;
        if (int8) {
            ret = int8_scales(scales, group, requantize, opt);
            if (ret == 0 && requantize) {
                ret = requants(requant, scales, group, inch_g * maxk, opt);
            }
            if (ret == 0 && depthwise) {
                sums.create(s.outw, static_cast<size_t>(4u), opt.workspace_allocator);
                ret = sums.empty() ? -100 : 0;
            }
            if (ret != 0) {
                return ret;
            }
        }
        // A band of output rows at a time, from the padded input rows it reads: where the input
        // must be copied (padded, or quantized), only a band's rows are, into one workspace.
        const int band = band_rows(bottom, p, int8, w, channels, s);
        ncnn::Mat input_ws;  // (one input scale for every channel: ncnn's depthwise repeats it per group)
        for (int oy = 0; oy < s.outh; oy += band) {
            ConvShape sb = s;
            sb.outh = oy + band <= s.outh ? band : s.outh - oy;
            const int r0 = oy * stride_h_, n = (sb.outh - 1) * stride_h_ + extent_h;
            const size_t skip = static_cast<size_t>(oy) * s.outw * top.elemsize;  // (the band's first output row)
            if (!int8) {
                Planes<float> in32 = {};
                ret = input_fp32(bottom, p, r0, n, input_ws, in32, opt);
                if (ret != 0) {
                    return ret;
                }
                Fp32Out out = { activation_type_, activation_params_,
                                reinterpret_cast<float *>(static_cast<unsigned char *>(top.data) + skip), top.cstep };
                const float *weights = weight_;
                const float *bias = bias_term_ ? static_cast<const float *>(bias_) : NULL;
                if (depthwise) {
                    depthwise_fp32(in32, weights, bias, sb, out);
                    continue;
                }
                for (int g = 0; g < group; g++) {
                    conv_fp32(in32, g * inch_g, inch_g, weights + g * maxk * inch_g * outch_g, bias, outch_g, sb, cols,
                              out, g * outch_g);
                }
                continue;
            }
            Planes<signed char> in8 = {};
            ret = input_int8(bottom, bottom_scales_, channels, p, r0, n, input_ws, in8, opt);
            if (ret != 0) {
                return ret;
            }
            Int8Out out = { scales, bias_term_ ? static_cast<const float *>(bias_) : NULL,
                            requantize ? static_cast<const float *>(scales) + num_output_ : NULL, activation_type_,
                            activation_params_, static_cast<unsigned char *>(top.data) + skip, top.cstep,
                            requantize ? static_cast<const Requant *>(requant.data) : NULL };
            const signed char *weights = weight_;
            if (depthwise) {
                depthwise_int8(in8, weights, sb, static_cast<int *>(sums.data), out);
                continue;
            }
            for (int g = 0; g < group; g++) {
                conv_int8(in8, g * inch_g, inch_g, weights + g * maxk * inch_g * outch_g, outch_g, sb, cols, out,
                          g * outch_g);
            }
        }
        return 0;
    }

    // Output rows a band: all of them where the kernels read the input where it lies (int8,
    // or float into fp32 weights, and unpadded), else as many as keep the band's copy of the
    // input within NCNN_MP_BAND_BYTES (at least one). A band re-copies the rows its kernel
    // shares with the band before: (kernel - stride) rows, a few percent at this size.
    int band_rows(const ncnn::Mat &bottom, const Pads &p, bool int8, int w, int channels, const ConvShape &s) const {
        bool copied = p.top != 0 || p.bottom != 0 || p.left != 0 || p.right != 0 || (int8 && bottom.elemsize != 1);
        if (!copied || bottom.dims < 2) {
            return s.outh;
        }
        const size_t row = static_cast<size_t>(w) * channels * (int8 ? 1 : 4) * stride_h_;  // (input bytes an output row)
        const size_t fit = NCNN_MP_BAND_BYTES / (row > 0 ? row : 1);
        return fit < 1 ? 1 : fit > static_cast<size_t>(s.outh) ? s.outh : static_cast<int>(fit);
    }

    // Per output channel: ncnn's scale_in (1 / (input scale * weight scale), 0 where the
    // weight scale is 0; the same two float operations), then with `requantize` the output
    // scale. ncnn computes scale_in per output element; once per channel gives the same.
    int int8_scales(ncnn::Mat &scales, int group, bool requantize, const ncnn::Option &opt) const {
        scales.create(num_output_ * (requantize ? 2 : 1), static_cast<size_t>(4u), opt.workspace_allocator);
        if (scales.empty()) {
            return -100;
        }
        for (int p = 0; p < num_output_; p++) {
            float ws = weight_scale(p, group);  // (mul_ff, recip_ff: the same numbers, fewer library calls)
            scales[p] = (float_bits(ws) & 0x7fffffffu) == 0 ? 0.f : recip_ff(mul_ff(bottom_scales_[0], ws));
            if (requantize) {
                scales[num_output_ + p] = top_scales_[0];
            }
        }
        return 0;
    }

    // Output channel p's weight scale: a Convolution's own, a ConvolutionDepthWise's group's
    // (or the one for all).
    float weight_scale(int p, int group) const {
        if (typeindex != ncnn::LayerType::ConvolutionDepthWise) {
            return weight_scales_[p];
        }
        return weight_scales_[weight_scales_.w() == 1 ? 0 : p / (num_output_ / group)];
    }

    // Per output channel, the fixed-point requantization of an int8 output (kernels.h's
    // Requant) from `scales` (int8_scales with requantize).
    int requants(ncnn::Mat &requant, const ncnn::Mat &scales, int group, int n, const ncnn::Option &opt) const {
        requant.create(num_output_, sizeof(Requant), opt.workspace_allocator);
        if (requant.empty()) {
            return -100;
        }
        Requant *r = static_cast<Requant *>(requant.data);
        for (int p = 0; p < num_output_; p++) {
            float d = mul_ff(bottom_scales_[0], weight_scale(p, group));
            r[p] = make_requant(scales[p], d, scales[num_output_ + p], bias_term_ ? bias_[p] : 0.f,
                                activation_type_, activation_params_, n);
        }
        return 0;
    }

    // The input as one vector (a 2-D input as rows of num_input when it has that width),
    // as ncnn's InnerProduct reads it.
    // gemm: rows of a 2-D input, and a 2-D output.
    int innerproduct_rows(const ncnn::Mat &bottom, int &rows, int &n, bool &gemm) const {
        const int num_input = weight_data_size_ / num_output_;
        gemm = bottom.dims == 2 && bottom.w == num_input;
        if (gemm) {
            rows = bottom.h;
            n = num_input;
            return 0;
        }
        rows = 1;
        n = bottom.w * bottom.h * bottom.d * bottom.c;
        return n == num_input ? 0 : -1;
    }

    int innerproduct_fp32(const ncnn::Mat &bottom, ncnn::Mat &top, const ncnn::Option &opt) const {
        int rows, n;
        bool gemm;
        if (innerproduct_rows(bottom, rows, n, gemm) != 0 || bottom.elemsize != 4u) {
            return -1;
        }
        const float *x = bottom;
        ncnn::Mat flat;
        size_t plane = static_cast<size_t>(bottom.w) * bottom.h * bottom.d;
        if (bottom.dims >= 3 && bottom.cstep != plane) {  // channels padded apart: made one vector
            flat.create(n, static_cast<size_t>(4u), opt.workspace_allocator);
            if (flat.empty()) {
                return -100;
            }
            for (int q = 0; q < bottom.c; q++) {
                memcpy(static_cast<float *>(flat.data) + q * plane, bottom.channel(q).data, plane * sizeof(float));
            }
            x = flat;
        }
        if (create_top(top, gemm, rows, opt) != 0) {
            return -100;
        }
        Fp32Out out = { activation_type_, activation_params_, static_cast<float *>(top.data), 1 };
        for (int r = 0; r < rows; r++) {
            rows_fp32(x + r * n, n, weight_, bias_term_ ? static_cast<const float *>(bias_) : NULL, num_output_, out,
                      r * num_output_);
        }
        return 0;
    }

    // An InnerProduct's float32 output: a row of num_output per input row (gemm), or one vector.
    int create_top(ncnn::Mat &top, bool gemm, int rows, const ncnn::Option &opt) const {
        if (gemm) {
            top.create(num_output_, rows, static_cast<size_t>(4u), opt.blob_allocator);
        } else {
            top.create(num_output_, static_cast<size_t>(4u), opt.blob_allocator);
        }
        return top.empty() ? -100 : 0;
    }

    int innerproduct_int8(const ncnn::Mat &bottom, ncnn::Mat &top, const ncnn::Option &opt) const {
        int rows, n;
        bool gemm;
        if (innerproduct_rows(bottom, rows, n, gemm) != 0) {
            return -1;
        }
        // quantized (or copied) into one vector: a 2-D input's rows are already one
        Pads none = { 0, 0, 0, 0, 0.f };
        ncnn::Mat ws;
        Planes<signed char> in = {};
        int ret = input_int8(bottom, bottom_scales_, bottom.dims >= 3 ? bottom.c : 1, none, ws, in, opt);
        if (ret != 0) {
            return ret;
        }
        const signed char *x = in.data;
        ncnn::Mat flat;
        size_t plane = static_cast<size_t>(in.w) * in.h;
        if (in.c > 1 && in.cstep != plane) {  // an int8 input whose channels are padded apart
            flat.create(n, static_cast<size_t>(1u), opt.workspace_allocator);
            if (flat.empty()) {
                return -100;
            }
            for (int q = 0; q < in.c; q++) {
                memcpy(static_cast<signed char *>(flat.data) + q * plane, in.data + q * in.cstep, plane);
            }
            x = flat;
        }
        if (create_top(top, gemm, rows, opt) != 0) {
            return -100;
        }
        ncnn::Mat scales;
        ret = int8_scales(scales, 1, false, opt);
        if (ret != 0) {
            return ret;
        }
        Int8Out out = { scales, bias_term_ ? static_cast<const float *>(bias_) : NULL, NULL, activation_type_,
                        activation_params_, top.data, 1, NULL };
        for (int r = 0; r < rows; r++) {
            rows_int8(x + r * n, n, weight_, num_output_, out, r * num_output_);
        }
        return 0;
    }

    ncnn::Layer *generic_ = nullptr;  // ncnn's generic layer: weights as an input (dynamic_weight)
    int num_output_ = 0, bias_term_ = 0, weight_data_size_ = 0, int8_scale_term_ = 0, activation_type_ = 0;
    int kernel_w_ = 1, kernel_h_ = 1, dilation_w_ = 1, dilation_h_ = 1, stride_w_ = 1, stride_h_ = 1;
    int pad_left_ = 0, pad_right_ = 0, pad_top_ = 0, pad_bottom_ = 0, group_ = 1;
    float pad_value_ = 0.f;
    bool int8_ready_ = false;  // int8 weights have every scale the forward reads
    Held activation_params_, weight_, bias_, weight_scales_, bottom_scales_, top_scales_;
};

}  // namespace

ncnn::Layer *ncnn_mp_kernel_create(int typeindex) {
    switch (typeindex) {
        case ncnn::LayerType::Convolution:
            return NCNN_MP_LAYER_Convolution ? new KernelLayer(typeindex) : nullptr;
        case ncnn::LayerType::ConvolutionDepthWise:
            return NCNN_MP_LAYER_ConvolutionDepthWise ? new KernelLayer(typeindex) : nullptr;
        case ncnn::LayerType::InnerProduct:
            return NCNN_MP_LAYER_InnerProduct ? new KernelLayer(typeindex) : nullptr;
        default:
            return pass_layer_create(typeindex);  // (ReLU, Pooling, Concat, Slice, Interp, BinaryOp, Sigmoid, ...)
    }
}

#else  // !NCNN_MP_KERNELS

ncnn::Layer *ncnn_mp_kernel_create(int) {
    return nullptr;
}

#endif  // NCNN_MP_KERNELS
