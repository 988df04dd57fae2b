# SPDX-License-Identifier: MIT
# ncnn for the ESP32-C6 (RISC-V rv32imac, no FPU: floats in software, as on both QEMU boards),
# with ESP-IDF's toolchain on PATH (run ESP-IDF's export.sh first). Not run on the project's
# machines: ESP-IDF cannot be fetched there. The ncnn options come from ci/profiles.toml
# [qemu] (docs/boards.md, ESP32); the rv32 profile built and ran the same instruction set here
# (ci/rv32/rv32imac.toolchain.cmake, with Debian's compiler and picolibc). What every board
# shares (ncnn's generic layers only, not src/layer/riscv/) is in ci/board.common.cmake.
set(CMAKE_C_COMPILER riscv32-esp-elf-gcc)
set(CMAKE_CXX_COMPILER riscv32-esp-elf-g++)
# ESP-IDF's own flags for the chip (its compilers come with newlib and libstdc++: no
# NCNN_SIMPLESTL needed, unlike Debian's riscv64-unknown-elf).
set(NCNN_MP_CPU_FLAGS "-march=rv32imac_zicsr_zifencei -mabi=ilp32")
include(${CMAKE_CURRENT_LIST_DIR}/../board.common.cmake)
