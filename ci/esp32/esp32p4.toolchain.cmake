# SPDX-License-Identifier: MIT
# ncnn for the ESP32-P4 (RISC-V rv32imafc, single-precision FPU), with ESP-IDF's toolchain on
# PATH (run ESP-IDF's export.sh first). Not run on the project's machines: ESP-IDF cannot be
# fetched there. The ncnn options come from ci/profiles.toml [qemu] (docs/boards.md, ESP32); the rv32
# profile built and ran the same code without the FPU here (ci/rv32/rv32imac.toolchain.cmake).
set(CMAKE_SYSTEM_NAME Generic)
# Not `riscv`: with it ncnn adds src/layer/riscv/, whose Convolution repacks its weights into
# RAM in create_pipeline even without the vector extension (the P4 has none; its pack1 path),
# so weights loaded in place would not stay in flash. `xtensa` builds only ncnn's generic C++
# layers, as on the QEMU boards (nothing else in ncnn's build reads the processor name; the
# flags say what the code is).
set(CMAKE_SYSTEM_PROCESSOR xtensa)
set(CMAKE_C_COMPILER riscv32-esp-elf-gcc)
set(CMAKE_CXX_COMPILER riscv32-esp-elf-g++)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
# The ABI ESP-IDF builds the P4's firmware with: a mismatch links silently and breaks floats.
# (ESP-IDF's compilers come with newlib and libstdc++: no NCNN_SIMPLESTL needed.)
set(NCNN_MP_CPU_FLAGS "-march=rv32imafc_zicsr_zifencei -mabi=ilp32f -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
