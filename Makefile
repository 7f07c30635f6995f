# wpd developer entry points.
#   make test   toolchain + release build + every test (what CI runs)
#   make demo   summarize and dump the demo program in fixtures/demo
#   make bench  benches/summarize.sh (results in bench-out/summarize.txt)
#   make fmt    rustfmt check;  make lint  clippy with warnings as errors
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
CARGO ?= cargo
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
WPD := target/release/wpd
DEMO_DIR := target/demo
LTO_FLAGS := -O2 -flto=thin -fwhole-program-vtables

.PHONY: test demo bench fmt lint build toolchain

toolchain:
	@missing=; \
	for t in clang++-19 ld.lld-19 llvm-config-19 llvm-dis-19 llvm-ar-19; do \
	  command -v $$t >/dev/null || missing="$$missing $$t"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "missing:$$missing; installing clang-19 lld-19 llvm-19-dev"; \
	  $(SUDO) apt-get update && $(SUDO) apt-get install -y clang-19 lld-19 llvm-19-dev; \
	fi

build: toolchain
	$(CARGO) build --release --workspace

test: build
	$(CARGO) test --release --workspace

demo: build
	@rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR)
	@echo "== compiling fixtures/demo/*.cpp with clang++-19 $(LTO_FLAGS)"
	@for src in fixtures/demo/*.cpp; do \
	  obj=$(DEMO_DIR)/$$(basename "$${src%.cpp}").o; \
	  echo "   $$src -> $$obj"; \
	  clang++-19 $(LTO_FLAGS) -c "$$src" -o "$$obj"; \
	done
	@echo "== $(WPD) summarize $(DEMO_DIR)/*.o -o $(DEMO_DIR)"
	@$(WPD) summarize $(DEMO_DIR)/*.o -o $(DEMO_DIR)
	@for s in $(DEMO_DIR)/*.wpds; do \
	  echo; \
	  echo "== $(WPD) dump $$s  (vtables with their type ids and slots, virtual call sites, slot-target facts)"; \
	  $(WPD) dump "$$s"; \
	done

bench: build
	benches/summarize.sh

fmt:
	$(CARGO) fmt --all -- --check

lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
