# SPDX-License-Identifier: GPL-2.0-only
# pgoff: build, test, demo, install. Artifacts go to build/; quiet unless V=1.

VERSION   := 0.1.0
PREFIX    ?= /usr/local
DESTDIR   ?=
BUILD     ?= build
CC        ?= cc
CLANG     ?= clang
BPFTOOL   ?= bpftool
ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS    ?= -O2 -g
CFLAGS    += -std=gnu11 $(WARN) -I. -I$(BUILD) -DPGOFF_VERSION='"$(VERSION)"'
# What a distribution builds with: fortified libc calls (needs -O), stack
# canaries and clash probes, CET (x86) or PAC/BTI (arm64), PIE, full RELRO,
# no executable stack. tests/unit/test_hardening.sh checks the binaries.
HARDEN_CFLAGS := -fstack-protector-strong -fstack-clash-protection -fPIE
HARDEN_LDFLAGS := -pie -Wl,-z,relro,-z,now -Wl,-z,noexecstack
ifeq ($(ARCH),x86)
HARDEN_CFLAGS += -fcf-protection
else ifeq ($(ARCH),arm64)
HARDEN_CFLAGS += -mbranch-protection=standard
endif
# SANITIZE=1: AddressSanitizer, LeakSanitizer and UBSan (make asan). ASan
# intercepts the libc calls that _FORTIFY_SOURCE would redirect to their
# __*_chk forms, and checks them better; the rest of the flags stay.
ifeq ($(SANITIZE),1)
CFLAGS    += -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	     -fno-omit-frame-pointer
else
HARDEN_CFLAGS += -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=3
endif
CFLAGS    += $(HARDEN_CFLAGS)
LDFLAGS   += $(HARDEN_LDFLAGS)
# -mcpu=v3: the BPF atomics that return the old value (quotas)
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -I$(BUILD) -Ibpf -Wall -Werror

BROKER_LIBS := -lbpf -lelf -lz -lzstd -ljson-c -lcap -lnettle
CLIENT_LIBS := -ljson-c -lz
EXPORTER_LIBS := -ljson-c -lmicrohttpd -lyaml -lcrypt -lz

# Debian 12 packages needed to build, test and run. The SELinux ones
# build selinux/pgoffd.pp (the refpolicy devel Makefile and headers) and
# check it offline (link, expand, setools); SELinux stays disabled.
# debhelper, dpkg-dev and lintian build and check the Debian packages
# (make deb). libc6-dbg: libc's symbols from a debug file (test_usyms).
# debootstrap makes the root file systems other PostgreSQL majors run in
# (tests/e2e/roots.sh; util-linux: unshare, setpriv, findmnt, flock);
# systemd-container boots one with systemd (systemd-nspawn). chromium,
# chromium-driver and python3-selenium run the flame graph's script in a
# browser (tests/e2e/test_flame_browser.sh). golang-go: go tool pprof
# reads the pprof profiles in the tests (the package build runs none of
# those, so debian/control does not list it). libbpf-tools: make bench's
# offcputime, measured beside pgoffd.
DEPS := clang llvm libclang-rt-14-dev libbpf-dev libelf-dev zlib1g-dev libzstd-dev libcap-dev libjson-c-dev nettle-dev \
	bpftool make gcc binutils pkg-config postgresql-15 postgresql-contrib jq passwd procps systemd \
	debootstrap systemd-container util-linux libbpf-tools \
	tmux libxml2-utils groff-base \
	libmicrohttpd-dev libyaml-dev libcrypt-dev prometheus openssl python3 curl \
	selinux-policy-dev checkpolicy semodule-utils policycoreutils setools python3-setools bzip2 \
	debhelper dpkg-dev lintian libc6-dbg postgresql-15-pg-wait-sampling \
	chromium chromium-driver python3-selenium golang-go

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-7s %s\n' $(1) $(2);
endif

# What every program links: the wire protocol and the common utilities
SHARED_SRCS := protocol/protocol.c common/linebuf.c common/log.c common/units.c \
		 common/utf8.c common/since.c common/clock.c
