# SPDX-License-Identifier: MIT
# Mat and images: pixels in and out, borders, drawing; and every bad argument.
import struct

import ncnn_mp
from mptest import check, require
from mptest import packed as floats

require("NCNN_PIXEL", "NCNN_PIXEL_DRAWING")  # pixels, drawing

Mat = ncnn_mp.Mat
opt = ncnn_mp.Option()


rgb = bytes([10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120])  # 2x2 RGB, row by row
m = Mat.from_pixels(rgb, Mat.PIXEL_RGB, 2, 2)
print("from_pixels", m.dims, m.w, m.h, m.c, floats(m))
print("to gray", floats(Mat.from_pixels(rgb, Mat.PIXEL_RGB2GRAY, 2, 2)))
print("to BGR", floats(Mat.from_pixels(rgb, Mat.PIXEL_RGB2BGR, 2, 2)))
print("to_pixels", bytes(m.to_pixels(Mat.PIXEL_RGB)) == rgb, list(m.to_pixels(Mat.PIXEL_RGB2BGR))[:6])
out = bytearray(2 * 2 * 4 + 8)
m.to_pixels(Mat.PIXEL_RGB2RGBA, out, 12)  # into a given buffer, rows 12 bytes apart
print("to_pixels into buffer", list(out))
roi = Mat.from_pixels_roi(rgb, Mat.PIXEL_RGB, 2, 2, 1, 0, 1, 2)
print("roi", roi.w, roi.h, floats(roi))
big = Mat.from_pixels_resize(rgb, Mat.PIXEL_RGB, 2, 2, 4, 3)
print("resize", big.w, big.h, big.c)
print("roi_resize", Mat.from_pixels_roi_resize(rgb, Mat.PIXEL_RGB, 2, 2, 0, 0, 2, 1, 3, 3).w)
print("to_pixels_resize", list(m.to_pixels_resize(Mat.PIXEL_RGB, 1, 1)))
stride_rgb = bytes([1, 2, 3, 4, 5, 6, 0, 0, 7, 8, 9, 10, 11, 12, 0, 0])  # rows padded to 8 bytes
print("stride", floats(Mat.from_pixels(stride_rgb, Mat.PIXEL_RGB, 2, 2, 8)))

b = m.copy_make_border(1, 0, 0, 1, Mat.BORDER_CONSTANT, -1.0, opt)
print("make_border", b.w, b.h, floats(b)[:6])
print("replicate", floats(m.copy_make_border(0, 0, 1, 1, Mat.BORDER_REPLICATE, 0.0, opt))[:4])
print("reflect", floats(m.copy_make_border(0, 0, 1, 1, Mat.BORDER_REFLECT, 0.0, opt))[:4])
print("cut_border", floats(b.copy_cut_border(1, 0, 0, 1, opt)) == floats(m))
vol = Mat(2, 2, 2, 1)
vol.fill(1)
print("3d border", vol.copy_make_border(0, 0, 0, 0, Mat.BORDER_CONSTANT, 0.0, opt, front=1, behind=1).d)

px = bytearray(8 * 6 * 3)
Mat.draw_rectangle(px, 8, 6, 3, 1, 1, 3, 2, 0x0000FF, -1)
print("rectangle", px[(1 * 8 + 1) * 3:(1 * 8 + 2) * 3], px[0:3], sum(px))
Mat.draw_line(px, 8, 6, 3, -50, -50, 50, 50, 0x00FF00, 1)
Mat.draw_circle(px, 8, 6, 3, 4, 3, 1000, 0xFF0000, 2)
Mat.draw_text(px, 8, 6, 3, "ncnn", -3, -3, 30, 0xFFFFFF)
print("clipped shapes drew", sum(px) > 0)

