# ncnn for the ESP32-C3 (RISC-V RV32IMC, no FPU: floats in software, as on the QEMU
# Cortex-M3), with ESP-IDF's toolchain on PATH (run ESP-IDF's export.sh first). Not run on
# the project's machines: ESP-IDF cannot be fetched there. The ncnn options come from
# ci/profiles.toml [qemu] (README, ESP32).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv)
set(CMAKE_C_COMPILER riscv32-esp-elf-gcc)
set(CMAKE_CXX_COMPILER riscv32-esp-elf-g++)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(NCNN_MP_CPU_FLAGS "-march=rv32imc_zicsr_zifencei -mabi=ilp32 -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
set(NCNN_RVV OFF CACHE BOOL "" FORCE)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