BROKER_SRCS := broker/main.c broker/kernel/tracer.c broker/kernel/cpu_tick.c broker/kernel/event.c broker/kernel/json_fields.c broker/kernel/json_writer.c broker/serve/server.c \
	broker/serve/control_socket.c broker/kernel/ksyms.c broker/kernel/classify.c \
	broker/pg/pg_registry.c broker/pg/pg_elf.c broker/pg/pg_title.c broker/pg/pg_wait_names.c \
	broker/pg/uelf.c broker/pg/usyms.c broker/priv/fs_kind.c broker/priv/symfiles.c \
	broker/pg/pg_wait_names_data.c broker/pg/pg_status_layout.c broker/pg/pg_status_layout_data.c \
	broker/serve/filter.c broker/priv/pg_probe.c broker/priv/userns_owner.c broker/priv/pg_trust.c broker/priv/prober_client.c broker/priv/prober_server.c broker/priv/privdrop.c \
	broker/pg/procfs.c broker/config.c \
	broker/kernel/syscall_wait.c broker/kernel/aggregate.c broker/kernel/stats.c broker/kernel/ring_pace.c \
	broker/kernel/holdback.c broker/record/store.c broker/record/agg_record.c broker/grow_buf.c broker/record/replay_meta.c broker/record/recorder.c broker/record/owner_share.c broker/record/event_dict.c broker/record/sql_redact.c broker/priv/safe_dir.c broker/serve/log_limit.c broker/sd_notify.c \
	broker/priv/usdt.c broker/uid_rows.c broker/kernel/usdt_rate.c broker/priv/worker_seccomp.c broker/kernel/query_texts.c broker/replies.c broker/cmdline.c \
	broker/priv/pg_shmem_names.c broker/pg/pg_names.c broker/pg/cluster_ident.c broker/pg/container.c
CLIENT_SRCS := client/pgoffctl.c client/cli.c client/conn.c client/io_util.c client/render.c client/stats_view.c \
	client/top.c client/filter_opts.c client/flame_cmd.c client/flame.c \
	client/event_frames.c client/pprof.c client/json_out.c
# pgoff_exporter: its own binary, so that pgoffctl links no HTTP or TLS
# stack; it talks to pgoffd through client/conn.c and renders with
# client/stats_view.c like pgoffctl metrics.
EXPORTER_PURE := exporter/exposition.c exporter/histogram.c exporter/monotonic.c \
	exporter/streaks.c exporter/web_config.c exporter/basic_auth.c exporter/auth_limit.c
EXPORTER_SRCS := exporter/main.c exporter/http.c exporter/broker_client.c \
	exporter/self_stats.c exporter/profile.c $(EXPORTER_PURE) client/conn.c client/io_util.c broker/pg/procfs.c \
	client/stats_view.c client/event_frames.c client/pprof.c

SHARED_OBJS := $(SHARED_SRCS:%.c=$(BUILD)/%.o)
BROKER_OBJS := $(BROKER_SRCS:%.c=$(BUILD)/%.o)
CLIENT_OBJS := $(CLIENT_SRCS:%.c=$(BUILD)/%.o)
EXPORTER_OBJS := $(EXPORTER_SRCS:%.c=$(BUILD)/%.o)

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
# Unit tests that are scripts: they check the built binaries (PGOFF_BUILD),
# pgoffd among them, so they need what all needs (make binary-test); make
# unit-test needs only a C compiler and the libraries.
UNIT_SCRIPTS := $(wildcard tests/unit/test_*.sh)

.PHONY: FORCE all deps test test-binaries unit-test binary-test e2e-test demo install uninstall clean asan fuzz bench \
	unit-binaries pg-wait-names pg-status-layout shmem-names-corpus deb \
	selinux selinux-test
all: $(BUILD)/pgoffd $(BUILD)/pgoffctl $(BUILD)/pgoff_exporter

