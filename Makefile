# ftlab build, test and demo targets. Everything runs as root (network
# namespaces need it); nothing here uses sudo.

GO      ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN     := bin/ftlab
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X github.com/ftlab/ftlab/cmd/ftlab/cli.Version=$(VERSION) -X github.com/ftlab/ftlab/cmd/ftlab/cli.Commit=$(COMMIT)
DEMO_LAB ?= demo

# The eBPF toolchain, in one place: bpf/gen.go's go:generate lines read
# these (exported below for `make generate`). Debian keeps the kernel's
# asm/ headers under the multiarch directory, which clang -target bpf does
# not search; it is derived once here, not spelled out per object.
BPF_CLANG     ?= clang-19
BPF_STRIP     ?= llvm-strip-19
BPF_MULTIARCH ?= $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null)
BPF_CFLAGS    ?= -O2 -g -Wall -Werror -mcpu=v3 $(if $(BPF_MULTIARCH),-I/usr/include/$(BPF_MULTIARCH))

.PHONY: all build ftlab hostagent test test-unit test-labs bench generate docs demo lab-demo clean check soak

all: build

# The binaries need no C. Without cgo a first build does not compile the
# runtime's and the standard library's C parts with gcc (measured: 64 s
# against 71 s from an empty build cache on 2 cores). Only the build turns
# it off: the race detector of make test needs cgo. The demo, the checks
# and the soak need ftlab alone (the agents run inside it).
build: ftlab hostagent

ftlab: export CGO_ENABLED ?= 0
ftlab:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/ftlab

hostagent: export CGO_ENABLED ?= 0
hostagent:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/hostagent ./cmd/hostagent

# The whole suite: unit tests everywhere, root integration tests (real
# namespaces and veths) when run as root. Integration tests skip, saying so,
# without root. Everything runs under the race detector but five packages:
# the transport harness, whose simulations run in virtual time on one
# goroutine each (the detector finds nothing there and makes them 15 times
# slower); the routing and Ofan table computations, which start no
# goroutine and import nothing that does (their packages took 26 s and
# 16 s under the detector, 2.1 s and 1.5 s without); the benchmarks'
# smoke tests, which drive the agents and the
# kernel end to end (the agents' concurrency is race-tested in
# hostagent/agent and orchestrator/runner; under the detector the soak and
# agent runs take five times as long: 89 s against 16 s); and the teaching
# labs' sessions, which play every lab through the runner, the agents and
# the capture in process, each race-tested in its own package, around one
# select loop of their own (23 s of CPU under the detector against 5 s).
MODULE := github.com/ftlab/ftlab
NORACE := ./hostagent/harness ./switchd/routing ./switchd/ofan ./orchestrator/bench ./orchestrator/teaching/session
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -p 4 -timeout 10m $$($(GO) list ./... | grep -v -x -F $(patsubst ./%,-e $(MODULE)/%,$(NORACE)))
	$(GO) test -count=1 -timeout 10m $(NORACE)

# Unit tests only: no root, no kernel objects.
test-unit:
	$(GO) test -count=1 -short ./...

# The teaching labs (root): every lab under labs/ played end to end on a
# real fabric with its solution key, wrong answers checked for the right
# failures and hints, grading; about a minute on a 2-core machine.
test-labs:
	$(GO) test -count=1 -timeout 10m ./orchestrator/teaching/...
	$(GO) test -count=1 -timeout 10m -run TestLabCommands ./tests/integration

# Benchmarks (root), each figure against a baseline measured in the same
# run: fabric up/down for k = 4, 8, 16, data plane and host agent packet
# rates, per-program costs. `ftlab bench` prints the same as tables.
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m ./...

# Regenerates the eBPF objects and their bpf2go bindings (needs clang-19,
# llvm-19, libbpf-dev). The output is deterministic: CI regenerates and
# fails on any difference from the committed files.
generate: export BPF_CLANG := $(BPF_CLANG)
generate: export BPF_STRIP := $(BPF_STRIP)
generate: export BPF_CFLAGS := $(BPF_CFLAGS)
generate:
	$(GO) generate ./...

# Regenerates the CLI reference from the commands: docs/cli/*.md and the
# man pages under docs/man/ (committed; a test fails when they are stale).
docs:
	$(GO) test ./cmd/ftlab/cli -run '^TestDocsCurrent$$' -count=1 -update

# The main job on the shipped default scenario: ECMP vs Ofan switches x
# RSS vs RSS+PFLD hosts, a permutation under corruption on a k=4 fat tree;
# results and report under results/demo/<timestamp>/.
demo: ftlab
	./$(BIN) run scenarios/demo.yaml

# A walk through a lab by hand: a k=4 fat tree with the eBPF switch running
# Ofan; every host pings every other host, a core link fails and the
# switches reconverge, per-direction counters, teardown. The teaching labs
# with handouts and checks are `ftlab lab` (docs/labs.md).
lab-demo: ftlab
	@./$(BIN) down -n $(DEMO_LAB) >/dev/null 2>&1 || true
	./$(BIN) up topologies/fattree-k4.yaml -n $(DEMO_LAB) --policy ofan
	@{ ./$(BIN) status -n $(DEMO_LAB) --probe | head -4 && \
	  ./$(BIN) pingall -n $(DEMO_LAB) && \
	  ./$(BIN) link down a0-0 c0-0 -n $(DEMO_LAB) && \
	  ./$(BIN) pingall -n $(DEMO_LAB) && \
	  ./$(BIN) stats -n $(DEMO_LAB); } || { ./$(BIN) down -n $(DEMO_LAB); exit 1; }
	./$(BIN) down -n $(DEMO_LAB)

# Leaks (root): the demo scenario SOAK_RUNS times back to back in one
# process at a fixed rate (no calibration), sampling namespaces, mounts,
# run-directory files, file descriptors, goroutines, children and the Go
# heap after every run; fails if anything grew.
SOAK_RUNS ?= 30
soak: ftlab
	./$(BIN) bench soak scenarios/demo.yaml --runs $(SOAK_RUNS)

clean:
	rm -rf bin

# Paper checks (root): runs scenarios/paper/ and says whether each paper's
# claim holds, scaled down; results under results/paper/.
check: ftlab
	$(BIN) check
