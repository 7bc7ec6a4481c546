# dralet — build, test and install.
#
#   make            build build/dralet
#   make run        run the agent on the default simulated board
#   make check      every test, then unit + integration tests again under ASan+UBSan
#   make check-layers  every include points down a layer (docs/architecture.md)
#   make bench      benchmarks (timing goals live here, never in tests)
#   make bench-peers  dralet against the example driver and DRANET on one e2e cluster (root;
#                   PEERS_VERSION=, PEERS_ARGS="--counts 1,10,100 --idle 300"; not in check)
#   make bench-fleet  500 agents against one real kube-apiserver: requests, restart, memory
#                   (root; FLEET_VERSION=, FLEET_ARGS="--agents 500 --idle-seconds 600"; not in check)
#   make e2e        dralet under real Kubernetes (each pinned release; root)
#   make e2e-shell  a test cluster left up with dralet deployed (E2E_VERSION=, E2E_BOARD=)
#   make image      dralet's OCI image (no container daemon needed)
#   make deps       install the Debian 12 build and test dependencies
#   make install DESTDIR=... PREFIX=...   binary, SDK headers, dralet-backend.pc
#
# Variables: BUILD (output directory), SAN=1 (ASan+UBSan build in build-asan),
# CC, CFLAGS, V=1 (show commands).

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
INCLUDEDIR ?= $(PREFIX)/include
LIBDIR ?= $(PREFIX)/lib
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
VERSION := 0.1.0

ifeq ($(SAN),1)
BUILD ?= build-asan
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD ?= build
SANFLAGS :=
endif

PKGS := libpci libudev json-c zlib yaml-0.1 libuv libnghttp2 libprotobuf-c libcurl libnl-route-3.0 libmicrohttpd
TEST_PKGS := cmocka

# ---- dependencies: install them first when pkg-config misses something ----
# Goals that only build the agent need only the build packages.
NO_DEPS_GOALS := deps clean help
BUILD_ONLY_GOALS := all image-rootfs install install-sdk
DEPS_SCOPE := $(if $(filter-out $(BUILD_ONLY_GOALS),$(or $(MAKECMDGOALS),all)),,build)
ifeq ($(filter $(NO_DEPS_GOALS),$(MAKECMDGOALS)),)
ifneq ($(shell pkg-config --exists $(PKGS) $(if $(DEPS_SCOPE),,$(TEST_PKGS)) && scripts/deps.sh --check $(DEPS_SCOPE) 2>/dev/null && echo ok),ok)
$(info dralet: build or test dependencies are missing; running scripts/deps.sh $(DEPS_SCOPE))
ifneq ($(shell scripts/deps.sh $(DEPS_SCOPE) >&2; echo $$?),0)
$(error dependencies are missing; install them with the apt-get line above)
endif
endif
endif

Q := $(if $(V),,@)
CC ?= cc
CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wvla
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
# libcurl is opened with dlopen when an apiserver is used (agent/kube/curl_loader.c),
# libmicrohttpd when the metrics endpoint starts (agent/daemon/mhd_loader.c)
PKG_LIBS := $(shell pkg-config --libs $(filter-out libcurl libmicrohttpd,$(PKGS))) -ldl -lpthread
ALL_CFLAGS := -std=gnu11 $(WARNINGS) $(CFLAGS) $(SANFLAGS) -fPIC \
	-D_GNU_SOURCE -Iinclude -I. -I$(BUILD)/gen $(PKG_CFLAGS) -DDRALET_VERSION='"$(VERSION)"' -MMD -MP
# The binary exports the SDK so that backend shared objects can call it.
ALL_LDFLAGS := $(LDFLAGS) $(SANFLAGS) -Wl,--export-dynamic-symbol='dralet_*' -Wl,--as-needed

