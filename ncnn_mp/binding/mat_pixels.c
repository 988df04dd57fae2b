// SPDX-License-Identifier: MIT
// Mat's image side: pixels to and from Mats, and drawing on pixel buffers
// (ncnn_mat_from_pixels*, ncnn_mat_to_pixels*, ncnn_draw_*). Built where ncnn has NCNN_PIXEL and the board keeps them
// (config.h); from_pixels, from_pixels_resize and to_pixels also where only camera frames are
// kept (mat_camera.c converts then), defined once at the end of this file for both.
#include "ncnn_mp.h"
#include "cxx_seam.h"

#if NCNN_MP_HAS_PIXELS

// Channels of ncnn's pixel formats (NCNN_MAT_PIXEL_RGB = 1 .. BGRA = 5).
static int ncnn_mp_pixel_channels(int format) {
    static const int channels[] = { 0, 3, 3, 1, 4, 4 };
    return format >= 1 && format <= 5 ? channels[format] : 0;
}

// Conversions ncnn's from_pixels / to_pixels implement (mat_pixel.cpp), as "from, to" pairs.
static const uint8_t ncnn_mp_from_conversions[][2] = {
    {1, 2}, {2, 1}, {1, 3}, {1, 4}, {2, 5}, {2, 3}, {2, 4}, {1, 5}, {3, 1}, {3, 2}, {3, 4}, {3, 5},
    {4, 1}, {5, 2}, {4, 2}, {5, 1}, {4, 3}, {4, 5}, {5, 4}, {5, 3},
};
static const uint8_t ncnn_mp_to_conversions[][2] = {
    {1, 2}, {2, 1}, {1, 4}, {2, 5}, {2, 4}, {1, 5}, {3, 4}, {3, 5}, {4, 5}, {5, 4},
};

// Checks a pixel type (a format, or format | target << 16) against the conversions ncnn
// has; returns the source format's channels, and through *out_channels the target's.
static int ncnn_mp_pixel_type(mp_obj_t type_in, bool to, int *out_channels, const char *where) {
    int type = ncnn_mp_get_int_in(type_in, 1, INT32_MAX, where, "type");
    int from = type & 0xffff, target = type >> 16;
    int cin = ncnn_mp_pixel_channels(from);
    bool ok = cin > 0 && (target == 0 || ncnn_mp_pixel_channels(target) > 0);
    if (ok && target) {
        ok = false;
        size_t n = to ? MP_ARRAY_SIZE(ncnn_mp_to_conversions) : MP_ARRAY_SIZE(ncnn_mp_from_conversions);
        for (size_t i = 0; i < n; i++) {
            const uint8_t *c = to ? ncnn_mp_to_conversions[i] : ncnn_mp_from_conversions[i];
            ok |= c[0] == from && c[1] == target;
        }
    }
    if (!ok) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: no pixel conversion 0x%x (use the Mat.PIXEL_* constants)"),
            where, type);
    }
    *out_channels = target ? ncnn_mp_pixel_channels(target) : cin;
    return cin;
}

#define NCNN_MP_MAX_FONT 1024

// Mat.from_pixels(pixels, type, w, h, stride=0, allocator=None)
// Mat.from_pixels_resize(pixels, type, w, h, target_w, target_h, stride=0, allocator=None)
// Mat.from_pixels_roi(pixels, type, w, h, roix, roiy, roiw, roih, stride=0, allocator=None)
// Mat.from_pixels_roi_resize(pixels, type, w, h, roix, roiy, roiw, roih, target_w, target_h, stride=0, allocator=None)
//   -> Mat (classmethods)   ncnn_mat_from_pixels / _resize / _roi / _roi_resize
typedef enum { NCNN_MP_PLAIN, NCNN_MP_RESIZE, NCNN_MP_ROI, NCNN_MP_ROI_RESIZE } ncnn_mp_from_kind_t;

typedef struct {
    ncnn_mp_from_kind_t kind;
    const uint8_t *px;
    int type, w, h, stride, tw, th, roi[4];
    ncnn_allocator_t a;
    ncnn_mat_t m;  // the result
} ncnn_mp_from_call_t;

