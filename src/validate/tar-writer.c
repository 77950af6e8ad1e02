/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/fd-util.h"
#include "validate/tar-writer.h"

#define TAR_BLOCK 512

/* ustar header fields (POSIX pax(1), "ustar Interchange Format"):
 * offset and width of each fixed-width byte array. */
#define F_NAME     0, 100
#define F_MODE     100, 8
#define F_UID      108, 8
#define F_GID      116, 8
#define F_SIZE     124, 12
#define F_MTIME    136, 12
#define F_CHKSUM   148, 8
#define F_TYPEFLAG 156
#define F_MAGIC    257, 6
#define F_VERSION  263, 2

/* Text fields are NUL-padded, not NUL-terminated: a value may fill its
 * field. The header starts zeroed, so the padding is already there. */
static void field_put(unsigned char *h, size_t off, size_t width, const char *value, size_t n)
{
        assert(n <= width);
        memcpy(h + off, value, n);
}

/* Numeric fields are zero-padded octal ending in a NUL, so width - 1
 * digits; a value that does not fit is refused rather than truncated. */
static int field_octal(unsigned char *h, size_t off, size_t width, uint64_t v)
{
        int n = snprintf((char *) h + off, width, "%0*" PRIo64, (int) width - 1, v);

        return n >= 0 && (size_t) n < width ? 0 : -EOVERFLOW;
}

static int header(int fd, const char *name, mode_t mode, uid_t uid, gid_t gid, size_t size,
                  char type)
{
        unsigned char h[TAR_BLOCK] = {};
        unsigned sum = 0;
        size_t n = strlen(name);
        int r;

        /* 99, not 100: keep the name NUL-terminated for readers that
         * expect it (there is no prefix field support). */
        if (n == 0 || n > 99)
                return -ENAMETOOLONG;
        field_put(h, F_NAME, name, n);
        if ((r = field_octal(h, F_MODE, mode & 07777)) < 0 ||
            (r = field_octal(h, F_UID, uid)) < 0 || (r = field_octal(h, F_GID, gid)) < 0 ||
            (r = field_octal(h, F_SIZE, size)) < 0 || (r = field_octal(h, F_MTIME, 0)) < 0)
                return r;
        h[F_TYPEFLAG] = (unsigned char) type;
        field_put(h, F_MAGIC, "ustar", 6); /* "ustar\0" */
        field_put(h, F_VERSION, "00", 2);
        /* The checksum is computed with its own field as spaces, then
         * stored as six octal digits, a NUL and a space. */
        memset(h + 148, ' ', 8);
        for (size_t i = 0; i < TAR_BLOCK; i++)
                sum += h[i];
        (void) field_octal(h, 148, 7, sum);
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
