// SPDX-License-Identifier: MIT
// The shape guard (see shape_guard.h). A Net whose loads make a GuardLayer around each
// built-in layer of the kinds below (guarded()); the GuardLayer reads the input shape the layer's
// parameters fix as ncnn loads them, hands every call to the layer it wraps, and
// refuses a forward whose blobs do not fit. ncnn_net_t is c_api.h's public struct: its
// pthis is the ncnn::Net.
#include <ncnn/layer.h>
#include <ncnn/layer_type.h>
#include <ncnn/modelbin.h>
#include <ncnn/net.h>

#include "cxx_seam.h"
#include "kernels.h"
#include "shape_guard.h"
#include "shape_math.h"

namespace {

// The extents in ncnn's axis order (axis 0 first): c, d, h, w as the dims have them.
int extents(const ncnn_mp_blob_shape_t &s, int *out) {
    switch (s.dims) {
        case 1: out[0] = s.w; return 1;
        case 2: out[0] = s.h; out[1] = s.w; return 2;
        case 3: out[0] = s.c; out[1] = s.h; out[2] = s.w; return 3;
        case 4: out[0] = s.c; out[1] = s.d; out[2] = s.h; out[3] = s.w; return 4;
        default: return 0;
    }
}

// How a layer kind reads its input against its parameters.
enum Reads {
    READS_NOTHING,
    READS_C,           // weights per input channel: c (a Mat of dims 2 is one channel)
    READS_AXIS,        // one parameter per channel: w, h or c as the dims go (BatchNorm)
    READS_C_OR_VECTOR, // a 1x1 Convolution: c, or a vector of that many values
    READS_VALUES,      // an InnerProduct: w*h*d*c values, or rows of that many
    READS_MATCHING,    // a Concat (outside its axis), an Eltwise (everywhere)
    READS_BROADCAST,   // a BinaryOp of two inputs
};

// A BinaryOp's input as ncnn lines it up against the other (binaryop.cpp: a blob of fewer
// dims is reshaped to the output's, its extents moved to the axes they match): w, h, d, c.
void broadcast_extents(const ncnn_mp_blob_shape_t &a, const ncnn_mp_blob_shape_t &b, int dims, int *e) {
    e[0] = a.w;
    e[1] = a.dims >= 2 ? a.h : 1;
    e[2] = a.dims == 4 ? a.d : 1;
    e[3] = a.dims >= 3 ? a.c : 1;
    if (a.dims >= dims) {
        return;
    }
    int matching = dims == 2 ? b.h : b.c;  // a vector along this axis, else along w
    e[0] = e[1] = e[2] = e[3] = 1;
    if (a.dims == 1) {
        e[a.w == matching ? (dims == 2 ? 1 : 3) : 0] = a.w;
    } else if (a.dims == 2) {  // (w, h) becomes (h, c) of a 3-D blob, (d, c) of a 4-D one
        e[dims == 3 ? 1 : 2] = a.w;
        e[3] = a.h;
    } else {  // (w, h, c) becomes (h, d, c)
        e[1] = a.w;
        e[2] = a.h;
        e[3] = a.c;
    }
}

// The ModelBin a guarded layer's load_model reads through: hands on every read, and notes
// what the layer got that it cannot use (ncnn's layers check their main weights, not the
// rest: an int8 layer's scales that ran out are read later as if they were there).
class CheckingModelBin : public ncnn::ModelBin {
public:
    // want: the index of the read whose first float to keep (picked), or -1.
    CheckingModelBin(const ncnn::ModelBin &mb, int want) : mb_(mb), want_(want) {}
    // (A read of no size, or of a negative one, from parameters the layer did not check
    // (a MemoryData of h=-1): refused here, as weights that ran out, before a reader
    // allocates or reads for it.)
    ncnn::Mat load(int w, int type) const override {
        return sized(w, 1, 1) ? note(mb_.load(w, type), w) : none();
    }
    ncnn::Mat load(int w, int h, int type) const override {
        return sized(w, h, 1) ? note(mb_.load(w, h, type), product(w, h)) : none();
    }
    ncnn::Mat load(int w, int h, int c, int type) const override {
        return sized(w, h, c) ? note(mb_.load(w, h, c, type), product(product(w, h), c)) : none();
    }
    ncnn::Mat load(int w, int h, int d, int c, int type) const override {
        return sized(w, h, product(d, c)) ? note(mb_.load(w, h, d, c, type), product(product(w, h), product(d, c)))
                                          : none();
    }
    mutable bool int8 = false;   // a weight came as int8
    mutable bool short_ = false;  // a read of some weights came back empty
    mutable float picked = 0.f;   // the first float of read `want` (0: none)

private:
    static bool sized(long long w, long long h, long long c) {
        return w > 0 && h > 0 && c > 0 && product(product(w, h), c) < NCNN_MP_CAP;
    }
    ncnn::Mat none() const {
        short_ = true;
        return ncnn::Mat();
    }
    ncnn::Mat note(const ncnn::Mat &m, long long asked) const {
        int8 |= m.elemsize == 1;
        short_ |= asked > 0 && m.empty();
        if (reads_++ == want_ && !m.empty() && m.elemsize == 4u) {
            picked = static_cast<const float *>(m.data)[0];
        }
        return m;
    }
    const ncnn::ModelBin &mb_;
    const int want_;
    mutable int reads_ = 0;
};

// `from` (NULL: "") into `to`, cut short to fit with its NUL (no snprintf: the boards' builds
// would link stdio's formatting for it).
void copy_text(char *to, size_t size, const char *from) {
    size_t i = 0;
    for (; from != nullptr && from[i] != '\0' && i + 1 < size; i++) {
        to[i] = from[i];
    }
    to[i] = '\0';
}

class GuardLayer : public ncnn::Layer {
public:
    // checks: whether it checks its blobs (and weights) at all, or only catches what the
    // layer throws (GuardedNet: every layer of a build that catches).
    GuardLayer(const ncnn::Net *net, ncnn::Layer *inner, bool checks) : net_(net), inner_(inner), checks_(checks) {
        typeindex = inner->typeindex;
        userdata = &mark;
        copy_flags();
        // (arity_ stays "no count is safe" until load_param, which every forward follows: no
        // ParamDict made here, whose 2 KiB a board's exhausted heap may not have)
    }
    // The guard's layers, told from others by userdata (no RTTI on the boards).
    static char mark;
    static const GuardLayer *of(const ncnn::Layer *l) {
        return l != nullptr && l->userdata == &mark ? static_cast<const GuardLayer *>(l) : nullptr;
    }
    // What it does with an int8 blob (read_int8_role): reads one (an int8 Convolution,
    // ConvolutionDepthWise, InnerProduct), writes one, or passes one on (int8 in, int8 out).
    bool int8_reads = false, int8_writes = false, int8_passes = false;
    // An int8 BinaryOp (its params 20, 21, 22: the inputs' and the output's scales): it reads
    // int8 blobs only.
    bool int8_op = false;
    // An int8 reader's input scale (ncnn's bottom_blob_int8_scales[0]), 0 if none: what an
    // int8 input given to it must have been quantized with (ncnn_mp_cxx_int8_input).
    float input_scale = 0.f;
    // The scale of the int8 output of a layer that ends an int8 chain at a network output
    // (a Sigmoid, Reshape or Permute's param 21: quantize_int8 --int8-outputs), 0 if none.
    float output_scale = 0.f;

