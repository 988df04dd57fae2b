// SPDX-License-Identifier: MIT
// Raising Python exceptions that name the call, and the argument checks every class shares.
#include <stdio.h>
#include <stdlib.h>

#include "ncnn_mp.h"
#include "cxx_seam.h"

#if MICROPY_ROM_TEXT_COMPRESSION && !defined(NO_QSTR)
// The length of the longest message, as objexcept.c finds it (the table itself left out;
// not while the build collects its texts: the header is made from them).
#define MP_MATCH_COMPRESSED(a, b)
#define MP_COMPRESSED_DATA(x)
#include "genhdr/compressed.data.h"
#undef MP_MATCH_COMPRESSED
#undef MP_COMPRESSED_DATA

const char *ncnn_mp_text(mp_rom_error_text_t text, ncnn_mp_text_buf_t *buf) {
    if (MP_IS_COMPRESSED_ROM_STRING(text)) {
        MP_STATIC_ASSERT(sizeof(*buf) >= MP_MAX_UNCOMPRESSED_TEXT_LEN + 1);
        mp_decompress_rom_string((byte *)*buf, text);
        return *buf;
    }
    return (const char *)text;
}
#endif

#if MICROPY_ERROR_REPORTING != MICROPY_ERROR_REPORTING_NONE
NORETURN void ncnn_mp_raise_text(const mp_obj_type_t *type, const char *where, mp_rom_error_text_t what) {
    #if MICROPY_ERROR_REPORTING == MICROPY_ERROR_REPORTING_TERSE
    (void)what;
    mp_raise_msg_varg(type, MP_ERROR_TEXT("%s"), where);
    #else
    ncnn_mp_text_buf_t buf;
    mp_raise_msg_varg(type, MP_ERROR_TEXT("%s: %s"), where, ncnn_mp_text(what, &buf));
    #endif
}
#endif

// ncnn allocates the buffers its pixel helpers and drawing need with `new` (which on the
// desktop throws when it fails, and nothing catches it: the process aborts) or as Mats it
// does not check (then writes through NULL). Asked first: the heap gives that much now, or
// MemoryError. (Given straight back: what ncnn allocates next comes from the same heap.)
void ncnn_mp_check_alloc_bound(unsigned long long bytes, const char *where, const char *what) {
    if (bytes > NCNN_MP_ALLOC_MAX) {
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: %s would take %u MiB, more than ncnn_mp lets ncnn allocate at once (%u MiB)"), where, what, (unsigned)(bytes >> 20), (unsigned)(NCNN_MP_ALLOC_MAX >> 20));
    }
}

void ncnn_mp_check_alloc(unsigned long long bytes, const char *where, const char *what) {
    ncnn_mp_check_alloc_bound(bytes, where, what);
    void *p = malloc((size_t)bytes);
    if (p == NULL) {
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: %s would take %u KiB, more than the heap can give"),
            where, what, (unsigned)(bytes >> 10));
    }
    free(p);
}

NORETURN void ncnn_mp_raise_caught(const char *where, const char *layer, int caught) {
    const char *who = layer != NULL ? layer : "ncnn";
    (void)who;  // (no error reporting: unused)
    if (caught == NCNN_MP_CAUGHT_BAD_ALLOC) {
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: %s ran out of memory (ncnn threw std::bad_alloc)"),
            where, who);
    }
    if (caught == NCNN_MP_CAUGHT_BAD_SIZE) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: %s asked for an array of negative or impossible size (ncnn threw std::bad_array_new_length: parameters or input out of range)"),
            where, who);
    }
    mp_raise_msg_varg(&mp_type_RuntimeError, NCNN_MP_FORMAT("%s: %s failed (ncnn threw a C++ exception)"), where, who);
}

void ncnn_mp_seam(void (*fn)(void *arg), void *arg, const char *where) {
    int caught = ncnn_mp_cxx_catch(fn, arg);
    if (caught != 0) {
        ncnn_mp_raise_caught(where, NULL, caught);
    }
}

