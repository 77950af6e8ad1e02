/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The provider's one way to the engine: the docker CLI through the base
 * command runner (argv arrays, bounded output, timeouts, cancellation), and
 * what its failures say.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "base/limits.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "probe/containment-probe.h"
#include "validate/docker-internal.h"

int docker_cli_idle(struct docker_ctx *c, char *const *args, int stdin_fd, usec_t timeout,
                    usec_t idle, size_t max, struct command_output *out)
{
        cleanup_strv char **argv = NULL;
        int r;

        if (c->interrupted && !c->cleaning)
                return -ECANCELED;
        strv_push(&argv, xstrdup(c->o->docker));
        /* One argument: a value can never be taken for an option. */
        if (c->o->host)
                strv_push(&argv, xasprintf("--host=%s", c->o->host));
        for (char *const *a = args; *a; a++)
                strv_push(&argv, xstrdup(*a));
        r = command_run(&(struct command_spec){ .argv = argv,
                                                .stdin_fd = stdin_fd,
                                                .timeout = timeout,
                                                .idle_timeout = idle,
                                                .max_out = max,
                                                .cancel_fd = c->cleaning ? -1 : c->o->cancel_fd },
                        out);
        if (r == -ECANCELED)
                c->interrupted = true;
        return r;
}

int docker_cli(struct docker_ctx *c, char *const *args, int stdin_fd, usec_t timeout, size_t max,
               struct command_output *out)
{
        return docker_cli_idle(c, args, stdin_fd, timeout, 0, max, out);
}

/* Docker's whole error (stderr), not just its last line: the cause is often
 * on the line before "failed to start containers". The helper's progress
 * lines are dropped; bytes that are not printable ASCII become '?' (the text
 * can come from a hostile image and must be valid in a JSON report); bounded
 * by DOCKER_ERROR_MAX_BYTES. */
char *docker_err_text(const struct command_output *out)
{
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;
        const char *p = out->err ? out->err : "", *end = p + out->err_len;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t n = (size_t) ((nl ? nl : end) - p);

                while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\r' || p[n - 1] == '\t'))
                        n--;
                if (n > 0 && !(n >= strlen(CONTAINMENT_PROBE_PROGRESS) &&
                               memcmp(p, CONTAINMENT_PROBE_PROGRESS,
                                      strlen(CONTAINMENT_PROBE_PROGRESS)) == 0)) {
                        if (sb.len > 0)
                                strbuf_adds(&sb, "; ");
                        for (size_t i = 0; i < n; i++)
                                strbuf_addch(&sb, p[i] >= ' ' && p[i] < 0x7f ? p[i] : '?');
                }
                p = nl ? nl + 1 : end;
        }
        if (sb.len > DOCKER_ERROR_MAX_BYTES) {
                sb.len = DOCKER_ERROR_MAX_BYTES;
                sb.buf[sb.len] = '\0';
                strbuf_adds(&sb, "...");
        }
        return strbuf_detach(&sb, NULL);
}

char *docker_cmd_error(const char *what, int r, const struct command_output *out)
{
        if (r == -ECANCELED)
                return xasprintf("%s: interrupted", what);
        if (r == -ETIMEDOUT)
                return xasprintf("%s: timed out", what);
        if (r < 0)
                return xasprintf("%s: %s", what, strerror(-r));
        cleanup_free char *text = docker_err_text(out);
        return xasprintf("%s: exit %d%s%s", what, out->exit_status, *text ? ": " : "", text);
}

int docker_run_fail(struct docker_run *ret, enum docker_outcome oc, char *msg)
{
        ret->outcome = oc;
        free(ret->message);
        ret->message = msg;
        return -1;
}

int docker_engine_check(struct docker_ctx *c, struct docker_run *ret)
{
        struct command_output out = {};
        int r = docker_cli(c, ARGS("version", "--format={{.Server.Version}}"), -1, CMD_TIMEOUT,
                           4096, &out);

        if (r < 0 || out.exit_status != 0) {
                char *m = docker_cmd_error("docker engine unreachable", r, &out);
                command_output_done(&out);
                return docker_run_fail(ret, c->interrupted ? DOCKER_INTERRUPTED : DOCKER_FAILED, m);
        }
        command_output_done(&out);
        return 0;
}

void docker_args_push(char ***argv, ...)
{
        va_list ap;
        const char *s;

        va_start(ap, argv);
        while ((s = va_arg(ap, const char *)))
                strv_push(argv, xstrdup(s));
        va_end(ap);
}
