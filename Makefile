# pm — see README.md. Every target works on a fresh machine with Go installed.
GO        ?= go
BINDIR    ?= $(shell $(GO) env GOPATH)/bin
STATICCHECK_VERSION ?= v0.8.2
FUZZTIME  ?= 20s

.PHONY: all build install test test-user test-short stress stress-rooms stress-all lint fmt bench fuzz demo demo-exec clean

all: build

# Two executables, side by side: pm runs the short commands itself (pm say,
# pm chat, pm --help: it starts like a small Go program) and execs pm-full
# for the rest (docs/design.md, "Two executables").
# Static: no dynamic loader at every start (~6% of a short command). Nothing
# needs cgo: Landlock's psx uses syscall.AllThreadsSyscall without it.
# pm-full first: a pm already running never hands a command to an older one.
# pm-hub (pm hub's embedded NATS server) apart: only it links nats-server.
build:
	CGO_ENABLED=0 $(GO) build -o bin/pm-hub ./cmd/pm-hub
	CGO_ENABLED=0 $(GO) build -o bin/pm-full ./cmd/pm-full
	CGO_ENABLED=0 $(GO) build -o bin/pm ./cmd/pm

install:
	CGO_ENABLED=0 $(GO) build -o $(BINDIR)/pm-hub ./cmd/pm-hub
	CGO_ENABLED=0 $(GO) build -o $(BINDIR)/pm-full ./cmd/pm-full
	CGO_ENABLED=0 $(GO) build -o $(BINDIR)/pm ./cmd/pm
	@echo "installed $(BINDIR)/pm, $(BINDIR)/pm-full and $(BINDIR)/pm-hub"
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) echo "add it to your PATH: export PATH=\"$(BINDIR):\$$PATH\"";; esac

# The whole suite: unit tests and the testscript end-to-end scripts, which run
# the real pm binary as many processes. cmd/pm took 27 minutes under -race
# on a 2-core machine with make test-user running beside it (hubs, workers
# and clusters included); the bound is a hang guard, not a budget.
test:
	$(GO) test -race -count=1 -timeout 40m ./...

# The sandbox, process, git and security tests again as an unprivileged user
# (as root: a user pmtest is created and the tests run with setpriv).
test-user:
	bash scripts/test-as-user.sh

# The kill -9 stress run (docs/design.md, "Crash safety"): random kill -9
# over every command and agent process, with and without a supervisor, each
# trial ending with pm doctor --check; it prints the findings by kind.
# STRESS_TRIALS trials (seeded by STRESS_SEED), none started after STRESS_TIME.
STRESS_TRIALS ?= 1000
STRESS_SEED   ?= 1
STRESS_TIME   ?= 90m
stress-all:
	PM_STRESS_TRIALS=$(STRESS_TRIALS) PM_STRESS_SEED=$(STRESS_SEED) PM_STRESS_TIME=$(STRESS_TIME) \
		$(GO) test -count=1 -timeout 120m -run 'TestStrandedUnderKill9$$' -v ./cmd/pm

test-short:
	$(GO) test -count=1 ./...

# make stress runs both long runs below: the rooms' crash points and kill -9
# trials, then random kill -9 over every process checked by pm doctor --check.
stress: stress-rooms stress-all

# The long crash and kill -9 trials (docs/design.md, "Crash safety"): the
# real binaries killed at every crash point and then at random ones, and
# with SIGKILL at random moments; each test logs its trials and how many
# left anything stranded (the test fails on any).
STRESS_CRASH_TRIALS   ?= 1000
STRESS_CRASH_SECONDS  ?= 3600
STRESS_KILL9_TRIALS   ?= 400
STRESS_KILL9_SECONDS  ?= 3600
stress-rooms:
	PM_CRASH_TRIALS=$(STRESS_CRASH_TRIALS) PM_CRASH_SECONDS=$(STRESS_CRASH_SECONDS) \
	PM_KILL9_TRIALS=$(STRESS_KILL9_TRIALS) PM_KILL9_SECONDS=$(STRESS_KILL9_SECONDS) \
	$(GO) test -count=1 -timeout 0 -v -run 'TestNoStrandedWorkAfterKill9|TestRoomsSettleAfterKill9|TestAcknowledgedSaysSurviveKill9' ./cmd/pm

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1)
	$(GO) vet ./...
	GOOS=darwin $(GO) build ./...
	GOOS=darwin $(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

# Go benchmarks, then the multi-process harness; figures go to docs/benchmarks.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...
	$(GO) run ./internal/bench/cmd/pmbench

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzReader -fuzztime $(FUZZTIME) ./internal/jsonl
	$(GO) test -run '^$$' -fuzz FuzzTail -fuzztime $(FUZZTIME) ./internal/jsonl
	$(GO) test -run '^$$' -fuzz FuzzDecodeLine -fuzztime $(FUZZTIME) ./internal/store
	$(GO) test -run '^$$' -fuzz FuzzParseUTC -fuzztime $(FUZZTIME) ./internal/store
	$(GO) test -run '^$$' -fuzz FuzzDecodeAgent -fuzztime $(FUZZTIME) ./internal/store
	$(GO) test -run '^$$' -fuzz FuzzDecodePhase -fuzztime $(FUZZTIME) ./internal/store
	$(GO) test -run '^$$' -fuzz FuzzPrintMessage -fuzztime $(FUZZTIME) ./internal/render
	$(GO) test -run '^$$' -fuzz FuzzPrintView -fuzztime $(FUZZTIME) ./internal/render
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./internal/prompt
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./internal/ids
	$(GO) test -run '^$$' -fuzz FuzzPrimitivePaths -fuzztime $(FUZZTIME) ./internal/capability
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./internal/netguard
	$(GO) test -run '^$$' -fuzz FuzzParseAngleResult -fuzztime $(FUZZTIME) ./internal/design
	$(GO) test -run '^$$' -fuzz FuzzMessageJSON -fuzztime $(FUZZTIME) ./internal/store
	$(GO) test -run '^$$' -fuzz FuzzEventJSON -fuzztime $(FUZZTIME) ./internal/bus
	$(GO) test -run '^$$' -fuzz FuzzCmdLine -fuzztime $(FUZZTIME) ./internal/lite
	$(GO) test -run '^$$' -fuzz FuzzAppendString -fuzztime $(FUZZTIME) ./internal/jsonl
	$(GO) test -run '^$$' -fuzz FuzzDecodeMark -fuzztime $(FUZZTIME) ./internal/store
	$(GO) test -run '^$$' -fuzz FuzzDecodeSeen -fuzztime $(FUZZTIME) ./internal/store
	$(GO) test -run '^$$' -fuzz FuzzAgentRefusal -fuzztime $(FUZZTIME) ./internal/cli

# The seed's landing-page flow on the llm runtime: offline (model replies
# replayed by a local OpenAI-protocol server) unless OPENAI_API_KEY/OPENAI_BASE_URL are set.
demo: build
	./bin/pm demo

# The same flow with shell-script agents on the exec runtime (no model at all).
demo-exec: build
	bash scripts/demo.sh

clean:
	rm -rf bin