void ncnn_mp_print_count(const mp_print_t *print, int lo, int hi) {
    if (hi == -1) {
        mp_printf(print, "%d or more", lo);
    } else if (lo == hi) {
        mp_printf(print, "%d", lo);
    } else {
        mp_printf(print, "%d to %d", lo, hi);
    }
}

#if MICROPY_ERROR_REPORTING > MICROPY_ERROR_REPORTING_TERSE
static void ncnn_mp_print_shape(const mp_print_t *print, const ncnn_mp_blob_shape_t *s) {
    static const char *const names[] = { "w=%d", " h=%d", " d=%d", " c=%d" };
    const int extents[] = { s->w, s->h, s->d, s->c };
    for (int i = 0; i < 4; i++) {
        // dims 1: w; 2: w h; 3: w h c; 4: w h d c
        if (i == 0 || (i == 1 && s->dims >= 2) || (i == 2 && s->dims == 4) || (i == 3 && s->dims >= 3)) {
            mp_printf(print, names[i], extents[i]);
        }
    }
}
#endif

NORETURN void ncnn_mp_raise_shape_refused(const char *where, const char *what, const char *layer,
    const ncnn_mp_shape_refusal_t *r) {
    if (r->rule == NCNN_MP_THREW) {  // (not a misfit: what the layer threw, of its own kind)
        ncnn_mp_raise_caught(where, layer, r->expected);
    }
    #if MICROPY_ERROR_REPORTING <= MICROPY_ERROR_REPORTING_TERSE
    // (Terse or no error reporting: where only; the pieces below are left out of the firmware.)
    (void)what;
    (void)layer;
    (void)r;
    mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s"), where);
    #else
    vstr_t text;
    mp_print_t print;
    vstr_init_print(&text, 96, &print);
    switch (r->rule) {  // (what the layer is given, not its input's shape)
        case NCNN_MP_BOTTOMS:
        case NCNN_MP_TOPS:
            mp_printf(&print, "%s: the blobs do not fit the %s: %s %s ", where, what, layer,
                r->rule == NCNN_MP_BOTTOMS ? "reads" : "writes");
            ncnn_mp_print_count(&print, r->expected, r->axis);
            mp_printf(&print, r->rule == NCNN_MP_BOTTOMS ? " input(s), it was given %d" : " output(s), %d were asked for",
                r->got);
            mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s"), vstr_null_terminated_str(&text));
        case NCNN_MP_INT8_WEIGHTS:
        case NCNN_MP_WEIGHTS_SHORT:
        case NCNN_MP_TABLE:
            mp_printf(&print, "%s: the weights do not fit the %s: %s %s", where, what, layer,
                r->rule == NCNN_MP_INT8_WEIGHTS ? "got int8 weights without int8 scales (its param 8, int8_scale_term, is 0)"
                : r->rule == NCNN_MP_TABLE ? "has a table smaller than num_output * input_dim (params 0, 1 and 3), "
                "or none: an index would read past it"
                : "read weights that ran out (scales or bias missing: the .bin or the ModelBin's Mats end too soon)");
            mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s"), vstr_null_terminated_str(&text));
        default:
            break;
    }
    mp_printf(&print, "%s: the input does not fit the %s: %s", where, what, layer);
    switch (r->rule) {
        case NCNN_MP_MATCH:
        case NCNN_MP_BROADCAST:
            if (r->rule == NCNN_MP_BROADCAST) {
                mp_printf(&print, " takes inputs that broadcast (each extent equal, or 1 in one): input %d is ", r->input);
            } else if (r->axis < 0) {
                mp_printf(&print, " takes inputs of one shape: input %d is ", r->input);
            } else {
                mp_printf(&print, " joins inputs that match outside axis %d: input %d is ", r->axis, r->input);
            }
            ncnn_mp_print_shape(&print, &r->shape);
            mp_printf(&print, ", input 0 is ");
            ncnn_mp_print_shape(&print, &r->first);
            break;
        case NCNN_MP_IMAGE:
            mp_printf(&print, " takes an image (dims 2 or 3), its input has dims %d (", r->got);
            break;
        case NCNN_MP_DIMS:
            mp_printf(&print, r->expected == 2 ? " takes rows (dims 1 or 2), its input has dims %d ("
                : " takes a volume (dims 3 or 4), its input has dims %d (", r->got);
            break;
        case NCNN_MP_KERNEL1D:
            mp_printf(&print, " needs a length of at least %d for its kernel, its input has %d (", r->expected, r->got);
            break;
        case NCNN_MP_WIDTH:
            if (r->expected < 0) {
                mp_printf(&print, " has parameters no input fits (num_output, weight_data_size): input %d is (", r->input);
            } else {
                mp_printf(&print, " takes rows of %d values, input %d has %d (", r->expected, r->input, r->got);
            }
            break;
        case NCNN_MP_NORM:
            mp_printf(&print, " normalises %d values (affine_size) at a time: the input's w, w*h or w*h*d must be that (",
                r->expected);
            break;
        case NCNN_MP_INNER:
            mp_printf(&print, " multiplies over %d values (K), input %d has %d there (", r->expected, r->input, r->got);
            break;
        case NCNN_MP_HEADS:
            mp_printf(&print, " takes key heads that divide the query's %d, input %d has %d (", r->expected, r->input, r->got);
            break;
        case NCNN_MP_MATCH_KV:
            mp_printf(&print, " takes a value with at least the key's %d rows and heads, input %d has %d rows (",
                r->expected, r->input, r->got);
            break;
        case NCNN_MP_GRID:
            mp_printf(&print, " samples an input of dims %d through a grid of the same dims with %d components a point "
                "(its w, and at least as many channels; or its channels, with permute_fusion): input %d is (", r->got,
                r->expected, r->input);
            break;
        case NCNN_MP_DYNAMIC:
            if (r->expected == 0) {
                mp_printf(&print, " takes its weights as input %d, which cannot be int8 (param 8 is set): input %d is (",
                    r->input, r->input);
            } else {
                mp_printf(&print, " takes weights (input %d) of kernel x outputs x %d input channel(s) / %d group(s): "
                    "input %d is (", r->input, r->got, r->expected, r->input);
            }
            break;
        case NCNN_MP_DETECTION:
            mp_printf(&print, r->expected ? " has a negative nms_top_k or keep_top_k (params 2, 3): input %d is ("
                : " takes a priorbox (input %d) of 4 values a prior and a row of variances (", r->input);
            break;
        case NCNN_MP_STATE:
            mp_printf(&print, " takes a state (input %d) of %d row(s) of %d values: it is (", r->input, r->got, r->expected);
            break;
        case NCNN_MP_GROUPS:
            mp_printf(&print, " shuffles %d groups of channels: its input's channels must be a multiple (%d; ", r->expected,
                r->got);
            break;
        case NCNN_MP_COPYTO:
            mp_printf(&print, r->expected ? " copies input %d into input 0 at its offsets: it must lie inside (" :
                " has fewer starts (param 9) than axes (param 11), or more than 4 axes: input %d is (", r->input);
            break;
        case NCNN_MP_SLICES:
            if (r->axis == -1) {
                mp_printf(&print, " cuts along an axis its input does not have (axis %d: ", r->got);
            } else if (r->axis == -2) {
                mp_printf(&print, " has fewer pieces than the %d outputs asked for (", r->got);
            } else if (r->axis == -3) {
                mp_printf(&print, " cuts %d pieces: ncnn_mp checks up to 16 (", r->got);
            } else {
                mp_printf(&print, " cuts a piece from %d to %d along its axis, where its input has %d: each piece must "
                    "lie inside it, 1 or more long (", r->axis, r->expected, r->got);
            }
            break;
        case NCNN_MP_SCALE:
            if (r->got == 0 && r->expected == 0) {
                mp_printf(&print, " takes its scales as an input (0=-233), so it has no bias, yet asks for one (1=1): (");
            } else {
                mp_printf(&print, " takes %d scales, input %d has %d (", r->expected, r->input, r->got);
            }
            break;
        case NCNN_MP_KERNEL:
            mp_printf(&print, " has a %dx%d kernel, larger than its padded input (", r->expected, r->got);
            break;
        case NCNN_MP_PADDING:
        case NCNN_MP_REFLECT: {
            static const char *const axes[] = { "w", "h", "d", "c" };
            const char *axis = axes[r->axis >= 0 && r->axis < 4 ? r->axis : 0];
            if (r->rule == NCNN_MP_PADDING) {
                mp_printf(&print, " pads %s by %d before and %d after: a negative pad (or one past 2^30) would make ncnn "
                    "write past its output (", axis, r->expected, r->got);
            } else {
                mp_printf(&print, " reflects a border of %d along %s, where its input has %d: it must have more (",
                    r->input, axis, r->got);
            }
            break;
        }
        case NCNN_MP_ROWS:
            mp_printf(&print, " takes %d rows in input %d, which has %d (", r->expected, r->input, r->got);
            break;
        case NCNN_MP_RESHAPE:
            mp_printf(&print, " reshapes to ");
            ncnn_mp_print_shape(&print, &r->first);
            mp_printf(&print, r->axis == 1 ? " through a division by zero (a -1 resolved to 0): (" :
                " (params 0, 1, 11, 2 resolved): each extent 1 or more, %d values in all as its input has (", r->expected);
            break;
        case NCNN_MP_ARRAY: {  // (shape_rules.cpp's table of parameter arrays names it)
            const ncnn_mp_param_array_t *a = ncnn_mp_param_array(r->axis);
            mp_printf(&print, " has %d of its %s, %s: its input needs %d (input %d: ", r->expected,
                a != NULL ? a->array : "parameters", a != NULL ? a->covers : "", r->got, r->input);
            break;
        }
        case NCNN_MP_REGION: {  // (input: the input's extent along the axis)
            static const char *const axes[] = { "w", "h", "d", "c" };
            mp_printf(&print, " crops %s from %d for %d, where its input has %d: the region must lie inside it, 1 or more long (",
                axes[r->axis >= 0 && r->axis < 4 ? r->axis : 0], r->expected, r->got, r->input);
            break;
        }
        case NCNN_MP_EXPRESSION:
            if (r->expected == 1) {
                mp_printf(&print, " reads its region (woffset -233) from input 1, which must be a vector of 4 to 8 int32 by dims: it is (");
            } else if (r->expected == 9 && r->got == 0) {
                mp_printf(&print, " has fewer starts or ends (params 9, 10) than the axes it crops (");
            } else {
                mp_printf(&print, " has an expression (param %d) that does not give a list ncnn reads safely "
                    "(malformed, short, overflowing, a blob it lacks) (", r->expected);
            }
            break;
        case NCNN_MP_EINSUM:
            if (r->axis > 0) {
                mp_printf(&print, " takes letter %c of one size in all inputs: %d before, input %d has %d (",
                    'i' + r->axis - 1, r->expected, r->input, r->got);
            } else if (r->expected == -2) {
                mp_printf(&print, " takes a square matrix for its trace (ii): (");
            } else if (r->expected == -1) {
                mp_printf(&print, " has more than 16 terms (");
            } else {
                mp_printf(&print, " takes input %d of as many dims as its term has letters (%d), it has %d (",
                    r->input, r->expected, r->got);
            }
            break;
        case NCNN_MP_FOLD:
            if (r->axis < 0) {
                mp_printf(&print, " folds into %dx%d once padded (params 20 and 21 and its pads): its dilated kernel must "
                    "fit that, its kernel, stride and dilation be 1 or more, its output under 2^28 values (",
                    r->expected, r->got);
            } else {
                mp_printf(&print, " folds into %dx%d once padded: input 0 needs rows of %d values, and a row for each "
                    "kernel position (", r->expected, r->got, r->axis);
            }
            break;
        case NCNN_MP_PADDED_SIZE:
            mp_printf(&print, " pads its input into %d values or more by its pads, stride and pad_mode: it must come "
                "to fewer than 2^28 (", r->expected);
            break;
        case NCNN_MP_SPECTRUM:  // (-1: past 2^31)
            mp_printf(&print, " computes %d output values from %d frames: they must come to 1 or more and fewer "
                "than 2^28 (", r->expected, r->got);
            break;
        case NCNN_MP_OUTPUT_SIZE:  // (-1 also for a size not a number, or past 2^31)
            mp_printf(&print, " resizes to w=%d h=%d by its output size or scales (params 1 to 4): each must come to 1 or "
                "more, the output to fewer than 2^28 values (", r->expected, r->got);
            break;
        default:
            mp_printf(&print, r->rule == NCNN_MP_CHANNELS ? " takes %d input channel(s), its input has %d (" :
                " takes %d values, its input has %d (", r->expected, r->got);
            break;
    }
    if (r->rule != NCNN_MP_MATCH && r->rule != NCNN_MP_BROADCAST) {
        ncnn_mp_print_shape(&print, &r->shape);
        mp_printf(&print, ")");
    }
    mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s"), vstr_null_terminated_str(&text));
    #endif
}

