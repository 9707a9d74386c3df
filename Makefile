# The two newcomer commands: `make run` and `make test`. Everything else is a helper for them.
JOBS ?= $(shell nproc)
PRESET ?= release

.PHONY: run test deps build install deb lint format test-tsan bench fuzz clean

deps:
	./scripts/install-deps

build: deps
	cmake --preset $(PRESET) >/dev/null
	cmake --build --preset $(PRESET) -j $(JOBS) --target sluice

run: build
	./build/$(PRESET)/apps/sluice/sluice serve --provider scripted

test: deps
	./scripts/run-tests

# Installs the release build under PREFIX (default /usr/local; DESTDIR is honoured): the binary
# (the page is inside it), its man page, bash completion and systemd units.
PREFIX ?= /usr/local
install: build
	cmake --build --preset $(PRESET) -j $(JOBS) --target sluice_man
	cmake --install build/$(PRESET) --prefix $(PREFIX)

# A .deb of the release build in build/deb/ (scripts/make-deb: Depends from the binary).
deb: build
	cmake --build --preset $(PRESET) -j $(JOBS) --target sluice_man
	./scripts/make-deb build/$(PRESET) build/deb

# The whole suite under ThreadSanitizer (make test runs it too, after ASan+UBSan).
test-tsan: deps
	SLUICE_PRESETS=tsan ./scripts/run-tests

# clang-format check and clang-tidy over every source (checks and their reasons: .clang-tidy).
lint: deps
	./scripts/lint

# Rewrites every tracked C++ file with clang-format (.clang-format).
format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

bench: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target sluice_bench sluice_relay_rss
	./build/release/bench/sluice_bench

# libFuzzer targets (clang 14), each run for SECONDS (default 60) on fuzz/corpus/<target>/.
SECONDS ?= 60
fuzz: deps
	./scripts/fuzz $(SECONDS)

clean:
	rm -rf build
