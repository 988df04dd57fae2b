# The custom-layer walkthrough in examples/ runs and computes what it says.
import sys

sys.path.append("../../examples")
from mptest import require  # noqa: E402

require("NCNN_STRING")  # layer and blob names
import custom_layer_walkthrough  # noqa: E402

custom_layer_walkthrough.main()