NORETURN void ncnn_mp_raise_not_built(const char *where, mp_rom_error_text_t option) {
    ncnn_mp_text_buf_t buf;
    mp_raise_msg_varg(&mp_type_NotImplementedError, NCNN_MP_FORMAT("%s: needs ncnn built with %s"), where,
        ncnn_mp_text(option, &buf));
}

NORETURN void ncnn_mp_raise_left_out(const char *where, const char *name) {
    mp_raise_msg_varg(&mp_type_NotImplementedError, NCNN_MP_FORMAT("%s: this firmware was built without %s (ncnn_mp/binding/config.h)"),
        where, name);
}

int ncnn_mp_get_int_in(mp_obj_t obj, int lo, int hi, const char *where, const char *name) {
    if (!mp_obj_is_int(obj)) {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: %s must be an int, not %s"),
            where, name, mp_obj_get_type_str(obj));
    }
    mp_int_t v = 0;
    bool fits = true;
    if (mp_obj_is_small_int(obj)) {
        v = MP_OBJ_SMALL_INT_VALUE(obj);
    } else {
        // A big int may not fit mp_int_t: report it as out of range, not as an overflow.
        nlr_buf_t nlr;
        if (nlr_push(&nlr) == 0) {
            v = mp_obj_get_int(obj);
            nlr_pop();
        } else {
            fits = false;
        }
    }
    if (!fits || v < lo || v > hi) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: %s out of range (expected %d..%d)"),
            where, name, lo, hi);
    }
    return (int)v;
}