# ---- sources ----
PROTOS := $(wildcard proto/*.proto)
PROTO_C := $(patsubst proto/%.proto,$(BUILD)/gen/%.pb-c.c,$(PROTOS))
PROTO_H := $(PROTO_C:.c=.h)
# One folder per layer (docs/architecture.md; scripts/check-layers.sh checks the includes).
LIB_SRC := $(filter-out agent/cli/main.c,$(sort $(wildcard agent/*/*.c hal/*.c backends/*/*.c boards/sim/*.c)))
LIB_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(PROTO_C:.c=.o)
MAIN_OBJ := $(BUILD)/obj/agent/cli/main.o
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
TEST_SUPPORT_SRC := $(sort $(wildcard tests/unit/support/*.c))
TEST_SUPPORT_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(TEST_SUPPORT_SRC))
# Helper programs the integration tests start (test daemons): tests/integration/*.c
INTEG_PROG_SRC := $(sort $(wildcard tests/integration/*.c))
INTEG_PROG := $(patsubst tests/integration/%.c,$(BUILD)/tests/integration/%,$(INTEG_PROG_SRC))
# Shared objects the tests load (fake NVML, sample backend ...): tests/lib/<name>/*.c -> <name>.so
TEST_LIBS := $(patsubst tests/lib/%/,$(BUILD)/tests/lib/%.so,$(sort $(dir $(wildcard tests/lib/*/*.c))))
# Simulated vendor tools for boards (nvidia-smi ...): tests/sim/<name>.c -> <name>
SIM_PROGS := $(patsubst tests/sim/%.c,$(BUILD)/tests/sim/%,$(sort $(wildcard tests/sim/*.c)))

.PHONY: all run check check-unit check-integration check-vm check-san check-valgrind \
	check-fuzz check-c-beside bench bench-peers bench-fleet deps install clean help test-libs sample-backend image \
	check-c check-layers e2e e2e-build e2e-shell image-rootfs
.DEFAULT_GOAL := all

all: $(BUILD)/dralet

$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: proto/%.proto
	@mkdir -p $(dir $@)
	$(Q)protoc-c --proto_path=proto --c_out=$(BUILD)/gen $<

# Generated sources are not intermediate files: keep them between builds.
.SECONDARY: $(PROTO_C) $(PROTO_H)

$(BUILD)/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c
	$(Q)$(CC) $(filter-out -Wshadow -Wmissing-prototypes,$(ALL_CFLAGS)) -c $< -o $@

$(BUILD)/obj/%.o: %.c | $(PROTO_H)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# Backends get exactly what an out-of-tree backend gets (dralet-backend.pc): the SDK
# headers and nothing of the agent; the sample backend and the test libraries too.
BACKEND_CFLAGS := -std=gnu11 $(WARNINGS) $(CFLAGS) $(SANFLAGS) -fPIC -Iinclude $(PKG_CFLAGS)
$(BUILD)/obj/backends/%.o: backends/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(BACKEND_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libdralet.a: $(LIB_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/dralet: $(MAIN_OBJ) $(BUILD)/libdralet.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(MAIN_OBJ) -Wl,--whole-archive $(BUILD)/libdralet.a \
		-Wl,--no-whole-archive $(PKG_LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libdralet.a $(TEST_SUPPORT_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -Itests/unit/support -o $@ $< $(TEST_SUPPORT_OBJ) $(ALL_LDFLAGS) \
		-Wl,--whole-archive $(BUILD)/libdralet.a -Wl,--no-whole-archive \
		$(PKG_LIBS) $(shell pkg-config --libs $(TEST_PKGS))

$(BUILD)/tests/integration/%: tests/integration/%.c $(BUILD)/libdralet.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  PROG    $@")
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS) \
		-Wl,--whole-archive $(BUILD)/libdralet.a -Wl,--no-whole-archive $(PKG_LIBS)

# tests named *_umockdev run under umockdev-wrapper and link libumockdev
$(BUILD)/tests/%_umockdev: tests/unit/%_umockdev.c $(BUILD)/libdralet.a $(TEST_SUPPORT_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(shell pkg-config --cflags umockdev-1.0) -Itests/unit \
		-Itests/unit/support -o $@ $< $(TEST_SUPPORT_OBJ) $(ALL_LDFLAGS) \
		-Wl,--whole-archive $(BUILD)/libdralet.a -Wl,--no-whole-archive \
		$(PKG_LIBS) $(shell pkg-config --libs $(TEST_PKGS) umockdev-1.0)

.SECONDARY: $(TEST_SUPPORT_OBJ)

.SECONDEXPANSION:
$(BUILD)/tests/lib/%.so: $$(wildcard tests/lib/%/*.c) $$(wildcard tests/lib/%/*.h) $(wildcard include/dralet/*.h)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(filter-out $(SANFLAGS),$(BACKEND_CFLAGS)) -shared \
		-o $@ $(filter tests/lib/$*/%.c,$^) $(shell pkg-config --libs json-c)
# built from the fake NVML's source (#include), with the event calls left out
$(BUILD)/tests/lib/fake-nvml-no-events.so: tests/lib/fake-nvml/fake_nvml.c

$(BUILD)/tests/sim/%: tests/sim/%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) $(CFLAGS) $(PKG_CFLAGS) -o $@ $< $(shell pkg-config --libs json-c)

test-libs: $(TEST_LIBS) $(SIM_PROGS)

# ---- running ----
RUN_DIR ?= $(CURDIR)/run
BOARD ?= boards/hgx-h100.yaml
run: $(BUILD)/dralet $(BUILD)/tests/lib/fake-nvml.so
	$(Q)scripts/run-demo.sh $(BUILD)/dralet $(BOARD) $(RUN_DIR) $(CURDIR)/$(BUILD)/tests/lib/fake-nvml.so

# ---- tests ----
# Unit and integration tests run TEST_JOBS at a time: most of their time is
# spent waiting on the processes they start. The VM tests and valgrind run
# one after another (they share a cached initramfs, and use whole CPUs).
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
TEST_JOBS ?= $(shell echo $$(($(JOBS) * 2)))

check-unit: $(UNIT_BIN) $(TEST_LIBS)
	$(Q)BUILD=$(BUILD) TEST_JOBS=$(TEST_JOBS) tests/run-tests.sh unit $(UNIT_BIN)

# The grpc-go kubelet client (its own Go module; Go from /usr/local/go).
GO ?= /usr/local/go/bin/go
$(BUILD)/tests/go/kubeletclient: tests/go/kubeletclient/main.go tests/go/kubeletclient/go.mod tests/go/kubeletclient/go.sum
	@mkdir -p $(dir $@)
	$(Q)cd tests/go/kubeletclient && GOFLAGS=-mod=readonly $(GO) build -trimpath -o $(CURDIR)/$@ .

check-integration: $(BUILD)/dralet $(TEST_LIBS) $(INTEG_PROG) sample-backend $(BUILD)/tests/go/kubeletclient
	$(Q)BUILD=$(BUILD) DRALET=$(CURDIR)/$(BUILD)/dralet TEST_JOBS=$(TEST_JOBS) tests/run-tests.sh integration \
		$(sort $(wildcard tests/integration/test_*.sh tests/integration/test_*.py))

check-vm: $(BUILD)/dralet
	$(Q)BUILD=$(BUILD) DRALET=$(CURDIR)/$(BUILD)/dralet tests/run-tests.sh vm \
		$(sort $(wildcard tests/vm/test_*.sh))

check-valgrind: $(BUILD)/dralet
	$(Q)BUILD=$(BUILD) DRALET=$(CURDIR)/$(BUILD)/dralet tests/run-tests.sh valgrind tests/valgrind.sh

check-fuzz:
	$(Q)$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk FUZZ_SECONDS=$${FUZZ_SECONDS:-10}

check-san:
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) SAN=1 check-unit
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) SAN=1 check-integration

