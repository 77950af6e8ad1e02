/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Everything a run created carries its label; cleanup removes it and only
 * an empty second listing counts as removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/util.h"
#include "validate/docker-internal.h"

/* The names of this run's containers, or NULL with *ret_error. */
static char **list_owned(struct docker_ctx *c, char **ret_error)
{
        struct command_output out = {};
        cleanup_free char *filter = xasprintf("label=%s=%s", RUN_LABEL, c->run_id);
        char **names = NULL;
        int r = docker_cli(
                c, ARGS("ps", "--all", "--no-trunc", "--filter", filter, "--format={{.Names}}"), -1,
                CLEANUP_TIMEOUT, DOCKER_OUTPUT_MAX_BYTES, &out);

        if (r < 0 || out.exit_status != 0) {
                *ret_error = docker_cmd_error("docker ps", r, &out);
                command_output_done(&out);
                return NULL;
        }
        for (char *p = out.out, *nl; p && *p; p = nl) {
                nl = strchr(p, '\n');
                if (nl)
                        *nl++ = '\0';
                if (*p)
                        strv_push(&names, xstrdup(p));
        }
        command_output_done(&out);
        return names ? names : xcalloc(1, sizeof(char *));
}

/* Removes everything this run created; verified by listing, not by rm's
 * error text (engines word "no such container" differently). */
int docker_cleanup_run(struct docker_ctx *c, char **ret_error)
{
        cleanup_strv char **names = NULL, **left = NULL;
        cleanup_free char *err = NULL;
        struct command_output out = {};
        int r;

        c->cleaning = true;
        names = list_owned(c, &err);
        if (!names) {
                *ret_error = xasprintf("cleanup: cannot list the containers of run %s: %s",
                                       c->run_id, err);
                return -EIO;
        }
        /* The subject first: its end kills every process in its PID
         * namespace, including a runtime init the subject stopped, which
         * releases an engine still waiting to start the helper. */
        if (strv_contains(names, c->subject)) {
                (void) docker_cli(c, ARGS("rm", "--force", "--volumes", "--", c->subject), -1,
                                  CLEANUP_TIMEOUT, BRIEF_OUTPUT_BYTES, &out);
                command_output_done(&out);
        }
        if (names[0]) {
                cleanup_strv char **a = NULL;
                docker_args_push(&a, "rm", "--force", "--volumes", "--", NULL);
                for (char **n = names; *n; n++)
                        if (!streq(*n, c->subject))
                                strv_push(&a, xstrdup(*n));
                if (strv_length(a) > 4)
                        (void) docker_cli(c, a, -1, CLEANUP_TIMEOUT, BRIEF_OUTPUT_BYTES, &out);
                command_output_done(&out);
        }
        free(err);
        err = NULL;
        left = list_owned(c, &err);
        if (!left) {
                *ret_error = xasprintf("cleanup could not be verified: cannot list the "
                                       "containers of run %s after removing them: %s",
                                       c->run_id, err);
                return -EIO;
        }
        if (left[0]) {
                cleanup_free char *all = strv_join(left, ", ");
                *ret_error = xasprintf("cleanup could not be verified: validation container%s "
                                       "left: %s",
                                       left[1] ? "s" : "", all);
                return -EIO;
        }
        for (char **v = c->volumes; v && *v; v++) {
                (void) docker_cli(c, ARGS("volume", "rm", "--force", "--", *v), -1, CLEANUP_TIMEOUT,
                                  BRIEF_OUTPUT_BYTES, &out);
                command_output_done(&out);
                r = docker_cli(c, ARGS("volume", "inspect", "--", *v), -1, CLEANUP_TIMEOUT,
                               BRIEF_OUTPUT_BYTES, &out);
                bool gone = r == 0 && out.exit_status != 0;
                command_output_done(&out);
                if (!gone) {
                        *ret_error = xasprintf("could not remove volume %s", *v);
                        return -EIO;
                }
        }
        if (c->bind_dir) {
                r = rm_rf_at(AT_FDCWD, c->bind_dir);
                if (r < 0 && r != -ENOENT) {
                        *ret_error =
                                xasprintf("could not remove %s: %s", c->bind_dir, strerror(-r));
                        return -EIO;
                }
        }
        return 0;
}
