// SPDX-License-Identifier: MIT
// The C++ seam, the arena (cxx_seam.h): Allocator(arena=...), every blob and workspace of an
// extract from one block of fixed size taken from the C heap when the arena is made.
//
// What an extract asks of its allocators is fixed by the model, the input's shape and the
// firmware: the same sizes in the same order, each freed at the same point. So an arena
// records that sequence (the blocks' sizes and lifetimes) and lays it out once, offline, the
// way TensorFlow Lite Micro's memory planner does (plan(): largest first, each block at the
// lowest offset that no block alive at the same time takes), into a plan (bytes) that a board
// then gives its arena: Allocator(arena=plan). There, allocation i of an extract (counted from
// the moment nothing of the arena is in use) gets its planned offset when it asks for the
// planned size and that place overlaps no block alive now; anything else (a different model,
// input or firmware; a result kept past the next extract) falls back to first fit in the
// arena's spare part, so a plan that does not match costs room, never correctness.
//
// Layout: [0, plan_size) the planned blocks (no headers: a list of the live ones); then the
// spare part, blocks in address order, each with a header as long as ncnn's alignment (its
// size, header included, whether it is in use, and its record), first fit, neighbours merged
// when freed; past `top` the spare part is free. ncnn's kernels may read up to
// NCNN_MALLOC_OVERREAD bytes past a block: the arena has that much more at its end.
//
// Besides the arena, a planned one keeps a list of the blocks alive at once (as many as the
// plan says were, 12 bytes each) and reads its plan where it lies (flash, a bytes object the
// Allocator keeps) unless told to copy it (a buffer that can change: allocator.c).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ncnn/allocator.h>
#include <ncnn/platform.h>

#include "cxx_seam.h"

namespace {

const uint32_t PLAN_MAGIC = 0x41504D4E;  // "NMPA", little-endian
const int PLAN_VERSION = 2;
const size_t PLAN_HEADER = 20;  // magic, version, blocks, planned size, most blocks alive at once: uint32 each
const int RECORD_MAX = 8192;    // blocks one plan can hold

struct Planned {
    uint32_t size, offset;
};

// One block of the recorded sequence: its size and when (in allocations and frees counted
// together) it was made and freed (UINT32_MAX: alive still).
struct Record {
    uint32_t size, made, freed;
};

class ArenaAllocator : public ncnn::Allocator {
public:
    // plan: the n blocks (Planned, maybe unaligned), read there (in_place) or copied; alive:
    // the most of them alive at once.
    ArenaAllocator(size_t spare, const unsigned char *plan, int n, size_t plan_size, int alive, bool in_place)
        : plan_size_(align(plan_size)), spare_(spare & ~static_cast<size_t>(NCNN_MALLOC_ALIGN - 1)), n_(n),
          live_cap_(alive) {
        size_t total = plan_size_ + spare_;
        raw_ = static_cast<unsigned char *>(malloc(total + NCNN_MALLOC_ALIGN + NCNN_MALLOC_OVERREAD));
        copy_ = n > 0 && !in_place ? static_cast<unsigned char *>(malloc(sizeof(Planned) * n)) : nullptr;
        live_ = n > 0 ? static_cast<Live *>(malloc(sizeof(Live) * (alive > 0 ? alive : 1))) : nullptr;
        if (raw_ != nullptr && (n == 0 || ((in_place || copy_ != nullptr) && live_ != nullptr))) {
            base_ = ncnn::alignPtr(raw_, NCNN_MALLOC_ALIGN);
            spare_base_ = base_ + plan_size_;
            if (copy_ != nullptr) {
                memcpy(copy_, plan, sizeof(Planned) * n);
            }
            plan_ = copy_ != nullptr ? copy_ : plan;
        }
    }
    ~ArenaAllocator() override {
        free(raw_);
        free(copy_);
        free(live_);
        free(records_);
    }
    bool made() const {
        return base_ != nullptr;
    }

    void *fastMalloc(size_t size) override {
        if (size > plan_size_ + spare_) {
            return nullptr;
        }
        lock_.lock();
        if (in_use_ == 0) {
            cursor_ = 0;  // (a fresh extract: nothing of the last one is alive)
        }
        int rec = record(size);
        unsigned char *p = planned(size, rec);
        if (p == nullptr) {
            p = first_fit(size, rec);
            unplanned_ += p != nullptr;
        }
        cursor_++;
        lock_.unlock();
        return p;
    }

