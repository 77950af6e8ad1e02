/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stepping aside. When isolation is unavailable the daemon must not change
 * how the environment serves: it execs the env container's command (the
 * command line's, the manifest's argv, or `uvicorn <app> --host 0.0.0.0
 * --port <port>`) in its own working directory (an image's WORKDIR; the
 * manifest's `workdir:` if it sets one) with its own environment minus
 * openenvd's variables plus the container's `env:`, so the image behaves
 * as it did before openenvd was its entrypoint.
 *
 * --port and --listen: where the env server listens is its command's
 * business. openenvd writes that command only when it is the manifest's
 * app, and then puts them in; any other command is run as it is, and the
 * log says why they were not applied.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/sd-notify.h"
#include "base/util.h"
#include "daemon/daemon.h"

extern char **environ;

/* openenvd's own variables (its tokens among them) are not the env's. */
static int drop_own_environment(void)
{
        for (;;) {
                cleanup_free char *name = NULL;
                for (char **e = environ; e && *e; e++)
                        if (startswith(*e, "OPENENVD_")) {
                                name = xstrndup(*e, strcspn(*e, "="));
                                break;
                        }
                if (!name)
                        return 0;
                if (unsetenv(name) < 0)
                        return -errno;
        }
}

int daemon_exec_fallback(const struct daemon_options *o, const struct manifest *m)
{
        const struct manifest_container *env = manifest_find_container(m, "env");
        cleanup_strv char **argv = NULL;
        cleanup_free char *cmd = NULL;
        bool moved;

        if (!env || !env->argv || !env->argv[0]) {
                log_error("no env server command to run");
                return DAEMON_EXIT_INVALID;
        }
        moved = (o->port && o->port != env->port) || !streq(o->listen_address, "0.0.0.0");
        if (env->argv_source == MANIFEST_ARGV_APP)
                argv = manifest_app_argv(m->app, o->listen_address, o->port ?: env->port);
        else {
                argv = strv_copy(env->argv);
                if (moved)
                        log_warning("--port/--listen not applied: the env server's command "
                                    "(from the %s) says where it listens, and openenvd rewrites "
                                    "only the manifest's app command; it serves as the image "
                                    "would (the manifest's port is %u)",
                                    env->argv_source == MANIFEST_ARGV_COMMAND_LINE
                                            ? "command line"
                                            : "manifest's argv",
                                    (unsigned) env->port);
        }
        if (drop_own_environment() < 0)
                return log_error_errno(-errno, "environment: %m"), DAEMON_EXIT_FAILURE;
        for (char **e = env->env; e && *e; e++)
                if (putenv(*e) < 0) /* the manifest outlives the exec */
                        return log_error_errno(-errno, "environment: %m"), DAEMON_EXIT_FAILURE;
        if (env->workdir && chdir(env->workdir) < 0)
                return log_error_errno(-errno, "workdir %s: %m", env->workdir), DAEMON_EXIT_FAILURE;
        cmd = strv_join(argv, " ");
        log_info("exec %s", cmd);
        /* Stepping aside is an exec: the env server becomes systemd's main
         * process and will not say when it listens; what can be said is
         * said now (a Type=notify unit would otherwise time out). */
        (void) sd_notify_send("READY=1\nSTATUS=isolation disabled: the env server runs as it is");
        execvp(argv[0], argv);
        log_error_errno(-errno, "exec %s: %m", argv[0]);
        return DAEMON_EXIT_FAILURE;
}
