# SPDX-License-Identifier: MIT
# ncnn cross-compiled for a bare-metal Cortex-M3 (QEMU's MPS2-AN385 board), with Debian's
# gcc-arm-none-eabi and newlib. ci/profiles.toml [qemu] points ncnn's build at this file; what
# every board shares (ncnn's generic layers only: weights loaded in place stay in flash) is in
# ci/board.common.cmake.
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
# The same CPU flags as MicroPython's board (ports/qemu/boards/MPS2_AN385/mpconfigboard.mk).
set(NCNN_MP_CPU_FLAGS "-mthumb -mcpu=cortex-m3 -mfloat-abi=soft")
include(${CMAKE_CURRENT_LIST_DIR}/../board.common.cmake)
