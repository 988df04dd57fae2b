# SPDX-License-Identifier: MIT
# ncnn for the ESP32-S3 (Xtensa LX7, single-precision FPU), with ESP-IDF's toolchain on PATH
# (run ESP-IDF's export.sh first). Not run on the project's machines: ESP-IDF cannot be
# fetched there. The ncnn options come from ci/profiles.toml [qemu] (docs/boards.md, ESP32);
# what every board shares is in ci/board.common.cmake.
set(CMAKE_C_COMPILER xtensa-esp32s3-elf-gcc)
set(CMAKE_CXX_COMPILER xtensa-esp32s3-elf-g++)
# -mlongcalls: ESP-IDF links code across flash and IRAM, beyond a short call's reach.
set(NCNN_MP_CPU_FLAGS "-mlongcalls")
include(${CMAKE_CURRENT_LIST_DIR}/../board.common.cmake)
