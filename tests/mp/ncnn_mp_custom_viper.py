# A custom layer whose forward_inplace is @micropython.viper code over memoryview(blob).
import sys

sys.path.append("../../examples")
from mptest import require  # noqa: E402

require("NCNN_STRING")  # layer and blob names
import viper_relu  # noqa: E402

viper_relu.main()
