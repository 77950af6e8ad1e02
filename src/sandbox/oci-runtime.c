/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runtime binary (runc, crun, runsc) as the launcher calls it, through
 * the base command runner, and the errors it leaves in its log.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/command.h"
#include "base/limits.h"
#include "base/util.h"
#include "sandbox/oci-internal.h"

int oci_runtime_find(const char *runtime, char **ret_path)
{
        static const char *const defaults[] = { "runc", "crun", "runsc" };

        if (runtime && runtime[0] == '/') {
                if (access(runtime, X_OK) < 0)
                        return -errno;
                *ret_path = xstrdup(runtime);
                return 0;
        }
        if (runtime && (strchr(runtime, '/') || !*runtime))
                return -EINVAL;
        for (size_t i = 0; i < (runtime ? 1 : ELEMENTSOF(defaults)); i++)
                if (command_find_binary(runtime ? runtime : defaults[i], ret_path) >= 0)
                        return 0;
        return -ENOENT;
}

const char *oci_runtime_name(const struct oci_container *c)
{
        const char *s = strrchr(c->runtime, '/');
        return s ? s + 1 : c->runtime;
}

/*
 * Runs `<runtime> --root R --log L <args...>` and waits for it. stdin is
 * /dev/null; stdout and stderr go to out_fd (-EBADF: /dev/null); pass_fds
 * become 3, 4, ... (`create --preserve-fds n` hands them to the init). No
 * shell: the arguments are never parsed again. The runtime keeps our signal
 * mask and process group, which it passes on to the container's init as
 * the native launcher does.
 */
int oci_runtime_run(const struct oci_container *c, const char *const *args, int out_fd,
                    const int *pass_fds, size_t n_pass, int *ret_status)
{
        cleanup_free char *log = xasprintf("%s/runtime.log", c->bundle);
        char *const envp[] = { (char *) OCI_PATH_ENV, NULL };
        struct command_output out;
        const char *argv[32];
        size_t n = 0;
        int r;

        if (n_pass > CONTAINER_MAX_PASS_FDS)
                return -E2BIG;
        argv[n++] = c->runtime;
        argv[n++] = "--root";
        argv[n++] = c->root;
        argv[n++] = "--log";
        argv[n++] = log;
        for (; *args && n < ELEMENTSOF(argv) - 1; args++)
                argv[n++] = *args;
        argv[n] = NULL;

        r = command_run(
                &(const struct command_spec){
                        .argv = (char *const *) argv,
                        .envp = envp,
                        .stdin_fd = -EBADF,
                        .pass_fds = pass_fds,
                        .n_pass = n_pass,
                        .flags = COMMAND_OUTPUT_TO_FD | COMMAND_INHERIT_SIGNALS |
                                 (c->view_ns >= 0 ? COMMAND_ENTER_MOUNT_NS : 0),
                        .output_fd = out_fd,
                        .cancel_fd = -EBADF,
                        .mount_ns_fd = c->view_ns },
                &out);
        if (r < 0)
                return r;
        *ret_status = out.exit_status;
        command_output_done(&out);
        return 0;
}

/* Last LOG_TAIL_MAX bytes of the runtime's log, trimmed, for error text. */
static char *runtime_log_tail(const struct oci_container *c)
{
        cleanup_free char *path = xasprintf("%s/runtime.log", c->bundle);
        cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        char buf[LOG_TAIL_MAX + 1];
        off_t size;
        ssize_t n;

        if (fd < 0)
                return xstrdup("(no runtime log)");
        size = lseek(fd, 0, SEEK_END);
        if (size < 0 || lseek(fd, size > LOG_TAIL_MAX ? size - LOG_TAIL_MAX : 0, SEEK_SET) < 0)
                return xstrdup("(unreadable runtime log)");
        n = read(fd, buf, LOG_TAIL_MAX);
        if (n < 0)
                n = 0;
        buf[n] = '\0';
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
                buf[--n] = '\0';
        return xstrdup(n > 0 ? buf : "(empty runtime log)");
}

int oci_runtime_cmd(struct oci_container *c, struct error_detail *err, const char *const *args,
                    int out_fd, const int *pass_fds, size_t n_pass)
{
        int status = 0, r;

        r = oci_runtime_run(c, args, out_fd, pass_fds, n_pass, &status);
        if (r < 0)
                return error_detail_set(err, r, "%s %s %s: %s", oci_runtime_name(c), args[0], c->id,
                                        strerror(-r));
        if (status != 0) {
                cleanup_free char *tail = runtime_log_tail(c);
                return error_detail_set(err, -EIO, "%s %s %s failed (exit %d): %s",
                                        oci_runtime_name(c), args[0], c->id, status, tail);
        }
        return 0;
}
