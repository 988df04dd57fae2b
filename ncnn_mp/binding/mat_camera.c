// SPDX-License-Identifier: MIT
// Camera frames and screens: Mat.from_pixels, from_pixels_resize and to_pixels for the
// formats cameras and LCDs use (RGB565 in both byte orders, YUYV, NV12, NV21), written here
// in C because the boards' ncnn has no pixel code (NCNN_PIXEL=OFF). Where ncnn has none, the
// plain 8-bit formats (RGB, BGR, GRAY, RGBA, BGRA) come through here too, so from_pixels
// works on a board at all; where it has, ncnn's code converts those. mat_pixels.c defines the
// three Mat functions and picks the converter (ncnn_mp_pixel_converter). docs/usage.md#camera-frames-and-screens has the API
// and the arithmetic.
//
// Made for a board: every multi-byte pixel is read and written byte by byte (the Xtensa
// lx106 faults on an unaligned 16-bit load), the arithmetic is integer where it can be exact
// (so every board and the Unix port give the same bits), and nothing is allocated but the
// Mat or the caller's buffer, and for a resize one table of the target's columns.
#include "ncnn_mp.h"
#include "cxx_seam.h"

#if NCNN_MP_HAS_CAMERA

// The formats, ncnn's numbers for the plain ones (NCNN_MAT_PIXEL_RGB = 1 .. BGRA = 5).
enum {
    NCNN_MP_PX_RGB = 1, NCNN_MP_PX_BGR, NCNN_MP_PX_GRAY, NCNN_MP_PX_RGBA, NCNN_MP_PX_BGRA,
    NCNN_MP_PX_RGB565 = 16, NCNN_MP_PX_RGB565_BE, NCNN_MP_PX_YUYV, NCNN_MP_PX_NV12, NCNN_MP_PX_NV21,
};

static bool ncnn_mp_camera_format(int f) {
    return f >= NCNN_MP_PX_RGB565 && f <= NCNN_MP_PX_NV21;
}

// Channels of a plain format (the Mat's side), 0 for any other number.
static int ncnn_mp_plain_channels(int f) {
    static const uint8_t channels[] = { 0, 3, 3, 1, 4, 4 };
    return f >= 1 && f <= 5 ? channels[f] : 0;
}

// Bytes a pixel takes in a row of the frame (NV12/NV21: of the Y plane).
static int ncnn_mp_frame_bpp(int f) {
    return f == NCNN_MP_PX_RGB565 || f == NCNN_MP_PX_RGB565_BE || f == NCNN_MP_PX_YUYV ? 2
         : ncnn_mp_camera_format(f) ? 1 : ncnn_mp_plain_channels(f);
}

bool ncnn_mp_camera_type(mp_obj_t type) {
    return mp_obj_is_small_int(type) && ncnn_mp_camera_format(MP_OBJ_SMALL_INT_VALUE(type) & 0xffff);
}

// A frame: w x h pixels of `format`, rows `stride` bytes apart (NV12/NV21: the Y plane's
// rows, then h / 2 rows of interleaved chroma, the same stride apart).
typedef struct {
    uint8_t *px;
    int format, w, h, stride;
} ncnn_mp_image_t;

// One pixel as 8-bit R, G, B, A, and its luma Y (what a GRAY Mat gets).
typedef struct {
    int r, g, b, a, y;
} ncnn_mp_rgba_t;

// Luma from R, G, B: ncnn's own coefficients (0.299, 0.587, 0.114 in 1/256, truncated), so a
// GRAY Mat from RGB here equals ncnn's from_pixels(PIXEL_RGB2GRAY).
static int ncnn_mp_luma(int r, int g, int b) {
    return (r * 77 + g * 150 + b * 29) >> 8;
}