int ncnn_mp_get_index(mp_obj_t obj, int count, bool wrap, const char *where, const char *name, const char *of) {
    if (!mp_obj_is_int(obj)) {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: %s must be an int, not %s"),
            where, name, mp_obj_get_type_str(obj));
    }
    mp_int_t i = mp_obj_is_small_int(obj) ? MP_OBJ_SMALL_INT_VALUE(obj) : 0;
    if (!mp_obj_is_small_int(obj) || i < INT32_MIN || i > INT32_MAX) {  // (and too big for mp_obj_get_int)
        mp_raise_msg_varg(&mp_type_IndexError, NCNN_MP_FORMAT("%s: %s out of range (%s %d)"), where, name, of, count);
    }
    mp_int_t k = wrap && i < 0 ? i + count : i;
    if (k < 0 || k >= count) {
        mp_raise_msg_varg(&mp_type_IndexError, NCNN_MP_FORMAT("%s: %s %d out of range (%s %d)"),
            where, name, (int)i, of, count);
    }
    return (int)k;
}

void *ncnn_mp_cast(mp_obj_t obj, const mp_obj_type_t *type, const char *where) {
    // A Python subclass instance keeps the native object in subobj[0]; before its
    // __init__ has called super().__init__() that slot holds a placeholder.
    mp_obj_t native = mp_obj_cast_to_native_base(obj, MP_OBJ_FROM_PTR(type));
    if (native == MP_OBJ_NULL || !mp_obj_is_type(native, type)) {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: expected %q, not %s"),
            where, (qstr)type->name, mp_obj_get_type_str(obj));
    }
    return MP_OBJ_TO_PTR(native);
}

