# SPDX-License-Identifier: MIT
# ncnn_mp's entry points: `make help` lists them (ci/tool.py's COMMANDS, the one list of commands).
PYTHON ?= python3
PROFILE ?= unix
TOOL = $(PYTHON) -m ci.tool

THREADS ?= 1
SECONDS ?= 1800
CASES ?= 100000
SEQUENCES ?= 20000
SEED ?= 1
SEEDS ?= 200
TRIALS ?= 10

# MODELS (the .param files a board's firmware is sized to) reach the build as an argument.
SIZED_TO = $(if $(MODELS),--models "$(MODELS)")

.PHONY: demo help test test-mcu sanitize fuzz-loader fuzz-api fuzz-zoo soak mcu-report mcu-text run py photos models preflight compare model bench-layers bench-models bench-binding dist firmware firmware-path ncnn ncnn-options venv
demo:
	@$(TOOL) demo --profile $(PROFILE)
help:
	@$(TOOL) help
test:
	@$(TOOL) test --profile $(PROFILE) $(PYTEST_ARGS)
test-mcu:
	@$(TOOL) test-mcu --profile $(PROFILE) $(PYTEST_ARGS)
sanitize:
	@$(TOOL) sanitize $(PYTEST_ARGS)
fuzz-loader:
	@$(TOOL) fuzz-loader --cases $(CASES) --seed $(SEED) --jobs 2
fuzz-api:
	@$(TOOL) fuzz-api --sequences $(SEQUENCES) --seed $(SEED) --threads $(THREADS)
fuzz-zoo:
	@$(TOOL) fuzz-zoo $(SEEDS) $(TRIALS)
soak:
	@$(TOOL) soak --profile $(PROFILE) $(SECONDS)
mcu-report:
	@$(TOOL) mcu-report $(ARGS)
mcu-text:
	@$(TOOL) mcu-text
run:
	@$(TOOL) run --profile $(PROFILE) $(SIZED_TO) $(if $(HEAP),--heap $(HEAP)) $(if $(ROMFS),--romfs $(ROMFS)) $(SCRIPT) $(ARGS)
py:
	@$(TOOL) py $(SCRIPT) $(ARGS)
photos:
	@$(TOOL) photos
models:
	@$(TOOL) models $(NAMES) $(if $(CACHE),--cache $(CACHE)) $(if $(MIRROR),--mirror $(MIRROR))
# (MODELS here are the question, with their .bin files: the tools size the firmware to them themselves.)
preflight:
	@$(TOOL) preflight --profile $(PROFILE) $(MODELS) $(SHAPES) $(if $(SIZED),--sized) $(if $(FRAME),--frame $(FRAME))
compare:
	@$(TOOL) compare --profile $(PROFILE) $(MODELS) $(SHAPES) $(if $(INPUT),--input $(INPUT)) \
		$(if $(TOL),--tol $(TOL)) $(if $(LIMIT),--limit $(LIMIT)) $(if $(DEVICE_MODELS),--device-model $(DEVICE_MODELS)) \
		$(if $(SIZED),--sized)
model:
	@$(TOOL) model --profile $(PROFILE) $(MODEL) $(if $(IMAGES),--images $(IMAGES)) \
		$(if $(SHAPE),--shape $(SHAPE)) $(if $(OUT),--out $(OUT)) $(if $(PIXELS),--pixels $(PIXELS)) \
		$(if $(MEAN),--mean $(MEAN)) $(if $(NORM),--norm $(NORM)) $(if $(filter 0,$(CHAIN)),--no-chain) \
		$(if $(filter 1,$(INT8_OUTPUTS)),--int8-outputs)
bench-layers:
	@$(TOOL) bench-layers --profile $(PROFILE)
bench-binding:
	@$(TOOL) bench-binding --profile $(PROFILE)
# (THREADS defaults to 1 for the fuzzer; the benchmark's default is both counts.)
bench-models:
	@$(TOOL) bench-models --profile $(PROFILE) $(if $(filter command line environment,$(origin THREADS)),$(THREADS),1 2)
dist:
	@$(TOOL) dist --profile $(PROFILE) $(SIZED_TO) $(if $(DIST),--dist $(DIST))
firmware:
	@$(TOOL) firmware --profile $(PROFILE) $(SIZED_TO)
firmware-path:
	@$(TOOL) firmware-path --profile $(PROFILE) $(SIZED_TO)
ncnn:
	@$(TOOL) ncnn --profile $(PROFILE) $(SIZED_TO)
ncnn-options:
	@$(TOOL) ncnn-options --profile $(PROFILE) $(SIZED_TO)
venv:
	@$(TOOL) venv
