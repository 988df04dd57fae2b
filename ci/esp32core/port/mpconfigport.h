// SPDX-License-Identifier: MIT
// MicroPython's configuration for the esp32core board: ports/qemu's (the other QEMU boards'
// port), with what MicroPython's own ESP32 port does on this core:
// - the `xtensawin` native emitter (viper, @micropython.native: entry/callx8/retw code);
// - nlr through setjmp/longjmp (py/nlrxtensa.c is call0 only; picolibc's setjmp, built for the
//   windowed ABI, spills the register windows first and longjmp resets them);
// - gc_collect in ci/esp32core/port/gccollect.c, which spills the register windows before it
//   scans the stack (a caller's pointers may be in the physical registers of a window no
//   frame on the stack holds yet).
#include "ports/qemu/mpconfigport.h"

#define MICROPY_EMIT_XTENSAWIN      (1)
#define MICROPY_NLR_SETJMP          (1)
