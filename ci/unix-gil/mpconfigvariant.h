// SPDX-License-Identifier: MIT
// The Unix port's standard variant with a GIL, as esp32's MicroPython has (profiles unix-gil and
// asan-gil, ci/profiles.toml): threads take turns running Python, and a C function that lets the GIL
// go lets the others run. (The port's asynchronous Ctrl-C cannot coexist with a GIL; ncnn_mp
// schedules Ctrl-C on this port anyway: ncnn_mp/binding/interrupt.c.)
#define MICROPY_CONFIG_ROM_LEVEL (MICROPY_CONFIG_ROM_LEVEL_EXTRA_FEATURES)

#include "variants/mpconfigvariant_common.h"

#undef MICROPY_ASYNC_KBD_INTR
#define MICROPY_ASYNC_KBD_INTR (0)
#define MICROPY_PY_THREAD (1)
#define MICROPY_PY_THREAD_GIL (1)
// The port's atomic section is a recursive mutex, which MicroPython builds only without a GIL.
#define MICROPY_PY_THREAD_RECURSIVE_MUTEX (1)
