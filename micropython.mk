# SPDX-License-Identifier: MIT
# ncnn_mp for MicroPython's make-based ports (unix, qemu, stm32, ...).
#
#   make -C ports/unix USER_C_MODULES=/path/to/folder-holding-this-checkout NCNN_DIR=/ncnn/install/prefix
#
# NCNN_DIR is an ncnn install prefix: $(NCNN_DIR)/include/ncnn/c_api.h and $(NCNN_DIR)/lib/libncnn.a.
# NCNN_MP_LIBS are the libraries linked after libncnn.a (OpenMP, C++ runtime, libm, threads;
# the default suits ncnn's default desktop build, with GCC's OpenMP).
# NCNN_MP_LIBS_VAR picks the link variable: ports that link with -nostdlib and put
# LDFLAGS before the objects (ports/qemu) need the libraries in LIBS instead.
# NCNN_MP_LDFLAGS (more link flags) and NCNN_MP_PORT_SRC (C files of the checkout, e.g. a
# bare-metal board's glue) are for targets that need them; ci/profiles.toml sets both.
NCNN_MP_DIR := $(USERMOD_DIR)

ifeq ($(NCNN_DIR),)
$(error ncnn_mp: set NCNN_DIR to an ncnn install prefix (holding include/ncnn/c_api.h and lib/libncnn.a))
endif
NCNN_MP_LIBS ?= -lgomp -lstdc++ -lm -lpthread
NCNN_MP_LIBS_VAR ?= LDFLAGS_USERMOD

# The binding (ncnn_mp/binding/), in C; micropython.cmake lists the same files (tests/test_build_files.py checks).
SRC_USERMOD_C += \
	$(NCNN_MP_DIR)/ncnn_mp/binding/modncnn_mp.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/checks.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/method.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/allocator.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/option.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/mat.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/mat_pixels.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/mat_camera.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/datareader.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/net.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/net_load.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/net_native.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/extractor.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/paramdict.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/modelbin.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/layer.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/state.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/calls.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/lend.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/trampoline.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/interrupt.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/stack.c \
	$(NCNN_MP_DIR)/ncnn_mp/binding/use.c \

# The C++ seam (ncnn_mp/seam/): what c_api.h cannot express (weights in place), in C++ built as
# ncnn is: no exceptions, and no RTTI where ncnn has none (NCNN_DISABLE_RTTI=ON, the MCU
# profiles: give -fno-rtti in NCNN_MP_CXXFLAGS, with the target's CPU flags for ports whose C++
# rule has none).
SRC_USERMOD_CXX += \
	$(NCNN_MP_DIR)/ncnn_mp/seam/cxx_load.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/seam/cxx_graph.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/seam/cxx_extract.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/seam/cxx_allocator.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/seam/cxx_arena.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/seam/cxx_catch.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/seam/cxx_pixels_int8.cpp \

# The shape guard (ncnn_mp/guard/): the layer wrapper that checks each layer's input shape.
SRC_USERMOD_CXX += \
	$(NCNN_MP_DIR)/ncnn_mp/guard/shape_guard.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/guard/arity.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/guard/shape_rules.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/guard/shape_padding.cpp \

