# SPDX-License-Identifier: MIT
# Viper stores with a constant index (`out[1] = v`) through ptr8, ptr16 and ptr32, as a viper
# custom layer or decoder writes its outputs. MicroPython 1.25's Xtensa emitter (the ESP8266's
# and, as Xtensawin, the ESP32's and ESP32-S3's) stored the wrong register for a constant index
# 1..255: `p[1] = 42` through a ptr32 stored a heap address, `p[1] = p[0] + 40` stored 2, with
# no error. Index 0, an index of 256 or more and a variable index take other code paths: they
# are here too. The same values on every board (the build patches 1.25's emitter: ci/micropython/).
import array

import micropython

try:  # (a firmware without a native emitter refuses the decorator when it compiles)
    exec("@micropython.viper\ndef f():\n    pass\n")
except SyntaxError:
    print("SKIP: no viper")
    raise SystemExit


@micropython.viper
def store8(p: ptr8, v: int, i: int):
    p[0] = v
    p[1] = 42
    p[2] = p[0] + 40
    p[3] = v - 1
    p[127] = v + 1
    p[255] = v + 2
    p[256] = v + 3
    p[i] = v + 4


@micropython.viper
def store16(p: ptr16, v: int, i: int):
    p[0] = v
    p[1] = 42
    p[2] = p[0] + 40
    p[3] = v - 1
    p[127] = v + 1
    p[255] = v + 2
    p[256] = v + 3
    p[i] = v + 4


@micropython.viper
def store32(p: ptr32, v: int, i: int):
    p[0] = v
    p[1] = 42
    p[2] = p[0] + 40
    p[3] = v - 1
    p[127] = v + 1
    p[255] = v + 2
    p[256] = v + 3
    p[i] = v + 4


# Each case: the values at the indexes written, and that nothing else was touched.
AT = (0, 1, 2, 3, 127, 255, 256, 300)
for code, store, v in (("B", store8, 7), ("H", store16, 1000), ("I", store32, 100000)):
    buf = array.array(code, [0] * 320)
    store(buf, v, 300)
    print(code, [buf[i] for i in AT], sum(1 for i in range(320) if i not in AT and buf[i] != 0), "others changed")
