/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_wait_names.h - PostgreSQL wait_event_info -> pg_stat_activity names.
 *
 * A backend publishes what it waits for as one uint32, wait_event_info:
 * the class in the high byte, the event id in the low 16 bits.  These
 * functions turn it into the strings pg_stat_activity.wait_event_type and
 * pg_stat_activity.wait_event show, for PostgreSQL major versions 13..19,
 * from tables generated out of each major's own sources
 * (tools/gen_pg_wait_names.py).  Any other major gets NULL, never another
 * version's name.
 */
#ifndef PGOFF_PG_WAIT_NAMES_H
#define PGOFF_PG_WAIT_NAMES_H

#include <stdint.h>

/* Wait classes: the high byte of wait_event_info (PG_WAIT_* in PostgreSQL). */
enum pg_wait_class {
	PG_CLASS_LWLOCK = 0x01,
	PG_CLASS_LOCK = 0x03,
	PG_CLASS_BUFFERPIN = 0x04,	/* "BufferPin" to 18, "Buffer" in 19 */
	PG_CLASS_ACTIVITY = 0x05,
	PG_CLASS_CLIENT = 0x06,
	PG_CLASS_EXTENSION = 0x07,
	PG_CLASS_IPC = 0x08,
	PG_CLASS_TIMEOUT = 0x09,
	PG_CLASS_IO = 0x0A,
	PG_CLASS_INJECTION_POINT = 0x0B,	/* 17 and later */
};

/* pg_stat_activity.wait_event_type for this wait_event_info as that major
 * spells it ("LWLock", "Lock", "IO", …), or NULL when wait_event_info is 0,
 * or the class or the major is unknown. */
const char *pg_wait_event_type(int pg_major, uint32_t wait_event_info);
/* pg_stat_activity.wait_event, or NULL when unknown (the caller then shows
 * the raw number): an id no table of that major has, an LWLock tranche or
 * custom event whose name only the server knows (19 gives no "extension"
 * placeholder), or an unknown major. */
const char *pg_wait_event_name(int pg_major, uint32_t wait_event_info);
/* The first minor release of that major that has this event (0: from the
 * first release; the newest read release + 1: in the branch, not released
 * yet when the table was made), or -1 when the event is not in the table. */
int pg_wait_event_since_minor(int pg_major, uint32_t wait_event_info);
/* LWTRANCHE_FIRST_USER_DEFINED of that major: the first LWLock tranche
 * id an extension gets; -1 for an unknown major. */
int pg_wait_first_user_tranche(int pg_major);
/* 1 if tables exist for this major version (13..19), else 0. */
int pg_wait_names_known_major(int pg_major);
/* Where that major's tables come from, for status output:
 * "REL_14_STABLE 14.23 (commit cec4…)", "Debian postgresql-18 18.6-3
 * (upstream 18.6, .orig sha256 5556…)"; NULL for an unknown major. */
const char *pg_wait_names_source(int pg_major);

/* "Lock", "lwlock", "Buffer", … (any case, any major's spelling) ->
 * PG_CLASS_*, or -1 for no such class. */
int pg_wait_class_parse(const char *type_name);
/* PG_CLASS_* -> its name in the oldest major that has it ("BufferPin"),
 * or NULL for an unknown class. */
const char *pg_wait_class_name(int pg_class);
/*
 * An event name of a class (any case) as pg_stat_activity spells it in
 * the oldest major version 13..19 that has it (spellings have differed in
 * case: "CommitTSBuffer" before 13.11), or NULL when no version
 * knows it. Names only an extension registers at run time are not known
 * here; "extension" (an LWLock tranche of one, 13..18) is.
 */
const char *pg_wait_event_spelling(int pg_class, const char *name);

#endif
