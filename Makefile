# The two newcomer commands: `make run` and `make test`. Everything else is a helper for them.
JOBS ?= $(shell nproc)
PRESET ?= release

.PHONY: run test deps build test-dev test-asan test-tsan bench clean

deps:
	./scripts/install-deps

build: deps
	cmake --preset $(PRESET) >/dev/null
	cmake --build --preset $(PRESET) -j $(JOBS) --target sluice

run: build
	./build/$(PRESET)/apps/sluice/sluice serve --provider scripted

test: deps
	./scripts/run-tests

test-tsan: deps
	cmake --preset tsan >/dev/null && cmake --build --preset tsan -j $(JOBS)
	ctest --preset tsan -j $(JOBS) -R 'Relay|Cancel'

bench: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target sluice_bench sluice_relay_rss
	./build/release/bench/sluice_bench

clean:
	rm -rf build
