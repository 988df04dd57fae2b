# The unix-gil variant (see mpconfigvariant.h): the standard variant's build, no frozen manifest.
FROZEN_MANIFEST ?=
