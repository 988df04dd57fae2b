# SPDX-License-Identifier: MIT
# ncnn cross-compiled for the Xtensa lx106 core (the ESP8266's; QEMU's sim machine, profile
# xtensa), call0 ABI, soft float, with Debian's gcc-xtensa-lx106 and picolibc.
# ci/profiles.toml [xtensa] points ncnn's build at this file; what every board shares (ncnn's
# generic layers only: it has no Xtensa layer code) is in ci/board.common.cmake.
set(CMAKE_C_COMPILER xtensa-lx106-elf-gcc)
set(CMAKE_CXX_COMPILER xtensa-lx106-elf-g++)
# -mlongcalls: a call0 reaches +-512 KiB, the firmware is larger; -mtext-section-literals: each
# function's constants just before it (l32r reads 256 KiB back; ci/xtensa/port/sim.ld).
# picolibc's specs by path (Debian installs them where this GCC does not look).
set(NCNN_MP_CPU_FLAGS "-mlongcalls -mtext-section-literals --specs=/usr/lib/xtensa-lx106-elf/picolibc.specs")
# Debian has no libstdc++ for this target (NCNN_SIMPLESTL), as on rv32.
set(NCNN_MP_NO_CXX_LIBRARY ON)
include(${CMAKE_CURRENT_LIST_DIR}/../board.common.cmake)