    // (standalone layers: whether a forward's counts fit; *out, what does)
    bool arity_fits(int n, int n_top, ncnn_mp_arity_t *out) const {
        *out = arity_;
        return ncnn_mp_arity_fits(arity_, n, n_top);
    }
    ~GuardLayer() override {
        delete[] exprs_;
        delete inner_;
    }

    int load_param(const ncnn::ParamDict &pd) override {
        drop_hints_before();
        read_rule(pd);
        read_int8_role(pd);
        more_ = ncnn_mp_more_rule(typeindex, pd);
        delete[] exprs_;
        exprs_ = ncnn_mp_more_exprs(typeindex, pd);
        table_short_ = typeindex == ncnn::LayerType::Embed && ncnn_mp_embed_table_short(pd);
        copy_setting();
        int ret = failed_load(0, caught([&] { return inner_->load_param(pd); }));
        copy_flags();
        arity_ = ncnn_mp_arity_of(*inner_, pd);
        return ret;
    }
    int load_model(const ncnn::ModelBin &mb) override {
        copy_setting();
        if (!checks_) {
            return failed_load(1, caught([&] { return inner_->load_model(mb); }));
        }
        CheckingModelBin checked(mb, int8_reads ? input_scale_read_ : -1);
        int ret = failed_load(1, caught([&] { return inner_->load_model(checked); }));
        copy_flags();
        input_scale = checked.picked;
        if (ret == 0 && (checked.short_ || (checked.int8 && !int8_scales_) || table_short_)) {
            ncnn_mp_shape_refusal_t r = {};
            r.rule = table_short_ ? NCNN_MP_TABLE : checked.short_ ? NCNN_MP_WEIGHTS_SHORT : NCNN_MP_INT8_WEIGHTS;
            refused(r);
            return NCNN_MP_SHAPE_REFUSED;
        }
        return ret;
    }
    int create_pipeline(const ncnn::Option &opt) override {
        copy_setting();
        int ret = caught([&] { return inner_->create_pipeline(opt); });
        copy_flags();
        return ret;
    }
    int destroy_pipeline(const ncnn::Option &opt) override {
        return caught([&] { return inner_->destroy_pipeline(opt); });
    }

    int forward(const std::vector<ncnn::Mat> &bottoms, std::vector<ncnn::Mat> &tops, const ncnn::Option &opt) const override {
        return checks_ && (refuses_count(static_cast<int>(bottoms.size()), static_cast<int>(tops.size())) ||
               refuses(bottoms.empty() ? nullptr : &bottoms[0], static_cast<int>(bottoms.size()), static_cast<int>(tops.size())))
               ? NCNN_MP_SHAPE_REFUSED : hooked() ? NCNN_MP_HOOK_RAISED : caught([&] { return inner_->forward(bottoms, tops, opt); });
    }
    int forward(const ncnn::Mat &bottom, ncnn::Mat &top, const ncnn::Option &opt) const override {
        return checks_ && refuses(&bottom, 1) ? NCNN_MP_SHAPE_REFUSED
               : hooked() ? NCNN_MP_HOOK_RAISED : caught([&] { return inner_->forward(bottom, top, opt); });
    }
    int forward_inplace(std::vector<ncnn::Mat> &blobs, const ncnn::Option &opt) const override {
        // (In a Net, ncnn hands the blobs back as the layer's tops, one for one: as many
        // tops as the param gives it are read from this vector.)
        int n = static_cast<int>(blobs.size()), n_top = tops.empty() ? n : static_cast<int>(tops.size());
        return checks_ && (refuses_count(n, n_top) || refuses(blobs.empty() ? nullptr : &blobs[0], n))
               ? NCNN_MP_SHAPE_REFUSED : hooked() ? NCNN_MP_HOOK_RAISED : caught([&] { return inner_->forward_inplace(blobs, opt); });
    }
    int forward_inplace(ncnn::Mat &blob, const ncnn::Option &opt) const override {
        return checks_ && refuses(&blob, 1) ? NCNN_MP_SHAPE_REFUSED
               : hooked() ? NCNN_MP_HOOK_RAISED : caught([&] { return inner_->forward_inplace(blob, opt); });
    }

private:
    // The hook the running extract was given (ncnn_mp_layer_hook), before a layer of a net the
    // guard checks runs (not a layer wrapped only to catch what it throws: the hook sees the same
    // layers on every build); true when it raised. With no hook anywhere, a call that reads one count.
    bool hooked() const {
        if (!checks_ || net_ == nullptr || !ncnn_mp_hooks_wanted()) {
            return false;
        }
        const std::vector<ncnn::Layer *> &layers = net_->layers();
        if (index_ < 0) {  // (the net's layers stay where its load put them)
            for (size_t i = 0; i < layers.size() && index_ < 0; i++) {
                if (layers[i] == this) {
                    index_ = static_cast<int>(i);
                }
            }
        }
        const char *name, *type;
        ncnn_mp_cxx_layer_names(*this, &name, &type);
        return ncnn_mp_layer_hook(index_, static_cast<int>(layers.size()), name, type) != 0;
    }