static void ncnn_mp_from_pixels_call(void *arg) {
    ncnn_mp_from_call_t *c = arg;
    const int *roi = c->roi;
    switch (c->kind) {
        case NCNN_MP_PLAIN: c->m = ncnn_mat_from_pixels(c->px, c->type, c->w, c->h, c->stride, c->a); break;
        case NCNN_MP_RESIZE: c->m = ncnn_mat_from_pixels_resize(c->px, c->type, c->w, c->h, c->stride, c->tw, c->th, c->a); break;
        case NCNN_MP_ROI:
            c->m = ncnn_mat_from_pixels_roi(c->px, c->type, c->w, c->h, c->stride, roi[0], roi[1], roi[2], roi[3], c->a);
            break;
        default:
            c->m = ncnn_mat_from_pixels_roi_resize(c->px, c->type, c->w, c->h, c->stride, roi[0], roi[1], roi[2], roi[3],
                c->tw, c->th, c->a);
            break;
    }
}

static mp_obj_t ncnn_mp_mat_from_pixels(size_t n_args, const mp_obj_t *args, ncnn_mp_from_kind_t kind, const char *where) {
    // args[0] is the class; then pixels, type, w, h, [roi x4], [target w, h], [stride], [allocator]
    // (how many: checked by the method object)
    int out_channels;
    int cin = ncnn_mp_pixel_type(args[2], false, &out_channels, where);
    int w = ncnn_mp_get_int_in(args[3], 1, NCNN_MP_PIXELS_MAX_SIDE, where, "w");
    int h = ncnn_mp_get_int_in(args[4], 1, NCNN_MP_PIXELS_MAX_SIDE, where, "h");
    size_t k = 5;
    int roi[4] = { 0, 0, w, h };
    if (kind >= NCNN_MP_ROI) {
        static const char *const names[] = { "roix", "roiy", "roiw", "roih" };
        for (int i = 0; i < 4; i++) {
            roi[i] = ncnn_mp_get_int_in(args[k++], i < 2 ? 0 : 1, NCNN_MP_PIXELS_MAX_SIDE, where, names[i]);
        }
        if (roi[0] + roi[2] > w || roi[1] + roi[3] > h) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("the region of interest reaches outside the image"));
        }
    }
    int tw = 0, th = 0;
    if (kind == NCNN_MP_RESIZE || kind == NCNN_MP_ROI_RESIZE) {
        tw = ncnn_mp_get_int_in(args[k++], 1, NCNN_MP_PIXELS_MAX_SIDE, where, "target_w");
        th = ncnn_mp_get_int_in(args[k++], 1, NCNN_MP_PIXELS_MAX_SIDE, where, "target_h");
    }
    int stride = k < n_args ? ncnn_mp_get_int_in(args[k++], 0, INT32_MAX, where, "stride") : 0;
    ncnn_mp_result_t r;  // converted: it shares nothing with the pixels
    ncnn_mp_result_from_allocator(&r, k < n_args ? args[k] : mp_const_none, MP_OBJ_NULL, where);
    const uint8_t *px = ncnn_mp_get_pixels(args[1], w, h, cin, h, &stride, false, where);
    // The Mat, and a resize's temporary of the target's pixels (ncnn does not check that one).
    int out_w = tw ? tw : roi[2], out_h = th ? th : roi[3];
    unsigned long long pixels = (unsigned long long)out_w * out_h * out_channels;
    ncnn_mp_check_alloc(pixels * 4 + (tw ? pixels : 0), where, "the Mat");
    ncnn_mp_from_call_t call = { kind, px, mp_obj_get_int(args[2]), w, h, stride, tw, th,
        { roi[0], roi[1], roi[2], roi[3] }, r.allocator ? r.allocator->handle : NULL, NULL };
    ncnn_mp_seam(ncnn_mp_from_pixels_call, &call, where);
    ncnn_mat_t m = call.m;
    if (m && ncnn_mat_get_dims(m) == 0) {
        ncnn_mat_destroy(m);
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: ncnn could not make the Mat"), where);
    }
    return ncnn_mp_result_wrap(&r, m, where);
}

static mp_obj_t ncnn_mp_Mat_from_pixels_roi(size_t n_args, const mp_obj_t *args) {
    return ncnn_mp_mat_from_pixels(n_args, args, NCNN_MP_ROI, "Mat.from_pixels_roi");
}
static NCNN_MP_DEFINE_CLASSMETHOD_VAR_BETWEEN(ncnn_mp_Mat_from_pixels_roi_fun_obj, Mat, from_pixels_roi, 9, 11, ncnn_mp_Mat_from_pixels_roi);
MP_DEFINE_CONST_CLASSMETHOD_OBJ(ncnn_mp_Mat_from_pixels_roi_obj, MP_ROM_PTR(&ncnn_mp_Mat_from_pixels_roi_fun_obj));

