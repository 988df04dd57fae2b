# SPDX-License-Identifier: MIT
# The esp32core board's compiler for CMake builds: picolibc (ci/picolibc.py) and ncnn
# (ci/profiles.toml [esp32core]). clang 22 through the board's compiler driver
# (bin/xtensa-esp32-clang: the ESP32's core less MUL32_HIGH, windowed ABI, FPU; why a driver is
# there), LLVM's archiver. NCNN_MP_LIBC_DIR, when given, is picolibc built for this core: its
# headers (ncnn's build); picolibc's own build has none yet.
set(CMAKE_SYSTEM_NAME Generic)
# ncnn has no Xtensa layer code: `xtensa` builds its generic C++ layers only, as for an ESP32
# (and as the other boards are built).
set(CMAKE_SYSTEM_PROCESSOR xtensa)
set(CMAKE_C_COMPILER ${CMAKE_CURRENT_LIST_DIR}/bin/xtensa-esp32-clang)
set(CMAKE_CXX_COMPILER ${CMAKE_CURRENT_LIST_DIR}/bin/xtensa-esp32-clang++)
set(CMAKE_ASM_COMPILER ${CMAKE_CURRENT_LIST_DIR}/bin/xtensa-esp32-clang)
set(CMAKE_AR /usr/bin/llvm-ar-22 CACHE FILEPATH "")
set(CMAKE_RANLIB /usr/bin/llvm-ranlib-22 CACHE FILEPATH "")
# No OS to link test programs against: CMake's compiler checks build a static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES NCNN_MP_LIBC_DIR)

# __XTENSA_WINDOWED_ABI__: clang does not define it; picolibc's setjmp and libgcc's assembly ask.
# Sections per function let the firmware's --gc-sections drop what is never called.
set(NCNN_MP_CPU_FLAGS "-D__XTENSA_WINDOWED_ABI__ -ffunction-sections -fdata-sections")
if(NCNN_MP_LIBC_DIR)
  string(APPEND NCNN_MP_CPU_FLAGS " -isystem ${NCNN_MP_LIBC_DIR}/include")
endif()
set(CMAKE_C_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
set(CMAKE_ASM_FLAGS_INIT "${NCNN_MP_CPU_FLAGS}")
# No C++ library for this target: ncnn's own vector, string, new and delete (NCNN_SIMPLESTL), no
# C++ library header, no __cxa_guard_* calls (one thread), as on the other boards.
set(CMAKE_CXX_FLAGS_INIT "${NCNN_MP_CPU_FLAGS} -nostdinc++ -fno-threadsafe-statics")
set(NCNN_SIMPLESTL ON CACHE BOOL "" FORCE)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
