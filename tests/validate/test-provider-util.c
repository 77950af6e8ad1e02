/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the provider's building blocks that need no engine: the
 * ustar writer, SHA-256 and the fault parser (the bounded command runner is
 * base's: tests/base/test-command.c).
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "base/command.h"
#include "validate/docker-provider.h"
#include "validate/sha256.h"
#include "validate/tar-writer.h"
#include "test-helpers.h"

Test(sha256, known_vectors)
{
        char hex[65];

        sha256_hex("", 0, hex);
        cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        sha256_hex("abc", 3, hex);
        cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        sha256_hex(m, strlen(m), hex);
        cr_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(tar, archive_lists_with_tar)
{
        char path[] = "/tmp/openenv-tar-test-XXXXXX";
        int fd = mkstemp(path);
        struct command_output o;
        char *const argv[] = { "tar", "-tvf", path, NULL };

        cr_assert_geq(fd, 0);
        cr_assert_eq(tar_add_dir(fd, "data/", 0755, 65532, 65532), 0);
        cr_assert_eq(tar_add_file(fd, "bin/x", 0755, 0, 0, "hello", 5), 0);
        cr_assert_eq(tar_finish(fd), 0);
        close(fd);
        cr_assert_eq(command_run(&(struct command_spec){ .argv = argv,
                                                         .stdin_fd = -1,
                                                         .timeout = 10 * USEC_PER_SEC,
                                                         .max_out = 4096,
                                                         .cancel_fd = -1 },
                                 &o),
                     0);
        unlink(path);
        cr_assert_eq(o.exit_status, 0, "%s", o.err);
        cr_assert(strstr(o.out, "65532/65532"), "%s", o.out);
        cr_assert(strstr(o.out, "bin/x"), "%s", o.out);
        cr_assert(strstr(o.out, " 5 "), "%s", o.out);
        command_output_done(&o);
        cr_assert_lt(tar_add_dir(-1, "", 0, 0, 0), 0);
}

Test(faults, parse)
{
        unsigned f = 0;

        cr_assert_eq(docker_faults_parse("broken-control,cap-add", &f), 0);
        cr_assert_eq(f, FAULT_BROKEN_CONTROL | FAULT_CAP_ADD);
        cr_assert_eq(docker_faults_parse("host-pid", &f), 0);
        cr_assert(f & FAULT_HOST_PID);
        cr_assert_eq(docker_faults_parse("nope", &f), -EINVAL);
        cr_assert_eq(docker_faults_parse("", &f), -EINVAL);
}
