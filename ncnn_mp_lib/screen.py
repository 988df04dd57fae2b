# SPDX-License-Identifier: MIT
"""Detections drawn into an RGB565 frame, the way a MicroPython board shows them on a screen.

MicroPython's framebuf draws into a bytearray in RGB565 with the low byte first (its native
order: framebuf.RGB565). A camera or an SPI LCD often wants the high byte first
(Mat.PIXEL_RGB565_BE): framebuf then draws the same shapes with each colour's two bytes
swapped, and every pixel it writes lands in the frame's own order.

    draw_detections(frame, w, h, [(x0, y0, x1, y1, "cup 87%", rgb565(0, 255, 0))], big_endian=True)

Labels use framebuf's 8x8 font, on a filled box of the colour, above the box where there is room.
"""

import framebuf

try:
    from typing import Sequence
except ImportError:  # MicroPython: the annotations are strings it never reads
    pass

BLACK = 0


def rgb565(r: int, g: int, b: int) -> int:
    """An 8-bit R, G, B as an RGB565 value (framebuf's colour)."""
    return (r >> 3) << 11 | (g >> 2) << 5 | b >> 3


def swapped(colour: int) -> int:
    """An RGB565 value with its two bytes exchanged: framebuf writes it low byte first, so a
    frame with the high byte first gets the colour meant."""
    return (colour & 0xFF) << 8 | colour >> 8


def draw_detections(frame: "bytearray", w: int, h: int,
                    boxes: "Sequence[tuple[float, float, float, float, str, int]]",
                    big_endian: bool = False, thickness: int = 2) -> None:
    """Draw each (x0, y0, x1, y1, label, RGB565 colour) into the w x h RGB565 frame: the box's
    outline `thickness` pixels wide and its label; framebuf clips both to the frame."""
    fb = framebuf.FrameBuffer(frame, w, h, framebuf.RGB565)
    ink = swapped(BLACK) if big_endian else BLACK
    for x0, y0, x1, y1, label, colour in boxes:
        c = swapped(colour) if big_endian else colour
        x, y, bw, bh = int(x0), int(y0), max(1, int(x1) - int(x0)), max(1, int(y1) - int(y0))
        for t in range(thickness):
            fb.rect(x + t, y + t, bw - 2 * t, bh - 2 * t, c)
        lw, lh = 8 * len(label) + 4, 10
        ly = y - lh if y >= lh else y  # above the box, else inside it at the top
        fb.fill_rect(x, ly, lw, lh, c)
        fb.text(label, x + 2, ly + 1, ink)
