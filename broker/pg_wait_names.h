/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_wait_names.h - PostgreSQL wait_event_info -> pg_stat_activity names.
 *
 * A backend publishes what it waits for as one uint32, wait_event_info:
 * the class in the high byte, the event id in the low 16 bits.  These
 * functions turn it into the strings pg_stat_activity.wait_event_type and
 * pg_stat_activity.wait_event show, for PostgreSQL major versions 14..17.
 */
#ifndef PGOFF_PG_WAIT_NAMES_H
#define PGOFF_PG_WAIT_NAMES_H

#include <stdint.h>

/* Wait classes: the high byte of wait_event_info (utils/wait_event.h). */
enum pg_wait_class {
	PG_CLASS_LWLOCK = 0x01,
	PG_CLASS_LOCK = 0x03,
	PG_CLASS_BUFFERPIN = 0x04,
	PG_CLASS_ACTIVITY = 0x05,
	PG_CLASS_CLIENT = 0x06,
	PG_CLASS_EXTENSION = 0x07,
	PG_CLASS_IPC = 0x08,
	PG_CLASS_TIMEOUT = 0x09,
	PG_CLASS_IO = 0x0A,
	PG_CLASS_INJECTION_POINT = 0x0B,	/* 17 */
};

/* pg_stat_activity.wait_event_type for this wait_event_info ("LWLock", "Lock", "BufferPin",
 * "Activity", "Client", "Extension", "IPC", "Timeout", "IO", and "InjectionPoint" for 17),
 * or NULL when wait_event_info is 0 or the class is unknown for that major version. */
const char *pg_wait_event_type(int pg_major, uint32_t wait_event_info);
/* pg_stat_activity.wait_event, or NULL when unknown (caller then shows the raw number). */
const char *pg_wait_event_name(int pg_major, uint32_t wait_event_info);
/* 1 if tables exist for this major version (14..17), else 0. */
int pg_wait_names_known_major(int pg_major);

/* "Lock", "lwlock", … (any case) -> PG_CLASS_*, or -1 for no such class. */
int pg_wait_class_parse(const char *type_name);
/* PG_CLASS_* -> "Lock", …; NULL for an unknown class. */
const char *pg_wait_class_name(int pg_class);
/*
 * An event name of a class (any case) as pg_stat_activity spells it in
 * the oldest major version 14..17 that has it (versions differ in case:
 * "MultiXactMemberSLRU"/"MultixactMemberSLRU"), or
 * NULL when no version knows it. Names only an extension registers at
 * run time are not known here.
 */
const char *pg_wait_event_spelling(int pg_class, const char *name);

#endif
