/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sd_notify.h - tell systemd (Type=notify) that pgoffd is ready or
 * stopping: one datagram to $NOTIFY_SOCKET, as sd_notify(3) documents.
 */
#ifndef PGOFF_SD_NOTIFY_H
#define PGOFF_SD_NOTIFY_H

/*
 * Send state ("READY=1", "STOPPING=1", ...) if pgoffd was started with
 * NOTIFY_SOCKET set. Returns 1 sent, 0 not asked for, -errno on failure.
 */
int sd_notify_state(const char *state);

#endif
