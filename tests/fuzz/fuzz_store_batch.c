// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_store_batch.c - libFuzzer target for the flight recorder's batch
 * records as pgoffd reads them back (a damaged state directory): a record
 * whose CRC is good and whose payload is any bytes, as a batch stored as
 * it is or compressed (the first input byte says which), is read event by
 * event or refused, never past its end or the reader's buffer.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "broker/record/store.h"
#include "common/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The batch in a store's only segment, written by the fuzzer. */
#define SEGMENT "0000000000000001.seg"

static char dir[] = "/tmp/pgoff-fuzz-store.XXXXXX";
static char buf[STORE_MAX_PAYLOAD + 1];
static unsigned char rec[sizeof(struct store_hdr) + STORE_MAX_PAYLOAD];

static void remove_dir(void)
{
	rmdir(dir);
}

static int setup(void)
{
	static int done;
	FILE *null;

	if (done)
		return 0;
	if (!mkdtemp(dir) || !(null = fopen("/dev/null", "w")))
		return -1;
	log_set_output(null);	/* a warning for each damaged record */
	atexit(remove_dir);
	done = 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store_opts o = { .max_bytes = 1 << 30,
				.max_age_ns = INT64_MAX / 2, .compress = true };
	uint32_t flags;
	struct store_cursor c;
	struct store_hdr h;
	struct store *s;
	char path[64];
	size_t n;
	unsigned int events = 0;
	int fd, r;

	if (size < 1 || setup())
		return 0;
	flags = STORE_F_BATCH | (data[0] & 1 ? STORE_F_ZSTD : 0);
	n = store_frame_flags(rec, sizeof(rec), 1, 1, flags, data + 1,
			      size - 1);
	if (!n)
		return 0;
	snprintf(path, sizeof(path), "%s/" SEGMENT, dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, rec, n) != (ssize_t)n)
		abort();
	close(fd);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || store_open(&s, fd, &o))
		abort();
	store_cursor_init(s, &c, 0);
	while ((r = store_next(s, &c, &h, buf, sizeof(buf))) == 1) {
		/* an event is a whole line in the buffer, NUL-terminated */
		if (h.len >= sizeof(buf) || buf[h.len] != '\0' ||
		    ++events > STORE_MAX_PAYLOAD)
			abort();
	}
	store_cursor_close(&c);
	store_close(s);
	unlink(path);
	return 0;
}
