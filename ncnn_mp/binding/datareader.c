// SPDX-License-Identifier: MIT
// DataReader: where ncnn reads params and weights from (ncnn_datareader_*).
//
// ncnn's own memory reader (ncnn_datareader_create_from_memory, and the
// ncnn_net_load_*_memory functions built on it) has no length: a truncated buffer
// makes ncnn read past its end. ncnn_mp therefore reads Python buffers through a
// bounded reader of its own, made with ncnn_datareader_create() and our read/scan
// callbacks, which also serves DataReader(zeros=True) for weightless networks.
//
// A DataReader made with no source is the base of a Python subclass that defines
// read(n) (a file, a socket, a decompressor): our read callback calls it through the
// trampoline's guarded call (ncnn_mp_callback) and copies what it returns into ncnn's
// buffer, at most what ncnn asked for. ncnn scans text params with scanf formats
// ("%31s", "%255s", "%1[^ ...]", "%1023[^\r\n]"): the scan callback keeps a look-ahead
// of the bytes read() returned, enough for the format's width, scans it with sscanf,
// and a later read (binary data) takes what is left of it first.
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncnn_mp.h"
#include "cxx_seam.h"

typedef struct _ncnn_mp_datareader_obj_t {
    mp_obj_base_t base;
    ncnn_mp_reader_t *reader;  // bounded memory, zeros or a Python subclass's read() (C heap), or NULL
    ncnn_datareader_t stdio;   // from_stdio, or NULL
    void *fp;                  // the FILE* from_stdio opened
    mp_obj_t keep;             // the buffer reader reads
    int users;                 // loads reading through it now (use.c), under the lock
} ncnn_mp_datareader_obj_t;

// The bounded readers alive now (MP_STATE_VM(ncnn_mp_readers), state.c), found by the
// ncnn handle our callbacks receive. The list, and a reader's position (one DataReader
// may be read by loads in several threads), are under the lock.
static ncnn_mp_reader_t *ncnn_mp_reader_of(ncnn_datareader_t dr) {
    ncnn_mp_reader_t *r = MP_STATE_VM(ncnn_mp_readers);
    while (r && r->handle != dr) {
        r = r->next;
    }
    return r;
}

// ModelBin's tags before a type-0 weight array (ncnn's modelbin.cpp).
#define NCNN_MP_TAG_FP16 0x01306B47u
#define NCNN_MP_TAG_BF16 0x01348B83u
#define NCNN_MP_TAG_INT8 0x000D4B38u
#define NCNN_MP_TAG_FP32_SCALED 0x0002C056u

// Counts a chunk ncnn took: referenced in place, or read (under the lock). Lending in
// place, ncnn references raw data and reads only weight tags and what it converts: a
// tag says whether the next chunk (fp16, bf16) or two (a codebook table and its
// indices) become new fp32 Mats.
static void ncnn_mp_reader_count(ncnn_mp_reader_t *r, const uint8_t *p, size_t n, bool referenced, bool lending) {
    ncnn_mp_weights_t *c = &r->counts;
    if (!lending) {
        c->copied += n;
    } else if (c->pending > 0) {
        c->converted += n;
        c->pending--;
    } else if (referenced) {
        c->in_place += n;
    } else if (n == 4) {
        uint32_t tag = p[0] | p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        bool raw = tag == NCNN_MP_TAG_INT8 || tag == NCNN_MP_TAG_FP32_SCALED || p[0] + p[1] + p[2] + p[3] == 0;
        c->pending = tag == NCNN_MP_TAG_FP16 || tag == NCNN_MP_TAG_BF16 ? 1 : raw ? 0 : 2;
    } else {
        c->copied += n;
    }
}

// Up to `size` bytes from the reader's position (under the lock).
static size_t ncnn_mp_reader_read_locked(ncnn_mp_reader_t *r, void *buf, size_t size, bool lending) {
    size_t n = size;
    if (r->zeros) {
        memset(buf, 0, size);
    } else {
        n = size < r->len - r->offset ? size : r->len - r->offset;
        if (n > 0) {  // an empty buffer's base may be NULL: memcpy from NULL is undefined even for 0 bytes
            memcpy(buf, r->base + r->offset, n);
            ncnn_mp_reader_count(r, r->base + r->offset, n, false, lending);
            r->offset += n;
        }
    }
    r->counts.short_read |= n < size;
    return n;
}

