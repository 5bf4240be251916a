/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_wait_names_data.h - the shape of the generated wait event tables
 * (pg_wait_names_data.c, written by tools/gen_pg_wait_names.py).
 *
 * Internal to pg_wait_names.c and the test tools; the rest of pgoffd uses
 * pg_wait_names.h.
 */
#ifndef PGOFF_PG_WAIT_NAMES_DATA_H
#define PGOFF_PG_WAIT_NAMES_DATA_H

#include <stddef.h>
#include <stdint.h>

/*
 * How pgstat_get_wait_event() of that major turns the low bits of
 * wait_event_info into a name, for one class.
 */
enum pg_wait_kind {
	/* LWLock: the low 16 bits are a tranche id: individual locks, then
	 * builtin tranches, then those extensions create at run time. */
	PG_WAIT_KIND_TRANCHE = 1,
	/* Lock: the low 16 bits are a LockTagType. */
	PG_WAIT_KIND_LOCKTAG,
	/* The whole wait_event_info is a member of an enum that starts at
	 * the class value: the id is the position, bits 16..23 are 0. */
	PG_WAIT_KIND_ENUM,
	/* One name for every id (BufferPin and Extension before 17). */
	PG_WAIT_KIND_SINGLE,
	/* Extension and InjectionPoint from 17: the listed ids are built in,
	 * every other one a name registered at run time in the server. */
	PG_WAIT_KIND_CUSTOM,
};

struct pg_wait_event_def {
	uint16_t id;		/* low 16 bits of wait_event_info */
	uint16_t since_minor;	/* first minor release that has it */
	const char *name;
};

struct pg_wait_class_def {
	uint8_t class_id;	/* high byte of wait_event_info */
	uint8_t kind;		/* enum pg_wait_kind */
	const char *type_name;	/* pg_stat_activity.wait_event_type */
	/* PG_WAIT_KIND_TRANCHE only: */
	uint16_t num_individual;	/* NUM_INDIVIDUAL_LWLOCKS */
	uint16_t first_user_defined;	/* LWTRANCHE_FIRST_USER_DEFINED */
	/* what a tranche id from first_user_defined on shows as when the
	 * reading backend does not know it ("extension", 13-18), or NULL
	 * when only the server knows its name (19 keeps them in shared
	 * memory) */
	const char *user_defined_name;
	const struct pg_wait_event_def *events;	/* ascending ids */
	uint16_t nevents;
};

struct pg_wait_major_def {
	int major;
	const char *ref;	/* the git branch or tag read (at least for
				 * the first minor of each event) */
	const char *version;	/* the version the tables are of */
	const char *commit;	/* the commit of ref read */
	const char *source;	/* "REF VERSION (commit COMMIT)", or the
				 * Debian package, its version and sha256 */
	int last_minor;		/* newest release of ref read, -1 for none */
	const struct pg_wait_class_def *classes;	/* ascending class ids */
	unsigned int nclasses;
};

extern const struct pg_wait_major_def pg_wait_major_defs[];
extern const unsigned int pg_wait_nmajor_defs;

#endif
