/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Parser for /proc/<pid>/mountinfo (proc(5), "mountinfo"): the one parser of
 * mount tables in the project (fuzzed: tests/base/fuzz-mountinfo.c). The
 * cgroup layout, preflight's hints, the daemon's PID 1 duties and the probe
 * all read mounts through it.
 *
 * The bytes come from a mount namespace a hostile process may have shaped (mount
 * points are paths the image chose), so every field is bounded: at most
 * MOUNTINFO_MAX_LINES entries and MOUNTINFO_MAX_LINE bytes per line. Reaching a bound
 * never drops data silently: the table's `truncated` flag is set, and a
 * truncated inventory is not a complete one. Malformed lines are counted in
 * `n_malformed` and skipped; a caller that needs a complete inventory treats
 * either as unproven.
 *
 * Ownership: a struct mountinfo owns its entries and every string in them.
 * Paths (root, mount_point) are decoded from the kernel's octal escapes
 * (\040 space, \011 tab, \012 newline, \134 backslash), so they may contain
 * any byte but NUL.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/macro.h"

struct mountinfo_entry {
        unsigned mount_id;
        unsigned parent_id;
        unsigned major;
        unsigned minor;
        char *root;          /* owned, decoded */
        char *mount_point;   /* owned, decoded */
        char *mount_options; /* owned: per-mount flags, e.g. "ro,nosuid" */
        char *optional;      /* owned: optional fields joined by ' ', "" if none */
        char *fstype;        /* owned */
        char *source;        /* owned, decoded */
        char *super_options; /* owned: superblock options */
};

struct mountinfo {
        struct mountinfo_entry *entries; /* owned */
        size_t n_entries;
        size_t n_malformed; /* lines that did not parse */
        bool truncated;     /* a line or line-count bound was hit */
};

/* Parses len bytes (no NUL needed). -ENOMEM never (aborts); -EINVAL never:
 * bad lines are counted, not fatal. */
int mountinfo_parse(const char *buf, size_t len, struct mountinfo **ret);
/* Reads (at most MOUNTINFO_MAX_BYTES) and parses dirfd/path, e.g.
 * (AT_FDCWD, "/proc/self/mountinfo"); -errno of the read, -EFBIG if larger. */
int mountinfo_load_at(int dirfd, const char *path, struct mountinfo **ret);
struct mountinfo *mountinfo_free(struct mountinfo *m);
DEFINE_CLEANUP_FUNC(struct mountinfo, mountinfo_free);

/* True if the comma-separated option list contains exactly opt. */
bool mount_options_has(const char *options, const char *opt);
/* Read-only if either layer says so: a write needs the mount AND the
 * superblock writable (mount(2) MS_RDONLY vs. the filesystem's own ro). */
bool mountinfo_entry_is_read_only(const struct mountinfo_entry *e);
/* Longest-prefix mount containing path (decoded, absolute); NULL if none. */
const struct mountinfo_entry *mountinfo_find_by_path(const struct mountinfo *m, const char *path);
const struct mountinfo_entry *mountinfo_find_by_id(const struct mountinfo *m, unsigned mount_id);