// The callback of ncnn's C API reader (copying).
static size_t ncnn_mp_reader_read_copy(ncnn_datareader_t dr, void *buf, size_t size) {
    mp_uint_t l = ncnn_mp_lock();
    ncnn_mp_reader_t *r = ncnn_mp_reader_of(dr);
    size_t n = r ? ncnn_mp_reader_read_locked(r, buf, size, false) : 0;
    ncnn_mp_unlock(l);
    return n;
}

// The reader lending ncnn the bytes in place (cxx_load.cpp).
size_t ncnn_mp_reader_read(ncnn_mp_reader_t *r, void *buf, size_t size) {
    mp_uint_t l = ncnn_mp_lock();
    size_t n = ncnn_mp_reader_read_locked(r, buf, size, true);
    ncnn_mp_unlock(l);
    return n;
}

size_t ncnn_mp_reader_reference(ncnn_mp_reader_t *r, size_t size, const void **buf) {
    mp_uint_t l = ncnn_mp_lock();
    size_t n = 0;
    if (!r->zeros && size <= r->len - r->offset) {  // all of it, or nothing (ncnn then reads)
        *buf = r->base + r->offset;
        ncnn_mp_reader_count(r, r->base + r->offset, size, true, true);
        r->offset += size;
        n = size;
    }
    ncnn_mp_unlock(l);
    return n;
}

#if NCNN_STRING
// scanf over the bytes left, as ncnn's own readers do, through a window of them copied with a
// terminating NUL (a Python buffer need not have one): from the offset, the whitespace there
// and as much as the format reads after it (its width: ncnn's go up to 1023; none, as %d: 64).
// A param's text is never copied whole: NanoDet-m's 14 KiB would stay on a board's C heap
// through the load, at its peak.
static int ncnn_mp_reader_scan_locked(ncnn_datareader_t dr, const char *format, void *p) {
    ncnn_mp_reader_t *r = ncnn_mp_reader_of(dr);
    if (r == NULL || r->zeros || r->offset >= r->len) {
        return 0;
    }
    const char *pct = strchr(format, '%');
    size_t width = pct && isdigit((unsigned char)pct[1]) ? strtoul(pct + 1, NULL, 10) : 64;
    size_t left = r->len - r->offset, space = 0;
    while (space < left && isspace(r->base[r->offset + space])) {
        space++;
    }
    size_t fmtlen = strlen(format);
    size_t take = space + width + fmtlen + 2;  // (the format's own characters besides)
    take = take < left ? take : left;
    char *window = malloc(take + 1);
    char *fmt = malloc(fmtlen + 3);
    if (window == NULL || fmt == NULL) {
        free(window);
        free(fmt);
        return 0;
    }
    memcpy(window, r->base + r->offset, take);
    window[take] = 0;
    memcpy(fmt, format, fmtlen);
    memcpy(fmt + fmtlen, "%n", 3);
    int consumed = 0;
    int n = sscanf(window, fmt, p, &consumed);
    free(fmt);
    free(window);
    if (n > 0) {
        r->offset += (size_t)consumed;
    }
    return n;
}

static int ncnn_mp_reader_scan(ncnn_datareader_t dr, const char *format, void *p) {
    mp_uint_t l = ncnn_mp_lock();
    int n = ncnn_mp_reader_scan_locked(dr, format, p);
    ncnn_mp_unlock(l);
    return n;
}
#endif

// ---------------------------------------------------------------------------
// Python readers.
#if NCNN_MP_HAS_PYTHON_READERS

// The most ncnn_mp asks read() for at once: a weight array of megabytes comes in pieces
// of this size, each a bytes object in the Python heap for a moment.
#ifndef NCNN_MP_READ_CHUNK
#define NCNN_MP_READ_CHUNK 16384
#endif

// One read() call's worth of what a callback wants: up to `size` bytes into `buf`.
typedef struct {
    uint8_t *buf;
    size_t size;
    size_t got;  // what read() returned, in total
    bool end;    // read() returned b"": the end of the data
} ncnn_mp_pull_t;

