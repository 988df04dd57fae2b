// DataReader: where ncnn reads params and weights from (ncnn_datareader_*).
//
// ncnn's own memory reader (ncnn_datareader_create_from_memory, and the
// ncnn_net_load_*_memory functions built on it) has no length: a truncated buffer
// makes ncnn read past its end. ncnn_mp therefore reads Python buffers through a
// bounded reader of its own, made with ncnn_datareader_create() and our read/scan
// callbacks, which also serves DataReader(zeros=True) for weightless networks.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncnn_mp.h"
#include "net_cxx.h"

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

// The reader lending ncnn the bytes in place (net_cxx.cpp).
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
// scanf over the bytes left, as ncnn's own readers do; the text is copied once
// with a terminating NUL because a Python buffer need not have one.
static int ncnn_mp_reader_scan_locked(ncnn_datareader_t dr, const char *format, void *p) {
    ncnn_mp_reader_t *r = ncnn_mp_reader_of(dr);
    if (r == NULL || r->zeros || r->offset >= r->len) {
        return 0;
    }
    if (r->text == NULL || r->text_start + r->text_len != r->len) {
        free(r->text);
        r->text_start = r->offset;
        r->text_len = r->len - r->offset;
        r->text = malloc(r->text_len + 1);
        if (r->text == NULL) {
            return 0;
        }
        memcpy(r->text, r->base + r->offset, r->text_len);
        r->text[r->text_len] = 0;
    }
    size_t fmtlen = strlen(format);
    char *fmt = malloc(fmtlen + 3);
    if (fmt == NULL || r->offset < r->text_start) {
        free(fmt);
        return 0;
    }
    memcpy(fmt, format, fmtlen);
    memcpy(fmt + fmtlen, "%n", 3);
    int consumed = 0;
    int n = sscanf(r->text + (r->offset - r->text_start), fmt, p, &consumed);
    free(fmt);
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
}

// ---------------------------------------------------------------------------
// The Python class.

ncnn_mp_datareader_obj_t *ncnn_mp_get_datareader(mp_obj_t obj, const char *where) {
    ncnn_mp_datareader_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_DataReader, where);
    if (self->reader == NULL && self->stdio == NULL) {
        ncnn_mp_raise_value(where, "the DataReader was closed");
    }
    if (self->reader && !self->reader->zeros) {
        // Re-read where the buffer is now: a bytearray may have been resized since.
        mp_buffer_info_t info;
        mp_get_buffer_raise(self->keep, &info, MP_BUFFER_READ);
        if (self->reader->offset > info.len) {
            ncnn_mp_raise_value(where, "the buffer under this DataReader shrank below what was read");
        }
        self->reader->base = info.buf;
        self->reader->len = info.len;
    }
    return self;
}

ncnn_datareader_t ncnn_mp_get_datareader_handle(mp_obj_t obj, const char *where) {
    ncnn_mp_datareader_obj_t *self = ncnn_mp_get_datareader(obj, where);
    return self->reader ? self->reader->handle : self->stdio;
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
    if (sources != 1) {
        ncnn_mp_raise_type(where, "give exactly one of from_memory=, from_stdio= or zeros=True");
    }
    ncnn_mp_datareader_obj_t *self = mp_obj_malloc_with_finaliser(ncnn_mp_datareader_obj_t, type);
    self->reader = NULL;
    self->stdio = NULL;
    self->fp = NULL;
    self->keep = MP_OBJ_NULL;
    mp_obj_t mem = args[ARG_from_memory].u_obj;
    mp_obj_t src = args[ARG_from_stdio].u_obj;
    const char *mem_name = "from_memory";
    if (src != MP_OBJ_NULL && !mp_obj_is_str(src)) {
        // An open file: read it whole, then serve it from memory.
        mp_obj_t read[2];
        mp_load_method_maybe(src, MP_QSTR_read, read);
        if (read[0] == MP_OBJ_NULL) {
            mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%s: from_stdio must be a path (str) or an open file, not %s"),
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
            mp_raise_msg_varg(&mp_type_OSError, MP_ERROR_TEXT("%s: cannot open '%s'"), where, path);
        }
        self->stdio = ncnn_datareader_create_from_stdio(self->fp);
        return MP_OBJ_FROM_PTR(self);
        #else
        mp_raise_msg_varg(&mp_type_NotImplementedError, MP_ERROR_TEXT("%s: from_stdio needs ncnn built with NCNN_STDIO=ON"), where);
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
        mp_raise_msg_varg(&mp_type_MemoryError, MP_ERROR_TEXT("%s: out of memory"), where);
    }
    ncnn_mp_reader_open(r, info.buf, info.len, mem == MP_OBJ_NULL);
    self->keep = mem == MP_OBJ_NULL ? MP_OBJ_NULL : mem;
    self->reader = r;  // only now: __del__ may run on a half-made object after an exception
    return MP_OBJ_FROM_PTR(self);
}

// DataReader.close() / __del__   ncnn_datareader_destroy (and fclose for from_stdio)
static mp_obj_t ncnn_mp_DataReader_close(mp_obj_t self_in) {
    ncnn_mp_datareader_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (self->reader) {
        ncnn_mp_reader_close(self->reader);
        free(self->reader);
        self->reader = NULL;
    }
    if (self->stdio) {
        ncnn_datareader_destroy(self->stdio);
        self->stdio = NULL;
    }
    if (self->fp) {
        fclose(self->fp);
        self->fp = NULL;
    }
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_DataReader_close_obj, DataReader, close, ncnn_mp_DataReader_close);
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_DataReader_del_obj, DataReader, __del__, ncnn_mp_DataReader_close);
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
