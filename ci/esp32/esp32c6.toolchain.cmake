# SPDX-License-Identifier: MIT
# ncnn for the ESP32-C6 (RISC-V rv32imac, no FPU: floats in software, as on both QEMU boards),
# with ESP-IDF's toolchain on PATH (run ESP-IDF's export.sh first). Not run on the project's
# machines: ESP-IDF cannot be fetched there. The ncnn options come from ci/profiles.toml
# [qemu] (docs/boards.md, ESP32); the rv32 profile built and ran the same instruction set here
# (ci/rv32/rv32imac.toolchain.cmake, with Debian's compiler and picolibc).
set(CMAKE_SYSTEM_NAME Generic)
# Not `riscv`: with it ncnn adds src/layer/riscv/, whose Convolution repacks its weights into
# RAM in create_pipeline even without the vector extension (its pack1 path), so weights loaded
# in place would not stay in flash. `xtensa` builds only ncnn's generic C++ layers, as on the
# QEMU boards (nothing else in ncnn's build reads the processor name; the flags say what the
# code is).
set(CMAKE_SYSTEM_PROCESSOR xtensa)
set(CMAKE_C_COMPILER riscv32-esp-elf-gcc)
set(CMAKE_CXX_COMPILER riscv32-esp-elf-g++)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
# ESP-IDF's own flags for the chip (its compilers come with newlib and libstdc++: no
# NCNN_SIMPLESTL needed, unlike Debian's riscv64-unknown-elf).
set(NCNN_MP_CPU_FLAGS "-march=rv32imac_zicsr_zifencei -mabi=ilp32 -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