// (Under ncnn_mp_callback.) Calls read(n) until `size` bytes came or the data ended. A
// result longer than asked for, or not bytes-like, raises naming the class.
static void ncnn_mp_reader_pull_python(mp_obj_t instance, void *arg) {
    ncnn_mp_pull_t *p = arg;
    mp_obj_t dest[3];
    mp_load_method(instance, MP_QSTR_read, dest);
    while (p->got < p->size) {
        size_t want = p->size - p->got < NCNN_MP_READ_CHUNK ? p->size - p->got : NCNN_MP_READ_CHUNK;
        dest[2] = mp_obj_new_int_from_uint(want);
        mp_obj_t r = mp_call_method_n_kw(1, 0, dest);
        mp_load_method(instance, MP_QSTR_read, dest);  // (the call may have used dest)
        mp_buffer_info_t info;
        if (!mp_get_buffer(r, &info, MP_BUFFER_READ)) {
            mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s.read: must return a bytes-like object (b'' at the end of the data), not %s"), mp_obj_get_type_str(instance), mp_obj_get_type_str(r));
        }
        if (info.len > want) {
            mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s.read: returned %u bytes, more than the %u asked for"),
                mp_obj_get_type_str(instance), (unsigned)info.len, (unsigned)want);
        }
        if (info.len == 0) {
            p->end = true;
            return;
        }
        memcpy(p->buf + p->got, info.buf, info.len);
        p->got += info.len;
    }
}

// Up to `size` bytes from read() into buf; false if read() raised (kept for the load).
static bool ncnn_mp_reader_pull(mp_obj_t instance, void *buf, size_t size, ncnn_mp_pull_t *p) {
    p->buf = buf;
    p->size = size;
    p->got = 0;
    p->end = false;
    return instance != MP_OBJ_NULL && ncnn_mp_callback(instance, NULL, MP_QSTR_read, ncnn_mp_reader_pull_python, p);
}

// Takes up to `size` bytes of the look-ahead (under the lock).
static size_t ncnn_mp_reader_take_ahead_locked(ncnn_mp_reader_t *r, void *buf, size_t size) {
    size_t n = size < r->text_len ? size : r->text_len;
    if (n > 0) {
        memcpy(buf, r->text + r->text_start, n);
        r->text_start += n;
        r->text_len -= n;
    }
    return n;
}

// The read callback of a Python reader: the look-ahead first, then read().
static size_t ncnn_mp_reader_read_python(ncnn_datareader_t dr, void *buf, size_t size) {
    mp_uint_t l = ncnn_mp_lock();
    ncnn_mp_reader_t *r = ncnn_mp_reader_of(dr);
    size_t n = r ? ncnn_mp_reader_take_ahead_locked(r, buf, size) : 0;
    mp_obj_t instance = r ? r->instance : MP_OBJ_NULL;
    ncnn_mp_unlock(l);
    ncnn_mp_pull_t p = { .got = 0 };
    if (n < size) {
        ncnn_mp_reader_pull(instance, (uint8_t *)buf + n, size - n, &p);
    }
    n += p.got;
    l = ncnn_mp_lock();
    r = ncnn_mp_reader_of(dr);
    if (r) {
        r->counts.copied += n;
        r->counts.short_read |= n < size;
    }
    ncnn_mp_unlock(l);
    return n;
}

#if NCNN_STRING
// Appends n bytes to the look-ahead (under the lock; C heap, never the GC's). False if
// there is no memory for them.
static bool ncnn_mp_reader_append_ahead_locked(ncnn_mp_reader_t *r, const uint8_t *bytes, size_t n) {
    if (r->text_start > 0 && r->text_len > 0) {
        memmove(r->text, r->text + r->text_start, r->text_len);
    }
    r->text_start = 0;
    if (r->text_len + n + 1 > r->text_cap) {
        size_t cap = (r->text_len + n + 1) * 2;
        char *grown = realloc(r->text, cap);
        if (grown == NULL) {
            return false;
        }
        r->text = grown;
        r->text_cap = cap;
    }
    memcpy(r->text + r->text_len, bytes, n);
    r->text_len += n;
    r->text[r->text_len] = 0;
    return true;
}