float ncnn_mp_get_float(mp_obj_t obj, const char *where, const char *name) {
    if (!mp_obj_is_int(obj) && !mp_obj_is_float(obj)) {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: %s must be a float, not %s"),
            where, name, mp_obj_get_type_str(obj));
    }
    return mp_obj_get_float_to_f(obj);
}

void ncnn_mp_get_buffer(mp_obj_t obj, mp_buffer_info_t *info, mp_uint_t flags, const char *where, const char *name) {
    if (!mp_get_buffer(obj, info, flags)) {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: %s must be a %sbuffer (bytearray, array, memoryview%s), not %s"),
            where, name, (flags & MP_BUFFER_WRITE) ? "writable " : "", (flags & MP_BUFFER_WRITE) ? "" : ", bytes",
            mp_obj_get_type_str(obj));
    }
}

uint8_t *ncnn_mp_get_pixels(mp_obj_t buf, int w, int h, int bpp, unsigned long long rows, int *stride, bool writable,
    const char *where) {
    mp_buffer_info_t info;
    ncnn_mp_get_buffer(buf, &info, writable ? MP_BUFFER_RW : MP_BUFFER_READ, where, "pixels");
    unsigned long long row = (unsigned long long)w * bpp;
    if (*stride == 0) {
        *stride = row < INT32_MAX ? (int)row : INT32_MAX;
    }
    if ((unsigned long long)*stride < row) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("stride is shorter than a row of pixels"));
    }
    unsigned long long need = (unsigned long long)*stride * (rows - 1) + row;
    if (info.len < need) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: pixels holds %u bytes, %dx%d pixels need %u"),
            where, (unsigned)info.len, w, h, (unsigned)(need > 0xffffffffu ? 0xffffffffu : need));
    }
    return info.buf;
}

