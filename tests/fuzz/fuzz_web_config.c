// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_web_config.c - libFuzzer target for pgoff_exporter's
 * --web.config.file parser: any bytes, as YAML. A file it accepts has a
 * consistent config (TLS with both files, valid bcrypt hashes, header
 * names and values without line breaks); a file it refuses has an error
 * that names the file and a line. Passwords are not checked here: a
 * hash's cost is the operator's (a fuzzed $2y$31$ would take days).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "exporter/basic_auth.h"
#include "exporter/web_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct web_config c;
	char err[512];
	int r = web_config_parse("web.yml", "/etc/pgoff", (const char *)data, size,
				 &c, err, sizeof(err));

	if (r == -ENOMEM)
		return 0;
	if (r) {
		if (r != -EINVAL || strncmp(err, "web.yml:", 8) != 0)
			abort();
		return 0;
	}
	if (c.tls && (!c.cert_file || !c.key_file || !c.priorities[0]))
		abort();
	for (size_t i = 0; i < c.nusers; i++)
		if (!bcrypt_hash_valid(c.users[i].hash) || strchr(c.users[i].name, ':'))
			abort();
	for (size_t i = 0; i < c.nheaders; i++)
		if (strpbrk(c.headers[i].name, "\r\n: ") ||
		    strpbrk(c.headers[i].value, "\r\n"))
			abort();
	web_config_free(&c);
	return 0;
}