// The scan callback of a Python reader: fills the look-ahead from read() until it holds
// the format's field whole (its leading white space, its width, one byte past it) or the
// data ended, then scans it. ncnn's formats are "%<width>s" and "%<width>[...]"; a format
// without a width gets 64 bytes (a number).
static int ncnn_mp_reader_scan_python(ncnn_datareader_t dr, const char *format, void *p) {
    const char *pct = strchr(format, '%');
    size_t width = pct && isdigit((unsigned char)pct[1]) ? strtoul(pct + 1, NULL, 10) : 64;
    uint8_t chunk[256];
    for (bool end = false;;) {
        mp_uint_t l = ncnn_mp_lock();
        ncnn_mp_reader_t *r = ncnn_mp_reader_of(dr);
        if (r == NULL) {
            ncnn_mp_unlock(l);
            return 0;
        }
        size_t space = 0;
        while (space < r->text_len && isspace((unsigned char)r->text[r->text_start + space])) {
            space++;
        }
        size_t need = space + width + 1;
        if (end || r->text_len >= need) {
            int n = 0, consumed = 0;
            char *fmt = malloc(strlen(format) + 3);
            if (fmt != NULL && r->text_len > 0) {
                strcpy(fmt, format);
                strcat(fmt, "%n");
                n = sscanf(r->text + r->text_start, fmt, p, &consumed);
                if (n > 0) {
                    r->text_start += (size_t)consumed;
                    r->text_len -= (size_t)consumed;
                }
            }
            free(fmt);
            ncnn_mp_unlock(l);
            return n;
        }
        size_t want = need - r->text_len < sizeof(chunk) ? sizeof(chunk) : need - r->text_len;
        mp_obj_t instance = r->instance;
        ncnn_mp_unlock(l);
        ncnn_mp_pull_t pulled;
        if (!ncnn_mp_reader_pull(instance, chunk, want < sizeof(chunk) ? want : sizeof(chunk), &pulled)) {
            return 0;  // read() raised: the load fails, and re-raises it
        }
        end = pulled.got == 0;
        l = ncnn_mp_lock();
        r = ncnn_mp_reader_of(dr);
        bool kept = r != NULL && ncnn_mp_reader_append_ahead_locked(r, chunk, pulled.got);
        ncnn_mp_unlock(l);
        if (!kept) {
            return 0;
        }
    }
}
#endif // NCNN_STRING
#endif // NCNN_MP_HAS_PYTHON_READERS

void ncnn_mp_reader_open(ncnn_mp_reader_t *r, const void *base, size_t len, bool zeros) {
    memset(r, 0, sizeof(*r));
    r->handle = ncnn_datareader_create();
    r->handle->read = ncnn_mp_reader_read_copy;
    #if NCNN_STRING
    r->handle->scan = ncnn_mp_reader_scan;
    #endif
    r->base = base;
    r->len = len;
    r->zeros = zeros;
    mp_uint_t l = ncnn_mp_lock();
    r->next = MP_STATE_VM(ncnn_mp_readers);
    MP_STATE_VM(ncnn_mp_readers) = r;
    ncnn_mp_unlock(l);
}

void ncnn_mp_reader_close(ncnn_mp_reader_t *r) {
    mp_uint_t l = ncnn_mp_lock();
    ncnn_mp_reader_t **link = &MP_STATE_VM(ncnn_mp_readers);
    while (*link && *link != r) {
        link = &(*link)->next;
    }
    if (*link) {
        *link = r->next;
    }
    ncnn_mp_unlock(l);
    if (r->handle) {
        ncnn_datareader_destroy(r->handle);
        r->handle = NULL;
    }
    free(r->text);
    r->text = NULL;
    r->instance = MP_OBJ_NULL;
}

// ---------------------------------------------------------------------------
// The Python class.