// MicroPython 1.25 decompresses an error message into a stack buffer exactly as long as
// the firmware's longest message, then writes the terminating NUL one byte past it
// (py/objexcept.c, mp_obj_new_exception_msg_vlist; found by AddressSanitizer). Never raised,
// this one is longer than any real message, so each of those leaves room for the NUL. (Called
// by nothing: the build's message table is sized from the text.)
// It is also no longer than it must be: with the heap locked (an interrupt handler) a
// compressed message is decompressed into the emergency exception buffer only if the longest
// one fits there (decompress_error_text_maybe), else every message, MicroPython's own too,
// comes out empty. Of the 256 bytes MicroPython's tests give that buffer, 152 are left for the
// text on a 64-bit port (204 on a 32-bit one): so this is 150 characters, and every real message
// at most 149 (tests/test_errors.py; MicroPython's micropython/heapalloc_exc_compressed_emg_exc.py
// in tests/test_micropython_suite.py).
mp_rom_error_text_t ncnn_mp_longest_message(void) {
    // One literal: MicroPython's message collector does not join adjacent string literals.
    return MP_ERROR_TEXT("ncnn_mp: never raised, the longest message: MicroPython 1.25 writes a NUL one byte past a buffer sized for the longest text (py/objexcept.c; checks.c)");
}

