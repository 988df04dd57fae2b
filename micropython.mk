# ncnn_mp for MicroPython's make-based ports (unix, qemu, stm32, ...).
#
#   make -C ports/unix USER_C_MODULES=/path/to/folder-holding-this-checkout NCNN_DIR=/ncnn/install/prefix
#
# NCNN_DIR is an ncnn install prefix: $(NCNN_DIR)/include/ncnn/c_api.h and $(NCNN_DIR)/lib/libncnn.a.
# NCNN_MP_LIBS are the libraries linked after libncnn.a (C++ runtime, libm, threads).
# NCNN_MP_LIBS_VAR picks the link variable: ports that link with -nostdlib and put
# LDFLAGS before the objects (ports/qemu) need the libraries in LIBS instead.
NCNN_MP_DIR := $(USERMOD_DIR)

ifeq ($(NCNN_DIR),)
$(error ncnn_mp: set NCNN_DIR to an ncnn install prefix (holding include/ncnn/c_api.h and lib/libncnn.a))
endif
NCNN_MP_LIBS ?= -lstdc++ -lm -lpthread
NCNN_MP_LIBS_VAR ?= LDFLAGS_USERMOD

# The C sources; micropython.cmake lists the same files (tests/test_build_files.py checks).
SRC_USERMOD_C += \
	$(NCNN_MP_DIR)/ncnn_mp/modncnn_mp.c \
	$(NCNN_MP_DIR)/ncnn_mp/checks.c \
	$(NCNN_MP_DIR)/ncnn_mp/allocator.c \
	$(NCNN_MP_DIR)/ncnn_mp/option.c \
	$(NCNN_MP_DIR)/ncnn_mp/mat.c \
	$(NCNN_MP_DIR)/ncnn_mp/mat_pixels.c \
	$(NCNN_MP_DIR)/ncnn_mp/datareader.c \
	$(NCNN_MP_DIR)/ncnn_mp/net.c \
	$(NCNN_MP_DIR)/ncnn_mp/extractor.c \
	$(NCNN_MP_DIR)/ncnn_mp/paramdict.c \
	$(NCNN_MP_DIR)/ncnn_mp/modelbin.c \
	$(NCNN_MP_DIR)/ncnn_mp/layer.c \
	$(NCNN_MP_DIR)/ncnn_mp/trampoline.c \

CFLAGS_USERMOD += -I$(NCNN_MP_DIR)/ncnn_mp -I$(NCNN_DIR)/include
$(NCNN_MP_LIBS_VAR) += $(NCNN_DIR)/lib/libncnn.a $(NCNN_MP_LIBS)

# Test firmware only (ci/profiles.toml): the GC's conservative stack scan made readable
# to valgrind and AddressSanitizer. Why and how: ci/checked_gc_scan.c.
ifeq ($(NCNN_MP_CHECKED_GC_SCAN),1)
SRC_USERMOD_C += $(NCNN_MP_DIR)/ci/checked_gc_scan.c
LDFLAGS_USERMOD += -Wl,--wrap=gc_collect_root
endif