// A load's use of a DataReader: counted under the lock first (another thread's close()
// then refuses, so the native reader stays while this use runs Python: finding a Python
// reader's read(n), re-reading where a buffer is now); then what the reader reads from is
// set under the lock.
ncnn_datareader_t ncnn_mp_reader_use(ncnn_mp_use_t *u, mp_obj_t obj, ncnn_mp_reader_t **counted, const char *where) {
    ncnn_mp_datareader_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_DataReader, where);
    ncnn_mp_use_reserve(u, 1);
    mp_uint_t l = ncnn_mp_lock();
    ncnn_mp_reader_t *r = self->reader;
    ncnn_datareader_t handle = r ? r->handle : self->stdio;
    bool python = r && r->python, buffer = r && !r->python && !r->zeros;
    if (handle != NULL) {
        ncnn_mp_use_add_locked(u, &self->users);
    }
    ncnn_mp_unlock(l);
    if (handle == NULL) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the DataReader was closed"));
    }
    mp_buffer_info_t info = { .buf = NULL, .len = 0 };
    if (python) {
        mp_obj_t dest[2];
        mp_load_method_maybe(obj, MP_QSTR_read, dest);
        if (dest[0] == MP_OBJ_NULL) {
            mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: a DataReader with no source reads through read(n): subclass DataReader and define it (%s has none)"), where, mp_obj_get_type_str(obj));
        }
    } else if (buffer) {
        // Re-read where the buffer is now: a bytearray may have been resized since.
        mp_get_buffer_raise(self->keep, &info, MP_BUFFER_READ);
    }
    l = ncnn_mp_lock();
    bool shrank = buffer && r->offset > info.len;
    if (python) {
        r->instance = obj;  // (this use's caller keeps obj alive while ncnn reads)
    } else if (buffer && !shrank) {
        r->base = info.buf;
        r->len = info.len;
    }
    ncnn_mp_unlock(l);
    if (shrank) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the buffer under this DataReader shrank below what was read"));
    }
    if (counted) {
        *counted = r;
    }
    return handle;
}

// DataReader(*, from_memory=buffer | from_stdio=path | file | zeros=True)
//   ncnn_datareader_create (bounded memory / zeros), ncnn_datareader_create_from_stdio
static mp_obj_t ncnn_mp_DataReader_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *all_args) {
    const char *where = "DataReader()";
    enum { ARG_from_memory, ARG_from_stdio, ARG_zeros };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_from_memory, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
        { MP_QSTR_from_stdio, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
        { MP_QSTR_zeros, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = false} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed)];
    ncnn_mp_parse_args_kw_array(where, n_args, n_kw, all_args, MP_ARRAY_SIZE(allowed), allowed, args);
    int sources = (args[ARG_from_memory].u_obj != MP_OBJ_NULL) + (args[ARG_from_stdio].u_obj != MP_OBJ_NULL)
        + args[ARG_zeros].u_bool;
    if (sources > 1) {
        ncnn_mp_raise_type(where, NCNN_MP_TEXT("give one of from_memory=, from_stdio= or zeros=True (or none, in a subclass that defines read(n))"));
    }
    ncnn_mp_datareader_obj_t *self = mp_obj_malloc_with_finaliser(ncnn_mp_datareader_obj_t, type);
    self->reader = NULL;
    self->stdio = NULL;
    self->fp = NULL;
    self->keep = MP_OBJ_NULL;
    self->users = 0;
    if (sources == 0) {
        // The base of a Python subclass (make_new is given the native type, not the
        // subclass): ncnn reads through the instance's read(n), checked at each use.
        #if !NCNN_MP_HAS_PYTHON_READERS
        ncnn_mp_raise_left_out(where, "NCNN_MP_HAS_PYTHON_READERS (a reader written in Python)");
        #else
        ncnn_mp_reader_t *r = malloc(sizeof(*r));
        if (r == NULL) {
            mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: out of memory"), where);
        }
        ncnn_mp_reader_open(r, NULL, 0, false);
        r->python = true;
        r->handle->read = ncnn_mp_reader_read_python;
        #if NCNN_STRING
        r->handle->scan = ncnn_mp_reader_scan_python;
        #endif
        self->reader = r;
        return MP_OBJ_FROM_PTR(self);
        #endif
    }
    mp_obj_t mem = args[ARG_from_memory].u_obj;
    mp_obj_t src = args[ARG_from_stdio].u_obj;
    const char *mem_name = "from_memory";
    if (src != MP_OBJ_NULL && !mp_obj_is_str(src)) {
        // An open file: read it whole, then serve it from memory.
        mp_obj_t read[2];
        mp_load_method_maybe(src, MP_QSTR_read, read);
        if (read[0] == MP_OBJ_NULL) {
            mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: from_stdio must be a path (str) or an open file, not %s"),
                where, mp_obj_get_type_str(src));
        }
        mem = mp_call_method_n_kw(0, 0, read);
        mem_name = "from_stdio's file.read()";
        src = MP_OBJ_NULL;
    }
    if (src != MP_OBJ_NULL) {
        #if NCNN_STDIO
        const char *path = mp_obj_str_get_str(src);
        self->fp = fopen(path, "rb");
        if (self->fp == NULL) {
            mp_raise_msg_varg(&mp_type_OSError, NCNN_MP_FORMAT("%s: cannot open '%s'"), where, path);
        }
        self->stdio = ncnn_datareader_create_from_stdio(self->fp);
        return MP_OBJ_FROM_PTR(self);
        #else
        mp_raise_msg_varg(&mp_type_NotImplementedError, NCNN_MP_FORMAT("%s: from_stdio needs ncnn built with NCNN_STDIO=ON"), where);
        #endif
    }
    mp_buffer_info_t info = { .buf = NULL, .len = 0 };
    if (mem != MP_OBJ_NULL) {
        ncnn_mp_get_buffer(mem, &info, MP_BUFFER_READ, where, mem_name);
    }
    // C heap, not GC heap: the reader list links these records, and __del__ must
    // still find the record intact whatever order a collection frees things in.
    ncnn_mp_reader_t *r = malloc(sizeof(*r));
    if (r == NULL) {
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: out of memory"), where);
    }
    ncnn_mp_reader_open(r, info.buf, info.len, mem == MP_OBJ_NULL);
    self->keep = mem == MP_OBJ_NULL ? MP_OBJ_NULL : mem;
    self->reader = r;  // only now: __del__ may run on a half-made object after an exception
    return MP_OBJ_FROM_PTR(self);
}

