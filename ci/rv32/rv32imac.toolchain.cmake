# SPDX-License-Identifier: MIT
# ncnn cross-compiled for a bare-metal RISC-V rv32imac core (QEMU's `virt` board; the ESP32-C6's
# instruction set: the C3 is rv32imc, the P4 rv32imafc), with Debian's gcc-riscv64-unknown-elf
# and picolibc. ci/profiles.toml [rv32] points ncnn's build at this file; what every board
# shares (ncnn's generic layers only, not src/layer/riscv/) is in ci/board.common.cmake.
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
# The CPU flags MicroPython's VIRT_RV32 board is built with here (ci/profiles.toml [rv32]):
# rv32imac, soft float (ilp32). GCC 12 wants `_zicsr` spelt out to assemble CSR accesses;
# the firmware's link names plain rv32imac, the multilib picolibc is built for.
# picolibc.specs: picolibc's headers (Debian has no newlib for this target).
set(NCNN_MP_CPU_FLAGS "-march=rv32imac_zicsr -mabi=ilp32 --specs=picolibc.specs")
# Debian has no libstdc++ for this target either (NCNN_SIMPLESTL). The rest of the profile's
# ncnn options are the Cortex-M board's.
set(NCNN_MP_NO_CXX_LIBRARY ON)
include(${CMAKE_CURRENT_LIST_DIR}/../board.common.cmake)
