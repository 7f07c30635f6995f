# wpd developer entry points.
#   make test   toolchain + release build + every test (what CI runs)
#   make demo   link the demo program (fixtures/demo) through wpd-ld, run it, summarize the report
#   make bench  benches/summarize.sh (results in bench-out/summarize.txt)
#   make bench-link  benches/link.sh: wpd-ld vs lld ThinLTO link times (bench-out/link.txt)
#   make bench-runtime    benches/runtime.sh: demo run time, wpd-ld vs lld ThinLTO (bench-out/runtime.txt)
#   make bench-speculate  benches/speculate.sh: --wpd-speculate=1 vs off run time (bench-out/speculate.txt)
#   make bench-scale  benches/scale.py: thin link of N generated objects (N=1000, N=10000) vs lld --thinlto-index-only (bench-out/scale-N.txt)
#   make bench-rerun  benches/parity_rerun.py: run times of the last bench-parity programs again, ROUNDS=11 rounds (bench-out/parity-rerun.txt)
#   make bench-instructions  benches/link_instructions.py: Box2D's link, wpd-ld vs lld ThinLTO, in instructions by phase (needs valgrind and a bench-parity run)
#   make bench-return-shapes  benches/return_shapes.py: what the targets of pointer-returning slots return, over the last bench-parity run's split programs (bench-out/return-shapes.txt)
#   make fmt    rustfmt check;  make lint  clippy with warnings as errors
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
CARGO ?= cargo
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
WPD := target/release/wpd
WPD_LD := $(abspath target/release/wpd-ld)
DEMO_DIR := target/demo
LTO_FLAGS := -O2 -flto=thin -fwhole-program-vtables

.PHONY: test demo bench bench-link bench-parity bench-rerun bench-instructions bench-runtime bench-scale bench-speculate bench-return-shapes fmt lint build toolchain

toolchain:
	@missing=; \
	for t in clang++-19 ld.lld-19 llvm-config-19 llvm-dis-19 llvm-ar-19 chromium cmake ninja mold; do \
	  command -v $$t >/dev/null || missing="$$missing $$t"; \
	done; \
	[ -f /usr/lib/llvm-19/lib/liblldELF.a ] || missing="$$missing liblld-19-dev"; \
	[ -f /usr/lib/llvm-19/lib/libPolly.a ] || missing="$$missing libpolly-19-dev"; \
	[ -x /usr/lib/llvm-19/bin/llvm-bolt ] || missing="$$missing bolt-19"; \
	[ -f /usr/include/spdlog/spdlog.h ] || missing="$$missing libspdlog-dev"; \
	[ -f /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.asan-x86_64.a ] || missing="$$missing libclang-rt-19-dev"; \
	if [ -n "$$missing" ]; then \
	  echo "missing:$$missing; installing clang-19 lld-19 llvm-19-dev liblld-19-dev libpolly-19-dev bolt-19 chromium cmake ninja-build mold libspdlog-dev libclang-rt-19-dev"; \
	  $(SUDO) apt-get update && $(SUDO) apt-get install -y clang-19 lld-19 llvm-19-dev liblld-19-dev libpolly-19-dev bolt-19 chromium cmake ninja-build mold libspdlog-dev libclang-rt-19-dev; \
	fi

# wpd-ld is laid out by profile after every build (linker-shim/bolt.sh; a
# binary BOLT already rewrote is kept, a relinked one is laid out again).
build: toolchain
	$(CARGO) build --release --workspace
	linker-shim/bolt.sh

test: build
	@mkdir -p target; status=0; \
	WPD_REQUIRE_BOLT_LAYOUT=1 $(CARGO) test --release --workspace 2>&1 | tee target/test-output.log || status=$$?; \
	awk '/^test result:/ { p += $$4; f += $$6 } END { printf "%d passed, %d failed\n", p, f }' target/test-output.log; \
	exit $$status

demo: build
	@rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR)
	@echo "== compiling fixtures/demo/*.cpp with clang++-19 $(LTO_FLAGS)"
	@for src in fixtures/demo/*.cpp; do \
	  obj=$(DEMO_DIR)/$$(basename "$${src%.cpp}").o; \
	  echo "   $$src -> $$obj"; \
	  clang++-19 $(LTO_FLAGS) -c "$$src" -o "$$obj"; \
	done
	@echo "== linking through $(WPD_LD) (whole-program visibility, one remark per devirtualized call)"
	clang++-19 $(LTO_FLAGS) --ld-path=$(WPD_LD) -Wl,--lto-whole-program-visibility \
	  -Wl,--wpd-report=$(DEMO_DIR)/report.json -Wl,--wpd-remarks $(DEMO_DIR)/*.o -o $(DEMO_DIR)/shapes
	@echo "== running $(DEMO_DIR)/shapes"
	@$(DEMO_DIR)/shapes
	@echo "== $(DEMO_DIR)/report.json"
	@target/release/wpd report $(DEMO_DIR)/report.json

bench: build
	benches/summarize.sh

bench-link: build
	benches/link.sh

bench-parity: build
	python3 benches/thinlto_parity.py

bench-rerun:
	python3 benches/parity_rerun.py

bench-instructions: build
	python3 benches/link_instructions.py

bench-runtime: build
	benches/runtime.sh

bench-speculate: build
	benches/speculate.sh

bench-scale: build
	python3 benches/scale.py

bench-return-shapes:
	python3 benches/return_shapes.py $$(ls -d bench-out/parity-work/*-split) | tee bench-out/return-shapes.txt

fmt:
	$(CARGO) fmt --all -- --check

lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