    // Every call into the wrapped layer goes through the C++ seam (cxx_seam.h): what it
    // throws (a failing `new`, a negative array size) becomes this layer's refusal, raised
    // by the call that entered ncnn as the exception of its kind naming the layer, and ncnn
    // gets an error code to unwind with instead of an exception through its frames.
    template <typename Step>
    int caught(const Step &step) const {
        struct Call {
            const Step *step;
            int ret;
        } call = { &step, 0 };
        int kind = ncnn_mp_cxx_catch([](void *p) {
            Call *c = static_cast<Call *>(p);
            c->ret = (*c->step)();
        }, &call);
        if (kind == 0) {
            return call.ret;
        }
        ncnn_mp_shape_refusal_t r = {};
        r.rule = NCNN_MP_THREW;
        r.expected = kind;
        refused(r);
        return NCNN_MP_SHAPE_REFUSED;
    }

    // What the wrapped layer's load_param (step 0) or load_model (1) returned: a failure of its own
    // (ncnn logs it, and fails the load) is noted for the load's message to name this layer.
    int failed_load(int step, int ret) const {
        if (ret != 0 && ret != NCNN_MP_SHAPE_REFUSED) {  // (a refusal is noted already)
            ncnn_mp_shape_refusal_t r = {};
            r.rule = NCNN_MP_LOAD_FAILED;
            r.expected = step;
            r.got = ret;
            refused(r);
        }
        return ret;
    }

    // ncnn sizes each layer's shape hint lists after its load_param, empty or not: those of
    // the layers before this one (ncnn has placed them in the net by now) are freed here, as
    // the param load goes, not all at its end (a board's heap at the load's peak: 17 KiB for
    // NanoDet-m's 153 layers).
    void drop_hints_before() {
        if (net_ == nullptr) {
            return;
        }
        for (ncnn::Layer *l : const_cast<ncnn::Net *>(net_)->mutable_layers()) {
            if (l == nullptr || l == this) {
                break;
            }
            ncnn_mp_drop_empty_hints(*l);
        }
    }

    // What ncnn sets on this layer and the wrapped one reads: its pipeline chooses kernels
    // by the shape hints, a featmask may matter to it. (None of the guarded kinds reads its
    // name, type or blob indexes: not copied, a wrapper costs no more heap than itself.
    // userdata, which ncnn sets only on layers its registry makes, marks the wrapper.)
    void copy_setting() {
        // (ncnn sizes both lists for every layer, hints or none: copied only where there are
        // hints, a wrapped layer does not hold two more lists of empty Mats, 120 bytes of a
        // board's heap a layer)
        if (hinted(bottom_shapes) || hinted(top_shapes) || !inner_->bottom_shapes.empty() ||
            !inner_->top_shapes.empty()) {
            inner_->bottom_shapes = bottom_shapes;
            inner_->top_shapes = top_shapes;
        }
        inner_->featmask = featmask;
    }
    static bool hinted(const std::vector<ncnn::Mat> &shapes) {
        for (size_t i = 0; i < shapes.size(); i++) {
            if (shapes[i].dims != 0) {
                return true;
            }
        }
        return false;
    }
    void copy_flags() {
        ncnn_mp_copy_flags(*this, *inner_);
    }

    // What the layer does with int8 blobs as this build makes it (ncnn_mp_cxx_int8_misfit).
    void read_int8_role(const ncnn::ParamDict &pd) {
        int term = pd.get(8, 0);
        bool conv = typeindex == ncnn::LayerType::Convolution || typeindex == ncnn::LayerType::ConvolutionDepthWise;
        int8_reads = (conv || typeindex == ncnn::LayerType::InnerProduct) && term != 0;
        // ncnn's load_model of the three reads weights, the bias (param 5, InnerProduct's 1),
        // the weight scales, then the input scale (convolution.cpp, innerproduct.cpp, ...).
        input_scale_read_ = 2 + (pd.get(typeindex == ncnn::LayerType::InnerProduct ? 1 : 5, 0) != 0 ? 1 : 0);
        int8_writes = (conv && term > 100) || typeindex == ncnn::LayerType::Quantize ||
                      typeindex == ncnn::LayerType::Requantize;
        int8_passes = typeindex == ncnn::LayerType::Noop;
#if NCNN_MP_KERNELS  // (kernel_pass.cpp's int8 forwards)
        switch (typeindex) {
            case ncnn::LayerType::Concat:
            case ncnn::LayerType::Slice:
            case ncnn::LayerType::ShuffleChannel:
                int8_passes = true;
                break;
            case ncnn::LayerType::ReLU:
                int8_passes = pd.get(0, 0.f) == 0.f;  // (no slope)
                break;
            case ncnn::LayerType::Pooling:
                // (max or average, not adaptive)
                int8_passes = (pd.get(0, 0) == 0 || pd.get(0, 0) == 1) && pd.get(7, 0) == 0;
                break;
            case ncnn::LayerType::Crop:  // (its second bottom, a shape to crop to, may be either)
                int8_passes = true;
                break;
            case ncnn::LayerType::Interp:  // (one bottom: no dynamic size)
                int8_passes = pd.get(0, 0) >= 1 && pd.get(0, 0) <= 3 && pd.get(5, 0) == 0 && pd.get(9, std::string()).empty();
                break;
            case ncnn::LayerType::Sigmoid:  // int8 in (its scale: param 20), floats out, or int8 (param 21)
                int8_reads = pd.get(20, 0.f) > 0.f;
                int8_writes = int8_reads && pd.get(21, 0.f) > 0.f;
                output_scale = int8_writes ? pd.get(21, 0.f) : 0.f;
                break;
            case ncnn::LayerType::Softmax:  // int8 in (its scale: param 20), floats out
                int8_reads = pd.get(20, 0.f) > 0.f;
                break;
            case ncnn::LayerType::Reshape:  // (sized by its parameters) int8 on, or with its scale
            case ncnn::LayerType::Permute:  // (param 20) int8 in, floats out: a chain's end
                if (typeindex == ncnn::LayerType::Permute || pd.get(6, std::string()).empty()) {
                    int8_reads = pd.get(20, 0.f) > 0.f;
                    int8_passes = !int8_reads;
                    output_scale = int8_passes ? pd.get(21, 0.f) : 0.f;  // (an int8 output's)
                }
                break;
            case ncnn::LayerType::BinaryOp:  // add or mul of two int8 blobs, with their scales
                int8_op = pd.get(22, 0.f) > 0.f && pd.get(20, 0.f) > 0.f && pd.get(21, 0.f) > 0.f &&
                          pd.get(1, 0) == 0 && (pd.get(0, 0) == 0 || pd.get(0, 0) == 2);
                int8_reads = int8_writes = int8_op;
                break;
            default:
                break;
        }
#endif
    }

