# SPDX-License-Identifier: MIT
# ncnn_mp for MicroPython's CMake-based ports (esp32, rp2, ...):
#
#   idf.py -D USER_C_MODULES=/path/to/ncnn_mp/micropython.cmake -D NCNN_DIR=/ncnn/prefix build
#
# ncnn is found as NCNN_DIR (an install prefix holding include/ncnn/c_api.h and
# lib/libncnn.a), or else through find_package(ncnn) (an installed ncnnConfig.cmake).
add_library(usermod_ncnn_mp INTERFACE)

# The sources; micropython.mk lists the same files (tests/test_build_files.py checks).
# The binding (ncnn_mp/binding/), in C.
target_sources(usermod_ncnn_mp INTERFACE
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/modncnn_mp.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/checks.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/method.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/allocator.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/option.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/mat.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/mat_pixels.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/mat_camera.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/datareader.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/net.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/net_load.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/net_native.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/extractor.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/paramdict.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/modelbin.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/layer.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/state.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/calls.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/lend.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/trampoline.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/interrupt.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/stack.c
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/binding/use.c
)
# The C++ seam (ncnn_mp/seam/, cxx_seam.h): what c_api.h cannot express (weights in place), C++
# built as ncnn is: ESP-IDF compiles C++ without RTTI and exceptions by default, as the MCU
# profiles build ncnn.
target_sources(usermod_ncnn_mp INTERFACE
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/seam/cxx_load.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/seam/cxx_graph.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/seam/cxx_extract.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/seam/cxx_allocator.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/seam/cxx_arena.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/seam/cxx_catch.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/seam/cxx_pixels_int8.cpp
)
# The shape guard (ncnn_mp/guard/): the layer wrapper that checks each layer's input shape.
target_sources(usermod_ncnn_mp INTERFACE
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/guard/shape_guard.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/guard/arity.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/guard/shape_rules.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/guard/shape_padding.cpp
)
# The kernels (ncnn_mp/kernels/), with NCNN_MP_KERNELS: ncnn_mp's own Convolution,
# ConvolutionDepthWise and InnerProduct (kernels.h) in place of ncnn's generic ones, as the
# board profiles build it (without it the sources build to one function that makes none).
target_sources(usermod_ncnn_mp INTERFACE
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/kernels/kernel_layers.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/kernels/kernel_input.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/kernels/kernel_conv_int8.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/kernels/kernel_conv_fp32.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/kernels/kernel_innerproduct.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/kernels/kernel_epilogue.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/kernels/kernel_requant.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/kernels/kernel_pass.cpp
)
option(NCNN_MP_KERNELS "ncnn_mp's own convolution and inner-product kernels" ON)
if(NCNN_MP_KERNELS)
    target_compile_definitions(usermod_ncnn_mp INTERFACE NCNN_MP_KERNELS=1)
endif()

# The include rule (micropython.mk states it): the four folders on the include path, and every
# #include between them by the header's name alone.
foreach(part binding seam guard kernels)
    target_include_directories(usermod_ncnn_mp INTERFACE ${CMAKE_CURRENT_LIST_DIR}/ncnn_mp/${part})
endforeach()
# NCNN_MP_DEFINITIONS: what the board leaves out of ncnn_mp (ncnn_mp/binding/config.h), e.g.
# -DNCNN_MP_DEFINITIONS="NCNN_MP_HAS_DRAWING=0;NCNN_MP_HAS_PYTHON_READERS=0".
if(NCNN_MP_DEFINITIONS)
    target_compile_definitions(usermod_ncnn_mp INTERFACE ${NCNN_MP_DEFINITIONS})
endif()

set(NCNN_DIR "" CACHE PATH "ncnn install prefix for ncnn_mp (empty: find_package(ncnn))")
if(NCNN_DIR)
    if(NOT EXISTS "${NCNN_DIR}/include/ncnn/c_api.h" OR NOT EXISTS "${NCNN_DIR}/lib/libncnn.a")
        message(FATAL_ERROR "ncnn_mp: NCNN_DIR=${NCNN_DIR} holds no include/ncnn/c_api.h and lib/libncnn.a")
    endif()
    target_include_directories(usermod_ncnn_mp INTERFACE "${NCNN_DIR}/include")
    target_link_libraries(usermod_ncnn_mp INTERFACE "${NCNN_DIR}/lib/libncnn.a")
else()
    find_package(ncnn REQUIRED)
    # The include directory is named explicitly: usermod.cmake gathers include
    # directories for the QSTR scan and does not follow imported targets.
    get_target_property(NCNN_MP_NCNN_INCLUDES ncnn INTERFACE_INCLUDE_DIRECTORIES)
    foreach(dir ${NCNN_MP_NCNN_INCLUDES})
        # ncnn's config names include/ncnn; ncnn_mp includes <ncnn/c_api.h>.
        get_filename_component(parent "${dir}" DIRECTORY)
        target_include_directories(usermod_ncnn_mp INTERFACE "${dir}" "${parent}")
    endforeach()
    target_link_libraries(usermod_ncnn_mp INTERFACE ncnn)
endif()
# ncnn is C++: the firmware links the C++ runtime and libm.
target_link_libraries(usermod_ncnn_mp INTERFACE stdc++ m)

target_link_libraries(usermod INTERFACE usermod_ncnn_mp)
