# SPDX-License-Identifier: MIT
"""ncnn_mp's build: pins, profiles, ncnn and firmware builds, the QEMU boards, and the entry point behind the Makefile."""