static int ncnn_mp_clamp_u8(int v) {
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

// YUV to RGB, BT.601 full range (Y 0..255, chroma centred on 128: what camera sensors give
// for JPEG-style output and what ncnn's yuv420sp2rgb assumes), in ncnn's fixed point:
// R = Y + 90/64 (V-128), G = Y - 46/64 (V-128) - 22/64 (U-128), B = Y + 113/64 (U-128),
// each truncated toward minus infinity and clamped (a negative sum clamps to 0 before the
// shift, so no right shift of a negative number).
static void ncnn_mp_yuv_to_rgb(int y, int u, int v, ncnn_mp_rgba_t *p) {
    u -= 128;
    v -= 128;
    int yy = y << 6;
    int r = yy + 90 * v, g = yy - 46 * v - 22 * u, b = yy + 113 * u;
    p->r = r < 0 ? 0 : ncnn_mp_clamp_u8(r >> 6);
    p->g = g < 0 ? 0 : ncnn_mp_clamp_u8(g >> 6);
    p->b = b < 0 ? 0 : ncnn_mp_clamp_u8(b >> 6);
    p->a = 255;
    p->y = y;
}

// The pixel readers, one per source format: pixel (x, y) of the frame into *p.
typedef void (*ncnn_mp_reader_fn)(const ncnn_mp_image_t *im, int x, int y, ncnn_mp_rgba_t *p);

static void ncnn_mp_read_plain(const ncnn_mp_image_t *im, int x, int y, ncnn_mp_rgba_t *p) {
    int bpp = ncnn_mp_plain_channels(im->format);
    const uint8_t *s = im->px + (size_t)y * im->stride + (size_t)x * bpp;
    if (bpp == 1) {
        p->r = p->g = p->b = p->y = s[0];
        p->a = 255;
        return;
    }
    bool bgr = im->format == NCNN_MP_PX_BGR || im->format == NCNN_MP_PX_BGRA;
    p->r = s[bgr ? 2 : 0];
    p->g = s[1];
    p->b = s[bgr ? 0 : 2];
    p->a = bpp == 4 ? s[3] : 255;
    p->y = ncnn_mp_luma(p->r, p->g, p->b);
}

// RGB565: rrrrrggg gggbbbbb as a 16-bit value, its low byte first (little-endian: what
// framebuf.RGB565 holds on every MicroPython port) or its high byte first (_BE: what SPI
// LCDs take and most ESP32 camera drivers give). 5 and 6 bits widen to 8 by repeating their
// top bits (0 -> 0, 31 -> 255), so unpacking and packing again gives the same frame.
static void ncnn_mp_read_rgb565(const ncnn_mp_image_t *im, int x, int y, ncnn_mp_rgba_t *p) {
    const uint8_t *s = im->px + (size_t)y * im->stride + (size_t)x * 2;
    int v = im->format == NCNN_MP_PX_RGB565 ? s[0] | s[1] << 8 : s[0] << 8 | s[1];
    int r = v >> 11, g = (v >> 5) & 63, b = v & 31;
    p->r = r << 3 | r >> 2;
    p->g = g << 2 | g >> 4;
    p->b = b << 3 | b >> 2;
    p->a = 255;
    p->y = ncnn_mp_luma(p->r, p->g, p->b);
}

// YUYV (YUV 4:2:2): Y0 U Y1 V for each pair of pixels.
static void ncnn_mp_read_yuyv(const ncnn_mp_image_t *im, int x, int y, ncnn_mp_rgba_t *p) {
    const uint8_t *pair = im->px + (size_t)y * im->stride + (size_t)(x & ~1) * 2;
    ncnn_mp_yuv_to_rgb(pair[(x & 1) * 2], pair[1], pair[3], p);
}

// NV12 / NV21 (YUV 4:2:0): the Y plane, then for each 2x2 block one U V pair (NV12) or
// V U pair (NV21, Android's camera default).
static void ncnn_mp_read_nv(const ncnn_mp_image_t *im, int x, int y, ncnn_mp_rgba_t *p) {
    const uint8_t *chroma = im->px + (size_t)im->stride * im->h + (size_t)(y >> 1) * im->stride + (x & ~1);
    int u = chroma[0], v = chroma[1];
    if (im->format == NCNN_MP_PX_NV21) {
        u = chroma[1];
        v = chroma[0];
    }
    ncnn_mp_yuv_to_rgb(im->px[(size_t)y * im->stride + x], u, v, p);
}

static ncnn_mp_reader_fn ncnn_mp_reader(int format) {
    switch (format) {
        case NCNN_MP_PX_RGB565: case NCNN_MP_PX_RGB565_BE: return ncnn_mp_read_rgb565;
        case NCNN_MP_PX_YUYV: return ncnn_mp_read_yuyv;
        case NCNN_MP_PX_NV12: case NCNN_MP_PX_NV21: return ncnn_mp_read_nv;
        default: return ncnn_mp_read_plain;
    }
}

// A pixel's values in the Mat's channel order `order` (a plain format) into v.
static void ncnn_mp_mat_values(const ncnn_mp_rgba_t *p, int order, int v[4]) {
    switch (order) {
        case NCNN_MP_PX_GRAY: v[0] = p->y; break;
        case NCNN_MP_PX_BGR: case NCNN_MP_PX_BGRA: v[0] = p->b; v[1] = p->g; v[2] = p->r; v[3] = p->a; break;
        default: v[0] = p->r; v[1] = p->g; v[2] = p->b; v[3] = p->a; break;
    }
}

// What a pixel type asks for, checked: the frame's format and the Mat's channel order.
// A camera format keeps its frame format in the low 16 bits and the Mat's order in the high
// ones (0: RGB), both ways. A plain type is ncnn's: from_pixels reads the low format into the
// high one (0: the same); to_pixels reads a Mat in the low one and writes the high one.
typedef struct {
    int frame, order;
} ncnn_mp_camera_types_t;

static ncnn_mp_camera_types_t ncnn_mp_camera_types(mp_obj_t type_in, bool to, const char *where) {
    int type = ncnn_mp_get_int_in(type_in, 1, INT32_MAX, where, "type");
    int low = type & 0xffff, high = type >> 16;
    ncnn_mp_camera_types_t t = { low, high };
    if (ncnn_mp_camera_format(low)) {
        t.order = high ? high : NCNN_MP_PX_RGB;
    } else if (to) {
        t.order = low;
        t.frame = high ? high : low;
    } else {
        t.order = high ? high : low;
    }
    if (ncnn_mp_frame_bpp(t.frame) == 0 || ncnn_mp_plain_channels(t.order) == 0) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: no pixel conversion 0x%x (use the Mat.PIXEL_* constants)"),
            where, type);
    }
    return t;
}

