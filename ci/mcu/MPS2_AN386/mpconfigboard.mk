# SPDX-License-Identifier: MIT
# MicroPython's ports/qemu board definition for the MPS2-AN386 (Cortex-M4F), which the
# pinned MicroPython does not have: its MPS2_AN385 (same memory map, UART and timers) with
# the Cortex-M4's CPU flags and the FPv4-SP FPU, hard-float ABI. The profile qemu-m4f
# points the port here (BOARD_DIR). The port's start-up leaves the FPU off:
# ci/mcu/mps2_an385.c's board_init turns it on before any float instruction runs.
QEMU_ARCH = arm
QEMU_MACHINE = mps2-an386

CFLAGS += -mthumb -mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard
CFLAGS += -DQEMU_SOC_MPS2
CFLAGS += -DMICROPY_HW_MCU_NAME='"Cortex-M4F"'

LDSCRIPT = mcu/arm/mps2.ld

SRC_BOARD_O = shared/runtime/gchelper_native.o shared/runtime/gchelper_thumb2.o

MPY_CROSS_FLAGS += -march=armv7emsp
