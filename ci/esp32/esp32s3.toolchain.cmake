# SPDX-License-Identifier: MIT
# ncnn for the ESP32-S3 (Xtensa LX7, single-precision FPU), with ESP-IDF's toolchain on PATH
# (run ESP-IDF's export.sh first). Not run on the project's machines: ESP-IDF cannot be
# fetched there. The ncnn options come from ci/profiles.toml [qemu] (docs/boards.md, ESP32).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR xtensa)
set(CMAKE_C_COMPILER xtensa-esp32s3-elf-gcc)
set(CMAKE_CXX_COMPILER xtensa-esp32s3-elf-g++)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
# -mlongcalls: ESP-IDF links code across flash and IRAM, beyond a short call's reach.
set(NCNN_MP_CPU_FLAGS "-mlongcalls -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
