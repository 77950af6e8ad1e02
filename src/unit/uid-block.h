/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A unit's own host uid/gid range. Two daemons on one host must never give
 * their containers the same host uids: unit A's agent would otherwise own
 * unit B's socket dirs and files. Each daemon takes a block of
 * UID_BLOCK_SIZE-aligned uids in [UID_BLOCK_FIRST, UID_BLOCK_END) by holding
 * an exclusive flock(2) on <lock_dir>/<index>.lock for its whole life (the
 * kernel drops it when the daemon dies, SIGKILL included) and takes only a
 * block no process of this pid namespace still runs in (a crashed daemon's
 * stragglers). Blocks sit far above the ranges /etc/subuid usually hands
 * out (100000 + 65536 per user) and below 2^31.
 *
 * Ownership: the block owns its lock fd (CLOEXEC: never inherited by a
 * container); uid_block_release() drops it.
 */
#include <stdint.h>
#include <sys/types.h>

#define UID_BLOCK_SIZE     (1u << 20) /* 16 containers x 65536 */
#define UID_BLOCK_FIRST    (1u << 30)
#define UID_BLOCK_END      (1u << 31)
#define UID_BLOCK_LOCK_DIR "/run/openenvd/uid-blocks"
/* A unit's blocks at most: 832 container ranges (65 episode slots of 12
 * containers and the template's range: unit-plan.h, unit_slot_count()). */
#define UID_BLOCK_MAX_PER_UNIT 52

struct uid_block {
        uid_t base;
        uint32_t size; /* a multiple of UID_BLOCK_SIZE */
        int lock_fds[UID_BLOCK_MAX_PER_UNIT];
        unsigned n_locks;
};

/* Takes `need` uids (rounded up to whole blocks, contiguous). lock_dir NULL:
 * UID_BLOCK_LOCK_DIR. -EUSERS when every block is taken. */
int uid_block_acquire(uint32_t need, const char *lock_dir, struct uid_block *ret);
void uid_block_release(struct uid_block *b);
/* Whether any process (of our pid namespace) runs with a uid in [base, base+size). */
int uid_range_in_use(uid_t base, uint32_t size);