static bool ncnn_mp_yuv420(int f) {
    return f == NCNN_MP_PX_NV12 || f == NCNN_MP_PX_NV21;
}

// Checks the frame's sides against its format: YUV shares chroma between pixel pairs, 4:2:0
// between rows too.
static void ncnn_mp_image_sides(const ncnn_mp_image_t *im, const char *where) {
    int f = im->format;
    if ((f == NCNN_MP_PX_YUYV || ncnn_mp_yuv420(f)) && (im->w & 1)) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: YUYV, NV12 and NV21 frames need an even w, not %d"),
            where, im->w);
    }
    if (ncnn_mp_yuv420(f) && (im->h & 1)) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: NV12 and NV21 frames need an even h, not %d"),
            where, im->h);
    }
}

// The rows of bytes a frame of h pixel rows takes.
static unsigned long long ncnn_mp_image_rows(const ncnn_mp_image_t *im) {
    return ncnn_mp_yuv420(im->format) ? (unsigned long long)im->h * 3 / 2 : (unsigned long long)im->h;
}


// Bilinear weights are in 1/2048 (as ncnn's resize): a sample is four pixels times two
// weights each, at most 255 * 2048 * 2048 < 2^31.
#define NCNN_MP_WEIGHT_BITS 11
#define NCNN_MP_WEIGHT_ONE (1 << NCNN_MP_WEIGHT_BITS)