# The include rule: ncnn_mp's four folders are on the include path (NCNN_MP_INC, the same four
# in micropython.cmake), and every #include between them names the header alone ("shape_guard.h",
# never "../guard/shape_guard.h"), so a file's includes do not change when a file moves.
NCNN_MP_INC := $(addprefix -I$(NCNN_MP_DIR)/ncnn_mp/,binding seam guard kernels)
CFLAGS_USERMOD += $(NCNN_MP_INC) -I$(NCNN_DIR)/include
# NCNN_MP_CFLAGS: what the board leaves out of ncnn_mp (ncnn_mp/binding/config.h), e.g.
# NCNN_MP_CFLAGS="-DNCNN_MP_HAS_DRAWING=0 -DNCNN_MP_HAS_PYTHON_READERS=0".
CFLAGS_USERMOD += $(NCNN_MP_CFLAGS)
# The kernels (ncnn_mp/kernels/): ncnn_mp's own Convolution, ConvolutionDepthWise and
# InnerProduct (kernels.h), used in place of ncnn's with NCNN_MP_KERNELS=1 (the profiles in
# ci/profiles.toml set it; without it these build to one function that makes none).
SRC_USERMOD_CXX += \
	$(NCNN_MP_DIR)/ncnn_mp/kernels/kernel_layers.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/kernels/kernel_input.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/kernels/kernel_conv_int8.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/kernels/kernel_conv_fp32.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/kernels/kernel_innerproduct.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/kernels/kernel_epilogue.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/kernels/kernel_requant.cpp \
	$(NCNN_MP_DIR)/ncnn_mp/kernels/kernel_pass.cpp \

ifeq ($(NCNN_MP_KERNELS),1)
CFLAGS_USERMOD += -DNCNN_MP_KERNELS=1
CXXFLAGS_USERMOD += -DNCNN_MP_KERNELS=1
endif
# NCNN_MP_LAYERS: the ncnn layer types a firmware keeps (ci/firmware.py passes a profile's
# ncnn_layers, or what MODELS=... need): only their kernels are kept (kernels.h).
ifneq ($(strip $(NCNN_MP_LAYERS)),)
NCNN_MP_LAYER_FLAGS := -DNCNN_MP_LAYERS_LISTED=1 $(foreach t,$(NCNN_MP_LAYERS),-DNCNN_MP_LAYER_$(t)=1)
CFLAGS_USERMOD += $(NCNN_MP_LAYER_FLAGS)
CXXFLAGS_USERMOD += $(NCNN_MP_LAYER_FLAGS)
endif
CXXFLAGS_USERMOD += $(NCNN_MP_INC) -I$(NCNN_DIR)/include -fno-exceptions $(NCNN_MP_CXXFLAGS)
ifeq ($(NCNN_MP_LIBS_VAR),LIBS)
# ports/qemu assigns LIBS (just libgcc) after this file is read: override keeps ours.
override LIBS += $(NCNN_DIR)/lib/libncnn.a $(NCNN_MP_LIBS)
else
$(NCNN_MP_LIBS_VAR) += $(NCNN_DIR)/lib/libncnn.a $(NCNN_MP_LIBS)
endif
LDFLAGS_USERMOD += $(NCNN_MP_LDFLAGS)
ifeq ($(notdir $(CURDIR)),unix)
# The C++ seam catches what desktop ncnn throws (std::bad_alloc): that one file is built with
# exceptions, and the C files with unwind tables, so an exception crosses ncnn_mp's C frames
# between the seam and ncnn (ncnn_mp/seam/cxx_catch.cpp).
$(BUILD)/$(patsubst $(USER_C_MODULES)/%,%,$(NCNN_MP_DIR))/ncnn_mp/seam/cxx_catch.o: CXXFLAGS += -fexceptions
CFLAGS_USERMOD += -funwind-tables
# ... and the shape guard wraps every layer of a Net, so that what one throws names it.
CFLAGS_USERMOD += -DNCNN_MP_CXX_CATCHES=1
CXXFLAGS_USERMOD += -DNCNN_MP_CXX_CATCHES=1
# The Unix port raises KeyboardInterrupt from inside its SIGINT handler, which is never
# safe with ncnn in the process: ncnn_mp/binding/interrupt.c installs one that schedules it.
CFLAGS_USERMOD += -DNCNN_MP_DEFER_SIGINT=1
LDFLAGS_USERMOD += -Wl,--wrap=mp_hal_set_interrupt_char
endif
SRC_USERMOD_C += $(addprefix $(NCNN_MP_DIR)/,$(NCNN_MP_PORT_SRC))