check-layers:
	$(Q)/usr/bin/python3 scripts/check-layers.py

check-c-beside:
	$(Q)nice -n 5 $(MAKE) --no-print-directory check-c

check-c: check-layers
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) all
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) check-unit
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) check-integration
	$(Q)$(MAKE) --no-print-directory check-valgrind
	$(Q)$(MAKE) --no-print-directory check-fuzz
	$(Q)$(MAKE) --no-print-directory check-vm
	$(Q)$(MAKE) --no-print-directory check-san

# Every test: the product and its image first; then the C suites beside the
# e2e suite, which starts once its Kubernetes builds (Go, most of a cold run's
# time, output in $(E2E_BUILD_LOG)) are done. Cold, the e2e side (builds, then
# the scenarios) is by far the longer, so the C suites yield the CPUs to it (nice).
check:
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) all image
	$(Q)$(MAKE) --no-print-directory -j2 check-c-beside e2e E2E_BUILD_QUIET=1
	@echo "make check: all tests passed"

# ---- dralet under real Kubernetes (tests/e2e; docs/testing.md) ----
E2E_VERSIONS ?= $(notdir $(wildcard tests/e2e/k8s/1.*))
E2E_VERSION ?= $(lastword $(sort $(E2E_VERSIONS)))
E2E_BOARD ?= hgx-h100
E2E_BUILD_LOG := $(BUILD)/e2e/build.log
E2E_SCRIPTS := tests/e2e/e2e.py

e2e-build:
	@mkdir -p $(BUILD)/e2e
ifeq ($(E2E_BUILD_QUIET),1)
	@echo "e2e build: Kubernetes $(E2E_VERSIONS), containerd, helm (Go; log: $(E2E_BUILD_LOG))"
	$(Q)BUILD=$(BUILD) GO=$(GO) E2E_VERSIONS="$(E2E_VERSIONS)" tests/e2e/build.sh >$(E2E_BUILD_LOG) 2>&1 \
		|| { tail -40 $(E2E_BUILD_LOG); echo "e2e build failed (log: $(E2E_BUILD_LOG))"; exit 1; }
	@grep -E ' in [0-9]+s$$|up to date' $(E2E_BUILD_LOG) || true
else
	$(Q)BUILD=$(BUILD) GO=$(GO) E2E_VERSIONS="$(E2E_VERSIONS)" tests/e2e/build.sh
endif

# The versions run at once, each in its own sandbox (their lines carry the version).
e2e: e2e-build image
	$(Q)$(MAKE) --no-print-directory -j$(words $(E2E_VERSIONS)) $(addprefix e2e-run-,$(E2E_VERSIONS))