static mp_obj_t ncnn_mp_Mat_from_pixels_roi_resize(size_t n_args, const mp_obj_t *args) {
    return ncnn_mp_mat_from_pixels(n_args, args, NCNN_MP_ROI_RESIZE, "Mat.from_pixels_roi_resize");
}
static NCNN_MP_DEFINE_CLASSMETHOD_VAR_BETWEEN(ncnn_mp_Mat_from_pixels_roi_resize_fun_obj, Mat, from_pixels_roi_resize, 11, 13, ncnn_mp_Mat_from_pixels_roi_resize);
MP_DEFINE_CONST_CLASSMETHOD_OBJ(ncnn_mp_Mat_from_pixels_roi_resize_obj, MP_ROM_PTR(&ncnn_mp_Mat_from_pixels_roi_resize_fun_obj));

// Mat.to_pixels(type, pixels=None, stride=0) -> bytearray
// Mat.to_pixels_resize(type, target_w, target_h, pixels=None, stride=0) -> bytearray
//   ncnn_mat_to_pixels / _resize; into `pixels` when given (and returned), else a new bytearray.
typedef struct {
    ncnn_mat_t m;
    uint8_t *px;
    int type;
    bool resize;
    int w, h, stride;
} ncnn_mp_to_call_t;

static void ncnn_mp_to_pixels_call(void *arg) {
    ncnn_mp_to_call_t *c = arg;
    if (c->resize) {
        ncnn_mat_to_pixels_resize(c->m, c->px, c->type, c->w, c->h, c->stride);
    } else {
        ncnn_mat_to_pixels(c->m, c->px, c->type, c->stride);
    }
}

static mp_obj_t ncnn_mp_mat_to_pixels(size_t n_args, const mp_obj_t *args, bool resize, const char *where) {
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat(args[0], where);
    ncnn_mat_t m = self->handle;
    int out_channels;
    int cin = ncnn_mp_pixel_type(args[1], true, &out_channels, where);
    // ncnn reads one Mat channel per source channel: a mismatch would read past the Mat.
    int dims = ncnn_mat_get_dims(m);
    if ((dims != 3 && !(dims == 2 && cin == 1)) || ncnn_mat_get_c(m) != cin || ncnn_mat_get_elemsize(m) != 4
        || ncnn_mat_get_elempack(m) != 1) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: needs a float32 Mat with %d channel(s) for that type"),
            where, cin);
    }
    size_t k = 2;
    int w = ncnn_mat_get_w(m), h = ncnn_mat_get_h(m);
    if (resize) {
        w = ncnn_mp_get_int_in(args[k++], 1, NCNN_MP_PIXELS_MAX_SIDE, where, "target_w");
        h = ncnn_mp_get_int_in(args[k++], 1, NCNN_MP_PIXELS_MAX_SIDE, where, "target_h");
    }
    mp_obj_t out = k < n_args && args[k] != mp_const_none ? args[k] : MP_OBJ_NULL;
    k++;
    int stride = k < n_args ? ncnn_mp_get_int_in(args[k], 0, INT32_MAX, where, "stride") : 0;
    if (out == MP_OBJ_NULL) {
        size_t size = (size_t)(stride ? stride : w * out_channels) * h;
        out = mp_obj_new_bytearray_by_ref(size, m_new0(uint8_t, size));
    }
    uint8_t *px = (uint8_t *)ncnn_mp_get_pixels(out, w, h, out_channels, h, &stride, true, where);
    int type = mp_obj_get_int(args[1]);
    if (resize) {  // (ncnn's temporary: the Mat's pixels at their own size)
        ncnn_mp_check_alloc((unsigned long long)ncnn_mat_get_w(m) * ncnn_mat_get_h(m) * cin, where, "the pixels");
    }
    ncnn_mp_to_call_t call = { m, px, type, resize, w, h, stride };
    ncnn_mp_seam(ncnn_mp_to_pixels_call, &call, where);
    return out;
}

// ncnn's pixel code as a converter for the three functions at the end of this file.
static mp_obj_t ncnn_mp_ncnn_from_pixels(size_t n_args, const mp_obj_t *args, bool resize, const char *where) {
    return ncnn_mp_mat_from_pixels(n_args, args, resize ? NCNN_MP_RESIZE : NCNN_MP_PLAIN, where);
}
static mp_obj_t ncnn_mp_ncnn_to_pixels(size_t n_args, const mp_obj_t *args, const char *where) {
    return ncnn_mp_mat_to_pixels(n_args, args, false, where);
}

