# SPDX-License-Identifier: MIT
# ncnn cross-compiled for a bare-metal Cortex-M4F (QEMU's MPS2-AN386 board: FPv4-SP single
# precision FPU, DSP extension), with Debian's gcc-arm-none-eabi and newlib's hard-float
# multilib (thumb/v7e-m+fp/hard). ci/profiles.toml [qemu-m4f] points ncnn's build at this file;
# what every board shares is in ci/board.common.cmake.
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
# The firmware's CPU flags (ci/mcu/MPS2_AN386/mpconfigboard.mk): every object of one link
# must agree on the float ABI (hard: float arguments in s0-s15), or the link fails.
# -ffp-contract=off: GCC would fuse ncnn's `sum += a * b` into VFMA (one rounding, not two),
# so ncnn's generic layers would round otherwise than on every other board and than
# ncnn_mp's kernels, which tests/mp/ncnn_mp_kernels.py holds equal to them.
set(NCNN_MP_CPU_FLAGS "-mthumb -mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard -ffp-contract=off")
include(${CMAKE_CURRENT_LIST_DIR}/../board.common.cmake)