// Where target pixel d of `to` falls among `from` source pixels, as ncnn's resize places it
// (pixel centres: (d + 0.5) * from / to - 0.5, clamped to the edge pixels): the pixel at or
// left of it, and the weight of the next one. All in int: (2 * 32767 + 1) * 32768 < 2^31.
static void ncnn_mp_resize_place(int d, int from, int to, int *s, int *weight) {
    int num = (2 * d + 1) * from - to;  // the position, in units of 1 / (2 * to)
    *s = 0;
    *weight = 0;
    if (num > 0) {
        *s = num / (2 * to);
        *weight = ((num % (2 * to)) * NCNN_MP_WEIGHT_ONE + to) / (2 * to);  // rounded
    }
    if (*s >= from - 1) {
        *s = from - 1;
        *weight = 0;
    }
}

// The resize's table of target columns: per column, its source column and its weight.
static int *ncnn_mp_resize_columns(const ncnn_mp_image_t *im, int tw) {
    int *cols = m_new(int, (size_t)tw * 2);
    for (int x = 0; x < tw; x++) {
        ncnn_mp_resize_place(x, im->w, tw, &cols[2 * x], &cols[2 * x + 1]);
    }
    return cols;
}

// Target row y of a resize to tw x th, each of the c channels' tw values into rows[i]: per
// target pixel four source pixels, weighted; the value keeps its fractions (exactly
// sum / 2^22), so it is not rounded to 8 bits as ncnn's is.
static void ncnn_mp_resize_row(const ncnn_mp_image_t *im, int order, int c, const int *cols, int tw, int y, int th,
    float *const *rows) {
    const float scale = 1.0f / ((float)NCNN_MP_WEIGHT_ONE * NCNN_MP_WEIGHT_ONE);
    int sy, wy;
    ncnn_mp_resize_place(y, im->h, th, &sy, &wy);
    int sy1 = sy + (sy < im->h - 1);
    ncnn_mp_reader_fn read = ncnn_mp_reader(im->format);
    ncnn_mp_rgba_t p;
    for (int x = 0; x < tw; x++) {
        int sx = cols[2 * x], wx = cols[2 * x + 1];
        int sx1 = sx + (sx < im->w - 1);
        int v00[4], v01[4], v10[4], v11[4];
        read(im, sx, sy, &p);
        ncnn_mp_mat_values(&p, order, v00);
        read(im, sx1, sy, &p);
        ncnn_mp_mat_values(&p, order, v01);
        read(im, sx, sy1, &p);
        ncnn_mp_mat_values(&p, order, v10);
        read(im, sx1, sy1, &p);
        ncnn_mp_mat_values(&p, order, v11);
        for (int i = 0; i < c; i++) {
            uint32_t top = (uint32_t)(v00[i] * (NCNN_MP_WEIGHT_ONE - wx) + v01[i] * wx);
            uint32_t bottom = (uint32_t)(v10[i] * (NCNN_MP_WEIGHT_ONE - wx) + v11[i] * wx);
            uint32_t sum = top * (uint32_t)(NCNN_MP_WEIGHT_ONE - wy) + bottom * (uint32_t)wy;
            rows[i][x] = (float)sum * scale;
        }
    }
}

// Mat.from_pixels(pixels, type, w, h, stride=0, allocator=None) and
// Mat.from_pixels_resize(pixels, type, w, h, target_w, target_h, stride=0, allocator=None)
// for the formats above (args[0] is the class). A resize writes straight into the Mat
// (ncnn_mp_resize_row).
// A frame call's first arguments (args[0] is the class): pixels, type, w, h and, for a
// resize, target_w, target_h. *k: the index of the next argument.
typedef struct {
    ncnn_mp_camera_types_t t;
    ncnn_mp_image_t im;
    int tw, th;
} ncnn_mp_frame_args_t;

