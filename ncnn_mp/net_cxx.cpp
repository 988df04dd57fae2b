// The parts of ncnn's C++ API that ncnn_mp uses and c_api.h cannot express (see
// net_cxx.h). ncnn_net_t is c_api.h's public struct: its pthis is the ncnn::Net.
#include <ncnn/datareader.h>
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
