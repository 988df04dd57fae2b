# SPDX-License-Identifier: MIT
"""ncnn_mp's Python side: what runs after (or around) the network, the same under MicroPython
and CPython. Import the module you need (importing the package imports none of them, so a
board's heap holds only what it uses):

    from ncnn_mp_lib import nanodet      # NanoDet-m's outputs -> objects
    from ncnn_mp_lib import retinaface   # RetinaFace's outputs -> faces and landmarks
    from ncnn_mp_lib import detection    # top-k, threshold scans (viper), IoU, NMS
    from ncnn_mp_lib import png          # RGB pixels -> a PNG file
    from ncnn_mp_lib import netprofile   # per-layer time and memory of a net

Installed with mip (on a networked board `mip.install("ncnn_mp_lib", index=...)`, from a PC
`mpremote mip install --index ... ncnn_mp_lib`) or copied as .mpy files from `make dist`:
docs/usage.md#the-python-package-and-make-dist.
"""