$(BUILD)/vmlinux.h:
	$(call msg,BTF,$@)
	$(Q)mkdir -p $(BUILD)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/offcpu.bpf.o: bpf/offcpu.bpf.c bpf/offcpu.h $(wildcard bpf/*.bpf.h) $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/offcpu.skel.h: $(BUILD)/offcpu.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name offcpu_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/broker/kernel/tracer.o: $(BUILD)/offcpu.skel.h

$(BUILD)/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/pgoffd: $(BROKER_OBJS) $(SHARED_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(BROKER_LIBS) -o $@

$(BUILD)/pgoffctl: $(CLIENT_OBJS) $(SHARED_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(CLIENT_LIBS) -o $@

# The wait event names and their generated tables go together; so do
# where a backend's status entry lies and its generated table.
PG_WAIT_NAMES := broker/pg/pg_wait_names.c broker/pg/pg_wait_names_data.c
PG_STATUS_LAYOUT := broker/pg/pg_status_layout.c broker/pg/pg_status_layout_data.c
# A cluster's run-time names: as pgoffd keeps them, and their reader.
PG_NAMES := broker/pg/pg_names.c broker/priv/pg_shmem_names.c $(PG_WAIT_NAMES)

# The git revision in pgoff_build_info: the header changes only when the
# revision does, so a commit rebuilds one object.
$(BUILD)/exporter/revision.h: FORCE
	$(Q)mkdir -p $(dir $@)
	$(Q)rev=$$(git -C $(CURDIR) rev-parse --short=12 HEAD 2>/dev/null || echo unknown); \
	echo "#define PGOFF_REVISION \"$$rev\"" > $@.tmp; \
	cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/exporter/main.o: $(BUILD)/exporter/revision.h

$(BUILD)/pgoff_exporter: $(EXPORTER_OBJS) $(SHARED_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(EXPORTER_LIBS) -o $@

# Each unit test links the one module it tests (named after it), plus
# protocol/, common/ and the pure modules that one needs. None needs vmlinux.h,
# clang or bpftool: only the BPF object does (bpf/offcpu.h, which the
# broker's modules share with it, holds no kernel types).
TEST_NEEDS_filter := broker/kernel/classify.c $(PG_WAIT_NAMES)
TEST_NEEDS_render := client/render.c
TEST_NEEDS_cli := client/cli.c
TEST_NEEDS_syscall_wait := broker/kernel/classify.c $(PG_WAIT_NAMES)
TEST_NEEDS_stats_view := client/stats_view.c
TEST_NEEDS_aggregate := broker/kernel/json_fields.c broker/kernel/classify.c broker/kernel/syscall_wait.c $(PG_STATUS_LAYOUT) \
	$(PG_NAMES)
TEST_NEEDS_flame := client/flame.c
TEST_NEEDS_pprof := client/pprof.c client/event_frames.c
TEST_NEEDS_usyms := broker/pg/uelf.c broker/priv/fs_kind.c broker/priv/symfiles.c
TEST_NEEDS_event := broker/kernel/json_fields.c broker/kernel/json_writer.c broker/kernel/classify.c broker/kernel/ksyms.c broker/record/sql_redact.c broker/grow_buf.c \
	broker/pg/pg_registry.c broker/pg/pg_title.c broker/pg/procfs.c broker/pg/usyms.c broker/serve/log_limit.c broker/uid_rows.c \
	broker/pg/uelf.c broker/priv/fs_kind.c broker/kernel/syscall_wait.c broker/pg/cluster_ident.c broker/pg/container.c $(PG_NAMES) $(PG_STATUS_LAYOUT)
TEST_NEEDS_pg_wait_names := broker/pg/pg_wait_names_data.c
TEST_NEEDS_usdt := broker/pg/pg_elf.c broker/uid_rows.c
TEST_NEEDS_pg_registry := broker/pg/pg_title.c broker/pg/procfs.c broker/serve/log_limit.c broker/uid_rows.c \
	broker/pg/cluster_ident.c broker/pg/container.c $(PG_NAMES)
TEST_NEEDS_pg_status_layout := broker/pg/pg_status_layout_data.c
TEST_NEEDS_pg_probe := broker/pg/pg_elf.c broker/pg/procfs.c broker/priv/pg_trust.c broker/priv/pg_shmem_names.c \
	$(PG_STATUS_LAYOUT)
TEST_NEEDS_pg_names := broker/priv/pg_shmem_names.c $(PG_WAIT_NAMES)
TEST_NEEDS_config := broker/priv/pg_trust.c
TEST_NEEDS_exporter_histogram := exporter/histogram.c
TEST_NEEDS_self_stats := exporter/self_stats.c broker/pg/procfs.c
TEST_NEEDS_exporter_exposition := $(EXPORTER_PURE) client/stats_view.c
TEST_NEEDS_exporter_web_config := exporter/web_config.c exporter/basic_auth.c
TEST_NEEDS_exporter_auth_limit := exporter/auth_limit.c
TEST_LIBS_exporter_exposition := -lyaml -lcrypt
TEST_LIBS_exporter_web_config := -lyaml -lcrypt
TEST_NEEDS_control_socket := broker/priv/safe_dir.c
TEST_NEEDS_json_out := client/json_out.c
TEST_NEEDS_io_util := client/io_util.c
TEST_NEEDS_agg_record := broker/grow_buf.c
TEST_NEEDS_json_writer := broker/grow_buf.c broker/kernel/json_fields.c \
	$(PG_WAIT_NAMES)
TEST_NEEDS_sql_redact := broker/grow_buf.c
TEST_NEEDS_recorder_window := broker/record/recorder.c broker/record/owner_share.c broker/record/event_dict.c broker/record/store.c broker/record/agg_record.c \
	broker/kernel/aggregate.c broker/grow_buf.c broker/record/sql_redact.c broker/priv/safe_dir.c broker/serve/filter.c \
	broker/kernel/json_fields.c broker/kernel/classify.c broker/kernel/syscall_wait.c $(PG_NAMES) $(PG_STATUS_LAYOUT)
TEST_NEEDS_recorder_dir := $(TEST_NEEDS_recorder_window)
TEST_NEEDS_replay_meta := broker/kernel/classify.c $(PG_WAIT_NAMES)
TEST_NEEDS_server := broker/serve/control_socket.c broker/priv/safe_dir.c broker/serve/log_limit.c \
	broker/record/store.c broker/record/replay_meta.c \
	broker/serve/filter.c broker/kernel/classify.c $(PG_WAIT_NAMES)

# A test is built from sources in one command, with no dependency file:
# any header change rebuilds them all, rather than leave one stale.
UNIT_TEST_HEADERS := $(wildcard broker/*.h broker/*/*.h client/*.h common/*.h exporter/*.h protocol/*.h tests/unit/*.h) \
	bpf/offcpu.h

.SECONDEXPANSION:
$(BUILD)/tests/test_%: tests/unit/test_%.c $$(wildcard broker/$$*.c broker/*/$$*.c) $$(TEST_NEEDS_$$*) \
		$(SHARED_OBJS) $(UNIT_TEST_HEADERS)
	$(call msg,TEST-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(wildcard broker/$*.c broker/*/$*.c) $(TEST_NEEDS_$*) \
		$(SHARED_OBJS) $(BROKER_LIBS) $(TEST_LIBS_$*) -o $@

# Tools the end-to-end tests run (not installed); pprof_write writes the
# profiles tests/unit/test_pprof_go.sh reads with go tool pprof.
TEST_TOOLS := $(BUILD)/tests/pg_wait_names_dump $(BUILD)/tests/pprof_write

$(BUILD)/tests/pprof_write: tests/tools/pprof_write.c client/pprof.c client/pprof.h \
		common/utf8.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(filter %.c,$^) -lz -o $@

$(BUILD)/tests/pg_wait_names_dump: tests/tools/pg_wait_names_dump.c $(PG_WAIT_NAMES) \
		broker/pg/pg_wait_names.h broker/pg/pg_wait_names_data.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(filter %.c,$^) -o $@

deps:
	@missing=$$(for p in $(DEPS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

unit-test: $(UNIT_TESTS) $(TEST_TOOLS)
	@PGOFF_BUILD=$(BUILD) tests/run.sh unit $(UNIT_TESTS)

binary-test: all $(TEST_TOOLS)
	@PGOFF_BUILD=$(BUILD) tests/run.sh unit $(UNIT_SCRIPTS)

# libFuzzer targets (clang): the request decoder, the client's renderers
# (with the flame graph writer), the pprof encoder, pgoff_exporter's parser and page, the
# ELF symbol reader of user stacks, the flight recorder's aggregation
# records and batch records, its SQL redactor, the writer of event
# lines and the cgroup file parser.
FUZZ_CFLAGS := -g -O1 -std=gnu11 $(WARN) -I. -I$(BUILD) -DPGOFF_VERSION='"$(VERSION)"' \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
# A fuzz target is tests/fuzz/fuzz_NAME.c, built by the pattern rule below
# with what FUZZ_NEEDS_NAME lists (sources, and anything else it must be
# rebuilt after) and FUZZ_LIBS_NAME; every header rebuilds them all.
FUZZ_NAMES := request client web_config exporter uelf agg_record sql_redact \
	json_writer store_batch pprof shmem_names container
FUZZ_TARGETS := $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%)
FUZZ_SECONDS ?= 60

FUZZ_NEEDS_request := $(SHARED_SRCS) broker/serve/filter.c broker/kernel/classify.c $(PG_WAIT_NAMES)
FUZZ_LIBS_request := -ljson-c
FUZZ_NEEDS_client := $(SHARED_SRCS) client/render.c client/stats_view.c client/flame.c
FUZZ_LIBS_client := -ljson-c
# The flight recorder's per-second aggregation records, as read back.
FUZZ_NEEDS_agg_record := broker/record/agg_record.c broker/grow_buf.c $(BUILD)/vmlinux.h
# The flight recorder's batch records, as read back: any payload.
FUZZ_NEEDS_store_batch := broker/record/store.c $(SHARED_SRCS)
FUZZ_LIBS_store_batch := -lz -lzstd -ljson-c
# The pprof encoder: any frames, labels and weights, read back strictly.
FUZZ_NEEDS_pprof := client/pprof.c common/utf8.c
FUZZ_LIBS_pprof := -lz
# The cgroup file parser: what names a cluster's container.
FUZZ_NEEDS_container := broker/pg/container.c
# The redactor of SQL the flight recorder stores: any query text.
FUZZ_NEEDS_sql_redact := broker/record/sql_redact.c broker/grow_buf.c
# The writer of event lines without json-c: json-c's text for any bytes.
FUZZ_NEEDS_json_writer := broker/kernel/json_writer.c broker/kernel/json_fields.c broker/grow_buf.c \
	$(SHARED_SRCS) $(PG_WAIT_NAMES)
FUZZ_LIBS_json_writer := -ljson-c
# pgoff_exporter: the web config file (an operator's), and what it does
# with pgoffd's replies.
FUZZ_NEEDS_web_config := exporter/web_config.c exporter/basic_auth.c
FUZZ_LIBS_web_config := -lyaml -lcrypt
FUZZ_NEEDS_exporter := $(SHARED_SRCS) $(EXPORTER_PURE) client/stats_view.c
FUZZ_LIBS_exporter := -ljson-c -lyaml -lcrypt
# The reader of run-time names: any bytes as a cluster's shared memory.
# Its corpus: the valid segments test_pg_shmem_names builds.
FUZZ_NEEDS_shmem_names := broker/priv/pg_shmem_names.c
# The ELF reader of user stacks: files a traced process has mapped.
FUZZ_NEEDS_uelf := broker/pg/uelf.c

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $$(FUZZ_NEEDS_$$*) $(UNIT_TEST_HEADERS)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< $(filter %.c,$(FUZZ_NEEDS_$*)) $(FUZZ_LIBS_$*) -o $@

shmem-names-corpus: $(BUILD)/tests/test_pg_shmem_names
	$(Q)mkdir -p tests/fuzz/corpus/shmem_names
	$(Q)PGOFF_SHMEM_CORPUS=tests/fuzz/corpus/shmem_names $< >/dev/null

fuzz: $(FUZZ_TARGETS)
	@tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The suite: unit tests, the fuzz targets (corpus, then 20 s each), e2e
# tests, and the e2e tests again with the sanitizer build (any ASan/UBSan
# report or leak fails them).
# The unit tests run twice: as built, and with ASan/UBSan (an undefined
# call such as bsearch on an empty NULL array aborts there).
ASAN_UNIT_TESTS := $(patsubst $(BUILD)/%,$(BUILD)/asan/%,$(UNIT_TESTS))

# make test builds the bench's programs too (never runs them): a change
# that breaks make bench fails here, not on the day someone measures
BENCH_BINS = $(addprefix $(BUILD)/bench/,empty.bpf.o lookups.bpf.o empty_load \
	floor_load trap_empty.bpf.o trap_site trap_load stretch_store)

# The builds make test needs (plain, sanitizer, fuzz, bench) take 4 minutes
# one file at a time on two CPUs and 2 with two jobs: built with a job a
# CPU (JOBS=1 for one at a time), then the tests run: the unit tests and
# fuzzers JOBS at a time, the end-to-end tests one after another. run.sh
# runs the build, so that the e2e tests' roots are built beside it.
JOBS ?= $(shell nproc)
test:
	@JOBS=$(JOBS) FUZZ_SECONDS=20 tests/run.sh all \
		--build '$(MAKE) --no-print-directory -j$(JOBS) test-binaries' \
		$(UNIT_TESTS) $(ASAN_UNIT_TESTS) $(UNIT_SCRIPTS) -- $(FUZZ_TARGETS)

test-binaries: all asan $(UNIT_TESTS) $(TEST_TOOLS) $(FUZZ_TARGETS) $(BENCH_BINS)

# One end-to-end test, plain and with ASan, as make test runs it (under
# the e2e lock, timed): make e2e-test T=labels. Without T: all of them.
e2e-test: all asan $(TEST_TOOLS)
	@t='test_$(or $(T),*)'; ls tests/e2e/$$t.sh >/dev/null 2>&1 || \
		{ echo "make e2e-test: no tests/e2e/$$t.sh" >&2; exit 2; }; \
	E2E_TESTS="$$t" tests/run.sh e2e

asan:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/asan SANITIZE=1 all unit-binaries

unit-binaries: $(UNIT_TESTS) $(TEST_TOOLS)

# The wait event tables, generated from PostgreSQL's own sources (the
# header of tools/gen_pg_wait_names.py says how to fetch them):
#   PGSRC  a PostgreSQL git repository (bare is fine) with REL_13_STABLE ..
#          REL_19_STABLE: 14 and 16 are read there, and every major's
#          minor releases (the first minor of each event);
#   PGDEB  a directory with Debian's packages of the versions this
#          project's servers run, as apt-get left them: the source
#          packages of 13, 15 and 18 unpacked by dpkg-source -x next to
#          their .dsc and .orig tarball, and the postgresql-server-dev
#          .debs of 17 and 19 (whose source packages were not to be had).
# The committed broker/pg/pg_wait_names_data.c is exactly what
#   make pg-wait-names PGSRC=/path/to/postgres.git PGDEB=/path/to/debian
# writes (its header lists the arguments). PGREFS="19=REL_19_RC1 …" adds
# --ref arguments; PG_WAIT_SOURCES replaces the Debian ones.
PYTHON3 ?= /usr/bin/python3
PG_WAIT_SOURCES ?= --tree 13=$(PGDEB)/postgresql-13-13.16 \
	--tree 15=$(PGDEB)/postgresql-15-15.18 \
	--headers 17=$(PGDEB)/postgresql-server-dev-17_17.12-0+deb13u1_amd64.deb \
	--tree 18=$(PGDEB)/postgresql-18-18.6 \
	--headers 19=$(PGDEB)/postgresql-server-dev-19_19~rc1-1_amd64.deb

pg-wait-names:
	@test -n "$(PGSRC)" || { echo "make pg-wait-names: give PGSRC=/path/to/postgres.git" >&2; \
		exit 2; }
	@test -n "$(PGDEB)" -o "$(origin PG_WAIT_SOURCES)" != file || \
		{ echo "make pg-wait-names: give PGDEB=/path/to/debian-packages" >&2; exit 2; }
	$(call msg,GEN,broker/pg/pg_wait_names_data.c)
	$(Q)$(PYTHON3) tools/gen_pg_wait_names.py --git-dir $(PGSRC) \
		$(foreach r,$(PGREFS),--ref $(r)) $(PG_WAIT_SOURCES) \
		-o broker/pg/pg_wait_names_data.c

# Where each major keeps what pgoff reads of a backend's status entry,
# from its own headers: PGDEB holds the postgresql-server-dev-MAJOR .debs
# of the majors Debian ships (13, 15, 17, 18, 19; their names are in the
# committed file's header).
pg-status-layout:
	@test -n "$(PGDEB)" || { echo "make pg-status-layout: give PGDEB=/path/to/debian-packages" >&2; \
		exit 2; }
	$(call msg,GEN,broker/pg/pg_status_layout_data.c)
	$(Q)bash tools/gen_pg_status_layout.sh $(sort $(wildcard $(PGDEB)/postgresql-server-dev-*.deb)) \
		> broker/pg/pg_status_layout_data.c.tmp && mv broker/pg/pg_status_layout_data.c.tmp \
		broker/pg/pg_status_layout_data.c

# The SELinux module (selinux/): built by the refpolicy devel Makefile in
# $(BUILD)/selinux, so the source tree stays clean. Debian: selinux-policy-dev;
# Fedora/RHEL: selinux-policy-devel. NAME= keeps the host's SELINUXTYPE
# (or its absence) out of the build.
SELINUX_DEVEL ?= /usr/share/selinux/devel/Makefile
SELINUX_SRCS := selinux/pgoffd.te selinux/pgoffd.if selinux/pgoffd.fc

selinux: $(BUILD)/selinux/pgoffd.pp

$(BUILD)/selinux/pgoffd.pp: $(SELINUX_SRCS)
	@test -f $(SELINUX_DEVEL) || { echo "make selinux: $(SELINUX_DEVEL) not found;" \
		"install selinux-policy-dev (Debian) or selinux-policy-devel (Fedora/RHEL)" >&2; exit 1; }
	$(call msg,SEMOD,$@)
	$(Q)rm -rf $(BUILD)/selinux && mkdir -p $(BUILD)/selinux && cp $^ $(BUILD)/selinux/
	$(Q)$(MAKE) --no-print-directory -C $(BUILD)/selinux -f $(SELINUX_DEVEL) NAME= \
		pgoffd.pp $(if $(Q),>/dev/null)

# Offline: link with Debian's base policy, expand, assert with setools
# (also part of make test).
selinux-test:
	@tests/run.sh selinux

# Cost side by side (root; ROUNDS=5 SECONDS_PER_RUN=15 by default):
# writes tests/bench/results.md. Not part of make test: timings never pass or fail.
bench: all $(BENCH_BINS)
	@tests/bench/bench.sh
	@flock -o /tmp/pgoff-e2e.lock tests/bench/recorder.sh
	@flock -o /tmp/pgoff-e2e.lock tests/bench/usdt.sh
	@flock -o /tmp/pgoff-e2e.lock tests/bench/usdt_trap.sh

# The bench's own programs, built by make bench only: the floor (empty.bpf.c,
# programs that do nothing on pgoff's hooks, loaded by empty_load; lookups.bpf.c,
# ones that only look a task up, by structure; floor.bpf.c, the least a per-switch
# wait attribution does, loaded by floor_load) and the cost of a wait probe
# hit (usdt_trap.sh: the nop site trap_site runs in a loop, trap_load links
# trap_empty.bpf.o's or pgoff's program to it).
$(BUILD)/bench/%.bpf.o: tests/bench/%.bpf.c $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench/floor.bpf.o: tests/bench/floor.h

$(BUILD)/bench/floor.skel.h: $(BUILD)/bench/floor.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name floor_bpf > $@.tmp && mv $@.tmp $@

# floor_load finds a cluster's symbols with pgoffd's own prober code
FLOOR_LOAD_SRCS := tests/bench/floor_load.c broker/priv/pg_probe.c broker/pg/pg_elf.c \
	broker/pg/procfs.c broker/priv/pg_trust.c broker/priv/pg_shmem_names.c \
	$(PG_STATUS_LAYOUT)
$(BUILD)/bench/floor_load: $(FLOOR_LOAD_SRCS) tests/bench/floor.h $(BUILD)/bench/floor.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(FLOOR_LOAD_SRCS) -lbpf -lelf -lz -o $@

# stretch_store rewrites a recorded store with pgoffd's own store code
STRETCH_STORE_SRCS := tests/bench/stretch_store.c broker/record/store.c broker/record/event_dict.c \
	common/log.c common/utf8.c
$(BUILD)/bench/stretch_store: $(STRETCH_STORE_SRCS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(STRETCH_STORE_SRCS) -lz -lzstd -o $@

$(BUILD)/bench/%: tests/bench/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< -lbpf -o $@

demo: deps all
	@tests/e2e/demo.sh

# The Debian packages (debian/): pgoffd, pgoffctl, pgoff-exporter and
# their -dbgsym, in $(BUILD)/deb/, checked by lintian (any error or
# warning fails). Built from a copy of the tree in $(BUILD)/deb/ (not
# build/ nor .git): dpkg-buildpackage writes to the parent directory and
# its clean step removes $(BUILD). Rebuilt only when a file changed.
DEB_DIR := $(BUILD)/deb
DEB_FILES = find . -path ./$(BUILD) -prune -o -path ./build -prune -o -path ./.git -prune \
	-o -type f -print
deb: $(DEB_DIR)/.built

$(DEB_DIR)/.built: $(shell $(DEB_FILES))
	@v=$$(dpkg-parsechangelog -S Version) && [ "$$v" = $(VERSION) ] || \
		{ echo "make deb: debian/changelog is at $$v, the Makefile's VERSION at $(VERSION)" >&2; \
		exit 1; }
	$(call msg,DEB,$(DEB_DIR))
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/pgoff-$(VERSION)
	$(Q)$(DEB_FILES) | tar -c -T - | tar -x -C $(DEB_DIR)/pgoff-$(VERSION)
	$(Q)cd $(DEB_DIR)/pgoff-$(VERSION) && dpkg-buildpackage -us -uc -b -J$(JOBS) >../build.log 2>&1 || \
		{ tail -n 30 ../build.log; echo "make deb: dpkg-buildpackage failed, see $(DEB_DIR)/build.log" >&2; \
		exit 1; }
	$(call msg,LINTIAN,$(DEB_DIR))
	$(Q)lintian --fail-on error,warning $(DEB_DIR)/pgoff_$(VERSION)_*.changes
	$(Q)rm -rf $(DEB_DIR)/pgoff-$(VERSION)
	$(Q)touch $@
	@cd $(DEB_DIR) && ls -l *.deb

SYSTEMD_FILES := lib/systemd/system/pgoffd.service lib/sysusers.d/pgoff.conf \
	lib/tmpfiles.d/pgoff.conf lib/systemd/system/pgoff_exporter.service \
	lib/sysusers.d/pgoff_exporter.conf
DOC_FILES := share/man/man1/pgoffctl.1 share/man/man8/pgoffd.8 \
	share/bash-completion/completions/pgoffctl share/man/man1/pgoff_exporter.1 \
	share/pgoff/exporter/alerts.yml share/pgoff/exporter/dashboard.json

install: all
	install -D -m 0755 $(BUILD)/pgoffd $(DESTDIR)$(PREFIX)/sbin/pgoffd
	install -D -m 0755 $(BUILD)/pgoffctl $(DESTDIR)$(PREFIX)/bin/pgoffctl
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system $(DESTDIR)$(PREFIX)/lib/sysusers.d \
		$(DESTDIR)$(PREFIX)/lib/tmpfiles.d
	sed 's|@SBINDIR@|$(PREFIX)/sbin|g' broker/systemd/pgoffd.service.in \
		> $(DESTDIR)$(PREFIX)/lib/systemd/system/pgoffd.service
	install -m 0644 broker/systemd/pgoff.sysusers $(DESTDIR)$(PREFIX)/lib/sysusers.d/pgoff.conf
	install -m 0644 broker/systemd/pgoff.tmpfiles $(DESTDIR)$(PREFIX)/lib/tmpfiles.d/pgoff.conf
	install -D -m 0644 man/pgoffctl.1 $(DESTDIR)$(PREFIX)/share/man/man1/pgoffctl.1
	install -D -m 0644 man/pgoffd.8 $(DESTDIR)$(PREFIX)/share/man/man8/pgoffd.8
	install -D -m 0644 completion/pgoffctl.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/pgoffctl
	install -D -m 0755 $(BUILD)/pgoff_exporter $(DESTDIR)$(PREFIX)/bin/pgoff_exporter
	sed 's|@BINDIR@|$(PREFIX)/bin|g' exporter/pgoff_exporter.service.in \
		> $(DESTDIR)$(PREFIX)/lib/systemd/system/pgoff_exporter.service
	install -m 0644 exporter/pgoff_exporter.sysusers \
		$(DESTDIR)$(PREFIX)/lib/sysusers.d/pgoff_exporter.conf
	install -D -m 0644 man/pgoff_exporter.1 $(DESTDIR)$(PREFIX)/share/man/man1/pgoff_exporter.1
	install -D -m 0644 exporter/alerts.yml $(DESTDIR)$(PREFIX)/share/pgoff/exporter/alerts.yml
	install -D -m 0644 exporter/dashboard.json \
		$(DESTDIR)$(PREFIX)/share/pgoff/exporter/dashboard.json

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/sbin/pgoffd $(DESTDIR)$(PREFIX)/bin/pgoffctl \
		$(DESTDIR)$(PREFIX)/bin/pgoff_exporter
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(SYSTEMD_FILES) $(DOC_FILES))

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