static void ncnn_mp_frame_args(ncnn_mp_frame_args_t *f, const mp_obj_t *args, bool resize, size_t *k, const char *where) {
    f->t = ncnn_mp_camera_types(args[2], false, where);
    ncnn_mp_image_t im = { NULL, f->t.frame, 0, 0, 0 };
    im.w = ncnn_mp_get_int_in(args[3], 1, NCNN_MP_PIXELS_MAX_SIDE, where, "w");
    im.h = ncnn_mp_get_int_in(args[4], 1, NCNN_MP_PIXELS_MAX_SIDE, where, "h");
    f->im = im;
    *k = 5;
    f->tw = im.w;
    f->th = im.h;
    if (resize) {
        f->tw = ncnn_mp_get_int_in(args[(*k)++], 1, NCNN_MP_PIXELS_MAX_SIDE, where, "target_w");
        f->th = ncnn_mp_get_int_in(args[(*k)++], 1, NCNN_MP_PIXELS_MAX_SIDE, where, "target_h");
    }
}

// The frame's stride and pixels, checked (after every other argument).
static void ncnn_mp_frame_pixels(ncnn_mp_frame_args_t *f, mp_obj_t pixels, const char *where) {
    ncnn_mp_image_sides(&f->im, where);
    f->im.px = ncnn_mp_get_pixels(pixels, f->im.w, f->im.h, ncnn_mp_frame_bpp(f->im.format), ncnn_mp_image_rows(&f->im),
        &f->im.stride, false, where);
}

mp_obj_t ncnn_mp_camera_from_pixels(size_t n_args, const mp_obj_t *args, bool resize, const char *where) {
    ncnn_mp_frame_args_t f;
    size_t k;
    ncnn_mp_frame_args(&f, args, resize, &k, where);
    f.im.stride = k < n_args ? ncnn_mp_get_int_in(args[k++], 0, INT32_MAX, where, "stride") : 0;
    ncnn_mp_result_t r;  // converted: it shares nothing with the pixels
    ncnn_mp_result_from_allocator(&r, k < n_args ? args[k] : mp_const_none, MP_OBJ_NULL, where);
    ncnn_mp_frame_pixels(&f, args[1], where);
    ncnn_mp_camera_types_t t = f.t;
    ncnn_mp_image_t im = f.im;
    int tw = f.tw, th = f.th;
    int c = ncnn_mp_plain_channels(t.order);
    // The Mat, and a resize's table of the target's columns (an int and a weight each).
    ncnn_mp_check_mat_alloc((unsigned long long)tw * th * c * 4 + (resize ? (unsigned long long)tw * 8 : 0), r.allocator, where);
    ncnn_mat_t m = ncnn_mat_create_3d(tw, th, c, r.allocator ? r.allocator->handle : NULL);
    if (m && ncnn_mat_get_data(m) == NULL) {
        ncnn_mat_destroy(m);
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: ncnn could not make the Mat"), where);
    }
    mp_obj_t result = ncnn_mp_result_wrap(&r, m, where);
    // (From here nothing raises but the table's allocation, and the wrapped Mat is the
    // collector's if it does.)
    float *planes[4];
    for (int i = 0; i < c; i++) {
        planes[i] = ncnn_mat_get_channel_data(m, i);
    }
    ncnn_mp_reader_fn read = ncnn_mp_reader(im.format);
    ncnn_mp_rgba_t p;
    int v[4];
    if (!resize) {
        for (int y = 0; y < im.h; y++) {
            for (int x = 0; x < im.w; x++) {
                read(&im, x, y, &p);
                ncnn_mp_mat_values(&p, t.order, v);
                for (int i = 0; i < c; i++) {
                    *planes[i]++ = (float)v[i];
                }
            }
        }
        return result;
    }
    int *cols = ncnn_mp_resize_columns(&im, tw);
    for (int y = 0; y < th; y++) {
        ncnn_mp_resize_row(&im, t.order, c, cols, tw, y, th, planes);
        for (int i = 0; i < c; i++) {
            planes[i] += tw;
        }
    }
    m_del(int, cols, (size_t)tw * 2);
    return result;
}