    // A forward given other blob counts than the layer reads and writes (arity.cpp).
    bool refuses_count(int n, int n_top) const {
        if (ncnn_mp_arity_fits(arity_, n, n_top)) {
            return false;
        }
        ncnn_mp_shape_refusal_t r = {};
        bool bottoms = n < arity_.min_bottoms || (arity_.max_bottoms >= 0 && n > arity_.max_bottoms) ||
                       (arity_.max_bottoms == 0 && arity_.max_tops == 0);
        r.rule = bottoms ? NCNN_MP_BOTTOMS : NCNN_MP_TOPS;
        r.expected = bottoms ? arity_.min_bottoms : arity_.min_tops;
        r.axis = bottoms ? arity_.max_bottoms : arity_.max_tops == -2 ? n : arity_.max_tops;
        r.got = bottoms ? n : n_top;
        return refused(r);
    }

    void read_rule(const ncnn::ParamDict &pd) {
        // ncnn's int8 Convolution, ConvolutionDepthWise and InnerProduct take the int8 path
        // by their weights' element size, and read the scales that param 8 asks for.
        int8_scales_ = pd.get(8, 0) != 0 && (typeindex == ncnn::LayerType::Convolution ||
                       typeindex == ncnn::LayerType::ConvolutionDepthWise || typeindex == ncnn::LayerType::InnerProduct);
        reads_ = READS_NOTHING;
        expected_ = 0;
        axis_ = -1;
        padding_ = {};
        pads_ = false;
        front_ = behind_ = 0;
        image_ = typeindex == ncnn::LayerType::Convolution || typeindex == ncnn::LayerType::ConvolutionDepthWise ||
                 typeindex == ncnn::LayerType::Deconvolution || typeindex == ncnn::LayerType::DeconvolutionDepthWise ||
                 typeindex == ncnn::LayerType::Unfold;
        int n = pd.get(0, 0), kw = pd.get(1, 0), kh = pd.get(11, kw);
        switch (typeindex) {
            case ncnn::LayerType::Convolution:
                if (pd.get(19, 0) == 0) {  // else its weights are its second input
                    expected_ = quotient(pd.get(6, 0), n, kw, kh);
                    reads_ = kw == 1 && kh == 1 ? READS_C_OR_VECTOR : READS_C;
                }
                read_kernel(pd, kw, kh);
                break;
            case ncnn::LayerType::Unfold:  // (a convolution's window and padding, its keys too: unfold.cpp)
                read_kernel(pd, kw, kh);
                break;
            case ncnn::LayerType::Deconvolution:
                if (pd.get(28, 0) == 0) {
                    expected_ = quotient(pd.get(6, 0), n, kw, kh);
                    reads_ = READS_C;
                }
                break;
            case ncnn::LayerType::ConvolutionDepthWise:
            case ncnn::LayerType::DeconvolutionDepthWise:
                // weight_data_size = c * num_output * kernel / group
                if (pd.get(typeindex == ncnn::LayerType::ConvolutionDepthWise ? 19 : 28, 0) == 0) {
                    int group = pd.get(7, 1), per_group = quotient(pd.get(6, 0), n, kw, kh);
                    expected_ = group > 0 && per_group > 0 && per_group <= 0x7fffffff / group ? per_group * group : 0;
                    reads_ = READS_C;
                }
                if (typeindex == ncnn::LayerType::ConvolutionDepthWise) {
                    read_kernel(pd, kw, kh);
                }
                break;
            case ncnn::LayerType::InnerProduct:
                expected_ = quotient(pd.get(2, 0), n, 1, 1);
                reads_ = READS_VALUES;
                break;
            case ncnn::LayerType::BatchNorm:
            case ncnn::LayerType::PReLU:
            case ncnn::LayerType::Scale:
                // (a PReLU of one slope takes any shape; a Scale of size -233 takes its
                // scales as a second input)
                expected_ = n > (typeindex == ncnn::LayerType::PReLU ? 1 : 0) ? n : 0;
                reads_ = READS_AXIS;
                break;
            case ncnn::LayerType::Bias:
            case ncnn::LayerType::InstanceNorm:
                expected_ = n > 0 ? n : 0;
                reads_ = READS_C;
                break;
            case ncnn::LayerType::Pooling:
                read_pooling_kernel(pd);
                break;
            case ncnn::LayerType::Padding:
                read_padding(pd);
                break;
            case ncnn::LayerType::Concat:
                axis_ = n;
                reads_ = READS_MATCHING;
                break;
            case ncnn::LayerType::Eltwise:
                reads_ = READS_MATCHING;
                break;
            case ncnn::LayerType::BinaryOp:
                reads_ = pd.get(1, 0) == 0 ? READS_BROADCAST : READS_NOTHING;  // (1: with a scalar)
                break;
            default:
                break;
        }
        if (reads_ != READS_MATCHING && reads_ != READS_BROADCAST && expected_ == 0) {
            reads_ = READS_NOTHING;
        }
    }

