// SPDX-License-Identifier: MIT
// The ncnn_mp module: its global table, and what describes the ncnn it was built with.
#include "ncnn_mp.h"

// version() -> str                         wraps ncnn_version()
static mp_obj_t ncnn_mp_version(void) {
    return mp_obj_new_str_from_cstr(ncnn_version());
}
static NCNN_MP_DEFINE_FUNCTION_0(ncnn_mp_version_obj, "ncnn_mp.version", ncnn_mp_version);

// version_number() -> int                  wraps ncnn_version_number()
static mp_obj_t ncnn_mp_version_number(void) {
    return mp_obj_new_int(ncnn_version_number());
}
static NCNN_MP_DEFINE_FUNCTION_0(ncnn_mp_version_number_obj, "ncnn_mp.version_number", ncnn_mp_version_number);

// build_info() -> dict[str, bool]          the compile-time switches of ncnn's platform.h
// One row per switch: scripts and tests skip what a given build lacks.
#define NCNN_MP_BUILD_FLAGS(X) \
    X(NCNN_STDIO) X(NCNN_STRING) X(NCNN_SIMPLEOCV) X(NCNN_SIMPLEOMP) X(NCNN_SIMPLESTL) \
    X(NCNN_SIMPLEMATH) X(NCNN_THREADS) X(NCNN_BENCHMARK) X(NCNN_C_API) X(NCNN_PLATFORM_API) \
    X(NCNN_PIXEL) X(NCNN_PIXEL_ROTATE) X(NCNN_PIXEL_AFFINE) X(NCNN_PIXEL_DRAWING) \
    X(NCNN_VULKAN) X(NCNN_RUNTIME_CPU) X(NCNN_INT8) X(NCNN_BF16) X(NCNN_FORCE_INLINE) X(NCNN_BATCH)

#ifndef NCNN_MP_KERNELS
#define NCNN_MP_KERNELS 0
#endif

static mp_obj_t ncnn_mp_build_info(void) {
    mp_obj_t info = mp_obj_new_dict(0);
    #define NCNN_MP_STORE_FLAG(flag) \
    mp_obj_dict_store(info, MP_OBJ_NEW_QSTR(MP_QSTR_##flag), mp_obj_new_bool(flag));
    NCNN_MP_BUILD_FLAGS(NCNN_MP_STORE_FLAG)
    // ncnn_mp's own: its kernels in place of ncnn's Convolution, ConvolutionDepthWise, InnerProduct,
    // and what the board kept (config.h)
    NCNN_MP_STORE_FLAG(NCNN_MP_KERNELS)
    NCNN_MP_STORE_FLAG(NCNN_MP_HAS_PIXELS)
    NCNN_MP_STORE_FLAG(NCNN_MP_HAS_DRAWING)
    NCNN_MP_STORE_FLAG(NCNN_MP_HAS_CAMERA)
    NCNN_MP_STORE_FLAG(NCNN_MP_HAS_PYTHON_READERS)
    NCNN_MP_STORE_FLAG(NCNN_MP_HAS_COUNTING_ALLOCATOR)
    NCNN_MP_STORE_FLAG(NCNN_MP_HAS_GRAPH_INFO)
    #undef NCNN_MP_STORE_FLAG
    return info;
}
static NCNN_MP_DEFINE_FUNCTION_0(ncnn_mp_build_info_obj, "ncnn_mp.build_info", ncnn_mp_build_info);

// live_custom_layers() -> int   Python layer instances that ncnn holds now (for leak checks)
static mp_obj_t ncnn_mp_live_custom_layers(void) {
    return mp_obj_new_int_from_uint(ncnn_mp_custom_live_count());
}
static NCNN_MP_DEFINE_FUNCTION_0(ncnn_mp_live_custom_layers_obj, "ncnn_mp.live_custom_layers", ncnn_mp_live_custom_layers);

static const mp_rom_map_elem_t ncnn_mp_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_ncnn_mp) },
    { MP_ROM_QSTR(MP_QSTR_version), MP_ROM_PTR(&ncnn_mp_version_obj) },
    { MP_ROM_QSTR(MP_QSTR_version_number), MP_ROM_PTR(&ncnn_mp_version_number_obj) },
    { MP_ROM_QSTR(MP_QSTR_build_info), MP_ROM_PTR(&ncnn_mp_build_info_obj) },
    { MP_ROM_QSTR(MP_QSTR_live_custom_layers), MP_ROM_PTR(&ncnn_mp_live_custom_layers_obj) },
    // ncnn::LayerType::CustomBit: binary params number custom layer types CUSTOM_BIT | n
    { MP_ROM_QSTR(MP_QSTR_CUSTOM_BIT), MP_ROM_INT(1 << 8) },
    { MP_ROM_QSTR(MP_QSTR_Allocator), MP_ROM_PTR(&ncnn_mp_type_Allocator) },
    { MP_ROM_QSTR(MP_QSTR_Option), MP_ROM_PTR(&ncnn_mp_type_Option) },
    { MP_ROM_QSTR(MP_QSTR_Mat), MP_ROM_PTR(&ncnn_mp_type_Mat) },
    { MP_ROM_QSTR(MP_QSTR_DataReader), MP_ROM_PTR(&ncnn_mp_type_DataReader) },
    { MP_ROM_QSTR(MP_QSTR_ParamDict), MP_ROM_PTR(&ncnn_mp_type_ParamDict) },
    { MP_ROM_QSTR(MP_QSTR_ModelBin), MP_ROM_PTR(&ncnn_mp_type_ModelBin) },
    { MP_ROM_QSTR(MP_QSTR_Layer), MP_ROM_PTR(&ncnn_mp_type_Layer) },
    { MP_ROM_QSTR(MP_QSTR_Net), MP_ROM_PTR(&ncnn_mp_type_Net) },
    { MP_ROM_QSTR(MP_QSTR_Extractor), MP_ROM_PTR(&ncnn_mp_type_Extractor) },
};
static MP_DEFINE_CONST_DICT(ncnn_mp_module_globals, ncnn_mp_module_globals_table);

const mp_obj_module_t ncnn_mp_user_cmodule = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&ncnn_mp_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR_ncnn_mp, ncnn_mp_user_cmodule);
