/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/uid-block.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/parse-util.h"
#include "base/util.h"

int uid_range_in_use(uid_t base, uint32_t size)
{
        DIR *d = opendir("/proc");
        struct dirent *de;
        int found = 0;

        if (!d)
                return -errno;
        while (!found && (de = readdir(d))) {
                cleanup_free char *path = NULL, *status = NULL;
                unsigned pid;
                if (parse_uint(de->d_name, 1, INT32_MAX, &pid) < 0)
                        continue;
                path = xasprintf("/proc/%u/status", pid);
                if (read_full_file_at(AT_FDCWD, path, (size_t) 64 * 1024, &status, NULL) < 0)
                        continue; /* gone meanwhile */
                /* "Uid:\treal\teffective\tsaved\tfs": any of them counts. */
                const char *l = strstr(status, "\nUid:");
                unsigned u[4];
                if (!l || sscanf(l + 5, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]) != 4)
                        continue;
                for (int i = 0; i < 4; i++)
                        if (u[i] >= base && u[i] - base < size)
                                found = 1;
        }
        closedir(d);
        return found;
}

void uid_block_release(struct uid_block *b)
{
        for (unsigned i = 0; i < b->n_locks; i++)
                safe_close(b->lock_fds[i]);
        *b = (struct uid_block){};
}

/* Locks block index i; 1 taken, 0 held by another daemon, -errno. */
static int lock_one(int dfd, unsigned i, int *ret_fd)
{
        char name[32];
        int fd;

        (void) snprintf(name, sizeof(name), "%u.lock", i);
        fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int r = errno == EWOULDBLOCK ? 0 : -errno;
                safe_close(fd);
                return r;
        }
        *ret_fd = fd;
        return 1;
}

int uid_block_acquire(uint32_t need, const char *lock_dir, struct uid_block *ret)
{
        unsigned per = (need + UID_BLOCK_SIZE - 1) / UID_BLOCK_SIZE;
        unsigned total = (UID_BLOCK_END - UID_BLOCK_FIRST) / UID_BLOCK_SIZE;
        cleanup_close int dfd = -EBADF;
        int r;

        if (per == 0)
                per = 1;
        if (per > UID_BLOCK_MAX_PER_UNIT)
                return -E2BIG;
        lock_dir = lock_dir ?: UID_BLOCK_LOCK_DIR;
        r = mkdir_p_at(AT_FDCWD, lock_dir, 0700);
        if (r < 0)
                return r;
        dfd = open(lock_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        for (unsigned first = 0; first + per <= total; first += per) {
                struct uid_block b = { .base = UID_BLOCK_FIRST + first * UID_BLOCK_SIZE,
                                       .size = per * UID_BLOCK_SIZE };
                bool taken = true;

                for (unsigned i = 0; i < per && taken; i++) {
                        r = lock_one(dfd, first + i, &b.lock_fds[b.n_locks]);
                        if (r < 0) {
                                uid_block_release(&b);
                                return r;
                        }
                        if (r == 0)
                                taken = false;
                        else
                                b.n_locks++;
                }
                /* Locked, but a dead daemon's containers may still run there. */
                if (taken && uid_range_in_use(b.base, b.size) > 0)
                        taken = false;
                if (taken) {
                        *ret = b;
                        return 0;
                }
                uid_block_release(&b);
        }
        return -EUSERS;
}