static mp_obj_t ncnn_mp_Mat_to_pixels_resize(size_t n_args, const mp_obj_t *args) {
    return ncnn_mp_mat_to_pixels(n_args, args, true, "Mat.to_pixels_resize");
}
NCNN_MP_DEFINE_METHOD_VAR_BETWEEN(ncnn_mp_Mat_to_pixels_resize_obj, Mat, to_pixels_resize, 4, 6, ncnn_mp_Mat_to_pixels_resize);

#if NCNN_MP_HAS_DRAWING

// Drawing on a pixel buffer of w x h pixels with `channels` (1..4) bytes each.
// Mat.draw_rectangle(pixels, w, h, channels, rx, ry, rw, rh, color, thickness)   ncnn_draw_rectangle_c1..c4
// Mat.draw_circle(pixels, w, h, channels, cx, cy, radius, color, thickness)       ncnn_draw_circle_c1..c4
// Mat.draw_line(pixels, w, h, channels, x0, y0, x1, y1, color, thickness)         ncnn_draw_line_c1..c4
// Mat.draw_text(pixels, w, h, channels, text, x, y, fontpixelsize, color)         ncnn_draw_text_c1..c4
// ncnn clips every shape to the image, so only the buffer's size needs checking.
typedef enum { NCNN_MP_RECT, NCNN_MP_CIRCLE, NCNN_MP_LINE, NCNN_MP_TEXT } ncnn_mp_shape_t;

typedef struct {
    ncnn_mp_shape_t shape;
    int channels;
    unsigned char *px;
    int w, h, v[5];
    unsigned int color;
    int thickness;
    const char *text;
} ncnn_mp_draw_call_t;

static void ncnn_mp_draw_call(void *arg);

static mp_obj_t ncnn_mp_draw(size_t n_args, const mp_obj_t *args, ncnn_mp_shape_t shape, const char *where) {
    (void)n_args;
    int w = ncnn_mp_get_int_in(args[1], 1, NCNN_MP_PIXELS_MAX_SIDE, where, "w");
    int h = ncnn_mp_get_int_in(args[2], 1, NCNN_MP_PIXELS_MAX_SIDE, where, "h");
    int ch = ncnn_mp_get_int_in(args[3], 1, 4, where, "channels");
    int stride = 0;
    uint8_t *px = (uint8_t *)ncnn_mp_get_pixels(args[0], w, h, ch, h, &stride, true, where);
    int v[5] = { 0 };
    size_t n = shape == NCNN_MP_CIRCLE ? 3 : shape == NCNN_MP_TEXT ? 3 : 4;
    size_t first = shape == NCNN_MP_TEXT ? 5 : 4;
    for (size_t i = 0; i < n; i++) {
        v[i] = ncnn_mp_get_int_in(args[first + i], -NCNN_MP_PIXELS_MAX_SIDE, NCNN_MP_PIXELS_MAX_SIDE, where, "coordinate");
    }
    mp_obj_t color_in = args[first + n];
    if (!mp_obj_is_int(color_in)) {
        ncnn_mp_raise_type(where, NCNN_MP_TEXT("color must be an int (0xAABBGGRR, one byte per channel)"));
    }
    ncnn_mp_draw_call_t call = { shape, ch, px, w, h, { v[0], v[1], v[2], v[3], v[4] },
        (unsigned int)mp_obj_int_get_truncated(color_in),
        shape == NCNN_MP_TEXT ? 0 : ncnn_mp_get_int_in(args[first + n + 1], -1, 1024, where, "thickness"), NULL };
    if (shape == NCNN_MP_TEXT) {
        // A glyph is fontpixelsize wide and twice as tall; ncnn scales the font into a
        // buffer of that size per call (new[], unchecked: 2 MiB at the cap).
        if (v[2] < 1 || v[2] > NCNN_MP_MAX_FONT) {
            mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: fontpixelsize must be 1 to %d, not %d"),
                where, NCNN_MP_MAX_FONT, v[2]);
        }
        ncnn_mp_check_alloc((unsigned long long)v[2] * v[2] * 2, where, "the scaled font");
        call.text = mp_obj_str_get_str(args[4]);
    }
    ncnn_mp_seam(ncnn_mp_draw_call, &call, where);
    return mp_const_none;
}

