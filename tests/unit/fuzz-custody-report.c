/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: what the daemon parses of a child job that walked
 * agent-made trees - the custody copier's report and the disk walk's owner
 * counts. A report that parses must say what its format says: formatted
 * again it is the same bytes (up to the message's first NUL), and it is
 * never a success with a reason or a failure without one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit/custody.h"
#include "unit/disk-blame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void report(const char *in, size_t size)
{
        struct custody_report rep;
        struct custody_error err;
        char *out;
        size_t n;

        if (custody_report_parse(in, size, &rep) < 0) {
                if (rep.message || rep.r >= 0)
                        abort();
                return;
        }
        if ((rep.r == 0) != (rep.reason == CUSTODY_ERR_NONE) || rep.owner < -1)
                abort();
        err = (struct custody_error){ .reason = rep.reason,
                                      .owner = rep.owner,
                                      .detail.message = rep.message };
        out = malloc(size + 2);
        n = custody_report_format(rep.r, &err, out, size + 2);
        /* A NUL ends the message early; the rest is the same. */
        if (n > size || memcmp(out, in, n) != 0)
                abort();
        free(out);
        custody_report_done(&rep);
}

static void disk_blame(const char *in, size_t size)
{
        struct disk_blame_owned owned[DISK_BLAME_MAX_OWNERS];
        size_t n = size ? (unsigned char) in[0] % (DISK_BLAME_MAX_OWNERS + 2) : 0;

        if (size)
                (void) disk_blame_parse(in + 1, size - 1, n, owned);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        report((const char *) data, size);
        disk_blame((const char *) data, size);
        return 0;
}
