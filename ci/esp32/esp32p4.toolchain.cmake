# SPDX-License-Identifier: MIT
# ncnn for the ESP32-P4 (RISC-V rv32imafc, single-precision FPU), with ESP-IDF's toolchain on
# PATH (run ESP-IDF's export.sh first). Not run on the project's machines: ESP-IDF cannot be
# fetched there. The ncnn options come from ci/profiles.toml [qemu] (docs/boards.md, ESP32); the rv32
# profile built and ran the same code without the FPU here (ci/rv32/rv32imac.toolchain.cmake).
# What every board shares (ncnn's generic layers only, not src/layer/riscv/, whose Convolution
# repacks weights into RAM though the P4 has no vector extension) is in ci/board.common.cmake.
set(CMAKE_C_COMPILER riscv32-esp-elf-gcc)
set(CMAKE_CXX_COMPILER riscv32-esp-elf-g++)
# The ABI ESP-IDF builds the P4's firmware with: a mismatch links silently and breaks floats.
# (ESP-IDF's compilers come with newlib and libstdc++: no NCNN_SIMPLESTL needed.)
set(NCNN_MP_CPU_FLAGS "-march=rv32imafc_zicsr_zifencei -mabi=ilp32f")
include(${CMAKE_CURRENT_LIST_DIR}/../board.common.cmake)