// Mat.from_pixels_int8(pixels, type, w, h, target_w, target_h, scale, mean=None, norm=None,
//                     stride=0, allocator=None) -> Mat (classmethod)
// A frame resized and normalized straight into the int8 input of a model whose first layer
// is int8 (docs/usage.md#camera-frames-to-int8): each value as from_pixels_resize makes it,
// then substract_mean_normalize, then the layer's own quantization with `scale`
// (Net.input_int8_scale), row by row, so that no float32 image exists: a third of the RAM
// of the float frame and its quantized copy (ncnn_mp_pixels_int8_row: the same numbers).
static mp_obj_t ncnn_mp_Mat_from_pixels_int8(size_t n_args, const mp_obj_t *args) {
    const char *where = "Mat.from_pixels_int8";
    ncnn_mp_frame_args_t f;
    size_t k;
    ncnn_mp_frame_args(&f, args, true, &k, where);
    float scale = ncnn_mp_get_float(args[k++], where, "scale");
    if (!(scale > 0.f) || scale > 3.0e38f) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("scale must be a positive finite float (Net.input_int8_scale gives it)"));
    }
    int c = ncnn_mp_plain_channels(f.t.order);
    float buf[8];
    const float *mean = ncnn_mp_get_floats(k < n_args ? args[k] : mp_const_none, (size_t)c, buf, where, "mean");
    k++;
    const float *norm = ncnn_mp_get_floats(k < n_args ? args[k] : mp_const_none, (size_t)c, buf + 4, where, "norm");
    k++;
    f.im.stride = k < n_args ? ncnn_mp_get_int_in(args[k++], 0, INT32_MAX, where, "stride") : 0;
    ncnn_mp_result_t r;
    ncnn_mp_result_from_allocator(&r, k < n_args ? args[k] : mp_const_none, MP_OBJ_NULL, where);
    ncnn_mp_frame_pixels(&f, args[1], where);
    // The Mat, a row of floats per channel and the table of the target's columns.
    ncnn_mp_check_mat_alloc((unsigned long long)f.tw * f.th * c + (unsigned long long)f.tw * (4 * c + 8), r.allocator, where);
    ncnn_mat_t m = ncnn_mat_create_3d_elem(f.tw, f.th, c, 1u, 1, r.allocator ? r.allocator->handle : NULL);
    if (m && ncnn_mat_get_data(m) == NULL) {
        ncnn_mat_destroy(m);
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: ncnn could not make the Mat"), where);
    }
    mp_obj_t result = ncnn_mp_result_wrap(&r, m, where);
    ((ncnn_mp_mat_obj_t *)MP_OBJ_TO_PTR(result))->int8_scale = scale;
    // (From here only the row and the table are allocated: the wrapped Mat is the
    // collector's if that raises.)
    ncnn_mp_int8_step_t steps[4];
    for (int i = 0; i < c; i++) {
        ncnn_mp_int8_step(&steps[i], mean ? &mean[i] : NULL, norm ? &norm[i] : NULL, scale);
    }
    float *row = m_new(float, (size_t)f.tw * c);
    float *rows[4];
    signed char *planes[4];
    for (int i = 0; i < c; i++) {
        rows[i] = row + (size_t)i * f.tw;
        planes[i] = ncnn_mat_get_channel_data(m, i);
    }
    int *cols = ncnn_mp_resize_columns(&f.im, f.tw);
    for (int y = 0; y < f.th; y++) {
        ncnn_mp_resize_row(&f.im, f.t.order, c, cols, f.tw, y, f.th, rows);
        for (int i = 0; i < c; i++) {
            ncnn_mp_pixels_int8_row(rows[i], f.tw, &steps[i], planes[i]);
            planes[i] += f.tw;
        }
    }
    m_del(int, cols, (size_t)f.tw * 2);
    m_del(float, row, (size_t)f.tw * c);
    return result;
}
static NCNN_MP_DEFINE_CLASSMETHOD_VAR_BETWEEN(ncnn_mp_Mat_from_pixels_int8_fun_obj, Mat, from_pixels_int8, 8, 12, ncnn_mp_Mat_from_pixels_int8);
MP_DEFINE_CONST_CLASSMETHOD_OBJ(ncnn_mp_Mat_from_pixels_int8_obj, MP_ROM_PTR(&ncnn_mp_Mat_from_pixels_int8_fun_obj));