    void fastFree(void *ptr) override {
        unsigned char *p = static_cast<unsigned char *>(ptr);
        lock_.lock();
        // (only a block this arena handed out and has not had back: anything else is left
        // alone rather than corrupting the arena)
        if (p != nullptr && p >= base_ && p < spare_base_) {
            free_planned(p);
        } else if (p != nullptr && p >= spare_base_ + NCNN_MALLOC_ALIGN && p <= spare_base_ + top_) {
            free_spare(p - NCNN_MALLOC_ALIGN);
        }
        lock_.unlock();
    }

    void stats(ncnn_mp_arena_stats_t *s) {
        lock_.lock();
        s->in_use = in_use_;
        s->peak = plan_peak_ + spare_peak_;
        s->size = plan_size_ + spare_;
        s->unplanned = unplanned_;
        s->recorded = recorded_;
        lock_.unlock();
    }
    void reset_peak() {
        lock_.lock();
        plan_peak_ = 0;
        for (int i = 0; i < lives_; i++) {
            plan_peak_ = live_[i].end > plan_peak_ ? live_[i].end : plan_peak_;
        }
        spare_peak_ = top_;
        unplanned_ = 0;
        recorded_ = 0;  // (a new sequence to plan: what is alive now is not part of it)
        events_ = 0;
        for (int i = 0; i < lives_; i++) {
            live_[i].rec = -1;
        }
        for (unsigned char *b = spare_base_; b < spare_base_ + top_; b += head(b)->size) {
            head(b)->rec = -1;
        }
        lock_.unlock();
    }

    // The recorded sequence laid out (see the top of the file): written into out (when it has
    // room for cap bytes), its length in bytes returned; -1 if nothing or too much was recorded.
    long plan(unsigned char *out, size_t cap) {
        lock_.lock();
        long ret = plan_locked(out, cap);
        lock_.unlock();
        return ret;
    }

private:
    long plan_locked(unsigned char *out, size_t cap) {
        int n = recorded_ <= RECORD_MAX ? recorded_ : -1;
        const Record *r = records_;
        if (n <= 0) {
            return -1;
        }
        size_t bytes = PLAN_HEADER + sizeof(Planned) * static_cast<size_t>(n);
        if (out == nullptr || cap < bytes) {
            return static_cast<long>(bytes);
        }
        // (out may be unaligned: placed blocks are written through memcpy)
        Planned *placed = static_cast<Planned *>(malloc(sizeof(Planned) * n));
        int *order = static_cast<int *>(malloc(sizeof(int) * n));
        if (order == nullptr || placed == nullptr) {
            free(order);
            free(placed);
            return -2;
        }
        // Largest first (ties: made first), insertion sort: a few hundred blocks.
        for (int i = 0; i < n; i++) {
            int j = i;
            for (; j > 0 && before(r[i], i, r[order[j - 1]], order[j - 1]); j--) {
                order[j] = order[j - 1];
            }
            order[j] = i;
        }
        uint32_t total = 0;
        for (int k = 0; k < n; k++) {
            const Record &b = r[order[k]];
            uint32_t size = static_cast<uint32_t>(align(b.size));
            uint32_t offset = 0;
            // The lowest offset clear of every placed block alive at the same time: try 0 and
            // the end of each such block, lowest first, until one fits.
            for (bool moved = true; moved;) {
                moved = false;
                for (int m = 0; m < k; m++) {
                    const Record &o = r[order[m]];
                    const Planned &po = placed[order[m]];
                    bool together = o.made < b.freed && b.made < o.freed;
                    uint32_t osize = static_cast<uint32_t>(align(o.size));
                    if (together && offset < po.offset + osize && po.offset < offset + size) {
                        offset = po.offset + osize;
                        moved = true;
                    }
                }
            }
            placed[order[k]].size = b.size;
            placed[order[k]].offset = offset;
            total = offset + size > total ? offset + size : total;
        }
        // the most blocks alive at once: at some block's making, those made by then and not freed
        uint32_t alive = 0;
        for (int i = 0; i < n; i++) {
            uint32_t count = 0;
            for (int j = 0; j < n; j++) {
                count += r[j].made <= r[i].made && r[i].made < r[j].freed;
            }
            alive = count > alive ? count : alive;
        }
        const uint32_t header[5] = { PLAN_MAGIC, PLAN_VERSION, static_cast<uint32_t>(n), total, alive };
        memcpy(out, header, PLAN_HEADER);
        memcpy(out + PLAN_HEADER, placed, sizeof(Planned) * n);
        free(order);
        free(placed);
        return static_cast<long>(bytes);
    }