    // A convolution's kernel as dilated, and its padding as its parameters give it (explicit,
    // or -233 / -234: SAME), for ncnn_mp_padding: an input smaller than the kernel leaves ncnn
    // an output of negative size to make, a negative pad makes it write past one.
    void read_kernel(const ncnn::ParamDict &pd, int kw, int kh) {
        int dw = pd.get(2, 1), dh = pd.get(12, dw), sw = pd.get(3, 1), left = pd.get(4, 0), top = pd.get(14, left);
        if (kw <= 0 || kh <= 0 || dw <= 0 || dh <= 0) {
            return;  // (ncnn computes nothing it could pad for)
        }
        padding_.kind = NCNN_MP_PAD_CONV;
        padding_.kernel_w = to_int(product(kw - 1, dw) + 1);
        padding_.kernel_h = to_int(product(kh - 1, dh) + 1);
        padding_.stride_w = sw;
        padding_.stride_h = pd.get(13, sw);
        padding_.left = left;
        padding_.right = pd.get(15, left);
        padding_.top = top;
        padding_.bottom = pd.get(16, top);
        pads_ = true;
        kernel_w_ = kw;
        kernel_h_ = kh;
    }

    // A Pooling's window and padding by its pad_mode (its parameters have other keys, no
    // dilation); a global or adaptive one takes any size and pads nothing.
    void read_pooling_kernel(const ncnn::ParamDict &pd) {
        int kw = pd.get(1, 0), kh = pd.get(11, kw), sw = pd.get(2, 1), left = pd.get(3, 0), top = pd.get(13, left);
        if (pd.get(4, 0) != 0 || pd.get(7, 0) != 0 || kw <= 0 || kh <= 0) {
            return;
        }
        padding_.kind = NCNN_MP_PAD_POOL;
        padding_.pool_mode = pd.get(5, 0);
        padding_.kernel_w = kernel_w_ = kw;
        padding_.kernel_h = kernel_h_ = kh;
        padding_.stride_w = sw;
        padding_.stride_h = pd.get(12, sw);
        padding_.left = left;
        padding_.right = pd.get(14, left);
        padding_.top = top;
        padding_.bottom = pd.get(15, top);
        pads_ = true;
    }

    // A Padding layer's own pads (and border type), and those it adds in depth: front and
    // behind, along d (dims 4) or the channels (dims 3).
    void read_padding(const ncnn::ParamDict &pd) {
        padding_.kind = NCNN_MP_PAD_GIVEN;
        padding_.top = pd.get(0, 0);
        padding_.bottom = pd.get(1, 0);
        padding_.left = pd.get(2, 0);
        padding_.right = pd.get(3, 0);
        padding_.border = pd.get(4, 0);
        front_ = pd.get(7, 0);
        behind_ = pd.get(8, 0);
        pads_ = true;
    }

    // The padding rule (ncnn_mp_padding) on the input's shape; the refusal names the axis and pads.
    bool refuses_padding(const ncnn_mp_blob_shape_t &s, ncnn_mp_shape_refusal_t &r) const {
        ncnn_mp_pads_t p;
        bool vector = s.dims == 1;
        ncnn_mp_pad_verdict_t v = ncnn_mp_padding(&padding_, s.w, vector ? 1 : s.h, vector, &p);
        int h = vector ? 1 : s.h, axis = p.top < 0 || p.bottom < 0 || p.top > (1 << 30) || p.bottom > (1 << 30) ||
                                     (v == NCNN_MP_PAD_REFLECT && (p.top >= h || p.bottom >= h)) ? 1 : 0;
        int before = axis == 1 ? p.top : p.left, after = axis == 1 ? p.bottom : p.right, extent = axis == 1 ? h : s.w;
        if (v == NCNN_MP_PAD_FITS && (front_ != 0 || behind_ != 0) && s.dims >= 3) {
            // (ncnn's Padding does nothing at all when every pad is 0)
            ncnn_mp_padding_t depth = {};
            depth.kind = NCNN_MP_PAD_GIVEN;
            depth.border = padding_.border;
            depth.left = front_;
            depth.right = behind_;
            extent = s.dims == 4 ? s.d : s.c;
            v = ncnn_mp_padding(&depth, extent, 1, true, &p);
            axis = s.dims == 4 ? 2 : 3;
            before = p.left;
            after = p.right;
        }
        switch (v) {
            case NCNN_MP_PAD_FITS:
                return false;
            case NCNN_MP_PAD_WINDOW:
                r.rule = NCNN_MP_KERNEL;
                r.expected = kernel_w_;
                r.got = kernel_h_;
                break;
            default:  // (the rule names the axis (w, h, d, c) and its pads; a reflection, its extent)
                r.rule = v == NCNN_MP_PAD_REFLECT ? NCNN_MP_REFLECT : NCNN_MP_PADDING;
                r.axis = axis;
                r.expected = before;
                r.got = v == NCNN_MP_PAD_REFLECT ? extent : after;
                r.input = v == NCNN_MP_PAD_REFLECT ? (before >= extent ? before : after) : 0;
                break;
        }
        return refused(r);
    }

