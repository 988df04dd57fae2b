// SPDX-License-Identifier: MIT
// The C++ seam, extraction (cxx_seam.h): ncnn's Extractor::extract with the kind of result
// chosen. An int8 network output (Net.output_int8_scale: quantize_int8 --int8-outputs) is
// handed out as its int8 values: ncnn's extract (type 0, what c_api.h calls) would cast each
// to a float, unscaled, into a new blob four times its size.
#include <ncnn/mat.h>
#include <ncnn/net.h>

#include "cxx_seam.h"

extern "C" int ncnn_mp_cxx_extract(ncnn_extractor_t ex, int index, const char *name, bool int8, ncnn_mat_t *out) {
    ncnn::Extractor *e = reinterpret_cast<ncnn::Extractor *>(ex);
    ncnn::Mat m;
    int ret;
    const int type = int8 ? 1 : 0;  // (1: the blob as the layers left it)
#if NCNN_STRING
    if (name != nullptr) {
        ret = e->extract(name, m, type);
    } else
#else
    (void)name;
#endif
    {
        ret = e->extract(index, m, type);
    }
    if (ret == 0 && int8 && m.elempack != 1) {  // (what type 0 would unpack)
        ncnn::Mat unpacked;
        ncnn::convert_packing(m, unpacked, 1);
        m = unpacked;
        ret = m.empty() ? -100 : 0;
    }
    *out = reinterpret_cast<ncnn_mat_t>(new ncnn::Mat(m));
    return ret;
}
