# SPDX-License-Identifier: MIT
# ncnn cross-compiled for the Xtensa lx106 core (the ESP8266's; QEMU's sim machine, profile
# xtensa), call0 ABI, soft float, with Debian's gcc-xtensa-lx106 and picolibc.
# ci/profiles.toml [xtensa] points ncnn's build at this file.
set(CMAKE_SYSTEM_NAME Generic)
# ncnn has no Xtensa layer code: `xtensa` builds its generic C++ layers only, as for an ESP32
# (and as the Cortex-M3 and rv32 boards are built).
set(CMAKE_SYSTEM_PROCESSOR xtensa)
set(CMAKE_C_COMPILER xtensa-lx106-elf-gcc)
set(CMAKE_CXX_COMPILER xtensa-lx106-elf-g++)
# No OS to link test programs against: CMake's compiler checks build a static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# -mlongcalls: a call0 reaches +-512 KiB, the firmware is larger; -mtext-section-literals: each
# function's constants just before it (l32r reads 256 KiB back; ci/xtensa/port/sim.ld).
# picolibc's specs by path (Debian installs them where this GCC does not look). Sections per
# function let the firmware's --gc-sections drop the parts of ncnn that are never called.
set(NCNN_MP_CPU_FLAGS "-mlongcalls -mtext-section-literals --specs=/usr/lib/xtensa-lx106-elf/picolibc.specs -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
# Debian has no libstdc++ for this target: ncnn's own vector, string, new and delete
# (NCNN_SIMPLESTL), no C++ library header, no __cxa_guard_* calls (one thread), as on rv32.
set(CMAKE_CXX_FLAGS_INIT "${NCNN_MP_CPU_FLAGS} -nostdinc++ -fno-threadsafe-statics")
set(NCNN_SIMPLESTL ON CACHE BOOL "" FORCE)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