    bool refuses(const ncnn::Mat *blobs, int n, int n_top = 1) const {
        ncnn_mp_shape_refusal_t more = {};
        if (ncnn_mp_more_refuses(more_, exprs_, blobs, n, n_top, more)) {
            return refused(more);
        }
        if ((reads_ == READS_NOTHING && !image_ && !pads_) || n == 0) {
            return false;
        }
        ncnn_mp_shape_refusal_t r = {};
        r.layer = -1;
        r.shape = unpacked(blobs[0]);
        r.axis = -1;
        const ncnn_mp_blob_shape_t &s = r.shape;
        // ncnn's 1x1 Convolution takes a vector of its input channels as an InnerProduct would
        bool vector_path = reads_ == READS_C_OR_VECTOR && s.dims == 1 && s.w == expected_;
        if (image_ && (s.dims == 4 || (s.dims == 1 && !vector_path))) {
            // ncnn would pad a vector as an image of one row, and write past it
            r.rule = NCNN_MP_IMAGE;
            r.got = s.dims;
            return refused(r);
        }
        if (pads_ && !vector_path && refuses_padding(s, r)) {
            return true;
        }
        r.expected = expected_;
        switch (reads_) {
            case READS_NOTHING:
                return false;
            case READS_C:
            case READS_C_OR_VECTOR:
                r.rule = NCNN_MP_CHANNELS;
                r.got = vector_path ? s.w : s.dims >= 3 ? s.c : 1;
                break;
            case READS_AXIS:
                r.rule = NCNN_MP_CHANNELS;
                r.got = s.dims == 1 ? s.w : s.dims == 2 ? s.h : s.c;
                break;
            case READS_VALUES:
                r.rule = NCNN_MP_VALUES;
                r.got = s.dims == 2 && s.w == expected_ ? expected_ : to_int(values(s));
                break;
            case READS_BROADCAST:
                return n >= 2 && refuses_broadcast(blobs, r);
            default:
                return refuses_matching(blobs, n, r);
        }
        return r.got != r.expected && refused(r);
    }

    bool refuses_matching(const ncnn::Mat *blobs, int n, ncnn_mp_shape_refusal_t &r) const {
        r.rule = NCNN_MP_MATCH;
        r.first = r.shape;
        int first[4], other[4];
        int dims = extents(r.first, first);
        // A Concat's axis as ncnn counts it (negative: from the last); an Eltwise has none.
        r.axis = typeindex == ncnn::LayerType::Concat ? (axis_ < 0 ? axis_ + dims : axis_) : -1;
        for (int i = 1; i < n; i++) {
            r.input = i;
            r.shape = unpacked(blobs[i]);
            if (extents(r.shape, other) != dims) {
                return refused(r);
            }
            for (int k = 0; k < dims; k++) {
                if (k != r.axis && other[k] != first[k]) {
                    return refused(r);
                }
            }
        }
        return false;
    }

    bool refuses_broadcast(const ncnn::Mat *blobs, ncnn_mp_shape_refusal_t &r) const {
        r.rule = NCNN_MP_BROADCAST;
        r.first = r.shape;
        r.input = 1;
        r.shape = unpacked(blobs[1]);
        int dims = r.first.dims > r.shape.dims ? r.first.dims : r.shape.dims, a[4], b[4];
        broadcast_extents(r.first, r.shape, dims, a);
        broadcast_extents(r.shape, r.first, dims, b);
        for (int k = 0; k < 4; k++) {
            if (a[k] != b[k] && a[k] != 1 && b[k] != 1) {
                return refused(r);
            }
        }
        return false;
    }

    bool refused(ncnn_mp_shape_refusal_t &r) const {
        r.layer = -1;
        for (size_t i = 0; net_ != nullptr && i < net_->layers().size(); i++) {
            if (net_->layers()[i] == this) {
                r.layer = static_cast<int>(i);
            }
        }
        r.typeindex = typeindex;
        const char *name, *type;
        ncnn_mp_cxx_layer_names(*this, &name, &type);
        copy_text(r.name, sizeof(r.name), name);
        copy_text(r.type, sizeof(r.type), type);
        ncnn_mp_shape_refused(&r);
        return true;
    }

