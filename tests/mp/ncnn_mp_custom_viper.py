# A custom layer whose forward_inplace is @micropython.viper code over memoryview(blob).
import sys

sys.path.append("../../examples")
import viper_relu  # noqa: E402

viper_relu.main()
