# SPDX-License-Identifier: MIT
# ncnn cross-compiled for a bare-metal Cortex-M3 (QEMU's MPS2-AN385 board), with Debian's
# gcc-arm-none-eabi and newlib. ci/profiles.toml [qemu] points ncnn's build at this file.
set(CMAKE_SYSTEM_NAME Generic)
# ncnn picks its layer code by CMAKE_SYSTEM_PROCESSOR (its CMakeLists.txt): for arm it adds
# src/layer/arm/, whose create_pipeline repacks every Convolution's weights into RAM (im2col,
# winograd) even without NEON; for xtensa (ESP32) it has no layer code of its own and builds
# only the generic C++ layers, which compute from the weights where they lie. The board is
# built that way, as an ESP32 is: weights loaded in place stay in flash. (Nothing else in
# ncnn's build reads the processor name; the CPU flags below say what the code is.)
set(CMAKE_SYSTEM_PROCESSOR xtensa)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
# No OS to link test programs against: CMake's compiler checks build a static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# The same CPU flags as MicroPython's board (ports/qemu/boards/MPS2_AN385/mpconfigboard.mk):
# a mismatch links objects of different ABIs without a word. Sections per function let the
# firmware's --gc-sections drop the parts of ncnn that are never called.
set(NCNN_MP_CPU_FLAGS "-mthumb -mcpu=cortex-m3 -mfloat-abi=soft -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
