# The two commands of the README. Both set everything up on a fresh Debian 12 machine.
#   make audit   install what the binary needs, build the `nodeaudit` binary alone, run the default audit
#   make test    install what is missing, build everything (tests, benchmarks), run the test suite
# Knobs: BUILD_DIR, LEVEL, PROFILE, DATA_DIR, OUT, TARGET_GPUS, AUDIT_FLAGS (more `run` options),
# CUDA_ARCHS (e.g. native on a GPU node), JOBS, DEPS_FLAGS (make test's packages; --with-bench adds the
# reference tools), DEBUG_INFO (lines, the default: -g1, function names and line tables, enough for
# backtraces and sanitizer reports; full: -g, a debugger's whole view, slower to build).
# ccache is used when installed.
BUILD_DIR ?= build
LEVEL ?= quick
PROFILE ?= llm-finetune-7b
DATA_DIR ?= $(CURDIR)/$(BUILD_DIR)/audit-data
OUT ?= results/
AUDIT_FLAGS ?=
# Without a GPU (no /dev/nvidiaN: a container given only GPU 3 has /dev/nvidia3) the host is judged
# for 8 H100s from the GPU table, so the audit ends in a verdict; on a GPU node its own GPUs are
# judged. TARGET_GPUS= (empty) turns it off.
TARGET_GPUS ?= $(if $(wildcard /dev/nvidia[0-9]*),,h100x8)
JOBS ?= $(shell nproc)
CUDA_ARCHS ?= 80;90
CMAKE_FLAGS ?=
DEPS_FLAGS ?=
DEBUG_INFO ?= lines
# Decided when a rule runs, so a ccache that the deps step installs is used by the same `make`.
LAUNCHER_FLAGS = $(if $(shell command -v ccache 2>/dev/null),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
CONFIG_FLAGS = -DNODEAUDIT_DEBUG_INFO=$(DEBUG_INFO) $(LAUNCHER_FLAGS) $(CMAKE_FLAGS)

.PHONY: audit audit-run audit-build audit-configure audit-deps test deps configure build sanitize clean torch-venv

# host.dataloader's tests run a real PyTorch in this venv (scripts/torch-venv.sh; about 5.4 GB).
TORCH_VENV ?= $(CURDIR)/$(BUILD_DIR)/torch-venv
TEST_ENV = NODEAUDIT_TORCH_PYTHON=$(TORCH_VENV)/bin/python

deps:
	@bash scripts/install-deps.sh $(DEPS_FLAGS)

# The audit's packages: what the binary builds with and what it runs (mpirun for comm.host-fabric).
audit-deps:
	@bash scripts/install-deps.sh --build-only

CONFIGURE = cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CUDA_ARCHITECTURES=$(CUDA_ARCHS)"
configure: deps
	@$(CONFIGURE) -DNODEAUDIT_BUILD_TESTS=ON -DNODEAUDIT_BUILD_BENCH=ON $(CONFIG_FLAGS)

# A tree the audit configures first leaves the tests and benchmarks out (their packages are not
# installed for it); a tree `make test` configured keeps them. Either way audit-build builds the
# binary's target alone.
AUDIT_TREE_FLAGS = $(if $(wildcard $(BUILD_DIR)/CMakeCache.txt),,-DNODEAUDIT_BUILD_TESTS=OFF -DNODEAUDIT_BUILD_BENCH=OFF)
audit-configure: audit-deps
	@$(CONFIGURE) $(AUDIT_TREE_FLAGS) $(CONFIG_FLAGS)

# Quiet on a built tree: no sub-make directory lines and no "Built target" line for targets that were
# already up to date; each file compiled or linked still says so. pipefail keeps a failed build's exit code.
QUIET_BUILD = bash -o pipefail -c 'cmake --build "$(BUILD_DIR)" -j $(JOBS) $(1) -- --no-print-directory | { grep --line-buffered -v -E "^\[ *[0-9]+%\] Built target " || true; }'
build: configure
	@$(call QUIET_BUILD,)

# The binary alone. Before a first build, one line says what is built and about how long it takes.
audit-build: audit-configure
	@bash scripts/audit-build-note.sh "$(BUILD_DIR)" "$(JOBS)"
	@$(call QUIET_BUILD,--target nodeaudit)

audit: audit-build
	@$(MAKE) --no-print-directory audit-run

# The audit on the build as it is. `run` prints the env fingerprint itself, once, and ends in the
# verdict, bottleneck and cost sentences. A FAIL verdict is the audit's answer, not a failure of
# `make audit` (make exits 0; gate CI on `nodeaudit run` itself); a probe that failed, crashed or
# timed out, bad input (2) and an interrupt (130) keep run's exit code. The result file's name is
# chosen here so its probes can be read back: results/<host>-<UTC time>.json as run names them.
AUDIT_FILE = $(OUT)/$(shell hostname -s)-$(shell date -u +%Y%m%dT%H%M%SZ).json
audit-run:
	@mkdir -p "$(DATA_DIR)" "$(OUT)"
	@file="$(subst //,/,$(AUDIT_FILE))"; rc=0; \
	  $(BUILD_DIR)/nodeaudit run --level $(LEVEL) --profile $(PROFILE) --data-dir "$(DATA_DIR)" --out "$$file" \
	  $(if $(TARGET_GPUS),--target-gpus $(TARGET_GPUS)) $(AUDIT_FLAGS) || rc=$$?; \
	  if [ $$rc -eq 1 ] && ! grep -Eq '"status": "(failed|crashed|timeout)"' "$$file"; then exit 0; fi; \
	  exit $$rc

torch-venv: deps
	@bash scripts/torch-venv.sh $(TORCH_VENV)

test: build torch-venv
	@cd $(BUILD_DIR) && $(TEST_ENV) ctest --output-on-failure -j $(JOBS)

# Host code under AddressSanitizer + UndefinedBehaviorSanitizer (GPU code is not instrumented), compiled
# file by file: a file that leans on another's includes in the unity build fails here.
sanitize: deps torch-venv
	@cmake -S . -B $(BUILD_DIR)-asan -DCMAKE_BUILD_TYPE=Debug -DNODEAUDIT_SANITIZE=ON -DNODEAUDIT_CUDA=OFF -DNODEAUDIT_BUILD_BENCH=OFF -DNODEAUDIT_UNITY_BUILD=OFF $(CONFIG_FLAGS)
	@cmake --build $(BUILD_DIR)-asan -j $(JOBS)
	@# handle_segv=0: the crash-isolation test needs the real SIGSEGV, not the sanitizer's report.
	@cd $(BUILD_DIR)-asan && $(TEST_ENV) ASAN_OPTIONS=detect_leaks=1:handle_segv=0 ctest --output-on-failure -j $(JOBS) -E '^(HostFabric|MultiNodeNccl|MultiHost|Slurm)\.'
	@# Open MPI's own start-up allocations are reported as leaks by LeakSanitizer; the MPI tests run
	@# with leak detection off (address and undefined-behaviour checks stay on).
	@cd $(BUILD_DIR)-asan && $(TEST_ENV) ASAN_OPTIONS=detect_leaks=0:handle_segv=0 ctest --output-on-failure -j $(JOBS) -R '^(HostFabric|MultiNodeNccl|MultiHost|Slurm)\.'


clean:
	@rm -rf $(BUILD_DIR) $(BUILD_DIR)-asan
