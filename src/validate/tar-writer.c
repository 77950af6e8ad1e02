/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/fd-util.h"
#include "validate/tar-writer.h"

#define TAR_BLOCK 512

static int header(int fd, const char *name, mode_t mode, uid_t uid, gid_t gid, size_t size,
                  char type)
{
        unsigned char h[TAR_BLOCK] = {};
        unsigned sum = 0;
        size_t n = strlen(name);

        if (n == 0 || n > 99)
                return -ENAMETOOLONG;
        memcpy(h, name, n);
        (void) snprintf((char *) h + 100, 8, "%07o", (unsigned) (mode & 07777));
        (void) snprintf((char *) h + 108, 8, "%07o", (unsigned) uid);
        (void) snprintf((char *) h + 116, 8, "%07o", (unsigned) gid);
        (void) snprintf((char *) h + 124, 12, "%011zo", size);
        (void) snprintf((char *) h + 136, 12, "%011o", 0u);
        h[156] = (unsigned char) type;
        memcpy(h + 257, "ustar", 6);
        memcpy(h + 263, "00", 2);
        /* The checksum is computed with its own field as spaces. */
        memset(h + 148, ' ', 8);
        for (size_t i = 0; i < TAR_BLOCK; i++)
                sum += h[i];
        (void) snprintf((char *) h + 148, 8, "%06o", sum);
        h[155] = ' ';
        return write_all(fd, h, sizeof(h));
}

int tar_add_dir(int fd, const char *name, mode_t mode, uid_t uid, gid_t gid)
{
        return header(fd, name, mode, uid, gid, 0, '5');
}

int tar_add_file(int fd, const char *name, mode_t mode, uid_t uid, gid_t gid, const void *data,
                 size_t len)
{
        static const unsigned char zeros[TAR_BLOCK];
        int r = header(fd, name, mode, uid, gid, len, '0');

        if (r < 0)
                return r;
        r = write_all(fd, data, len);
        if (r < 0)
                return r;
        return len % TAR_BLOCK ? write_all(fd, zeros, TAR_BLOCK - len % TAR_BLOCK) : 0;
}

int tar_finish(int fd)
{
        static const unsigned char zeros[2 * TAR_BLOCK];
        return write_all(fd, zeros, sizeof(zeros));
}
