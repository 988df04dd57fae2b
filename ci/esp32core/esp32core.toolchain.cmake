# SPDX-License-Identifier: MIT
# The esp32core board's compiler for CMake builds: picolibc (ci/picolibc.py) and ncnn
# (ci/profiles.toml [esp32core]). clang 22 through the board's compiler driver
# (bin/xtensa-esp32-clang: the ESP32's core less MUL32_HIGH, windowed ABI, FPU; why a driver is
# there), LLVM's archiver. NCNN_MP_LIBC_DIR, when given, is picolibc built for this core: its
# headers (ncnn's build); picolibc's own build has none yet. What every board shares (ncnn's
# generic layers only: it has no Xtensa layer code) is in ci/board.common.cmake.
set(CMAKE_C_COMPILER ${CMAKE_CURRENT_LIST_DIR}/bin/xtensa-esp32-clang)
set(CMAKE_CXX_COMPILER ${CMAKE_CURRENT_LIST_DIR}/bin/xtensa-esp32-clang++)
set(CMAKE_ASM_COMPILER ${CMAKE_CURRENT_LIST_DIR}/bin/xtensa-esp32-clang)
set(CMAKE_AR /usr/bin/llvm-ar-22 CACHE FILEPATH "")
set(CMAKE_RANLIB /usr/bin/llvm-ranlib-22 CACHE FILEPATH "")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES NCNN_MP_LIBC_DIR)

# __XTENSA_WINDOWED_ABI__: clang does not define it; picolibc's setjmp and libgcc's assembly ask.
set(NCNN_MP_CPU_FLAGS "-D__XTENSA_WINDOWED_ABI__")
if(NCNN_MP_LIBC_DIR)
  string(APPEND NCNN_MP_CPU_FLAGS " -isystem ${NCNN_MP_LIBC_DIR}/include")
endif()
# No C++ library for this target (NCNN_SIMPLESTL), as on the other boards.
set(NCNN_MP_NO_CXX_LIBRARY ON)
include(${CMAKE_CURRENT_LIST_DIR}/../board.common.cmake)
set(CMAKE_ASM_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
