/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Docker's reference grammar, from the attacker's side: option-shaped and
 * otherwise malformed names must be refused before any docker command sees
 * them; every form Docker itself accepts must still pass. Cases follow
 * distribution/reference's own tests (reference_test.go, regexp_test.go).
 */
#include <errno.h>
#include <string.h>

#include "base/macro.h"
#include "validate/image-ref.h"
#include "test-helpers.h"

static const char *const valid[] = {
        "busybox",
        "busybox:latest",
        "library/busybox:1.36",
        "docker.io/library/busybox:1.36",
        "localhost/foo",
        "localhost:5000/foo/bar:tag",
        "localhost:5000", /* name "localhost", tag "5000" */
        "Registry.Example.com:443/a/b",
        "[::1]:5000/foo",
        "[fe80::1]/foo",
        "a.b-c/d__e/f.g-h--i:T_1.x-y",
        "openenv-test-subject:hardened",
        "a0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde",
        "sha256:03a8f51c30d7551685a3408fc12c64ed281e4ca3df504ae8be1cfcdc47e27981",
        "busybox@sha256:03a8f51c30d7551685a3408fc12c64ed281e4ca3df504ae8be1cfcdc47e27981",
        "busybox:1@sha256:03a8f51c30d7551685a3408fc12c64ed281e4ca3df504ae8be1cfcdc47e27981",
        "x@sha512+b64.v2:0123456789abcdef0123456789abcdef",
        "tag:_x",
};

static const struct {
        const char *ref, *why; /* why: a word of the reason */
} invalid[] = {
        { "", "empty" },
        { "--format={{.Id}}", "option" },
        { "-H", "option" },
        { "--", "option" },
        { "Busybox", "lowercase" },
        { "busybox:", "tag" },
        { ":tag", "no name" },
        { "busybox:-tag", "tag" },
        { "busybox:a/b", "name" }, /* a port must be digits */
        { "busy box", "name" },
        { "busybox\n", "name" },
        { "a//b", "name" },
        { "a/", "name" },
        { "/a", "name" },
        { "a..b", "name" },
        { "a___b", "name" },
        { "a_-b", "name" },
        { "a-", "name" },
        { "-a/b", "option" },
        { "host-/a", "name" },
        { "host:port/a", "name" },
        { "[zz]/a", "name" },
        { "[]/a", "name" },
        { "busybox@sha256:abc", "digest" },
        { "busybox@1sha:0123456789abcdef0123456789abcdef", "digest" },
        { "busybox@sha256:0123456789abcdef0123456789abcdeg", "digest" },
        { "busybox@sha256-:0123456789abcdef0123456789abcdef", "digest" },
        { "a@b@sha256:0123456789abcdef0123456789abcdef", "digest" },
        { "busybox:latest --privileged", "tag" },
};

Test(image_ref, docker_forms_pass)
{
        for (size_t i = 0; i < ELEMENTSOF(valid); i++) {
                const char *why = NULL;
                cr_assert_eq(image_ref_check(valid[i], &why), 0, "%s: %s", valid[i],
                             why ? why : "");
        }
}

Test(image_ref, malformed_and_option_shaped_are_refused)
{
        for (size_t i = 0; i < ELEMENTSOF(invalid); i++) {
                const char *why = NULL;
                cr_assert_eq(image_ref_check(invalid[i].ref, &why), -EINVAL, "'%s' accepted",
                             invalid[i].ref);
                cr_assert_not_null(why);
                cr_assert(strstr(why, invalid[i].why), "'%s': %s", invalid[i].ref, why);
        }
        cr_assert_eq(image_ref_check(NULL, NULL), -EINVAL);
}

Test(image_ref, bounds)
{
        char name[IMAGE_REF_NAME_MAX + 2], tag[IMAGE_REF_TAG_MAX + 8];

        memset(name, 'a', sizeof(name) - 1);
        name[IMAGE_REF_NAME_MAX] = '\0';
        cr_assert_eq(image_ref_check(name, NULL), 0);
        name[IMAGE_REF_NAME_MAX] = 'a';
        name[IMAGE_REF_NAME_MAX + 1] = '\0';
        cr_assert_eq(image_ref_check(name, NULL), -EINVAL);

        memcpy(tag, "a:", 2);
        memset(tag + 2, 'x', IMAGE_REF_TAG_MAX);
        tag[2 + IMAGE_REF_TAG_MAX] = '\0';
        cr_assert_eq(image_ref_check(tag, NULL), 0);
        tag[2 + IMAGE_REF_TAG_MAX] = 'x';
        tag[3 + IMAGE_REF_TAG_MAX] = '\0';
        cr_assert_eq(image_ref_check(tag, NULL), -EINVAL);
}