    const ncnn::Net *net_;  // NULL: a standalone layer
    ncnn::Layer *inner_;
    bool checks_;
    mutable int index_ = -1;  // its index in the net, once a hook has asked
    ncnn_mp_arity_t arity_ = {0, 0, 0, 0};
    ncnn_mp_more_rule_t more_ = {};
    char *exprs_ = nullptr;  // its shape expressions, where it has any (ncnn_mp_more_exprs)
    bool int8_scales_ = false;
    int input_scale_read_ = -1;  // which of load_model's reads is the input scale (int8 readers)
    bool table_short_ = false;  // an Embed whose table is smaller than its parameters say
    Reads reads_ = READS_NOTHING;
    int expected_ = 0;
    int axis_ = -1;
    bool image_ = false;                // a 2D (de)convolution: dims 2 or 3 in
    bool pads_ = false;                // it pads (and slides a window): padding_ says how
    ncnn_mp_padding_t padding_ = {};
    int front_ = 0, behind_ = 0;       // a Padding layer's pads in depth
    int kernel_w_ = 0, kernel_h_ = 0;  // (for the message: the kernel as the parameters give it)
};

char GuardLayer::mark;


bool guarded(int typeindex) {
    switch (typeindex) {
        case ncnn::LayerType::Convolution:
        case ncnn::LayerType::ConvolutionDepthWise:
        case ncnn::LayerType::Deconvolution:
        case ncnn::LayerType::DeconvolutionDepthWise:
        case ncnn::LayerType::InnerProduct:
        case ncnn::LayerType::BatchNorm:
        case ncnn::LayerType::PReLU:
        case ncnn::LayerType::Scale:
        case ncnn::LayerType::Bias:
        case ncnn::LayerType::InstanceNorm:
        case ncnn::LayerType::Concat:
        case ncnn::LayerType::Eltwise:
        case ncnn::LayerType::BinaryOp:
        case ncnn::LayerType::Spectrogram:
        case ncnn::LayerType::InverseSpectrogram:
        case ncnn::LayerType::Unfold:
        case ncnn::LayerType::Fold:
        case ncnn::LayerType::Pooling:
        case ncnn::LayerType::Padding:
        case ncnn::LayerType::Convolution1D:
        case ncnn::LayerType::ConvolutionDepthWise1D:
        case ncnn::LayerType::Deconvolution1D:
        case ncnn::LayerType::DeconvolutionDepthWise1D:
        case ncnn::LayerType::Convolution3D:
        case ncnn::LayerType::ConvolutionDepthWise3D:
        case ncnn::LayerType::Deconvolution3D:
        case ncnn::LayerType::DeconvolutionDepthWise3D:
        case ncnn::LayerType::DeformableConv2D:
        case ncnn::LayerType::RNN:
        case ncnn::LayerType::GRU:
        case ncnn::LayerType::LSTM:
        case ncnn::LayerType::MultiHeadAttention:
        case ncnn::LayerType::SDPA:
        case ncnn::LayerType::LayerNorm:
        case ncnn::LayerType::RMSNorm:
        case ncnn::LayerType::GroupNorm:
        case ncnn::LayerType::Normalize:
        case ncnn::LayerType::Gemm:
        case ncnn::LayerType::MatMul:
        case ncnn::LayerType::Embed:
        case ncnn::LayerType::Slice:
        case ncnn::LayerType::GridSample:
        case ncnn::LayerType::Proposal:
        case ncnn::LayerType::CopyTo:
        case ncnn::LayerType::DetectionOutput:
        case ncnn::LayerType::ShuffleChannel:
        case ncnn::LayerType::Pooling1D:
        case ncnn::LayerType::Pooling3D:
        case ncnn::LayerType::Quantize:
        case ncnn::LayerType::Dequantize:
        case ncnn::LayerType::Requantize:
        case ncnn::LayerType::Interp:
        case ncnn::LayerType::Reshape:
        case ncnn::LayerType::Einsum:
        case ncnn::LayerType::RotaryEmbed:  // (Noop for its blob counts: a malformed model's)
        case ncnn::LayerType::Noop:
        case ncnn::LayerType::ReLU:  // (these five for their int8 role too: GuardLayer::read_int8_role)
        case ncnn::LayerType::Crop:
        case ncnn::LayerType::Sigmoid:
        case ncnn::LayerType::Softmax:
        case ncnn::LayerType::Permute:
            return true;
        default:
            return false;
    }
}

// ncnn asks this first for every layer it loads (text or binary param): a layer type the
// user registered in place of a built-in one comes from ncnn's registry as before, and
// is not wrapped (its Python checks its own input). Where ncnn throws (the desktop), every
// other layer is wrapped too, unchecked, so that what it throws names it (GuardLayer::caught).
class GuardedNet : public ncnn::Net {
protected:
    ncnn::Layer *create_overwrite_builtin_layer(int typeindex) override {
        ncnn::Layer *layer = ncnn::Net::create_overwrite_builtin_layer(typeindex);
        bool checks = guarded(typeindex);
        if (layer != nullptr || typeindex == ncnn::LayerType::Input || !(checks || NCNN_MP_CXX_CATCHES)) {
            return layer;
        }
        ncnn::Layer *inner = ncnn_mp_kernel_create(typeindex);  // (ncnn_mp's own kernels, kernels.h)
        inner = inner != nullptr ? inner : ncnn::create_layer_cpu(typeindex);
        if (inner == nullptr) {
            return nullptr;  // (not in this build: ncnn's own lookup fails the same way)
        }
        return new GuardLayer(this, inner, checks);
    }
};

}  // namespace

void ncnn_mp_copy_flags(ncnn::Layer &to, const ncnn::Layer &from) {
    static bool ncnn::Layer::*const flags[] = {
        &ncnn::Layer::one_blob_only, &ncnn::Layer::support_inplace, &ncnn::Layer::support_vulkan,
        &ncnn::Layer::support_packing, &ncnn::Layer::support_bf16_storage, &ncnn::Layer::support_fp16_storage,
        &ncnn::Layer::support_int8_storage, &ncnn::Layer::support_tensor_storage,
        &ncnn::Layer::support_vulkan_packing, &ncnn::Layer::support_any_packing,
        &ncnn::Layer::support_vulkan_any_packing, &ncnn::Layer::support_batch,
    };
    for (bool ncnn::Layer::*flag : flags) {
        to.*flag = from.*flag;
    }
}

extern "C" int ncnn_mp_cxx_guard_net(ncnn_net_t net) {
    GuardedNet *guarded_net = new GuardedNet();
    if (guarded_net == nullptr) {
        return -1;
    }
    delete static_cast<ncnn::Net *>(net->pthis);
    net->pthis = static_cast<ncnn::Net *>(guarded_net);
    return 0;
}

extern "C" void ncnn_mp_cxx_guard_layer(ncnn_layer_t layer) {
    // (c_api.cpp's layer calls go through pthis's virtual methods, and ncnn_layer_destroy
    // deletes it: the wrapper deletes the layer it wraps)
    ncnn::Layer *inner = static_cast<ncnn::Layer *>(layer->pthis);
    layer->pthis = static_cast<ncnn::Layer *>(new GuardLayer(nullptr, inner, true));
}

