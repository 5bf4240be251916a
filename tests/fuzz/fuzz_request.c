// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_request.c - libFuzzer target for what pgoffd reads from a client:
 * bytes in chunks of 1..64 (the first input byte picks the size, to
 * exercise partial reads) through the line framer, each line through the
 * strict decoder and, for subscribe, the filter compiler. Invariants
 * checked after each line: every reply is one valid, strictly parsable
 * JSON line, and an accepted request survives encode -> decode.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "broker/serve/filter.h"
#include "common/linebuf.h"
#include "protocol/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_reply(json_object *reply)
{
	struct pgoff_error err;
	size_t len;
	const char *line = pgoff_json_line(reply, &len);
	json_object *back;

	if (memchr(line, '\n', len))
		abort();
	back = pgoff_parse_line(line, len, PGOFF_JSON_DEPTH, &err);
	if (!back)
		abort();
	json_object_put(back);
	json_object_put(reply);
}

static void handle_line(const char *line, size_t len)
{
	struct pgoff_request req, again;
	struct pgoff_error err;
	struct filter f;
	json_object *enc;
	const char *text;
	size_t tlen;

	if (pgoff_request_decode(line, len, &req, &err)) {
		check_reply(pgoff_reply_error(req.has_id ? &req : NULL,
					      err.code, err.message));
		return;
	}
	enc = pgoff_request_encode(&req);
	text = pgoff_json_line(enc, &tlen);
	if (pgoff_request_decode(text, tlen, &again, &err) ||
	    again.op != req.op || again.id != req.id ||
	    (req.op == PGOFF_OP_SUBSCRIBE &&
	     again.subscribe.user_stack != req.subscribe.user_stack))
		abort();
	json_object_put(enc);
	if (req.op == PGOFF_OP_SUBSCRIBE &&
	    filter_compile(&req.subscribe, 100000, &f, &err)) {
		check_reply(pgoff_reply_error(&req, err.code, err.message));
		return;
	}
	if (req.op == PGOFF_OP_SUBSCRIBE) {
		struct event_meta m = { .tgid = 42, .duration_ns = 1000000,
					.has_pg_wait = true,
					.pg_wait_event_info = 0x03000004u,
					.pg_wait_event = "transactionid",
					.database = "shop",
					.backend_type = "client backend" };

		filter_match(&f, &m);
	}
	check_reply(pgoff_reply_ok(&req));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fds[2] = { -1, -1 };
	struct linebuf lb;
	size_t chunk, off;

	if (size < 1)
		return 0;
	if (fds[0] < 0 && pipe2(fds, O_NONBLOCK))
		abort();
	chunk = 1 + data[0] % 64;
	if (linebuf_init(&lb, PGOFF_MAX_REQUEST_LINE))
		abort();
	for (off = 1; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;
		char *line;
		size_t len;
		int got;

		if (write(fds[1], data + off, n) != (ssize_t)n)
			abort();
		if (linebuf_fill(&lb, fds[0]) < 0)
			break;		/* over the limit: the broker closes */
		while ((got = linebuf_next(&lb, &line, &len)) == 1)
			handle_line(line, len);
		if (got < 0)
			break;
	}
	/* drain what a broken-off input left in the pipe */
	for (char sink[256]; read(fds[0], sink, sizeof(sink)) > 0;)
		;
	linebuf_free(&lb);
	return 0;
}
