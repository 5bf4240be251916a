/* SPDX-License-Identifier: GPL-2.0-only */
/* clock.h - the one millisecond clock of pgoffd's loop and pgoffctl's
 * deadlines: CLOCK_MONOTONIC, which no one can set back. */
#ifndef PGOFF_PROTOCOL_CLOCK_H
#define PGOFF_PROTOCOL_CLOCK_H

#include <stdint.h>

int64_t monotonic_ms(void);

#endif