static void ncnn_mp_draw_call(void *arg) {
    ncnn_mp_draw_call_t *c = arg;
    int ch = c->channels, w = c->w, h = c->h, *v = c->v;
    unsigned char *px = c->px;
    unsigned int color = c->color;
    int thickness = c->thickness;
    switch (c->shape) {
        case NCNN_MP_RECT: {
            void (*f[])(unsigned char *, int, int, int, int, int, int, unsigned int, int) = {
                ncnn_draw_rectangle_c1, ncnn_draw_rectangle_c2, ncnn_draw_rectangle_c3, ncnn_draw_rectangle_c4 };
            f[ch - 1](px, w, h, v[0], v[1], v[2], v[3], color, thickness);
            break;
        }
        case NCNN_MP_CIRCLE: {
            void (*f[])(unsigned char *, int, int, int, int, int, unsigned int, int) = {
                ncnn_draw_circle_c1, ncnn_draw_circle_c2, ncnn_draw_circle_c3, ncnn_draw_circle_c4 };
            f[ch - 1](px, w, h, v[0], v[1], v[2], color, thickness);
            break;
        }
        case NCNN_MP_LINE: {
            void (*f[])(unsigned char *, int, int, int, int, int, int, unsigned int, int) = {
                ncnn_draw_line_c1, ncnn_draw_line_c2, ncnn_draw_line_c3, ncnn_draw_line_c4 };
            f[ch - 1](px, w, h, v[0], v[1], v[2], v[3], color, thickness);
            break;
        }
        default: {
            void (*f[])(unsigned char *, int, int, const char *, int, int, int, unsigned int) = {
                ncnn_draw_text_c1, ncnn_draw_text_c2, ncnn_draw_text_c3, ncnn_draw_text_c4 };
            f[ch - 1](px, w, h, c->text, v[0], v[1], v[2], color);
            break;
        }
    }
}

static mp_obj_t ncnn_mp_Mat_draw_rectangle(size_t n_args, const mp_obj_t *args) {
    return ncnn_mp_draw(n_args, args, NCNN_MP_RECT, "Mat.draw_rectangle");
}
static NCNN_MP_DEFINE_STATIC_VAR_BETWEEN(ncnn_mp_Mat_draw_rectangle_fun_obj, Mat, draw_rectangle, 10, 10, ncnn_mp_Mat_draw_rectangle);
MP_DEFINE_CONST_STATICMETHOD_OBJ(ncnn_mp_Mat_draw_rectangle_obj, MP_ROM_PTR(&ncnn_mp_Mat_draw_rectangle_fun_obj));

static mp_obj_t ncnn_mp_Mat_draw_circle(size_t n_args, const mp_obj_t *args) {
    return ncnn_mp_draw(n_args, args, NCNN_MP_CIRCLE, "Mat.draw_circle");
}
static NCNN_MP_DEFINE_STATIC_VAR_BETWEEN(ncnn_mp_Mat_draw_circle_fun_obj, Mat, draw_circle, 9, 9, ncnn_mp_Mat_draw_circle);
MP_DEFINE_CONST_STATICMETHOD_OBJ(ncnn_mp_Mat_draw_circle_obj, MP_ROM_PTR(&ncnn_mp_Mat_draw_circle_fun_obj));

static mp_obj_t ncnn_mp_Mat_draw_line(size_t n_args, const mp_obj_t *args) {
    return ncnn_mp_draw(n_args, args, NCNN_MP_LINE, "Mat.draw_line");
}
static NCNN_MP_DEFINE_STATIC_VAR_BETWEEN(ncnn_mp_Mat_draw_line_fun_obj, Mat, draw_line, 10, 10, ncnn_mp_Mat_draw_line);
MP_DEFINE_CONST_STATICMETHOD_OBJ(ncnn_mp_Mat_draw_line_obj, MP_ROM_PTR(&ncnn_mp_Mat_draw_line_fun_obj));

static mp_obj_t ncnn_mp_Mat_draw_text(size_t n_args, const mp_obj_t *args) {
    if (!mp_obj_is_str(args[4])) {
        ncnn_mp_raise_type("Mat.draw_text", NCNN_MP_TEXT("text must be a str"));
    }
    return ncnn_mp_draw(n_args, args, NCNN_MP_TEXT, "Mat.draw_text");
}
static NCNN_MP_DEFINE_STATIC_VAR_BETWEEN(ncnn_mp_Mat_draw_text_fun_obj, Mat, draw_text, 9, 9, ncnn_mp_Mat_draw_text);
MP_DEFINE_CONST_STATICMETHOD_OBJ(ncnn_mp_Mat_draw_text_obj, MP_ROM_PTR(&ncnn_mp_Mat_draw_text_fun_obj));

