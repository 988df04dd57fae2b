// SPDX-License-Identifier: MIT
// The layers between int8 layers (docs/kernels.md "int8 between layers"): ReLU, max and
// average Pooling, Concat, Slice, ShuffleChannel, Crop, Interp, Reshape and Permute pass an int8 activation on
// in its own scale; BinaryOp add and mul with int8 scales (params 20, 21, 22: quantize_int8
// --chain) compute int8 from int8, requantized; a Sigmoid or Softmax with its input's scale
// (param 20) reads int8 and writes floats through a table, and a Reshape or Permute given its input's
// scale (param 20) writes the values as floats, q / scale (a network's output: dequantized
// where it leaves the int8 chain). Each is ncnn's own layer for float input and this
// wrapper's int8 forward for int8 input: ReLU, Pooling, Interp, BinaryOp and Permute here
// (ncnn's generic ones read every blob as floats: past the end of an int8 one), Concat,
// Slice, ShuffleChannel, Crop and Reshape through ncnn's generic layer (which copies elements
// of any size; the x86 ones read int8 as floats or refuse it).
//
// Which layers may read an int8 blob is decided once, when the param loads
// (shape_guard.cpp, ncnn_mp_cxx_int8_misfit): a ReLU with a slope, an adaptive
// Pooling, a Concat of int8 and float inputs, an int8 BinaryOp given a float blob never gets
// one here.
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
        if (naive_ != native_) {
            delete naive_;
        }
    }

    int load_param(const ncnn::ParamDict &pd) override {
        int ret = native_->load_param(pd);
        if (ret == 0 && naive_ != nullptr && naive_ != native_) {
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
        avg_ = pd.get(0, 0) == 1 && pd.get(7, 0) == 0;  // (average, not adaptive)
        count_include_pad_ = pd.get(6, 0);
        op_type_ = pd.get(0, 0);  // (BinaryOp's operation)
        scale_a_ = pd.get(20, 0.f);
        scale_b_ = pd.get(21, 0.f);
        scale_out_ = pd.get(22, 0.f);
        align_corner_ = pd.get(6, 0);  // (Interp's)
        softmax_axis_ = pd.get(0, 0);  // (Softmax's)
        return ret;
    }
    int load_model(const ncnn::ModelBin &mb) override {
        return native_->load_model(mb);  // (none of these has weights)
    }
    int create_pipeline(const ncnn::Option &opt) override {
        int ret = native_->create_pipeline(opt);
        copy_flags();
        return ret == 0 && naive_ != nullptr && naive_ != native_ ? naive_->create_pipeline(opt) : ret;
    }
    int destroy_pipeline(const ncnn::Option &opt) override {
        int ret = native_->destroy_pipeline(opt);
        int ret2 = naive_ != nullptr && naive_ != native_ ? naive_->destroy_pipeline(opt) : 0;
        return ret != 0 ? ret : ret2;
    }

    int forward(const std::vector<ncnn::Mat> &bottoms, std::vector<ncnn::Mat> &tops,
                const ncnn::Option &opt) const override {
        if (bottoms.empty() || !is_int8(bottoms[0])) {
            return native_->forward(bottoms, tops, opt);
        }
        const bool crop = typeindex == ncnn::LayerType::Crop;  // (its second bottom: a shape to crop to)
        std::vector<ncnn::Mat> unpacked(bottoms.size());
        for (size_t i = 0; i < bottoms.size(); i++) {
            if (!is_int8(bottoms[i]) && !(crop && i > 0)) {
                return -1;  // (int8 and float together: the param check refuses such a Concat)
            }
            if (!is_int8(bottoms[i])) {
                unpacked[i] = bottoms[i];
            } else if (unpack(bottoms[i], unpacked[i], opt) != 0) {
                return -100;
            }
        }
        if (NCNN_MP_LAYER_BinaryOp && typeindex == ncnn::LayerType::BinaryOp) {
            return unpacked.size() == 2 && !tops.empty() ? binary_int8(unpacked[0], unpacked[1], tops[0], opt) : -1;
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
            return avg_ ? avg_pool_int8(b, top, opt) : max_pool_int8(b, top, opt);
        }
        if (NCNN_MP_LAYER_Interp && typeindex == ncnn::LayerType::Interp) {
            return interp_int8(b, top, opt);
        }
        if (NCNN_MP_LAYER_Sigmoid && typeindex == ncnn::LayerType::Sigmoid) {
            return sigmoid_int8(b, top, opt);
        }
        if (NCNN_MP_LAYER_Permute && typeindex == ncnn::LayerType::Permute) {
            return permute_int8(b, top, opt);
        }
        if (NCNN_MP_LAYER_Softmax && typeindex == ncnn::LayerType::Softmax) {
            return softmax_int8(b, top, opt);
        }
        if (naive_ == nullptr) {
            return -1;
        }
        if (!(scale_a_ > 0.f)) {
            return naive_->forward(b, top, opt);
        }
        ncnn::Option o = opt;  // (a Reshape whose output leaves the chain: int8, then floats)
        o.blob_allocator = opt.workspace_allocator;
        ncnn::Mat t;
        int ret = naive_->forward(b, t, o);
        return ret != 0 ? ret : dequantize(t, top, opt);
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
        if ((typeindex == ncnn::LayerType::Sigmoid || typeindex == ncnn::LayerType::Softmax ||
             typeindex == ncnn::LayerType::Reshape || typeindex == ncnn::LayerType::Permute) && scale_a_ > 0.f) {
            support_inplace = false;  // (int8 in, a float blob of its own out)
        }
    }

    // top: a blob of `shape`'s dims and sides with elements of `elemsize` bytes (empty if not had).
    static void shaped_as(const ncnn::Mat &shape, size_t elemsize, ncnn::Mat &top, const ncnn::Option &opt) {
        switch (shape.dims) {
            case 1: top.create(shape.w, elemsize, opt.blob_allocator); break;
            case 2: top.create(shape.w, shape.h, elemsize, opt.blob_allocator); break;
            case 3: top.create(shape.w, shape.h, shape.c, elemsize, opt.blob_allocator); break;
            default: top.create(shape.w, shape.h, shape.d, shape.c, elemsize, opt.blob_allocator); break;
        }
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
    // -128 where ncnn pads an int8 blob) on int8 values: the max of int8 values is exact. The
    // windows are clipped to the input instead of the input copied padded (a stem's pooling
    // at 128x96 would copy 79 KiB): padding's -128 never exceeds a value, and a window of
    // padding only gives -128, as ncnn's does.
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
        int outw, outh;
        const int fits = windows(bottom, pads, outw, outh);
        if (fits != 0) {
            return fits;
        }
        top.create(outw, outh, channels, static_cast<size_t>(1u), opt.blob_allocator);
        if (top.empty()) {
            return -100;
        }
        for (int q = 0; q < channels; q++) {
            const signed char *plane = static_cast<const signed char *>(bottom.data) + q * bottom.cstep;
            signed char *out = static_cast<signed char *>(top.data) + q * top.cstep;
            for (int i = 0; i < outh; i++) {
                // (the window's rows and columns in the input: those of the padded one, less the pads)
                const int y0 = i * stride_h_ - pads.top, y1 = y0 + kernel_h_;
                const int ya = y0 < 0 ? 0 : y0, yb = y1 > bottom.h ? bottom.h : y1;
                for (int j = 0; j < outw; j++) {
                    const int x0 = j * stride_w_ - pads.left, x1 = x0 + kernel_w_;
                    const int xa = x0 < 0 ? 0 : x0, xb = x1 > bottom.w ? bottom.w : x1;
                    signed char m = -128;
                    for (int y = ya; y < yb; y++) {
                        const signed char *row = plane + y * bottom.w;
                        for (int x = xa; x < xb; x++) {
                            m = row[x] > m ? row[x] : m;
                        }
                    }
                    *out++ = m;
                }
            }
        }
        return 0;
    }

    // sum / area rounded half away from zero (area > 0), as float2int8 rounds: the mean of
    // int8 values, itself within [-127, 127].
    static signed char mean_int8(int sum, int area) {
        const int q = (2 * (sum < 0 ? -sum : sum) + area) / (2 * area);
        return static_cast<signed char>(sum < 0 ? -q : q);
    }

    // An average Pooling of an int8 blob, in its scale: each window's mean, rounded (the
    // Python model in tests/mp/ncnn_mp_int8_chain.py), over ncnn's window and area
    // (pooling.cpp): pads count as zeros; with count_include_pad (param 6) the area is the
    // kernel's, else the window's positions inside [pad_top, padded h - pad_bottom - the tail
    // pad) x (the same across), the layer's own pads, as ncnn counts them (with SAME pad_mode
    // and pads 0 that is the whole padded window, SAME's zeros included). A window that
    // counts no position gives 0 (ncnn's float: 0 / 0).
    int avg_pool_int8(const ncnn::Mat &bottom, ncnn::Mat &top, const ncnn::Option &opt) const {
        const int channels = bottom.dims >= 3 ? bottom.c : 1;
        if (global_) {
            const int size = bottom.w * bottom.h;
            top.create(channels, static_cast<size_t>(1u), opt.blob_allocator);
            if (top.empty()) {
                return -100;
            }
            if (size <= 0 || size > (1 << 23)) {  // (|sum| < 2^30)
                return -1;
            }
            for (int q = 0; q < channels; q++) {
                const signed char *p = static_cast<const signed char *>(bottom.data) + q * bottom.cstep;
                int sum = 0;
                for (int i = 0; i < size; i++) {
                    sum += p[i];
                }
                static_cast<signed char *>(top.data)[q] = mean_int8(sum, size);
            }
            return 0;
        }
        Pads pads;
        int outw, outh;
        const int fits = windows(bottom, pads, outw, outh);
        if (fits != 0) {
            return fits;
        }
        if (static_cast<int64_t>(kernel_w_) * kernel_h_ > (1 << 23)) {  // (|sum| < 2^30)
            return -1;
        }
        // the counted region, in the padded blob's coordinates (ncnn's tail pads: pad_mode 0's)
        const int padded_w = bottom.w + pads.left + pads.right, padded_h = bottom.h + pads.top + pads.bottom;
        const int tail_w = pad_mode_ == 0 ? padded_w - bottom.w - pad_left_ - pad_right_ : 0;
        const int tail_h = pad_mode_ == 0 ? padded_h - bottom.h - pad_top_ - pad_bottom_ : 0;
        const int cx0 = count_include_pad_ ? 0 : pad_left_;
        const int cx1 = count_include_pad_ ? padded_w : padded_w - pad_right_ - tail_w;
        const int cy0 = count_include_pad_ ? 0 : pad_top_;
        const int cy1 = count_include_pad_ ? padded_h : padded_h - pad_bottom_ - tail_h;
        top.create(outw, outh, channels, static_cast<size_t>(1u), opt.blob_allocator);
        if (top.empty()) {
            return -100;
        }
        for (int q = 0; q < channels; q++) {
            const signed char *plane = static_cast<const signed char *>(bottom.data) + q * bottom.cstep;
            signed char *out = static_cast<signed char *>(top.data) + q * top.cstep;
            for (int i = 0; i < outh; i++) {
                // the window's counted rows (padded coordinates), and those of them in the input
                const int sy0 = i * stride_h_ > cy0 ? i * stride_h_ : cy0;
                const int sy1 = i * stride_h_ + kernel_h_ < cy1 ? i * stride_h_ + kernel_h_ : cy1;
                const int ya = sy0 - pads.top < 0 ? 0 : sy0 - pads.top;
                const int yb = sy1 - pads.top > bottom.h ? bottom.h : sy1 - pads.top;
                for (int j = 0; j < outw; j++) {
                    const int sx0 = j * stride_w_ > cx0 ? j * stride_w_ : cx0;
                    const int sx1 = j * stride_w_ + kernel_w_ < cx1 ? j * stride_w_ + kernel_w_ : cx1;
                    const int xa = sx0 - pads.left < 0 ? 0 : sx0 - pads.left;
                    const int xb = sx1 - pads.left > bottom.w ? bottom.w : sx1 - pads.left;
                    int sum = 0;
                    for (int y = ya; y < yb; y++) {
                        const signed char *row = plane + y * bottom.w;
                        for (int x = xa; x < xb; x++) {
                            sum += row[x];
                        }
                    }
                    const int area = count_include_pad_ ? kernel_w_ * kernel_h_ : (sy1 - sy0) * (sx1 - sx0);
                    *out++ = sy1 > sy0 && sx1 > sx0 ? mean_int8(sum, area) : 0;
                }
            }
        }
        return 0;
    }

    // A bilinear resize's taps along one axis as ncnn's Interp computes them (its linear_coeffs:
    // source index ofs[i] and weight 1 - f, f for it and the next), if every f is a multiple of
    // 1/16 (the x2 and x0.5 resizes of a feature pyramid: 0, 1/4, 1/2, 3/4, 1): then ofs[i] and
    // f * 16 in weight[i]. False where ncnn's taps would not be that (or a side under 2).
    bool bilinear_16ths(int w, int outw, int *ofs, signed char *weight) const {
        if (w < 2 || outw < 1 || (align_corner_ && outw < 2)) {
            return false;
        }
        const double scale = align_corner_ ? static_cast<double>(w - 1) / (outw - 1) : static_cast<double>(w) / outw;
        for (int i = 0; i < outw; i++) {
            float f = align_corner_ ? static_cast<float>(i * scale) : static_cast<float>((i + 0.5) * scale - 0.5);
            int sx = static_cast<int>(floorf(f));
            f -= static_cast<float>(sx);
            if (sx < 0) {
                sx = 0;
                f = 0.f;
            }
            if (sx >= w - 1) {
                sx = w - 2;
                f = 1.f;
            }
            const float t = f * 16.f;
            const int k = static_cast<int>(t);
            if (!(t >= 0.f && t <= 16.f) || static_cast<float>(k) != t) {
                return false;
            }
            ofs[i] = sx;
            weight[i] = static_cast<signed char>(k);
        }
        return true;
    }

    // One channel of a bilinear resize in integers, taps in 16ths (bilinear_16ths): each output
    // n / 256 exactly, n = sum of value x 16 (1 - fx) x 16 (1 - fy) ..., rounded half away from
    // zero as ncnn's float2int8 does. ncnn's float path computes the same n / 256 without
    // rounding (every product and sum of int8 values and 16ths is exact in float32), so this is
    // its result bit for bit; interp_int8 checks that on the first channel too.
    static void bilinear_int8(const signed char *src, int w, signed char *dst, int outw, int outh, const int *xofs,
                              const signed char *ax, const int *yofs, const signed char *by) {
        for (int dy = 0; dy < outh; dy++, dst += outw) {
            const signed char *r0 = src + yofs[dy] * w, *r1 = r0 + w;
            const int b1 = by[dy], b0 = 16 - b1;
            for (int dx = 0; dx < outw; dx++) {
                const int sx = xofs[dx], a1 = ax[dx], a0 = 16 - a1;
                const int n = (r0[sx] * a0 + r0[sx + 1] * a1) * b0 + (r1[sx] * a0 + r1[sx + 1] * a1) * b1;
                const int q = ((n < 0 ? -n : n) + 128) >> 8;
                dst[dx] = static_cast<signed char>(n < 0 ? -(q > 127 ? 127 : q) : (q > 127 ? 127 : q));
            }
        }
    }

    // ncnn's Interp (any resize type, scale or output size) on an int8 blob: each channel's
    // int8 values as floats through the build's own Interp, rounded back to int8 in the same
    // scale (ncnn's float2int8). Nearest copies the values; bilinear and bicubic give what
    // ncnn's layer gives on the same values, rounded: within half an int8 step of the float
    // path. One channel at a time, so no float copy of the whole blob exists. A bilinear resize
    // whose taps are 16ths (bilinear_16ths) runs the channels after the first in integers
    // (bilinear_int8: the same bytes; on a soft-float core a few percent of the instructions),
    // once the first channel's float result and integer result agree.
    int interp_int8(const ncnn::Mat &bottom, ncnn::Mat &top, const ncnn::Option &opt) const {
        ncnn::Option o = opt;
        o.blob_allocator = opt.workspace_allocator;
        const int channels = bottom.dims == 3 ? bottom.c : 1;
        if (bottom.dims != 3 && bottom.dims != 2) {
            return -1;  // (a 1-D or 4-D int8 blob: no int8 chain makes one)
        }
        for (int q = 0; q < channels; q++) {
            ncnn::Mat plane(bottom.w, bottom.h, 1, static_cast<size_t>(4u), opt.workspace_allocator);
            if (plane.empty()) {
                return -100;
            }
            if (bottom.dims == 2) {
                plane = plane.reshape(bottom.w, bottom.h, opt.workspace_allocator);
            }
            const signed char *src = static_cast<const signed char *>(bottom.data) + q * bottom.cstep;
            float *dst = static_cast<float *>(plane.data);
            for (int i = 0; i < bottom.w * bottom.h; i++) {
                dst[i] = static_cast<float>(src[i]);
            }
            ncnn::Mat out;
            int ret = native_->forward(plane, out, o);
            if (ret != 0) {
                return ret;
            }
            if (out.elempack != 1 || out.elemsize != 4u || (bottom.dims == 3 && out.c != 1)) {
                return -1;  // (one float channel in, one out: any other layout is not this build's Interp)
            }
            if (q == 0) {
                if (bottom.dims == 3) {
                    top.create(out.w, out.h, channels, static_cast<size_t>(1u), opt.blob_allocator);
                } else {
                    top.create(out.w, out.h, static_cast<size_t>(1u), opt.blob_allocator);
                }
                if (top.empty()) {
                    return -100;
                }
            }
            if (out.w != top.w || out.h != top.h) {
                return -1;
            }
            signed char *d = static_cast<signed char *>(top.data) + q * top.cstep;
            const float *v = static_cast<const float *>(out.data);
            for (int i = 0; i < top.w * top.h; i++) {
                d[i] = float2int8(v[i]);
            }
            if (q == 0 && channels > 1 && (op_type_ == 2 || (op_type_ == 1 && channels > 3))) {
                int ret2 = op_type_ == 2 ? interp_rest_int8(bottom, top, channels, opt)
                                         : nearest_rest_int8(bottom, top, channels, o);
                if (ret2 != 1) {
                    return ret2;  // (done, or out of memory)
                }
            }
        }
        return 0;
    }

    // Channels 1.. of a nearest Interp as copies of bytes, from where the build's own Interp
    // takes each output: its forward of a plane holding each value's column, and of one holding
    // its row (exact in float32), read as an output's source column (along the first row) and row
    // (down the first column); used where channel 0 so copied is the float path's (in top), which
    // holds for ncnn's nearest (a source column per output column, a row per output row).
    // 0 done, -100 out of memory, 1 not this case.
    int nearest_rest_int8(const ncnn::Mat &bottom, ncnn::Mat &top, int channels, const ncnn::Option &o) const {
        const int w = bottom.w, h = bottom.h, outw = top.w, outh = top.h;
        if (w >= (1 << 24) || h >= (1 << 24)) {
            return 1;
        }
        ncnn::Mat maps(outw + outh, static_cast<size_t>(4u), o.workspace_allocator);
        ncnn::Mat index(w, h, 1, static_cast<size_t>(4u), o.workspace_allocator);
        ncnn::Mat check(outw * outh, static_cast<size_t>(1u), o.workspace_allocator);
        if (maps.empty() || index.empty() || check.empty()) {
            return -100;
        }
        int *xofs = static_cast<int *>(maps.data), *yofs = xofs + outw;
        for (int axis = 0; axis < 2; axis++) {
            float *v = static_cast<float *>(index.data);
            for (int y = 0; y < h; y++) {
                for (int x = 0; x < w; x++) {
                    v[y * w + x] = static_cast<float>(axis == 0 ? x : y);
                }
            }
            ncnn::Mat out;
            int ret = native_->forward(index, out, o);
            if (ret != 0 || out.w != outw || out.h != outh || out.elemsize != 4u || out.elempack != 1) {
                return ret == -100 ? -100 : 1;
            }
            const float *r = static_cast<const float *>(out.data);
            for (int i = 0; i < (axis == 0 ? outw : outh); i++) {
                const float f = r[axis == 0 ? i : i * outw];
                const int k = static_cast<int>(f);
                if (!(f >= 0.f) || static_cast<float>(k) != f || k >= (axis == 0 ? w : h)) {
                    return 1;
                }
                (axis == 0 ? xofs : yofs)[i] = k;
            }
        }
        signed char *c = static_cast<signed char *>(check.data);
        nearest_int8(static_cast<const signed char *>(bottom.data), w, c, outw, outh, xofs, yofs);
        if (memcmp(c, top.data, static_cast<size_t>(outw) * outh) != 0) {
            return 1;
        }
        for (int q = 1; q < channels; q++) {
            nearest_int8(static_cast<const signed char *>(bottom.data) + q * bottom.cstep, w,
                         static_cast<signed char *>(top.data) + q * top.cstep, outw, outh, xofs, yofs);
        }
        return 0;
    }

    static void nearest_int8(const signed char *src, int w, signed char *dst, int outw, int outh, const int *xofs,
                             const int *yofs) {
        for (int dy = 0; dy < outh; dy++, dst += outw) {
            const signed char *row = src + yofs[dy] * w;
            for (int dx = 0; dx < outw; dx++) {
                dst[dx] = row[xofs[dx]];
            }
        }
    }

    // Channels 1.. of a bilinear Interp in integers where its taps are 16ths and channel 0's
    // integer result is the float path's (in top): 0 done, -100 out of memory, 1 not this case.
    int interp_rest_int8(const ncnn::Mat &bottom, ncnn::Mat &top, int channels, const ncnn::Option &opt) const {
        const int w = bottom.w, h = bottom.h, outw = top.w, outh = top.h;
        // (the taps' sources as ints, their weights as bytes, then channel 0 again)
        ncnn::Mat taps(5 * (outw + outh) + outw * outh, static_cast<size_t>(1u), opt.workspace_allocator);
        if (taps.empty()) {
            return -100;
        }
        int *xofs = static_cast<int *>(taps.data), *yofs = xofs + outw;
        signed char *ax = reinterpret_cast<signed char *>(yofs + outh), *by = ax + outw;
        signed char *check = by + outh;
        if (!bilinear_16ths(w, outw, xofs, ax) || !bilinear_16ths(h, outh, yofs, by)) {
            return 1;
        }
        bilinear_int8(static_cast<const signed char *>(bottom.data), w, check, outw, outh, xofs, ax, yofs, by);
        if (memcmp(check, top.data, static_cast<size_t>(outw) * outh) != 0) {
            return 1;  // (not ncnn's taps after all: the float path for every channel)
        }
        for (int q = 1; q < channels; q++) {
            bilinear_int8(static_cast<const signed char *>(bottom.data) + q * bottom.cstep, w,
                          static_cast<signed char *>(top.data) + q * top.cstep, outw, outh, xofs, ax, yofs, by);
        }
        return 0;
    }

    // A Sigmoid of an int8 blob in scale_a (param 20: quantize_int8 --chain) into floats,
    // through a table of its 255 values, each ncnn's sigmoid (kernels.h activate, type 4) of
    // the value q / scale_a: 255 expf calls a forward instead of one an element (newlib's expf
    // in soft float costs about 1,260 instructions on the Cortex-M3).
    // With an output scale (param 21: an int8 network output), the table holds int8 values
    // instead, ncnn's float2int8(sigmoid(q / scale_a) * scale_b): a quarter of the output.
    int sigmoid_int8(const ncnn::Mat &bottom, ncnn::Mat &top, const ncnn::Option &opt) const {
        if (!(scale_a_ > 0.f)) {
            return -1;
        }
        const bool int8_out = scale_b_ > 0.f;
        float table[255];
        signed char table8[255];
        for (int q = -127; q <= 127; q++) {
            table[q + 127] = activate(static_cast<float>(q) / scale_a_, 4, NULL);
            table8[q + 127] = float2int8(mul_ff(table[q + 127], scale_b_));
        }
        const size_t elemsize = int8_out ? 1u : 4u;
        shaped_as(bottom, elemsize, top, opt);
        if (top.empty()) {
            return -100;
        }
        const int channels = bottom.dims >= 3 ? bottom.c : 1;
        const int size = bottom.w * (bottom.dims >= 2 ? bottom.h : 1) * (bottom.dims == 4 ? bottom.d : 1);
        for (int q = 0; q < channels; q++) {
            const signed char *src = static_cast<const signed char *>(bottom.data) + q * bottom.cstep;
            if (int8_out) {
                signed char *dst = static_cast<signed char *>(top.data) + q * top.cstep;
                for (int i = 0; i < size; i++) {
                    dst[i] = table8[(src[i] < -127 ? -127 : src[i]) + 127];
                }
                continue;
            }
            float *dst = static_cast<float *>(top.data) + q * top.cstep;
            for (int i = 0; i < size; i++) {
                dst[i] = table[(src[i] < -127 ? -127 : src[i]) + 127];
            }
        }
        return 0;
    }

    // ncnn's Permute of an int8 blob, any order of ncnn's: which input axis each output axis
    // is, found by permuting a float blob of the input's rank whose sides differ (2, 3, 4, 5)
    // through the build's own Permute (so its order table is ncnn's), then the bytes gathered
    // along them; with scale_a_ (param 20) each written as the float q / scale_a_.
    int permute_int8(const ncnn::Mat &bottom, ncnn::Mat &top, const ncnn::Option &opt) const {
        const int dims = bottom.dims;
        if (dims < 1 || dims > 4) {
            return -1;
        }
        int axis[4] = { 0, 1, 2, 3 };
        if (dims >= 2) {  // (a vector: ncnn's Permute hands it on as it is)
            float data[128];  // (2x3x4x5 with its channels 16-byte aligned: 120 floats)
            memset(data, 0, sizeof(data));
            ncnn::Mat probe = dims == 2 ? ncnn::Mat(2, 3, data) : dims == 3 ? ncnn::Mat(2, 3, 4, data)
                                                                             : ncnn::Mat(2, 3, 4, 5, data);
            ncnn::Option o = opt;
            o.blob_allocator = opt.workspace_allocator;
            o.use_packing_layout = false;
            ncnn::Mat out;
            int ret = native_->forward(probe, out, o);
            if (ret != 0) {
                return ret;
            }
            const int sides[4] = { out.w, out.h, dims == 4 ? out.d : out.c, out.c };
            if (out.dims != dims || out.elempack != 1) {
                return -1;
            }
            for (int k = 0; k < dims; k++) {
                axis[k] = sides[k] - 2;
                if (axis[k] < 0 || axis[k] >= dims) {
                    return -1;
                }
            }
        }
        // The input's sides and element strides along w, h, (d,) c; the output's along its axes.
        const int size[4] = { bottom.w, bottom.h, dims == 4 ? bottom.d : bottom.c, bottom.c };
        const size_t plane = static_cast<size_t>(bottom.w) * bottom.h;
        const size_t stride[4] = { 1, static_cast<size_t>(bottom.w), dims == 4 ? plane : bottom.cstep, bottom.cstep };
        int n[4] = { 1, 1, 1, 1 };
        size_t step[4] = { 0, 0, 0, 0 };
        for (int k = 0; k < dims; k++) {
            n[k] = size[axis[k]];
            step[k] = stride[axis[k]];
        }
        const size_t elemsize = scale_a_ > 0.f ? 4u : 1u;
        switch (dims) {
            case 1: top.create(n[0], elemsize, opt.blob_allocator); break;
            case 2: top.create(n[0], n[1], elemsize, opt.blob_allocator); break;
            case 3: top.create(n[0], n[1], n[2], elemsize, opt.blob_allocator); break;
            default: top.create(n[0], n[1], n[2], n[3], elemsize, opt.blob_allocator); break;
        }
        if (top.empty()) {
            return -100;
        }
        // (output channel, depth, row, column: its axes dims-1 .. 0, absent ones of side 1)
        const int channels = dims >= 3 ? n[dims - 1] : 1, depth = dims == 4 ? n[2] : 1, rows = dims >= 2 ? n[1] : 1;
        const size_t step_c = dims >= 3 ? step[dims - 1] : 0, step_d = dims == 4 ? step[2] : 0;
        const size_t step_h = dims >= 2 ? step[1] : 0;
        const signed char *src = static_cast<const signed char *>(bottom.data);
        for (int q = 0; q < channels; q++) {
            size_t at = 0;
            for (int z = 0; z < depth; z++) {
                for (int y = 0; y < rows; y++) {
                    const signed char *p = src + q * step_c + z * step_d + y * step_h;
                    for (int x = 0; x < n[0]; x++, at++) {
                        signed char v = p[x * step[0]];
                        if (elemsize == 1u) {
                            static_cast<signed char *>(top.data)[q * top.cstep + at] = v;
                        } else {
                            static_cast<float *>(top.data)[q * top.cstep + at] = static_cast<float>(v) / scale_a_;
                        }
                    }
                }
            }
        }
        return 0;
    }

    // An int8 blob's values as floats, q / scale_a_ (param 20), in a blob of the same shape.
    int dequantize(const ncnn::Mat &in, ncnn::Mat &top, const ncnn::Option &opt) const {
        shaped_as(in, 4u, top, opt);
        if (top.empty() || in.elemsize != 1u) {
            return top.empty() ? -100 : -1;
        }
        const int channels = in.dims >= 3 ? in.c : 1;
        const int size = in.w * (in.dims >= 2 ? in.h : 1) * (in.dims == 4 ? in.d : 1);
        for (int q = 0; q < channels; q++) {
            const signed char *src = static_cast<const signed char *>(in.data) + q * in.cstep;
            float *dst = static_cast<float *>(top.data) + q * top.cstep;
            for (int i = 0; i < size; i++) {
                dst[i] = static_cast<float>(src[i]) / scale_a_;
            }
        }
        return 0;
    }

    // A Softmax of an int8 blob in scale s (param 20) into floats, along ncnn's axis (param 0,
    // negative from the end): per line along it, with m its largest value, exp(x - max) for x =
    // q / s is exp(-(m - q) / s), one of 255 values (a table of expf calls a forward, instead of
    // one an element: newlib's expf in soft float is about 1,260 instructions on the Cortex-M3);
    // the sum in ncnn's order, then each times 1 / sum. Against ncnn's Softmax on the floats q /
    // s: within a few float roundings (its x - max and / sum round once more each).
    int softmax_int8(const ncnn::Mat &bottom, ncnn::Mat &top, const ncnn::Option &opt) const {
        const int dims = bottom.dims, axis = softmax_axis_ < 0 ? dims + softmax_axis_ : softmax_axis_;
        if (!(scale_a_ > 0.f) || axis < 0 || axis >= dims) {
            return -1;
        }
        float table[255];
        for (int d = 0; d < 255; d++) {
            table[d] = expf(static_cast<float>(-d) / scale_a_);
        }
        shaped_as(bottom, 4u, top, opt);
        if (top.empty()) {
            return -100;
        }
        // Lines along the axis: over the channels (length c, cstep apart, one a plane position),
        // or inside each channel's plane as [outer][length][inner] (w the fastest, then h, d).
        const int plane = bottom.w * (dims >= 2 ? bottom.h : 1) * (dims == 4 ? bottom.d : 1);
        const int channels = dims >= 3 ? bottom.c : 1;
        const bool over_c = dims >= 3 && axis == 0;
        const int sides[3] = { dims == 4 ? bottom.d : 1, dims >= 2 ? bottom.h : 1, bottom.w };  // (d, h, w)
        const int at = over_c ? 0 : 3 - (dims - axis);  // (the axis among d, h, w)
        int inner = 1, outer = 1;
        for (int i = 0; i < 3 && !over_c; i++) {
            inner *= i > at ? sides[i] : 1;
            outer *= i < at ? sides[i] : 1;
        }
        const int length = over_c ? channels : sides[at];
        const size_t stride = over_c ? bottom.cstep : static_cast<size_t>(inner);
        const size_t out_stride = over_c ? top.cstep : static_cast<size_t>(inner);
        const int lines_per_channel = over_c ? plane : outer * inner;
        for (int q = 0; q < (over_c ? 1 : channels); q++) {
            for (int l = 0; l < lines_per_channel; l++) {
                const size_t base = over_c ? l : static_cast<size_t>(l / inner) * length * inner + l % inner;
                const signed char *src = static_cast<const signed char *>(bottom.data) + q * bottom.cstep + base;
                float *dst = static_cast<float *>(top.data) + q * top.cstep + base;
                int m = -127;
                for (int i = 0; i < length; i++) {
                    m = src[i * stride] > m ? src[i * stride] : m;
                }
                float sum = 0.f;
                for (int i = 0; i < length; i++) {
                    const int v = src[i * stride] < -127 ? -127 : src[i * stride];
                    dst[i * out_stride] = table[m - v];
                    sum = add_ff(sum, table[m - v]);
                }
                const float r = recip_ff(sum);
                for (int i = 0; i < length; i++) {
                    dst[i * out_stride] = mul_ff(dst[i * out_stride], r);
                }
            }
        }
        return 0;
    }

    // An int8 BinaryOp of two int8 blobs of one shape (no broadcast): a in scale_a, b in
    // scale_b, the result in scale_out, in integers (the same on every core; a Python model
    // in tests/mp/ncnn_mp_int8_chain.py):
    //   add: q = (a * RA + b * RB + 2^23) >> 24, RA = round(scale_out / scale_a * 2^24), RB alike;
    //   mul: q = (a * b * RM + 2^29) >> 30, RM = round(scale_out / (scale_a * scale_b) * 2^30);
    // clamped to [-127, 127]: the exact result rounded half up, within 2^-24 of it.
    int binary_int8(const ncnn::Mat &a, const ncnn::Mat &b, ncnn::Mat &top, const ncnn::Option &opt) const {
        if (!(scale_a_ > 0.f && scale_b_ > 0.f && scale_out_ > 0.f) || (op_type_ != 0 && op_type_ != 2) ||
            a.dims != b.dims || a.w != b.w || a.h != b.h || a.d != b.d || a.c != b.c) {
            return -1;
        }
        const bool add = op_type_ == 0;
        const int shift = add ? 24 : 30;
        const double out = scale_out_, sa = scale_a_, sb = scale_b_;
        const double ra = add ? out / sa : out / (sa * sb);
        const double rb = out / sb;
        if (!(ra < 1048576.0) || !(rb < 1048576.0)) {  // (a ratio past 2^20: no int8 model has one)
            return -1;
        }
        const int64_t mult_a = static_cast<int64_t>(ra * static_cast<double>(1 << shift) + 0.5);
        const int64_t mult_b = static_cast<int64_t>(rb * static_cast<double>(1 << shift) + 0.5);
        const int64_t half = static_cast<int64_t>(1) << (shift - 1);
        top.create_like(a, opt.blob_allocator);
        if (top.empty()) {
            return -100;
        }
        const int channels = a.dims >= 3 ? a.c : 1;
        const int size = a.w * (a.dims >= 2 ? a.h : 1) * (a.dims == 4 ? a.d : 1);
        // An add whose ratios are under 2^14 (every int8 model's) in 32-bit arithmetic, the same
        // result: with R = H 2^16 + L (L < 2^16), a RA + b RB + 2^23 = x 2^16 + y for
        // x = a HA + b HB (|x| < 2^30) and y = a LA + b LB + 2^23 (|y| < 2^25), so
        // (v + 2^23) >> 24 = (x + (y >> 16)) >> 8. (A 64-bit product is a library call on lx106.)
        const bool narrow = add && mult_a < (static_cast<int64_t>(1) << 38) && mult_b < (static_cast<int64_t>(1) << 38);
        const int32_t ha = static_cast<int32_t>(mult_a >> 16), la = static_cast<int32_t>(mult_a & 0xffff);
        const int32_t hb = static_cast<int32_t>(mult_b >> 16), lb = static_cast<int32_t>(mult_b & 0xffff);
        for (int q = 0; q < channels; q++) {
            const signed char *pa = static_cast<const signed char *>(a.data) + q * a.cstep;
            const signed char *pb = static_cast<const signed char *>(b.data) + q * b.cstep;
            signed char *out = static_cast<signed char *>(top.data) + q * top.cstep;
            if (narrow) {
                for (int i = 0; i < size; i++) {
                    int32_t x = pa[i] * ha + pb[i] * hb, y = pa[i] * la + pb[i] * lb + (1 << 23);
                    int32_t r = (x + (y >> 16)) >> 8;
                    out[i] = static_cast<signed char>(r > 127 ? 127 : r < -127 ? -127 : r);
                }
                continue;
            }
            for (int i = 0; i < size; i++) {
                int64_t v = add ? pa[i] * mult_a + pb[i] * mult_b : static_cast<int64_t>(pa[i] * pb[i]) * mult_a;
                int64_t r = (v + half) >> shift;
                out[i] = static_cast<signed char>(r > 127 ? 127 : r < -127 ? -127 : r);
            }
        }
        return 0;
    }

    // A Pooling's pads (padding, below) and the windows they leave: outw x outh of them. 0, or
    // -1 where the pads do not fit, -100 where no window does.
    int windows(const ncnn::Mat &bottom, Pads &pads, int &outw, int &outh) const {
        if (padding(bottom.w, bottom.h, pads) != 0) {
            return -1;
        }
        const int padded_w = bottom.w + pads.left + pads.right, padded_h = bottom.h + pads.top + pads.bottom;
        outw = (padded_w - kernel_w_) / stride_w_ + 1;
        outh = (padded_h - kernel_h_) / stride_h_ + 1;
        return padded_w < kernel_w_ || padded_h < kernel_h_ || outw <= 0 || outh <= 0 ? -100 : 0;
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
    ncnn::Layer *naive_;   // ncnn's generic layer, for int8 blobs: Concat, Slice, ShuffleChannel, Crop, Reshape
                           // (native_ itself where the build's own is the generic one: the boards)
    int kernel_w_ = 1, kernel_h_ = 1, stride_w_ = 1, stride_h_ = 1;
    int pad_left_ = 0, pad_right_ = 0, pad_top_ = 0, pad_bottom_ = 0, global_ = 0, pad_mode_ = 0;
    bool max_ = false, avg_ = false;
    int count_include_pad_ = 0;  // (an average Pooling's param 6)
    int op_type_ = 0;                                  // BinaryOp's operation, Interp's resize type
    int align_corner_ = 0;                             // Interp's
    int softmax_axis_ = 0;                             // Softmax's
    float scale_a_ = 0.f, scale_b_ = 0.f, scale_out_ = 0.f;  // an int8 BinaryOp's scales (0: none); scale_a_
                                                       // also an int8 Sigmoid's, Reshape's or Permute's input's
};

}  // namespace

