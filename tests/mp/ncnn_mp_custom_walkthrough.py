# The custom-layer walkthrough in examples/ runs and computes what it says.
import sys

sys.path.append("../../examples")
import custom_layer_walkthrough  # noqa: E402

custom_layer_walkthrough.main()