// A Mat value as a byte, as ncnn's to_pixels makes it: truncated toward zero, clamped to
// 0..255 (NaN: 0).
static int ncnn_mp_float_to_u8(float f) {
    return f > 0.0f ? (f < 255.0f ? (int)f : 255) : 0;
}

// Pixel (x, y) of a float Mat whose channels are in `order`.
static void ncnn_mp_mat_pixel(float *const *planes, int order, int w, int x, int y, ncnn_mp_rgba_t *p) {
    size_t i = (size_t)y * w + x;
    int v0 = ncnn_mp_float_to_u8(planes[0][i]);
    if (order == NCNN_MP_PX_GRAY) {
        p->r = p->g = p->b = p->y = v0;
        p->a = 255;
        return;
    }
    int v1 = ncnn_mp_float_to_u8(planes[1][i]), v2 = ncnn_mp_float_to_u8(planes[2][i]);
    bool bgr = order == NCNN_MP_PX_BGR || order == NCNN_MP_PX_BGRA;
    p->r = bgr ? v2 : v0;
    p->g = v1;
    p->b = bgr ? v0 : v2;
    p->a = planes[3] ? ncnn_mp_float_to_u8(planes[3][i]) : 255;
    p->y = ncnn_mp_luma(p->r, p->g, p->b);
}

// RGB to chroma, the inverse of the above (BT.601 full range, 1/256, truncated; the sums
// plus 128 * 256 are 128..65408, never negative): U = (-43 R - 85 G + 128 B) / 256 + 128,
// V = (128 R - 107 G - 21 B) / 256 + 128. Y is the luma above.
static int ncnn_mp_chroma_u(const ncnn_mp_rgba_t *p) {
    return (-43 * p->r - 85 * p->g + 128 * p->b + 32768) >> 8;
}
static int ncnn_mp_chroma_v(const ncnn_mp_rgba_t *p) {
    return (128 * p->r - 107 * p->g - 21 * p->b + 32768) >> 8;
}