    struct Head {
        size_t size;  // bytes, the header's included
        bool used;
        int rec;      // its record, or -1
    };
    struct Live {
        size_t offset, end;
        int rec;
    };
    static size_t align(size_t n) {
        return ncnn::alignSize(n, NCNN_MALLOC_ALIGN);
    }
    static Head *head(unsigned char *b) {
        return reinterpret_cast<Head *>(b);
    }
    static bool before(const Record &a, int ia, const Record &b, int ib) {
        return a.size > b.size || (a.size == b.size && ia < ib);
    }

    // The next record of the sequence, or -1: an arena made from a plan records nothing (it
    // is the board's: its RAM is the plan's), and past RECORD_MAX records (or where the C heap
    // has no room for more) plan() refuses. The records grow as an extract asks: on the
    // desktop or the emulated board that measures, never in the board's planned arena.
    int record(size_t size) {
        if (n_ > 0 || recorded_ > RECORD_MAX) {
            return -1;
        }
        if (recorded_ == capacity_) {
            int more = capacity_ == 0 ? 256 : capacity_ * 2;
            Record *grown = recorded_ < RECORD_MAX ? static_cast<Record *>(realloc(records_, sizeof(Record) * more))
                                                   : nullptr;
            if (grown == nullptr) {
                recorded_ = RECORD_MAX + 1;  // (too many: plan() says so)
                return -1;
            }
            records_ = grown;
            capacity_ = more;
        }
        records_[recorded_] = Record{ static_cast<uint32_t>(size), events_++, UINT32_MAX };
        return recorded_++;
    }
    void freed(int rec) {
        if (rec >= 0 && rec < recorded_) {
            records_[rec].freed = events_++;
        }
    }

    // Allocation cursor_ of the plan, if it asks for this size and its place is free now.
    unsigned char *planned(size_t size, int rec) {
        Planned b;
        if (cursor_ >= n_ || lives_ >= live_cap_) {
            return nullptr;
        }
        memcpy(&b, plan_ + sizeof(Planned) * cursor_, sizeof(b));  // (where it lies: maybe unaligned)
        if (b.size != size) {
            return nullptr;
        }
        size_t offset = b.offset, end = offset + align(size);
        if (end > plan_size_) {
            return nullptr;
        }
        for (int i = 0; i < lives_; i++) {
            if (offset < live_[i].end && live_[i].offset < end) {
                return nullptr;
            }
        }
        live_[lives_++] = Live{ offset, end, rec };
        in_use_ += align(size);
        plan_peak_ = end > plan_peak_ ? end : plan_peak_;
        return base_ + offset;
    }
    void free_planned(unsigned char *p) {
        size_t offset = static_cast<size_t>(p - base_);
        for (int i = 0; i < lives_; i++) {
            if (live_[i].offset == offset) {
                in_use_ -= live_[i].end - live_[i].offset;
                freed(live_[i].rec);
                live_[i] = live_[--lives_];
                return;
            }
        }
    }

    unsigned char *first_fit(size_t size, int rec) {
        size_t need = align(size) + NCNN_MALLOC_ALIGN;
        unsigned char *found = nullptr;
        for (unsigned char *b = spare_base_; b < spare_base_ + top_; b += head(b)->size) {
            if (!head(b)->used && head(b)->size >= need) {
                found = b;
                break;
            }
        }
        if (found != nullptr) {
            size_t rest = head(found)->size - need;
            if (rest >= 2 * NCNN_MALLOC_ALIGN) {  // (split: the rest a free block of its own)
                head(found)->size = need;
                *head(found + need) = Head{ rest, false, -1 };
            }
        } else if (spare_ - top_ >= need) {
            found = spare_base_ + top_;
            *head(found) = Head{ need, false, -1 };
            top_ += need;
            spare_peak_ = top_ > spare_peak_ ? top_ : spare_peak_;
        } else {
            return nullptr;
        }
        head(found)->used = true;
        head(found)->rec = rec;
        in_use_ += head(found)->size;
        return found + NCNN_MALLOC_ALIGN;
    }
    void free_spare(unsigned char *b) {
        if (!head(b)->used) {
            return;
        }
        head(b)->used = false;
        in_use_ -= head(b)->size;
        freed(head(b)->rec);
        // Free neighbours become one block, and a free block at the end goes back past top.
        unsigned char *last = nullptr;
        for (unsigned char *x = spare_base_; x < spare_base_ + top_;) {
            unsigned char *next = x + head(x)->size;
            if (!head(x)->used && next < spare_base_ + top_ && !head(next)->used) {
                head(x)->size += head(next)->size;
                continue;
            }
            last = x;
            x = next;
        }
        if (last != nullptr && !head(last)->used) {
            top_ = static_cast<size_t>(last - spare_base_);
        }
    }

