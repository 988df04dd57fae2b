# SPDX-License-Identifier: MIT
# The module's first slice: version and what the firmware's ncnn was built with.
import ncnn_mp

v = ncnn_mp.version()
print(type(v).__name__, v.count(".") >= 2)
n = ncnn_mp.version_number()
print(type(n).__name__, n > 0)
info = ncnn_mp.build_info()
for key in sorted(info):
    assert type(info[key]) is bool, key
print(sorted(info))
print("NCNN_STRING", info["NCNN_STRING"], "NCNN_STDIO", info["NCNN_STDIO"], "NCNN_VULKAN", info["NCNN_VULKAN"])