// Which blobs hold int8 (the tops of a layer that writes int8, and of a Split or a layer that
// passes int8 on, given int8), replayed to a fixed point over the layers in any order; then
// the first layer given an int8 blob it cannot read (why 1), or int8 and float blobs together
// (why 2: a Concat). A user's custom layer reads its Mats' element size itself.
extern "C" bool ncnn_mp_cxx_int8_misfit(ncnn_net_t net, int *layer, int *blob, int *why) {
    const ncnn::Net *n = static_cast<const ncnn::Net *>(net->pthis);
    const std::vector<ncnn::Layer *> &layers = n->layers();
    const int blobs = static_cast<int>(n->blobs().size());
    std::vector<char> int8(static_cast<size_t>(blobs), 0);
    bool changed = true;
    for (size_t pass = 0; changed && pass <= layers.size(); pass++) {
        changed = false;
        for (size_t i = 0; i < layers.size(); i++) {
            const ncnn::Layer *l = layers[i];
            const GuardLayer *g = GuardLayer::of(l);
            bool any = false;
            for (size_t k = 0; k < l->bottoms.size(); k++) {
                int b = l->bottoms[k];
                any = any || (b >= 0 && b < blobs && int8[b]);
            }
            bool out = (g != nullptr && g->int8_writes) ||
                       (any && (l->typeindex == ncnn::LayerType::Split || (g != nullptr && g->int8_passes)));
            for (size_t k = 0; out && k < l->tops.size(); k++) {
                int t = l->tops[k];
                if (t >= 0 && t < blobs && !int8[t]) {
                    int8[t] = 1;
                    changed = true;
                }
            }
        }
    }
    for (size_t i = 0; i < layers.size(); i++) {
        const ncnn::Layer *l = layers[i];
        const GuardLayer *g = GuardLayer::of(l);
        bool reads = l->typeindex == ncnn::LayerType::Split || (l->typeindex & ncnn::LayerType::CustomBit) ||
                     (g != nullptr && (g->int8_reads || g->int8_passes));
        // (a Crop's second bottom gives only a shape: int8 or float alike)
        size_t checked = l->typeindex == ncnn::LayerType::Crop && !l->bottoms.empty() ? 1 : l->bottoms.size();
        int first_int8 = -1, first_float = -1;
        for (size_t k = 0; k < checked; k++) {
            int b = l->bottoms[k];
            bool is8 = b >= 0 && b < blobs && int8[b];
            first_int8 = first_int8 < 0 && is8 ? b : first_int8;
            first_float = first_float < 0 && !is8 ? b : first_float;
        }
        bool mixed = g != nullptr && (g->int8_passes || g->int8_op) && first_float >= 0;
        if ((first_int8 >= 0 && (!reads || mixed)) || (g != nullptr && g->int8_op && first_float >= 0)) {
            *layer = static_cast<int>(i);
            *blob = first_int8 >= 0 ? first_int8 : first_float;
            *why = first_int8 < 0 ? 3 : reads ? 2 : 1;
            return true;
        }
    }
    return false;
}

// Blob `blob` of the net (by `name` where that is not NULL: NCNN_STRING), or -1 if it has none.
static int blob_index(const ncnn::Net &n, int blob, const char *name) {
    const std::vector<ncnn::Blob> &blobs = n.blobs();
#if NCNN_STRING
    if (name != nullptr) {  // (ncnn's own lookup, find_blob_index_by_name, is protected)
        blob = -1;
        for (size_t i = 0; i < blobs.size() && blob < 0; i++) {
            blob = blobs[i].name == name ? static_cast<int>(i) : -1;
        }
    }
#else
    (void)name;
#endif
    return blob >= 0 && blob < static_cast<int>(blobs.size()) ? blob : -1;
}

// Whether input blob `blob` may be given int8: every layer that reads it, through Splits,
// reads int8 (an int8 Convolution, ConvolutionDepthWise or InnerProduct, which quantize a
// float input themselves and take an int8 one as it is), all with one input scale.
extern "C" int ncnn_mp_cxx_int8_input(ncnn_net_t net, int blob, const char *name, float *scale, int *layer) {
    const ncnn::Net *n = static_cast<const ncnn::Net *>(net->pthis);
    const std::vector<ncnn::Layer *> &layers = n->layers();
    const std::vector<ncnn::Blob> &blobs = n->blobs();
    *scale = 0.f;
    *layer = -1;
    blob = blob_index(*n, blob, name);
    if (blob < 0) {
        return NCNN_MP_INT8_INPUT_MISSING;
    }
    // (a walk down the Splits: at most every blob once, a blob has one consumer)
    std::vector<int> todo(1, blob);
    for (size_t steps = 0; !todo.empty() && steps <= blobs.size(); steps++) {
        int b = todo.back();
        todo.pop_back();
        int c = b >= 0 && b < static_cast<int>(blobs.size()) ? blobs[b].consumer : -1;
        if (c < 0 || c >= static_cast<int>(layers.size())) {
            continue;  // (read by nothing: an output)
        }
        const ncnn::Layer *l = layers[c];
        if (l->typeindex == ncnn::LayerType::Split) {
            todo.insert(todo.end(), l->tops.begin(), l->tops.end());
            continue;
        }
        const GuardLayer *g = GuardLayer::of(l);
        *layer = c;
        if (g == nullptr || !g->int8_reads || !(g->input_scale > 0.f)) {
            return NCNN_MP_INT8_INPUT_FLOAT;
        }
        if (*scale != 0.f && *scale != g->input_scale) {
            return NCNN_MP_INT8_INPUT_SCALES;
        }
        *scale = g->input_scale;
    }
    return *scale != 0.f ? NCNN_MP_INT8_INPUT_OK : NCNN_MP_INT8_INPUT_FLOAT;
}

// The scale of int8 output blob `blob` (by name where name is given): its producer's
// output_scale, 0 for a float output (or a blob that is no int8 chain's end); -1: no such blob.
extern "C" float ncnn_mp_cxx_int8_output(ncnn_net_t net, int blob, const char *name) {
    const ncnn::Net *n = static_cast<const ncnn::Net *>(net->pthis);
    const std::vector<ncnn::Blob> &blobs = n->blobs();
    blob = blob_index(*n, blob, name);
    if (blob < 0) {
        return -1.f;
    }
    int p = blobs[blob].producer;
    const GuardLayer *g = p >= 0 && p < static_cast<int>(n->layers().size()) ? GuardLayer::of(n->layers()[p]) : nullptr;
    return g != nullptr ? g->output_scale : 0.f;
}

extern "C" bool ncnn_mp_cxx_arity_fits(ncnn_layer_t layer, int n, int n_top, ncnn_mp_arity_t *out) {
    return static_cast<const GuardLayer *>(static_cast<ncnn::Layer *>(layer->pthis))->arity_fits(n, n_top, out);
}
