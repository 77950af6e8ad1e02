/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A container spec for the OCI tests, built from static arrays (the tests
 * never free it), and JSON lookups by path.
 */
#include <criterion/criterion.h>
#ifndef cr_fatal /* test-helpers.h needs it; Criterion 2.4 has it only in new/assert.h */
#define cr_fatal(...) cr_assert_fail(__VA_ARGS__)
#endif
#include <jansson.h>
#include <sys/mount.h>

#include "base/util.h"
#include "sandbox/launcher-oci.h"
#include "test-helpers.h"

static char *test_env[] = { (char *) "PATH=/usr/sbin:/usr/bin:/sbin:/bin", (char *) "LANG=C.UTF-8",
                            NULL };

static inline void spec_init(struct container_spec *s, char **argv)
{
        *s = (struct container_spec){
                .name = (char *) "oci-test",
                .argv = argv,
                .env = test_env,
                .rootfs = (char *) "/",
                .host_uid = 300000,
                .uid_count = 65536,
                .uid = 1000,
                .gid = 1000,
                .tmp_bytes = 16 * 1024 * 1024,
                .nofile = 1024,
                .stdio_fd = -EBADF,
        };
}

/* Looks up a dotted path ("process.user.uid"); array indexes as numbers. */
static inline json_t *jget(json_t *root, const char *path)
{
        cleanup_free char *p = xstrdup(path);
        json_t *cur = root;

        for (char *tok = p, *next; tok && cur; tok = next) {
                next = strchr(tok, '.');
                if (next)
                        *next++ = '\0';
                if (json_is_array(cur))
                        cur = json_array_get(cur, strtoul(tok, NULL, 10));
                else
                        cur = json_object_get(cur, tok);
        }
        return cur;
}

static inline bool jarray_has_string(json_t *a, const char *s)
{
        size_t i;
        json_t *v;

        json_array_foreach(a, i,
                           v) if (json_is_string(v) && streq(json_string_value(v), s)) return true;
        return false;
}

/* The mount entry whose destination is dest, or NULL. */
static inline json_t *jmount(json_t *cfg, const char *dest)
{
        size_t i;
        json_t *m;

        json_array_foreach(
                json_object_get(cfg, "mounts"), i,
                m) if (streq(json_string_value(json_object_get(m, "destination")), dest)) return m;
        return NULL;
}
