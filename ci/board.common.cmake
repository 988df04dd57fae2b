# SPDX-License-Identifier: MIT
# What every board's toolchain file shares (ci/mcu/, ci/rv32/, ci/xtensa/, ci/esp32core/,
# ci/esp32/). A board's file sets its compilers and NCNN_MP_CPU_FLAGS (the firmware's own CPU
# flags: a mismatch links objects of different ABIs without a word), NCNN_MP_NO_CXX_LIBRARY where
# the target has no C++ library, then includes this file. ncnn's cache key covers this file's
# text as well as the board's (ci/common.py cmake_text).
set(CMAKE_SYSTEM_NAME Generic)
# ncnn picks its layer code by CMAKE_SYSTEM_PROCESSOR (its CMakeLists.txt): for arm it adds
# src/layer/arm/, whose create_pipeline repacks every Convolution's weights into RAM (im2col,
# winograd) even without NEON; for riscv src/layer/riscv/, whose Convolution does the same (its
# pack1 path, even without the vector extension these cores lack); for xtensa it has no layer
# code of its own and builds only the generic C++ layers, which compute from the weights where
# they lie. Every board is built that way, as an ESP32 is: weights loaded in place stay in
# flash. (Nothing else in ncnn's build reads the processor name; the CPU flags say what the
# code is.)
set(CMAKE_SYSTEM_PROCESSOR xtensa)
# No OS to link test programs against: CMake's compiler checks build a static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# Sections per function let the firmware's --gc-sections drop the parts of ncnn that are never
# called.
string(APPEND NCNN_MP_CPU_FLAGS " -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
if(NCNN_MP_NO_CXX_LIBRARY)
  # No C++ library for this target: ncnn's own vector, string, new and delete (NCNN_SIMPLESTL),
  # -nostdinc++ keeps any C++ library header out, and -fno-threadsafe-statics leaves out the
  # __cxa_guard_* calls a C++ runtime would provide (there is one thread).
  set(CMAKE_CXX_FLAGS_INIT "${NCNN_MP_CPU_FLAGS} -nostdinc++ -fno-threadsafe-statics")
  set(NCNN_SIMPLESTL ON CACHE BOOL "" FORCE)
else()
  set(CMAKE_CXX_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
endif()

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