check("unknown pixel type", lambda: Mat.from_pixels(rgb, 9, 2, 2))
check("unsupported conversion", lambda: Mat.from_pixels(rgb, Mat.PIXEL_RGB | (7 << 16), 2, 2))
check("too few pixels", lambda: Mat.from_pixels(rgb[:11], Mat.PIXEL_RGB, 2, 2))
check("stride too short", lambda: Mat.from_pixels(rgb, Mat.PIXEL_RGB, 2, 2, 5))
check("pixels not a buffer", lambda: Mat.from_pixels(3, Mat.PIXEL_RGB, 2, 2))
check("zero width", lambda: Mat.from_pixels(rgb, Mat.PIXEL_RGB, 0, 2))
check("roi outside", lambda: Mat.from_pixels_roi(rgb, Mat.PIXEL_RGB, 2, 2, 1, 1, 2, 2))
check("resize to 0", lambda: Mat.from_pixels_resize(rgb, Mat.PIXEL_RGB, 2, 2, 0, 4))
check("to_pixels wrong channels", lambda: m.to_pixels(Mat.PIXEL_GRAY))
check("to_pixels into bytes", lambda: m.to_pixels(Mat.PIXEL_RGB, bytes(12)))
check("to_pixels buffer too small", lambda: m.to_pixels(Mat.PIXEL_RGB, bytearray(11)))
check("to_pixels of an empty Mat", lambda: Mat().to_pixels(Mat.PIXEL_RGB))
check("to_pixels int8 Mat", lambda: Mat(2, 2, 3, elemsize=1).to_pixels(Mat.PIXEL_RGB))
check("border negative", lambda: m.copy_make_border(-1, 0, 0, 0, Mat.BORDER_CONSTANT, 0.0, opt))
check("border bad type", lambda: m.copy_make_border(1, 0, 0, 0, 7, 0.0, opt))
check("reflect too wide", lambda: m.copy_make_border(0, 0, 2, 0, Mat.BORDER_REFLECT, 0.0, opt))
check("border huge", lambda: m.copy_make_border(30000, 30000, 30000, 30000, Mat.BORDER_CONSTANT, 0.0, opt))
check("border no opt", lambda: m.copy_make_border(1, 1, 1, 1, Mat.BORDER_CONSTANT, 0.0, None))
check("border empty Mat", lambda: Mat().copy_make_border(1, 1, 1, 1, Mat.BORDER_CONSTANT, 0.0, opt))
check("cut everything", lambda: m.copy_cut_border(1, 1, 0, 0, opt))
check("draw into bytes", lambda: Mat.draw_line(bytes(12), 2, 2, 3, 0, 0, 1, 1, 0, 1))
check("draw buffer too small", lambda: Mat.draw_rectangle(bytearray(10), 2, 2, 3, 0, 0, 1, 1, 0, 1))
check("draw 5 channels", lambda: Mat.draw_circle(bytearray(20), 2, 2, 5, 0, 0, 1, 0, 1))
check("draw text not str", lambda: Mat.draw_text(bytearray(12), 2, 2, 3, 5, 0, 0, 10, 0))
check("draw text font 0", lambda: Mat.draw_text(bytearray(12), 2, 2, 3, "x", 0, 0, 0, 0))
check("draw color str", lambda: Mat.draw_line(bytearray(12), 2, 2, 3, 0, 0, 1, 1, "red", 1))
# Sizes the caller's numbers decide, checked before ncnn allocates (ncnn aborted the
# process, or wrote through NULL, before).
px = bytearray(8 * 8)
check("draw_text, fontpixelsize 32768", lambda: Mat.draw_text(px, 8, 8, 1, "A", 0, 0, 32768, 255))
Mat.draw_text(px, 8, 8, 1, "A", -150, -300, 300, 255)  # (clipped to the image: 180 KB of font)
print("a 300-pixel font, clipped to an 8x8 image: drawn")
check("from_pixels_resize to 32768x32768",
      lambda: Mat.from_pixels_resize(bytes(48), Mat.PIXEL_RGB, 4, 4, 32768, 32768))
print("healthy", floats(Mat.from_pixels(rgb, Mat.PIXEL_GRAY, 2, 2)))
