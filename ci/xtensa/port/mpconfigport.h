// SPDX-License-Identifier: MIT
// MicroPython's configuration for the Xtensa sim board: ports/qemu's (the other QEMU boards'
// port), with the Xtensa native emitter (viper, @micropython.native) and inline Xtensa
// assembly, which ports/qemu only turns on for ARM and RISC-V. The lx106 core runs the call0
// ABI: MICROPY_EMIT_XTENSA (the ESP8266's emitter); the ESP32's windowed ABI has
// MICROPY_EMIT_XTENSAWIN, which shares its code generation (py/asmxtensa.c) but cannot run here.
#include "ports/qemu/mpconfigport.h"

#define MICROPY_EMIT_XTENSA         (1)
#define MICROPY_EMIT_INLINE_XTENSA  (1)
// The GC scans the registers setjmp saves: a0, a1 and a12-a15, call0's callee-saved ones
// (shared/runtime/gchelper_generic.c has no Xtensa code of its own).
#define MICROPY_GCREGS_SETJMP       (1)