namespace ncnn_mp_kernels {

ncnn::Layer *pass_layer_create(int typeindex) {
    bool copies = (NCNN_MP_LAYER_Concat && typeindex == ncnn::LayerType::Concat) ||
                  (NCNN_MP_LAYER_Reshape && typeindex == ncnn::LayerType::Reshape) ||
                  (NCNN_MP_LAYER_Slice && typeindex == ncnn::LayerType::Slice) ||
                  (NCNN_MP_LAYER_ShuffleChannel && typeindex == ncnn::LayerType::ShuffleChannel) ||
                  (NCNN_MP_LAYER_Crop && typeindex == ncnn::LayerType::Crop);
    if (!copies && !(NCNN_MP_LAYER_ReLU && typeindex == ncnn::LayerType::ReLU) &&
        !(NCNN_MP_LAYER_Sigmoid && typeindex == ncnn::LayerType::Sigmoid) &&
        !(NCNN_MP_LAYER_Softmax && typeindex == ncnn::LayerType::Softmax) &&
        !(NCNN_MP_LAYER_Permute && typeindex == ncnn::LayerType::Permute) &&
        !(NCNN_MP_LAYER_Pooling && typeindex == ncnn::LayerType::Pooling) &&
        !(NCNN_MP_LAYER_Interp && typeindex == ncnn::LayerType::Interp) &&
        !(NCNN_MP_LAYER_BinaryOp && typeindex == ncnn::LayerType::BinaryOp)) {
        return nullptr;
    }
    ncnn::Layer *native = ncnn::create_layer_cpu(typeindex);
    ncnn::Layer *naive = copies && native != nullptr ? ncnn::create_layer_naive(typeindex) : nullptr;
    if (native == nullptr || (copies && naive == nullptr)) {
        delete native;
        delete naive;
        return nullptr;  // (not in this build: ncnn's own lookup fails the same way)
    }
    // Where the build's own layer is the generic one (the boards' ncnn has no layer code of its
    // CPU's), one object serves both: the same class, told by its virtual table, as there is no
    // RTTI on the boards. A board's heap keeps a layer object (100 to 200 bytes) less a layer.
    if (naive != nullptr && *reinterpret_cast<void **>(native) == *reinterpret_cast<void **>(naive)) {
        delete naive;
        naive = native;
    }
    return new PassLayer(typeindex, native, naive);
}

}  // namespace ncnn_mp_kernels

#endif  // NCNN_MP_KERNELS
