// SPDX-License-Identifier: MIT
// The C++ seam, the counting allocator (cxx_seam.h): Allocator(counting=True), an ncnn
// allocator over ncnn's fastMalloc that counts the bytes in use and their peak.
#include <stdlib.h>

#include <ncnn/allocator.h>

#include "cxx_seam.h"

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

