/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stepping aside. When isolation is unavailable the daemon must not change
 * how the environment serves: it execs the env container's command (by
 * default `uvicorn <app> --host 0.0.0.0 --port <port>`) in the manifest's
 * directory with the container's extra environment, so the image behaves
 * exactly as it did before openenvd was its entrypoint.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "daemon/daemon.h"

int daemon_exec_fallback(const struct manifest *m)
{
        const struct manifest_container *env = manifest_find_container(m, "env");
        cleanup_free char *cmd = NULL;

        if (!env || !env->argv || !env->argv[0]) {
                log_error("no env server command to run");
                return DAEMON_EXIT_INVALID;
        }
        for (char **e = env->env; e && *e; e++)
                if (putenv(*e) < 0) /* the manifest outlives the exec */
                        return log_error_errno(-errno, "environment: %m"), DAEMON_EXIT_FAILURE;
        if (chdir(m->base_dir) < 0)
                log_warning_errno(-errno, "cannot enter %s: %m", m->base_dir);
        cmd = manifest_container_command_line(env);
        log_info("exec %s", cmd);
        execvp(env->argv[0], env->argv);
        log_error_errno(-errno, "exec %s: %m", env->argv[0]);
        return DAEMON_EXIT_FAILURE;
}
