// SPDX-License-Identifier: MIT
// How many blobs a built-in layer's forward reads and writes (shape_guard.h). ncnn's
// layers index bottom_blobs[k] and top_blobs[k] without checking the vector's size (an
// Eltwise reads bottom_blobs[1], an SDPA with a kv cache writes top_blobs[2], a Slice reads
// its slices parameter once per top): given fewer, they read or write past it. A Net gives
// each layer the counts its param file names (a malformed model's wrong count is refused
// too); a standalone Layer.forward gives what the caller asked for. One table, read from
// ncnn 1.0.20261020's src/layer/*.cpp, by the parameters each layer loaded.
#include <ncnn/layer.h>
#include <ncnn/layer_type.h>
#include <ncnn/paramdict.h>

#include "shape_guard.h"

namespace {

const int ANY = -1;          // no upper bound
const int AT_MOST_IN = -2;   // tops: no more than the bottoms (ncnn's base Layer::forward
                             // makes one top of each bottom, and no other)

ncnn_mp_arity_t of(int min_bottoms, int max_bottoms, int min_tops, int max_tops) {
    ncnn_mp_arity_t a = { min_bottoms, max_bottoms, min_tops, max_tops };
    return a;
}

// Entries of an int array parameter (a Mat; empty: 0).
int entries(const ncnn::ParamDict &pd, int id) {
    ncnn::Mat m = pd.get(id, ncnn::Mat());
    return m.empty() ? 0 : m.w;
}

// An Einsum's operands: the comma-separated terms left of "->" in its equation (param 0,
// one int per character).
int einsum_operands(const ncnn::ParamDict &pd) {
    ncnn::Mat m = pd.get(0, ncnn::Mat());
    const int *p = m;
    int n = 1;
    if (m.w == 2 && p != nullptr && p[0] == 'i' && p[1] == 'i') {
        return 1;  // (its trace: "ii", no "->")
    }
    for (int i = 0; p != nullptr && i < m.w; i++) {
        if (p[i] == '-') {
            return n;
        }
        n += p[i] == ',';
    }
    return 0;  // no "->": ncnn's load_param refused it
}

}  // namespace

// (layer: after its load_param, whose one_blob_only some types set from their parameters)
ncnn_mp_arity_t ncnn_mp_arity_of(const ncnn::Layer &layer, const ncnn::ParamDict &pd) {
    if (layer.one_blob_only) {
        return of(1, 1, 1, 1);
    }
    namespace T = ncnn::LayerType;
    switch (layer.typeindex) {
        case T::Concat:
        case T::Yolov3DetectionOutput:
            return of(1, ANY, 1, 1);
        case T::Eltwise:
            return of(2, ANY, 1, 1);
        case T::BinaryOp:  // (with a scalar, one_blob_only)
        case T::MatMul:
        case T::CopyTo:
        case T::GridSample:
        case T::PSROIPooling:
        case T::ROIAlign:
        case T::ROIPooling:
        case T::PriorBox:
            return of(2, 2, 1, 1);
        case T::Scale:  // (its scales as a second input: scaled in place, one top per bottom)
            return of(2, 2, 1, AT_MOST_IN);
        case T::DetectionOutput:
        case T::RotaryEmbed:
            return of(3, 3, 1, 1);
        case T::Proposal:
            return of(3, 3, 1, 2);
        case T::DeformableConv2D:
            return of(2, 3, 1, 1);
        case T::Convolution:
        case T::ConvolutionDepthWise:
        case T::Convolution1D:
        case T::ConvolutionDepthWise1D:
        case T::Deconvolution:
        case T::DeconvolutionDepthWise:
        case T::Deconvolution1D:
        case T::DeconvolutionDepthWise1D: {  // weights (and bias, with bias_term: param 5) as inputs
            int n = 2 + (pd.get(5, 0) != 0);
            return of(n, n, 1, 1);
        }
        case T::Crop:
        case T::Interp:
        case T::Reshape:
            // The sizes from a reference blob (a second input); an expression may name
            // further inputs, which ncnn_mp does not parse: one reference only.
            return of(2, 2, 1, 1);
        case T::Gemm: {  // A and B unless constant, and C as one more
            int n = (pd.get(4, 0) == 0) + (pd.get(5, 0) == 0);
            return of(n > 0 ? n : 1, n + 1, 1, 1);
        }
        case T::RNN:
        case T::GRU:  // the input, and the hidden state; the output, and the state
            return of(1, 2, 1, 2);
        case T::LSTM:  // hidden and cell states
            return of(1, 3, 1, 3);
        case T::SDPA: {  // query, key, value, [mask], [past key, past value]
            int n = 3 + (pd.get(5, 0) != 0) + 2 * (pd.get(7, 0) != 0);
            int tops = 1 + 2 * (pd.get(7, 0) != 0);
            return of(n, n, tops, tops);
        }
        case T::MultiHeadAttention: {  // one to three of q, k, v, then [mask], [past k, past v]
            int extra = (pd.get(5, 0) != 0) + 2 * (pd.get(7, 0) != 0);
            int tops = 1 + 2 * (pd.get(7, 0) != 0);
            return of(1 + extra, 3 + extra, tops, tops);
        }
        case T::Split:
            return of(1, 1, 1, ANY);
        case T::Slice: {  // one top per slice (param 0), or per cut at its indices (param 2)
            int slices = entries(pd, 0), indices = entries(pd, 2);
            if (indices > 0) {
                return of(1, 1, 1, indices + 1);
            }
            return of(1, 1, slices > 0 ? slices : 0, slices);
        }
        case T::Einsum: {
            int n = einsum_operands(pd);
            return of(n, n, 1, 1);
        }
        case T::Noop:
        case T::YoloDetectionOutput:
            return of(1, ANY, 1, AT_MOST_IN);
        case T::MemoryData:
            return of(0, 0, 1, 1);
        default:
            // A type that reads more than one blob and is not in this table: no count is
            // known to be safe.
            return of(0, 0, 0, 0);
    }
}

bool ncnn_mp_arity_fits(const ncnn_mp_arity_t &a, int bottoms, int tops) {
    int max_tops = a.max_tops == AT_MOST_IN ? bottoms : a.max_tops;
    return bottoms >= a.min_bottoms && (a.max_bottoms == ANY || bottoms <= a.max_bottoms) && tops >= a.min_tops &&
           (max_tops == ANY || tops <= max_tops) && (a.max_bottoms != 0 || a.max_tops != 0);
}
