# ncnn_mp's entry points; each one fetches and builds whatever it needs first.
#   make demo            build the Unix firmware with ncnn_mp and run the digits demo
#   make test            the whole test suite (pytest + mypy)
#   make bench-layers    what a custom layer written in Python costs (Markdown tables)
#   make bench-models    whole models: ncnn_mp vs the CPython wheel vs native ncnn, interleaved,
#                        at 1 and 2 threads (THREADS="1" or "2" for one of them)
#   make bench-binding   what ncnn_mp adds to ncnn's C API per extract and per custom-layer call
#                        (callgrind instructions, split into ncnn / C library / ncnn_mp / MicroPython)
#   make sanitize        the MicroPython-side suite and the fuzzers' CI budgets under ASan + UBSan
#   make fuzz-loader     the loader fuzzer: CASES mutated models (default 100000), SEED (1)
#   make fuzz-api        the API-sequence fuzzer: SEQUENCES random call sequences (default 20000);
#                        THREADS=3: its threaded mode, 3 threads per process
#   make fuzz-zoo        the layer zoo: every layer type standalone, default and random parameters,
#                        SEEDS seeds (default 200) of TRIALS (10) tries a type
#   make soak            a mixed workload for SECONDS (default 1800): RSS and heap over time
#   make mcu-report      the MCU figures: firmware size, memory, instructions per extract (QEMU,
#                        Cortex-M3 and RISC-V side by side)
#   make test-mcu        only the tests on the bare-metal Cortex-M3, Cortex-M4F and RISC-V firmwares under QEMU
#   make run SCRIPT=f.py run a MicroPython script on the firmware (PROFILE=qemu or rv32: under QEMU);
#                        ARGS="..." its arguments, HEAP=16M MicroPython's heap (Unix);
#                        ROMFS=romfs.img a flash image of your own at /rom (a QEMU board)
#   make photos          scikit-image's photos as PPM files in build/photos, for the examples
#   make preflight MODELS="m.param m.bin" [SHAPES="data=160x160x3"]   will the models run on
#                        PROFILE's firmware: the layers they need, weights and memory, measured
#   make compare MODELS="m.param m.bin" [SHAPES=...] [INPUT=x.npy|x.ppm] [TOL=1e-3]   the model on
#                        PROFILE's firmware vs the CPython wheel, every blob: the first layer that drifts
# MODELS=... with firmware, run, test-mcu: a firmware whose ncnn keeps exactly the layers those
# models need (profiles with an ncnn_layers list: PROFILE=qemu, PROFILE=rv32).
#   make firmware        build the Unix firmware, print its path
#   make firmware-path   print the path of the built Unix firmware
# PROFILE=name picks a build profile from ci/profiles.toml (default: unix).
PYTHON ?= python3
PROFILE ?= unix
TOOL = $(PYTHON) ci/tool.py

THREADS ?= 1
SECONDS ?= 1800
CASES ?= 100000
SEQUENCES ?= 20000
SEED ?= 1
SEEDS ?= 200
TRIALS ?= 10

export NCNN_MP_MODELS := $(MODELS)

.PHONY: photos preflight compare demo test test-mcu sanitize fuzz-loader fuzz-api fuzz-zoo soak bench-layers bench-models bench-binding mcu-report run firmware firmware-path
demo:
	@$(TOOL) demo --profile $(PROFILE)
test:
	@$(TOOL) test --profile $(PROFILE) $(PYTEST_ARGS)
test-mcu:
	@$(TOOL) test --profile $(PROFILE) -m mcu $(PYTEST_ARGS)
sanitize:
	@$(TOOL) sanitize $(PYTEST_ARGS)
# (The fuzzers need the digits model from make demo/test, and the memcheck firmware to
# classify a crash with gdb.)
fuzz-loader:
	@$(TOOL) firmware >/dev/null && $(TOOL) firmware --profile memcheck >/dev/null && \
	NCNN_MP_DIGITS=build/models/digits $$($(TOOL) venv) tests/fuzz/loader_fuzz.py --cases $(CASES) --seed $(SEED) --jobs 2
fuzz-api:
	@$(TOOL) firmware >/dev/null && $(TOOL) firmware --profile memcheck >/dev/null && \
	NCNN_MP_DIGITS=build/models/digits $$($(TOOL) venv) tests/fuzz/api_fuzz.py --sequences $(SEQUENCES) --seed $(SEED) --threads $(THREADS)
# (A seed whose process dies is named with the step it died in: tests/fuzz/layer_zoo.py SEED TRIALS trace.)
fuzz-zoo:
	@fw=$$($(TOOL) firmware | tail -n 1) && cd tests/fuzz && failed=0 && \
	for seed in $$(seq 1 $(SEEDS)); do \
		if ! $$fw layer_zoo.py $$seed $(TRIALS) trace > /tmp/ncnn_mp_zoo.$$$$ 2>/dev/null; then \
			failed=$$((failed + 1)); echo "seed $$seed: $$(tail -1 /tmp/ncnn_mp_zoo.$$$$)"; fi; \
	done; rm -f /tmp/ncnn_mp_zoo.$$$$; echo "layer zoo: $(SEEDS) seeds, $$failed died"; [ $$failed -eq 0 ]
soak:
	@$(TOOL) soak --profile $(PROFILE) $(SECONDS)
mcu-report:
	@$(TOOL) mcu-report
run:
	@$(TOOL) run --profile $(PROFILE) $(if $(HEAP),--heap $(HEAP)) $(if $(ROMFS),--romfs $(ROMFS)) $(SCRIPT) $(ARGS)
photos:
	@$(TOOL) photos
# (The models are the question here, not a firmware to size: the profile is taken as it is.)
preflight:
	@NCNN_MP_MODELS= $(TOOL) preflight --profile $(PROFILE) $(MODELS) $(SHAPES)
compare:
	@NCNN_MP_MODELS= $(TOOL) compare --profile $(PROFILE) $(MODELS) $(SHAPES) $(if $(INPUT),--input $(INPUT)) \
		$(if $(TOL),--tol $(TOL)) $(if $(LIMIT),--limit $(LIMIT)) $(if $(DEVICE_MODELS),--device-model $(DEVICE_MODELS))
bench-layers:
	@$(TOOL) bench-layers --profile $(PROFILE)
bench-binding:
	@$(TOOL) bench-binding --profile $(PROFILE)
# (THREADS defaults to 1 for the fuzzer; the benchmark's default is both counts.)
bench-models:
	@$(TOOL) bench-models --profile $(PROFILE) $(if $(filter command line environment,$(origin THREADS)),$(THREADS),1 2)
firmware:
	@$(TOOL) firmware --profile $(PROFILE)
firmware-path:
	@$(TOOL) firmware-path --profile $(PROFILE)
