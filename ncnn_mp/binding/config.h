// SPDX-License-Identifier: MIT
// What a board may leave out of ncnn_mp, one switch each (as extmod's MICROPY_PY_* and ulab's
// ULAB_*_HAS_*): on unless the port's flags say 0, e.g. -DNCNN_MP_HAS_DRAWING=0 in
// NCNN_MP_CFLAGS (micropython.mk). One guard covers a function and its table entry; a
// switch off removes the Python names too (ncnn_mp.pyi documents the full set).
// docs/boards.md has what each saves on the Cortex-M3 board.
#ifndef NCNN_MP_CONFIG_H
#define NCNN_MP_CONFIG_H

// Mat.from_pixels*, Mat.to_pixels* and the PIXEL_* constants (ncnn's NCNN_PIXEL).
#ifndef NCNN_MP_HAS_PIXELS
#define NCNN_MP_HAS_PIXELS (NCNN_PIXEL)
#endif

// Camera frames and screens (mat_camera.c): Mat.PIXEL_RGB565, _RGB565_BE, _YUYV, _NV12, _NV21
// in from_pixels, from_pixels_resize and to_pixels, in ncnn_mp's own C; without NCNN_PIXEL
// (the boards) the plain formats go through it too, so those three exist there.
#ifndef NCNN_MP_HAS_CAMERA
#define NCNN_MP_HAS_CAMERA (1)
#endif

// Mat.draw_rectangle, draw_circle, draw_line, draw_text (ncnn's NCNN_PIXEL_DRAWING).
#ifndef NCNN_MP_HAS_DRAWING
#define NCNN_MP_HAS_DRAWING (NCNN_PIXEL_DRAWING && NCNN_MP_HAS_PIXELS)
#endif

// A DataReader subclass whose read(n) ncnn reads a model through (readers written in Python).
#ifndef NCNN_MP_HAS_PYTHON_READERS
#define NCNN_MP_HAS_PYTHON_READERS (1)
#endif

// Allocator(counting=True) and Allocator(arena=size): their in_use, peak, size and reset_peak().
#ifndef NCNN_MP_HAS_COUNTING_ALLOCATOR
#define NCNN_MP_HAS_COUNTING_ALLOCATOR (1)
#endif

// Net.layers() and Net.blobs(): the graph as Python lists of dicts.
#ifndef NCNN_MP_HAS_GRAPH_INFO
#define NCNN_MP_HAS_GRAPH_INFO (1)
#endif

#if NCNN_MP_HAS_PIXELS && !NCNN_PIXEL
#error "NCNN_MP_HAS_PIXELS needs ncnn built with NCNN_PIXEL"
#endif
#if NCNN_MP_HAS_DRAWING && !(NCNN_PIXEL_DRAWING && NCNN_MP_HAS_PIXELS)
#error "NCNN_MP_HAS_DRAWING needs ncnn built with NCNN_PIXEL_DRAWING, and NCNN_MP_HAS_PIXELS"
#endif

#endif // NCNN_MP_CONFIG_H
