/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/assets.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/util.h"
#include "unit/custody.h"

int assets_copy(const struct manifest *m, const char *state_dir)
{
        cleanup_free char *root = xasprintf("%s/assets", state_dir);
        cleanup_close int rootfd = -EBADF;
        int r;

        r = rm_rf_at(AT_FDCWD, root);
        if (r < 0 || (r = mkdir_p_at(AT_FDCWD, root, 0755)) < 0)
                return r;
        rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return -errno;
        for (size_t i = 0; i < m->n_assets; i++) {
                const struct manifest_asset *a = &m->assets[i];
                cleanup_close int src = open(a->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                struct custody_error err = { 0 };
                struct stat st;

                if (src < 0)
                        return log_error_errno(-errno, "asset %s: %s: %m", a->name, a->path);
                if (fstat(src, &st) < 0)
                        return -errno;
                if (S_ISDIR(st.st_mode)) {
                        r = custody_copy(src, NULL, rootfd, a->name, NULL, NULL, &err);
                } else if (S_ISREG(st.st_mode)) {
                        /* A file asset appears as /assets/<name>/<basename>. */
                        const char *base = strrchr(a->path, '/');
                        cleanup_free char *dir = xasprintf("%s/%s", root, a->name);
                        cleanup_free char *dst = xasprintf("%s/%s", dir, base ? base + 1 : a->path);
                        cleanup_free char *data = NULL;
                        cleanup_close int out = -EBADF;
                        size_t len;

                        if (mkdir(dir, 0755) < 0)
                                return -errno;
                        r = read_full_fd(src, CUSTODY_MAX_BYTES, &data, &len);
                        if (r < 0)
                                return log_error_errno(r, "asset %s: %m", a->name);
                        out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                        if (out < 0)
                                return -errno;
                        r = write_all(out, data, len);
                } else {
                        return log_error_errno(-EINVAL, "asset %s: not a file or directory",
                                               a->name);
                }
                if (r < 0) {
                        log_error_errno(r, "asset %s: %s", a->name,
                                        err.detail.message ?: "copy failed");
                        custody_error_done(&err);
                        return r;
                }
        }
        return 0;
}
