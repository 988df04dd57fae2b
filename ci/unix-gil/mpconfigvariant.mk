# SPDX-License-Identifier: MIT
# The unix-gil variant (see mpconfigvariant.h): the standard variant's build, no frozen manifest.
FROZEN_MANIFEST ?=
# _thread comes from mpconfigvariant.h: the port's MICROPY_PY_THREAD = 1 would add -DMICROPY_PY_THREAD_GIL=0.
MICROPY_PY_THREAD = 0
