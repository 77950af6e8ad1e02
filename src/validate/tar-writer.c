/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/fd-util.h"
#include "validate/tar-writer.h"

#define TAR_BLOCK 512

/* The ustar header (POSIX pax(1), "ustar Interchange Format"): fixed-width
 * byte arrays, all char, so the layout has no padding. */
struct ustar_header {
        char name[100];
        char mode[8];
        char uid[8];
        char gid[8];
        char size[12];
        char mtime[12];
        char chksum[8];
        char typeflag;
        char linkname[100];
        char magic[6];
        char version[2];
        char uname[32];
        char gname[32];
        char devmajor[8];
        char devminor[8];
        char prefix[155];
        char pad[12];
};
_Static_assert(sizeof(struct ustar_header) == TAR_BLOCK, "ustar header is one block");

/* Text fields are NUL-padded, not NUL-terminated: a value may fill its
 * field. The header starts zeroed, so the padding is already there. */
static void field_put(char *field, size_t width, const char *value, size_t n)
{
        assert(n <= width);
        memcpy(field, value, n);
}

/* Numeric fields are zero-padded octal ending in a NUL, so width - 1
 * digits; a value that does not fit is refused, not truncated. */
static int field_octal(char *field, size_t width, uint64_t v)
{
        char buf[sizeof("01777777777777777777777")]; /* any uint64_t */
        int n = snprintf(buf, sizeof(buf), "%0*" PRIo64, (int) width - 1, v);

        if (n < 0 || (size_t) n >= width)
                return -EOVERFLOW;
        memcpy(field, buf, (size_t) n + 1);
        return 0;
}

#define FIELD_PUT(f, value, n) field_put((f), sizeof(f), (value), (n))
#define FIELD_OCTAL(f, v)      field_octal((f), sizeof(f), (v))

static int header(int fd, const char *name, mode_t mode, uid_t uid, gid_t gid, size_t size,
                  char type)
{
        struct ustar_header h = {};
        const unsigned char *bytes = (const unsigned char *) &h;
        unsigned sum = 0;
        size_t n = strlen(name);
        int r;

        /* At most 99: the name stays NUL-terminated (no prefix field). */
        if (n == 0 || n >= sizeof(h.name))
                return -ENAMETOOLONG;
        FIELD_PUT(h.name, name, n);
        if ((r = FIELD_OCTAL(h.mode, mode & 07777)) < 0 || (r = FIELD_OCTAL(h.uid, uid)) < 0 ||
            (r = FIELD_OCTAL(h.gid, gid)) < 0 || (r = FIELD_OCTAL(h.size, size)) < 0 ||
            (r = FIELD_OCTAL(h.mtime, 0)) < 0)
                return r;
        h.typeflag = type;
        FIELD_PUT(h.magic, "ustar", 6); /* with its NUL */
        FIELD_PUT(h.version, "00", 2);
        /* The checksum is computed with its own field as spaces, then
         * stored as six octal digits, a NUL and a space. */
        memset(h.chksum, ' ', sizeof(h.chksum));
        for (size_t i = 0; i < sizeof(h); i++)
                sum += bytes[i];
        (void) field_octal(h.chksum, sizeof(h.chksum) - 1, sum);
        return write_all(fd, &h, sizeof(h));
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