#endif // NCNN_MP_HAS_DRAWING
#endif // NCNN_MP_HAS_PIXELS

#if NCNN_MP_HAS_PIXELS || NCNN_MP_HAS_CAMERA
// Mat.from_pixels, from_pixels_resize and to_pixels, whichever C converts: ncnn's pixel code
// (above) takes ncnn's formats, ncnn_mp's own (mat_camera.c) the camera formats, and every
// format where ncnn has no pixel code (NCNN_MP_HAS_PIXELS=0: the boards). The argument counts
// are checked here once; each converter checks the arguments' values as it reads them.
typedef struct {
    mp_obj_t (*from)(size_t n_args, const mp_obj_t *args, bool resize, const char *where);
    mp_obj_t (*to)(size_t n_args, const mp_obj_t *args, const char *where);
} ncnn_mp_pixel_converter_t;

#if NCNN_MP_HAS_PIXELS
static const ncnn_mp_pixel_converter_t ncnn_mp_ncnn_pixels = { ncnn_mp_ncnn_from_pixels, ncnn_mp_ncnn_to_pixels };
#endif
#if NCNN_MP_HAS_CAMERA
static const ncnn_mp_pixel_converter_t ncnn_mp_own_pixels = { ncnn_mp_camera_from_pixels, ncnn_mp_camera_to_pixels };
#endif

// The converter for a pixel type (from_pixels' args[2], to_pixels' args[1]).
static const ncnn_mp_pixel_converter_t *ncnn_mp_pixel_converter(mp_obj_t type) {
    #if NCNN_MP_HAS_PIXELS && NCNN_MP_HAS_CAMERA
    return ncnn_mp_camera_type(type) ? &ncnn_mp_own_pixels : &ncnn_mp_ncnn_pixels;
    #elif NCNN_MP_HAS_PIXELS
    (void)type;
    return &ncnn_mp_ncnn_pixels;
    #else
    (void)type;
    return &ncnn_mp_own_pixels;
    #endif
}

// Mat.from_pixels(pixels, type, w, h, stride=0, allocator=None) -> Mat (classmethod)
//   ncnn_mat_from_pixels, or mat_camera.c
static mp_obj_t ncnn_mp_Mat_from_pixels(size_t n_args, const mp_obj_t *args) {
    return ncnn_mp_pixel_converter(args[2])->from(n_args, args, false, "Mat.from_pixels");
}
static NCNN_MP_DEFINE_CLASSMETHOD_VAR_BETWEEN(ncnn_mp_Mat_from_pixels_fun_obj, Mat, from_pixels, 5, 7, ncnn_mp_Mat_from_pixels);
MP_DEFINE_CONST_CLASSMETHOD_OBJ(ncnn_mp_Mat_from_pixels_obj, MP_ROM_PTR(&ncnn_mp_Mat_from_pixels_fun_obj));

// Mat.from_pixels_resize(pixels, type, w, h, target_w, target_h, stride=0, allocator=None) -> Mat (classmethod)
//   ncnn_mat_from_pixels_resize, or mat_camera.c
static mp_obj_t ncnn_mp_Mat_from_pixels_resize(size_t n_args, const mp_obj_t *args) {
    return ncnn_mp_pixel_converter(args[2])->from(n_args, args, true, "Mat.from_pixels_resize");
}
static NCNN_MP_DEFINE_CLASSMETHOD_VAR_BETWEEN(ncnn_mp_Mat_from_pixels_resize_fun_obj, Mat, from_pixels_resize, 7, 9, ncnn_mp_Mat_from_pixels_resize);
MP_DEFINE_CONST_CLASSMETHOD_OBJ(ncnn_mp_Mat_from_pixels_resize_obj, MP_ROM_PTR(&ncnn_mp_Mat_from_pixels_resize_fun_obj));

// Mat.to_pixels(type, pixels=None, stride=0) -> bytearray   ncnn_mat_to_pixels, or mat_camera.c
static mp_obj_t ncnn_mp_Mat_to_pixels(size_t n_args, const mp_obj_t *args) {
    return ncnn_mp_pixel_converter(args[1])->to(n_args, args, "Mat.to_pixels");
}
NCNN_MP_DEFINE_METHOD_VAR_BETWEEN(ncnn_mp_Mat_to_pixels_obj, Mat, to_pixels, 2, 4, ncnn_mp_Mat_to_pixels);
#endif // NCNN_MP_HAS_PIXELS || NCNN_MP_HAS_CAMERA