e2e-run-%:
	$(Q)BUILD=$(BUILD) /usr/bin/python3 $(E2E_SCRIPTS) --version $*

e2e-shell: e2e-build image
	$(Q)BUILD=$(BUILD) /usr/bin/python3 $(E2E_SCRIPTS) --version $(E2E_VERSION) --shell --board $(E2E_BOARD)

bench: $(BUILD)/dralet $(TEST_LIBS)
	$(Q)BUILD=$(BUILD) DRALET=$(CURDIR)/$(BUILD)/dralet tests/bench/run.sh

# Side by side with the peers (tests/peers, issue 15): their node plugins built from
# their pinned Go modules, then one e2e cluster with all three drivers on its node.
PEERS_VERSION ?= $(E2E_VERSION)
PEERS_ARGS ?=
bench-peers: e2e-build image $(TEST_LIBS)
	$(Q)BUILD=$(BUILD) GO=$(GO) tests/peers/build.sh
	$(Q)BUILD=$(BUILD) /usr/bin/python3 tests/peers/bench.py --version $(PEERS_VERSION) $(PEERS_ARGS)

# Fleet scale (tests/bench/fleet.py, issue 14): agents with their own node names and
# small simulated boards against the e2e suite's etcd + kube-apiserver, no kubelet.
FLEET_VERSION ?= $(E2E_VERSION)
FLEET_ARGS ?=
bench-fleet: e2e-build $(BUILD)/dralet
	$(Q)BUILD=$(BUILD) /usr/bin/python3 tests/bench/fleet.py --version $(FLEET_VERSION) $(FLEET_ARGS)

# ---- the container image (no container daemon needed: umoci) ----
IMAGE_NAME ?= ghcr.io/dralet/dralet
IMAGE_ARCHIVE := $(BUILD)/image/dralet-$(VERSION).oci.tar
image: $(IMAGE_ARCHIVE)
	@size=$$(gzip -c $(BUILD)/image/rootfs.tar | wc -c); \
	echo "image $(IMAGE_NAME):$(VERSION): $(IMAGE_ARCHIVE)"; \
	echo "  root filesystem $$(du -sh $(BUILD)/image/rootfs | cut -f1), compressed $$((size / 1024 / 1024)) MiB"; \
	echo "  push: skopeo copy oci-archive:$(IMAGE_ARCHIVE) docker://REGISTRY/dralet:$(VERSION)"; \
	echo "  load: podman load -i $(IMAGE_ARCHIVE)   or   ctr -n k8s.io images import $(IMAGE_ARCHIVE)"

IMAGE_INPUTS := $(BUILD)/dralet $(BUILD)/tests/lib/fake-nvml.so $(BUILD)/tests/lib/fake-xrt.so \
	$(BUILD)/tests/sim/nvidia-smi \
	boards/*.yaml scripts/image-rootfs.sh
# The image's root filesystem alone (deploy/Containerfile copies it).
image-rootfs: $(IMAGE_INPUTS)
	$(Q)scripts/image-rootfs.sh $(BUILD) $(BUILD)/image/rootfs

$(IMAGE_ARCHIVE): $(IMAGE_INPUTS) scripts/oci-image.sh
	$(Q)scripts/image-rootfs.sh $(BUILD) $(BUILD)/image/rootfs
	$(Q)tar -C $(BUILD)/image/rootfs -cf $(BUILD)/image/rootfs.tar .
	$(Q)scripts/oci-image.sh $(BUILD)/image/rootfs $(IMAGE_NAME):$(VERSION) $@ /usr/bin/dralet

# ---- the SDK for out-of-tree backends ----
sample-backend: $(BUILD)/dralet
	$(Q)rm -rf $(BUILD)/sdk
	$(Q)$(MAKE) --no-print-directory install-sdk DESTDIR=$(CURDIR)/$(BUILD)/sdk PREFIX=/usr
	$(Q)PKG_CONFIG_PATH=$(CURDIR)/$(BUILD)/sdk/usr/lib/pkgconfig \
		PKG_CONFIG_SYSROOT_DIR=$(CURDIR)/$(BUILD)/sdk \
		$(MAKE) --no-print-directory -C tests/sample-backend OUT=$(CURDIR)/$(BUILD)/backends

install-sdk:
	install -d $(DESTDIR)$(INCLUDEDIR)/dralet $(DESTDIR)$(PKGCONFIGDIR)
	install -m 0644 include/dralet/*.h $(DESTDIR)$(INCLUDEDIR)/dralet/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' dralet-backend.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/dralet-backend.pc

install: $(BUILD)/dralet install-sdk
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(BUILD)/dralet $(DESTDIR)$(BINDIR)/dralet

deps:
	$(Q)scripts/deps.sh

clean:
	rm -rf build build-asan build-fuzz run

help:
	@sed -n '1,/^$$/p' Makefile

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