// Releases the reader (ncnn_datareader_destroy, and fclose for from_stdio), or raises if
// `in_use` and a load reads through it now (ncnn holds its handle: another thread's load,
// or the load a Python reader's own read() runs under). Checked and detached under the
// lock: no use can begin in between.
static void ncnn_mp_datareader_release(ncnn_mp_datareader_obj_t *self, bool refuse_in_use) {
    mp_uint_t l = ncnn_mp_lock();
    if (refuse_in_use && self->users > 0) {
        ncnn_mp_unlock(l);
        ncnn_mp_raise_in_use("DataReader.close");
    }
    ncnn_mp_reader_t *r = self->reader;
    ncnn_datareader_t stdio = self->stdio;
    self->reader = NULL;
    self->stdio = NULL;
    ncnn_mp_unlock(l);
    if (r) {
        ncnn_mp_reader_close(r);
        free(r);
    }
    if (stdio) {
        ncnn_datareader_destroy(stdio);
    }
    if (self->fp) {
        fclose(self->fp);
        self->fp = NULL;
    }
}

// DataReader.close()   ncnn_datareader_destroy (RuntimeError while a load reads through it)
static mp_obj_t ncnn_mp_DataReader_close(mp_obj_t self_in) {
    ncnn_mp_datareader_release(MP_OBJ_TO_PTR(self_in), true);
    return mp_const_none;
}

// __del__: a DataReader in use is reachable from its user's stack; a collection never finalises it.
static mp_obj_t ncnn_mp_DataReader_del(mp_obj_t self_in) {
    ncnn_mp_datareader_release(MP_OBJ_TO_PTR(self_in), false);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_DataReader_del_obj, DataReader, __del__, ncnn_mp_DataReader_del);
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_DataReader_close_obj, DataReader, close, ncnn_mp_DataReader_close);
NCNN_MP_DEFINE_CONTEXT_MANAGER(DataReader);


static const mp_rom_map_elem_t ncnn_mp_DataReader_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_close), MP_ROM_PTR(&ncnn_mp_DataReader_close_obj) },
    { MP_ROM_QSTR(MP_QSTR___del__), MP_ROM_PTR(&ncnn_mp_DataReader_del_obj) },
    { MP_ROM_QSTR(MP_QSTR___enter__), MP_ROM_PTR(&ncnn_mp_DataReader_enter_obj) },
    { MP_ROM_QSTR(MP_QSTR___exit__), MP_ROM_PTR(&ncnn_mp_DataReader_exit_obj) },
};
static MP_DEFINE_CONST_DICT(ncnn_mp_DataReader_locals, ncnn_mp_DataReader_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    ncnn_mp_type_DataReader, MP_QSTR_DataReader, MP_TYPE_FLAG_NONE,
    make_new, ncnn_mp_DataReader_make_new,
    locals_dict, &ncnn_mp_DataReader_locals
    );
