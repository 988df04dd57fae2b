// The C++ seam, the allocators of ncnn_mp's own (cxx_seam.h): Allocator(counting=True), an
// ncnn allocator over ncnn's fastMalloc that counts the bytes in use and their peak; and
// Allocator(arena=size), every block from one block of fixed size taken up front.
#include <stdlib.h>

#include <ncnn/allocator.h>
#include <ncnn/platform.h>

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

// An arena: one block of `size` bytes taken from the C heap when it is made, handed out as
// blocks in address order, first fit, neighbours merged when freed. What a model's extract
// takes from it is fixed by the model and the input, so its high-water mark (`top`'s peak)
// is the arena that extract needs, measured once (make preflight) and then reserved at
// boot: the C heap never fragments, and a model that does not fit fails with
// out-of-memory (MemoryError) at the layer that asked, the Net untouched.
// Each block starts with a header as long as ncnn's alignment (so the data keeps it): its
// size, header included, and whether it is in use. The blocks cover [base, top); past top
// is free. ncnn's kernels may read up to NCNN_MALLOC_OVERREAD bytes past a block: the
// arena has that much more at its end.
class ArenaAllocator : public ncnn::Allocator {
public:
    explicit ArenaAllocator(size_t size) : size_(size & ~static_cast<size_t>(NCNN_MALLOC_ALIGN - 1)) {
        raw_ = static_cast<unsigned char *>(malloc(size_ + NCNN_MALLOC_ALIGN + NCNN_MALLOC_OVERREAD));
        base_ = raw_ == nullptr ? nullptr : ncnn::alignPtr(raw_, NCNN_MALLOC_ALIGN);
    }
    ~ArenaAllocator() override {
        free(raw_);
    }
    bool made() const {
        return base_ != nullptr;
    }

    void *fastMalloc(size_t size) override {
        if (size > size_) {
            return nullptr;
        }
        size_t need = ncnn::alignSize(size, NCNN_MALLOC_ALIGN) + NCNN_MALLOC_ALIGN;
        lock_.lock();
        unsigned char *found = nullptr;
        for (unsigned char *b = base_; b < base_ + top_; b += head(b)->size) {
            if (!head(b)->used && head(b)->size >= need) {
                found = b;
                break;
            }
        }
        if (found != nullptr) {
            size_t rest = head(found)->size - need;
            if (rest >= 2 * NCNN_MALLOC_ALIGN) {  // (split: the rest a free block of its own)
                head(found)->size = need;
                *head(found + need) = Head{ rest, false };
            }
        } else if (size_ - top_ >= need) {
            found = base_ + top_;
            *head(found) = Head{ need, false };
            top_ += need;
            peak_ = top_ > peak_ ? top_ : peak_;
        }
        if (found != nullptr) {
            head(found)->used = true;
            in_use_ += head(found)->size;
        }
        lock_.unlock();
        return found != nullptr ? found + NCNN_MALLOC_ALIGN : nullptr;
    }

    void fastFree(void *ptr) override {
        unsigned char *b = static_cast<unsigned char *>(ptr) - NCNN_MALLOC_ALIGN;
        lock_.lock();
        // (only a block this arena handed out and has not had back: anything else is left
        // alone rather than corrupting the arena)
        if (ptr != nullptr && b >= base_ && b < base_ + top_ && head(b)->used) {
            head(b)->used = false;
            in_use_ -= head(b)->size;
            merge();
        }
        lock_.unlock();
    }

    void stats(size_t *in_use, size_t *peak, size_t *size) {
        lock_.lock();
        *in_use = in_use_;
        *peak = peak_;
        *size = size_;
        lock_.unlock();
    }
    void reset_peak() {
        lock_.lock();
        peak_ = top_;
        lock_.unlock();
    }

private:
    struct Head {
        size_t size;  // bytes, the header's included
        bool used;
    };
    static Head *head(unsigned char *b) {
        return reinterpret_cast<Head *>(b);
    }
    // Free neighbours become one block, and a free block at the end goes back past top.
    void merge() {
        unsigned char *last = nullptr;
        for (unsigned char *b = base_; b < base_ + top_;) {
            unsigned char *next = b + head(b)->size;
            if (!head(b)->used && next < base_ + top_ && !head(next)->used) {
                head(b)->size += head(next)->size;
                continue;
            }
            last = b;
            b = next;
        }
        if (last != nullptr && !head(last)->used) {
            top_ = static_cast<size_t>(last - base_);
        }
    }

    const size_t size_;
    unsigned char *raw_ = nullptr;
    unsigned char *base_ = nullptr;
    size_t top_ = 0, peak_ = 0, in_use_ = 0;
    ncnn::Mutex lock_;
};

void *arena_fast_malloc(ncnn_allocator_t a, size_t size) {
    return static_cast<ArenaAllocator *>(a->pthis)->fastMalloc(size);
}

void arena_fast_free(ncnn_allocator_t a, void *ptr) {
    static_cast<ArenaAllocator *>(a->pthis)->fastFree(ptr);
}

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

extern "C" ncnn_allocator_t ncnn_mp_cxx_arena_allocator_create(size_t size) {
    ncnn_allocator_t a = static_cast<ncnn_allocator_t>(malloc(sizeof(*a)));
    if (a == nullptr) {
        return nullptr;
    }
    ArenaAllocator *arena = new ArenaAllocator(size);  // (boards: no exceptions; a failed new ends the firmware as for ncnn's own)
    if (!arena->made()) {
        delete arena;
        free(a);
        return nullptr;
    }
    a->pthis = arena;
    a->fast_malloc = arena_fast_malloc;
    a->fast_free = arena_fast_free;
    return a;
}

extern "C" void ncnn_mp_cxx_arena_allocator_stats(ncnn_allocator_t a, size_t *in_use, size_t *peak, size_t *size) {
    static_cast<ArenaAllocator *>(a->pthis)->stats(in_use, peak, size);
}

extern "C" void ncnn_mp_cxx_arena_allocator_reset_peak(ncnn_allocator_t a) {
    static_cast<ArenaAllocator *>(a->pthis)->reset_peak();
}