    const size_t plan_size_, spare_;
    const int n_, live_cap_;
    unsigned char *raw_ = nullptr, *base_ = nullptr, *spare_base_ = nullptr;
    const unsigned char *plan_ = nullptr;  // the planned blocks (Planned each), where they lie or copy_
    unsigned char *copy_ = nullptr;
    Live *live_ = nullptr;
    int lives_ = 0, cursor_ = 0;
    Record *records_ = nullptr;
    int recorded_ = 0, capacity_ = 0;
    uint32_t events_ = 0;
    size_t top_ = 0, spare_peak_ = 0, plan_peak_ = 0, in_use_ = 0, unplanned_ = 0;
    ncnn::Mutex lock_;
};

void *arena_fast_malloc(ncnn_allocator_t a, size_t size) {
    return static_cast<ArenaAllocator *>(a->pthis)->fastMalloc(size);
}

void arena_fast_free(ncnn_allocator_t a, void *ptr) {
    static_cast<ArenaAllocator *>(a->pthis)->fastFree(ptr);
}

}  // namespace

extern "C" int ncnn_mp_cxx_arena_plan_check(const unsigned char *plan, size_t len, size_t *planned) {
    uint32_t header[5];
    if (len < PLAN_HEADER) {
        return -1;
    }
    memcpy(header, plan, PLAN_HEADER);
    if (header[0] != PLAN_MAGIC || header[1] != PLAN_VERSION || header[2] == 0 || header[2] > RECORD_MAX ||
        len != PLAN_HEADER + sizeof(Planned) * header[2] || header[3] > 0x7fffffffu || header[4] == 0 ||
        header[4] > header[2]) {
        return -1;
    }
    for (uint32_t i = 0; i < header[2]; i++) {  // (every block inside the planned size)
        Planned b;
        memcpy(&b, plan + PLAN_HEADER + sizeof(Planned) * i, sizeof(b));
        if (b.size == 0 || b.offset > header[3] || header[3] - b.offset < ncnn::alignSize(b.size, NCNN_MALLOC_ALIGN)) {
            return -1;
        }
    }
    *planned = header[3];
    return static_cast<int>(header[2]);
}

extern "C" ncnn_allocator_t ncnn_mp_cxx_arena_allocator_create(size_t spare, const unsigned char *plan, size_t len,
                                                              bool in_place) {
    size_t planned = 0;
    int n = plan != nullptr ? ncnn_mp_cxx_arena_plan_check(plan, len, &planned) : 0;
    if (n < 0) {
        return nullptr;
    }
    uint32_t alive = 0;
    if (n > 0) {
        memcpy(&alive, plan + 16, sizeof(alive));  // (the header's fifth word)
    }
    ncnn_allocator_t a = static_cast<ncnn_allocator_t>(malloc(sizeof(*a)));
    ArenaAllocator *arena = a != nullptr ? new ArenaAllocator(spare, n > 0 ? plan + PLAN_HEADER : nullptr, n, planned,
                                                              static_cast<int>(alive), in_place) : nullptr;
    if (arena == nullptr || !arena->made()) {
        delete arena;
        free(a);
        return nullptr;
    }
    a->pthis = arena;
    a->fast_malloc = arena_fast_malloc;
    a->fast_free = arena_fast_free;
    return a;
}

extern "C" void ncnn_mp_cxx_arena_allocator_stats(ncnn_allocator_t a, ncnn_mp_arena_stats_t *s) {
    static_cast<ArenaAllocator *>(a->pthis)->stats(s);
}

extern "C" void ncnn_mp_cxx_arena_allocator_reset_peak(ncnn_allocator_t a) {
    static_cast<ArenaAllocator *>(a->pthis)->reset_peak();
}

extern "C" long ncnn_mp_cxx_arena_allocator_plan(ncnn_allocator_t a, unsigned char *out, size_t cap) {
    return static_cast<ArenaAllocator *>(a->pthis)->plan(out, cap);
}
