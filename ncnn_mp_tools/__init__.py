"""ncnn_mp's user tools, each run from the checkout's root as `python3 -m ncnn_mp_tools.<tool>`.

- quantize_int8: an fp32 ncnn model to int8 (per layer, or int8 between layers), fp16 or fp32 weights
- romfs_pack: model files into a MicroPython ROMFS image with aligned data (weights used in place)
- param_to_bin: a .param to the binary form an ncnn without NCNN_STRING reads
- preflight (make preflight): will models run on a profile's firmware, in how much memory
- compare (make compare): a model on the firmware against the CPython ncnn wheel, blob by blob
- layers: the ncnn layers a model needs, derived from ncnn's source (also sizes firmwares to models)
- device: runs preflight's and compare's MicroPython probes (probes/) on a profile's firmware
- models (make models): the published models the examples use, fetched by name, pinned by sha256 (models.toml)
"""