// Mat.to_pixels(type, pixels=None, stride=0) -> bytearray, for the formats above: into
// `pixels` when given (and returned), else a new bytearray. YUYV takes a pair's chroma as
// the mean of the two pixels', NV12/NV21 a 2x2 block's as the mean of the four (rounded).
mp_obj_t ncnn_mp_camera_to_pixels(size_t n_args, const mp_obj_t *args, const char *where) {
    ncnn_mp_mat_obj_t *self = ncnn_mp_get_mat(args[0], where);
    ncnn_mat_t m = self->handle;
    ncnn_mp_camera_types_t t = ncnn_mp_camera_types(args[1], true, where);
    int c = ncnn_mp_plain_channels(t.order);
    int dims = ncnn_mat_get_dims(m);
    if ((dims != 3 && !(dims == 2 && c == 1)) || ncnn_mat_get_c(m) != c || ncnn_mat_get_elemsize(m) != 4
        || ncnn_mat_get_elempack(m) != 1) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: needs a float32 Mat with %d channel(s) for that type"),
            where, c);
    }
    ncnn_mp_image_t im = { NULL, t.frame, ncnn_mat_get_w(m), ncnn_mat_get_h(m), 0 };
    if (im.w > NCNN_MP_PIXELS_MAX_SIDE || im.h > NCNN_MP_PIXELS_MAX_SIDE) {  // (a frame's row fits an int)
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: a frame is at most %d pixels a side, the Mat is %dx%d"),
            where, NCNN_MP_PIXELS_MAX_SIDE, im.w, im.h);
    }
    mp_obj_t out = n_args > 2 && args[2] != mp_const_none ? args[2] : MP_OBJ_NULL;
    im.stride = n_args > 3 ? ncnn_mp_get_int_in(args[3], 0, INT32_MAX, where, "stride") : 0;
    ncnn_mp_image_sides(&im, where);
    if (out == MP_OBJ_NULL) {
        int row = im.w * ncnn_mp_frame_bpp(t.frame);
        unsigned long long size = (unsigned long long)(im.stride > row ? im.stride : row) * ncnn_mp_image_rows(&im);
        ncnn_mp_check_alloc(size, where, "the pixels");
        out = mp_obj_new_bytearray_by_ref((size_t)size, m_new0(uint8_t, (size_t)size));
    }
    im.px = ncnn_mp_get_pixels(out, im.w, im.h, ncnn_mp_frame_bpp(im.format), ncnn_mp_image_rows(&im), &im.stride, true,
        where);
    float *planes[4] = { NULL, NULL, NULL, NULL };
    for (int i = 0; i < c; i++) {
        planes[i] = (float *)ncnn_mat_get_channel_data(m, i);
    }
    int bpp = ncnn_mp_frame_bpp(im.format);
    ncnn_mp_rgba_t p;
    int v[4];
    for (int y = 0; y < im.h; y++) {
        uint8_t *row = im.px + (size_t)y * im.stride;
        for (int x = 0; x < im.w; x++) {
            ncnn_mp_mat_pixel(planes, t.order, im.w, x, y, &p);
            uint8_t *d = row + (size_t)x * bpp;
            switch (im.format) {
                case NCNN_MP_PX_RGB565: case NCNN_MP_PX_RGB565_BE: {
                    int px = (p.r >> 3) << 11 | (p.g >> 2) << 5 | p.b >> 3;
                    d[im.format == NCNN_MP_PX_RGB565 ? 0 : 1] = (uint8_t)px;
                    d[im.format == NCNN_MP_PX_RGB565 ? 1 : 0] = (uint8_t)(px >> 8);
                    break;
                }
                case NCNN_MP_PX_YUYV:
                    d[0] = (uint8_t)p.y;
                    if (x & 1) {  // the pair's chroma, from this pixel and the one before
                        ncnn_mp_rgba_t q;
                        ncnn_mp_mat_pixel(planes, t.order, im.w, x - 1, y, &q);
                        d[-1] = (uint8_t)((ncnn_mp_chroma_u(&p) + ncnn_mp_chroma_u(&q) + 1) >> 1);
                        d[1] = (uint8_t)((ncnn_mp_chroma_v(&p) + ncnn_mp_chroma_v(&q) + 1) >> 1);
                    }
                    break;
                case NCNN_MP_PX_NV12: case NCNN_MP_PX_NV21:
                    d[0] = (uint8_t)p.y;
                    if ((x & 1) && (y & 1)) {  // the block's chroma, from its four pixels
                        int u = ncnn_mp_chroma_u(&p), vv = ncnn_mp_chroma_v(&p);
                        for (int k = 0; k < 3; k++) {
                            ncnn_mp_rgba_t q;
                            ncnn_mp_mat_pixel(planes, t.order, im.w, x - (k != 1), y - (k != 0), &q);
                            u += ncnn_mp_chroma_u(&q);
                            vv += ncnn_mp_chroma_v(&q);
                        }
                        uint8_t *chroma = im.px + (size_t)im.stride * im.h + (size_t)(y >> 1) * im.stride + (x - 1);
                        bool nv21 = im.format == NCNN_MP_PX_NV21;
                        chroma[nv21 ? 1 : 0] = (uint8_t)((u + 2) >> 2);
                        chroma[nv21 ? 0 : 1] = (uint8_t)((vv + 2) >> 2);
                    }
                    break;
                default:
                    ncnn_mp_mat_values(&p, im.format, v);
                    for (int i = 0; i < bpp; i++) {
                        d[i] = (uint8_t)v[i];
                    }
                    break;
            }
        }
    }
    return out;
}

#endif // NCNN_MP_HAS_CAMERA
