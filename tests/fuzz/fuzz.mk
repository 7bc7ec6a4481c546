# SPDX-License-Identifier: Apache-2.0
# libFuzzer targets: every tests/fuzz/fuzz_<name>.c is built with clang-14
# -fsanitize=fuzzer,address,undefined against the library sources (the same
# set as build/libdralet.a) compiled with clang into $(FUZZ_BUILD), then run
# for $(FUZZ_SECONDS) seconds each on its committed seed corpus
# tests/fuzz/corpus/<name>/ (new inputs go to $(FUZZ_BUILD)/corpus/<name>,
# crashes to $(FUZZ_BUILD)/artifacts/). Any crash, leak or sanitizer report
# fails the run.
#
#   make check-fuzz [FUZZ_SECONDS=60]             from the top directory
#   make -f tests/fuzz/fuzz.mk run-fuzz_grpc_frame  one target
#   make -f tests/fuzz/fuzz.mk seeds              regenerate the seed corpora

FUZZ_SECONDS ?= 10
FUZZ_BUILD ?= build-fuzz
FCC ?= clang-14
Q := $(if $(V),,@)

# The library's packages, as the top Makefile lists them (keep the flags in step with
# its ALL_CFLAGS).
PKGS := $(shell sed -n 's/^PKGS := //p' Makefile)
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS := $(shell pkg-config --libs $(PKGS)) -ldl -lpthread

SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
CFLAGS_FUZZ := -std=gnu11 -O1 -g $(SAN) -fsanitize=fuzzer-no-link -Wall -Wextra \
	-Wno-unused-parameter -D_GNU_SOURCE -Iinclude -I. -I$(FUZZ_BUILD)/gen $(PKG_CFLAGS) \
	-DDRALET_VERSION='"fuzz"' -MMD -MP

PROTOS := $(wildcard proto/*.proto)
PROTO_C := $(patsubst proto/%.proto,$(FUZZ_BUILD)/gen/%.pb-c.c,$(PROTOS))
LIB_SRC := $(filter-out agent/cli/main.c,$(sort $(wildcard agent/*/*.c hal/*.c backends/*/*.c \
	boards/sim/*.c)))
LIB_OBJ := $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(LIB_SRC)) $(PROTO_C:.c=.o)
TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
BINS := $(patsubst %,$(FUZZ_BUILD)/fuzz_%,$(TARGETS))

RUNS := $(patsubst %,run-fuzz_%,$(TARGETS))

.PHONY: all build seeds $(RUNS)
.SECONDARY: $(PROTO_C) $(PROTO_C:.c=.h)
all: $(RUNS)
	@echo "fuzz: $(words $(TARGETS)) targets ran $(FUZZ_SECONDS)s each without a crash"
build: $(BINS)

$(FUZZ_BUILD)/gen/%.pb-c.c $(FUZZ_BUILD)/gen/%.pb-c.h: proto/%.proto
	@mkdir -p $(dir $@)
	$(Q)protoc-c --proto_path=proto --c_out=$(FUZZ_BUILD)/gen $<

$(FUZZ_BUILD)/gen/%.pb-c.o: $(FUZZ_BUILD)/gen/%.pb-c.c
	$(Q)$(FCC) $(CFLAGS_FUZZ) -c $< -o $@

$(FUZZ_BUILD)/obj/%.o: %.c | $(PROTO_C:.c=.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FCC) $(CFLAGS_FUZZ) -c $< -o $@

$(FUZZ_BUILD)/libdralet.a: $(LIB_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_BUILD)/libdralet.a
	@$(if $(Q),echo "  FUZZLD  $@")
	$(Q)$(FCC) $(CFLAGS_FUZZ) -fsanitize=fuzzer -o $@ $< $(FUZZ_BUILD)/libdralet.a $(PKG_LIBS)

$(RUNS): run-fuzz_%: $(FUZZ_BUILD)/fuzz_%
	@mkdir -p $(FUZZ_BUILD)/corpus/$* $(FUZZ_BUILD)/artifacts
	@echo "  FUZZ    $* for $(FUZZ_SECONDS)s"
	$(Q)ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		$(FUZZ_BUILD)/fuzz_$* -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix=$(FUZZ_BUILD)/artifacts/$*- \
		$(FUZZ_BUILD)/corpus/$* $(wildcard tests/fuzz/corpus/$*) \
		>$(FUZZ_BUILD)/$*.log 2>&1 || \
		{ tail -n 60 $(FUZZ_BUILD)/$*.log; echo "fuzz: $* FAILED (log: $(FUZZ_BUILD)/$*.log)"; exit 1; }
	@grep -E '^stat::number_of_executed_units' $(FUZZ_BUILD)/$*.log | sed 's/^/          /'

seeds:
	$(Q)/usr/bin/python3 tests/fuzz/make_seeds.py tests/fuzz/corpus

-include $(shell find $(FUZZ_BUILD)/obj -name '*.d' 2>/dev/null)
