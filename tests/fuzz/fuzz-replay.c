/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Replays fuzzer corpora without libFuzzer: every file under the given
 * directories is fed to LLVMFuzzerTestOneInput once. A crash, sanitizer
 * report or hang fails the test; each input is one TAP case.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fd-util.h"
#include "base/macro.h"
#include "base/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int main(int argc, char **argv)
{
        cleanup_strv char **files = NULL;
        size_t n;

        for (int i = 1; i < argc; i++) {
                DIR *d = opendir(argv[i]);
                struct dirent *de;
                if (!d) {
                        strv_push(&files, xstrdup(argv[i]));
                        continue;
                }
                while ((de = readdir(d)))
                        if (de->d_name[0] != '.')
                                strv_push(&files, xasprintf("%s/%s", argv[i], de->d_name));
                closedir(d);
        }
        n = strv_length(files);
        if (n > 0)
                qsort(files, n, sizeof(char *), cmp);
        printf("TAP version 13\n1..%zu\n", n);
        for (size_t i = 0; i < n; i++) {
                cleanup_free char *buf = NULL;
                size_t len = 0;
                int r = read_full_file_at(AT_FDCWD, files[i], 64 * 1024 * 1024, &buf, &len);
                if (r < 0) {
                        printf("not ok %zu - %s: %s\n", i + 1, files[i], strerror(-r));
                        continue;
                }
                /* Pass an exact-size heap copy so ASan catches overreads. */
                uint8_t *copy = xmalloc(len ? len : 1);
                memcpy(copy, buf, len);
                (void) LLVMFuzzerTestOneInput(copy, len);
                free(copy);
                printf("ok %zu - %s\n", i + 1, files[i]);
                fflush(stdout);
        }
        return 0;
}