NORETURN void ncnn_mp_raise_attr_fixed(const char *cls, qstr attr, mp_obj_t *dest) {
    mp_raise_msg_varg(&mp_type_AttributeError, MP_ERROR_TEXT("%s.%q: %s"), cls, attr,
        dest[1] == MP_OBJ_NULL ? "cannot be deleted" : "read-only");
}

const char *ncnn_mp_attr_where(char *buf, const char *cls, qstr attr) {
    snprintf(buf, NCNN_MP_WHERE_LEN, "%s.%s", cls, qstr_str(attr));
    return buf;
}

// ---------------------------------------------------------------------------
// Built-in layers that ncnn's Mat helpers run internally.

// ncnn's generated list of `Name = index,` lines (C++ wraps it in namespace LayerType).
enum ncnn_mp_layer_type_index {
    #include "ncnn/layer_type_enum.h"
};

static const struct {
    int typeindex;
    const char *name;
} ncnn_mp_helper_layers[NCNN_MP_HELPER_COUNT] = {
    [NCNN_MP_HELPER_BIAS] = { Bias, "Bias" },
    [NCNN_MP_HELPER_SCALE] = { Scale, "Scale" },
    [NCNN_MP_HELPER_PADDING] = { Padding, "Padding" },
    [NCNN_MP_HELPER_CROP] = { Crop, "Crop" },
    [NCNN_MP_HELPER_PACKING] = { Packing, "Packing" },
    [NCNN_MP_HELPER_FLATTEN] = { Flatten, "Flatten" },
};

void ncnn_mp_require_layer(ncnn_mp_helper_layer_t layer, const char *where) {
    // A build's layer set never changes: ask ncnn once per layer (0 unknown, 1 yes, -1 no).
    static int8_t built[NCNN_MP_HELPER_COUNT];
    if (built[layer] == 0) {
        ncnn_layer_t probe = ncnn_layer_create_by_typeindex(ncnn_mp_helper_layers[layer].typeindex);
        built[layer] = probe ? 1 : -1;
        if (probe) {
            ncnn_layer_destroy(probe);
        }
    }
    if (built[layer] < 0) {
        mp_raise_msg_varg(&mp_type_NotImplementedError,
            NCNN_MP_FORMAT("%s: needs ncnn built with its %s layer (this build left it out)"),
            where, ncnn_mp_helper_layers[layer].name);
    }
}

// A blob the net does not have: IndexError for an index (whatever its sign), ValueError for a name.
NORETURN void ncnn_mp_raise_blob_missing(mp_obj_t key, const char *where) {
    if (mp_obj_is_int(key)) {
        mp_raise_msg_varg(&mp_type_IndexError, NCNN_MP_FORMAT("%s: the net has no blob %d"), where,
            mp_obj_is_small_int(key) ? (int)MP_OBJ_SMALL_INT_VALUE(key) : -1);
    }
    mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: the net has no blob named '%s'"), where, mp_obj_str_get_str(key));
}

// A blob key: its index for an int, -1 for a name (str); anything else is a TypeError.
int ncnn_mp_blob_key(mp_obj_t key, const char *where) {
    if (mp_obj_is_int(key)) {
        // One exception for every index the net does not have, -1 as 99 (see ncnn_mp_blob_missing).
        if (!mp_obj_is_small_int(key) || MP_OBJ_SMALL_INT_VALUE(key) < 0 || MP_OBJ_SMALL_INT_VALUE(key) > INT32_MAX) {
            ncnn_mp_raise_blob_missing(key, where);
        }
        return (int)MP_OBJ_SMALL_INT_VALUE(key);
    }
    if (!mp_obj_is_str(key)) {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: blob must be a name (str) or an index (int), not %s"),
            where, mp_obj_get_type_str(key));
    }
    #if !NCNN_STRING
    ncnn_mp_raise_not_built(where, NCNN_MP_TEXT("NCNN_STRING (use blob indexes)"));
    #endif
    return -1;
}
