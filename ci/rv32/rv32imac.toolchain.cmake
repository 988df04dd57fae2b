# SPDX-License-Identifier: MIT
# ncnn cross-compiled for a bare-metal RISC-V rv32imac core (QEMU's `virt` board; the ESP32-C6's
# instruction set: the C3 is rv32imc, the P4 rv32imafc), with Debian's gcc-riscv64-unknown-elf
# and picolibc. ci/profiles.toml [rv32] points ncnn's build at this file.
set(CMAKE_SYSTEM_NAME Generic)
# As for the Cortex-M3 board (ci/mcu/cortex-m3.toolchain.cmake): with `riscv` ncnn adds
# src/layer/riscv/, whose create_pipeline repacks Convolution weights into RAM (and whose code
# is written for the vector extension these cores lack); with `xtensa` it builds only the
# generic C++ layers, which compute from the weights where they lie, so weights loaded in place
# stay in flash. (Nothing else in ncnn's build reads the processor name.)
set(CMAKE_SYSTEM_PROCESSOR xtensa)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
# No OS to link test programs against: CMake's compiler checks build a static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# The CPU flags MicroPython's VIRT_RV32 board is built with here (ci/profiles.toml [rv32]):
# rv32imac, soft float (ilp32). GCC 12 wants `_zicsr` spelt out to assemble CSR accesses;
# the firmware's link names plain rv32imac, the multilib picolibc is built for.
# picolibc.specs: picolibc's headers (Debian has no newlib for this target). Sections per
# function let the firmware's --gc-sections drop the parts of ncnn that are never called.
set(NCNN_MP_CPU_FLAGS "-march=rv32imac_zicsr -mabi=ilp32 --specs=picolibc.specs -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
# Debian has no libstdc++ for this target either: ncnn is built with NCNN_SIMPLESTL (its own
# vector, string, new and delete), -nostdinc++ keeps any C++ library header out, and
# -fno-threadsafe-statics leaves out the __cxa_guard_* calls a C++ runtime would provide
# (there is one thread). The rest of the profile's ncnn options are the Cortex-M board's.
set(CMAKE_CXX_FLAGS_INIT "${NCNN_MP_CPU_FLAGS} -nostdinc++ -fno-threadsafe-statics")
set(NCNN_SIMPLESTL ON CACHE BOOL "" FORCE)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
