# SPDX-License-Identifier: MIT
# The custom-layer walkthrough in examples/ runs and computes what it says.
from mptest import require

require("NCNN_STRING")  # layer and blob names
import custom_layer_walkthrough  # noqa: E402

custom_layer_walkthrough.main()
