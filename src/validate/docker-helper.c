/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The trusted helper: openenvd-probe run as the subject's user in the
 * subject's PID namespace; its stdout is the results channel. When it
 * delivers nothing, the engine's view of both containers says why.
 */
#include <errno.h>
#include <string.h>

#include "base/json-util.h"
#include "base/limits.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "validate/docker-internal.h"

/* `docker ps` works while the engine holds a container's lock (a start that
 * waits on a stopped runtime init); inspect and top would hang. Returns the
 * container's state ("created", "running", "exited", ...) and status text. */
static char *container_state(struct docker_ctx *c, const char *name)
{
        struct command_output out = {};
        cleanup_free char *filter = xasprintf("label=%s=%s", RUN_LABEL, c->run_id);
        char *state = NULL;
        int r = docker_cli(c,
                           ARGS("ps", "--all", "--no-trunc", "--filter", filter,
                                "--format={{.Names}}\t{{.State}}\t{{.Status}}"),
                           -1, DIAGNOSE_TIMEOUT, BRIEF_OUTPUT_BYTES, &out);

        if (r < 0 || out.exit_status != 0) {
                command_output_done(&out);
                return NULL;
        }
        for (char *p = out.out, *nl; p && *p && !state; p = nl) {
                char *tab;
                nl = strchr(p, '\n');
                if (nl)
                        *nl++ = '\0';
                tab = strchr(p, '\t');
                if (tab && (size_t) (tab - p) == strlen(name) &&
                    strncmp(p, name, strlen(name)) == 0)
                        state = xstrdup(tab + 1);
        }
        command_output_done(&out);
        if (state)
                for (char *t = strchr(state, '\t'); t; t = strchr(t, '\t'))
                        *t = ' ';
        return state;
}

/* The STAT column of the helper's processes (`ps -o stat`), e.g. "T" for a
 * stopped one; NULL if unknown. Only for a running container. */
static char *helper_process_state(struct docker_ctx *c)
{
        struct command_output out = {};
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;
        int r = docker_cli(c, ARGS("top", "--", c->helper, "-o", "pid,stat"), -1, DIAGNOSE_TIMEOUT,
                           BRIEF_OUTPUT_BYTES, &out);
        bool header = true;

        if (r < 0 || out.exit_status != 0) {
                command_output_done(&out);
                return NULL;
        }
        for (char *p = out.out, *nl; p && *p; p = nl) {
                char *stat;
                nl = strchr(p, '\n');
                if (nl)
                        *nl++ = '\0';
                if (header) {
                        header = false;
                        continue;
                }
                stat = p + strcspn(p, " \t");
                stat += strspn(stat, " \t");
                stat[strcspn(stat, " \t")] = '\0';
                if (*stat)
                        strbuf_addf(&sb, "%s%s", sb.len ? "," : "", stat);
        }
        command_output_done(&out);
        return sb.len ? strbuf_detach(&sb, NULL) : NULL;
}

/* Why the helper did not deliver a document, in words a reader can act on.
 * The subject shares the helper's uid and PID namespace, so it can signal
 * it (or the runtime's init that is about to exec it): those cases are named
 * as such. Ends with the subject's state if it is no longer running. */
static char *helper_failure(struct docker_ctx *c, int r, const struct command_output *out)
{
        static const char *const who =
                "a process of the subject's uid in its PID namespace can signal it";
        cleanup_free char *state = NULL, *stat = NULL, *subject = NULL, *text = NULL;
        char *msg;

        if (r == -ECANCELED)
                return xstrdup("helper: interrupted");
        if (r == 0 && out->out_truncated)
                return xstrdup("helper output exceeds PROBE_EVIDENCE_MAX_BYTES");
        if (r == -ETIME || r == -ETIMEDOUT) {
                state = container_state(c, c->helper);
                if (state && startswith(state, "created"))
                        /* No process state to read before it starts: the
                         * cause is named as one of two, not claimed. */
                        msg = xasprintf("the helper never started: for %d s the runtime's init, "
                                        "waiting in the subject's PID namespace to exec it, made "
                                        "no progress (container created; either it was stopped "
                                        "or frozen there, as %s, or the runtime is too slow to "
                                        "go on: nothing observed tells which)",
                                        HELPER_STALL_S, who);
                else if (state && startswith(state, "running") &&
                         (stat = helper_process_state(c)) && (stat[0] == 'T' || stat[0] == 't'))
                        msg = xasprintf("the helper was stopped (process state %s) and made no "
                                        "progress for %d s: %s",
                                        stat, HELPER_STALL_S, who);
                else if (r == -ETIME)
                        msg = xasprintf("the helper made no progress for %d s (container %s, "
                                        "process state %s)",
                                        HELPER_STALL_S, state ? state : "unknown",
                                        stat ? stat : "unknown");
                else
                        msg = xasprintf("the helper did not finish in time (container %s)",
                                        state ? state : "unknown");
        } else if (r < 0)
                msg = xasprintf("helper: %s", strerror(-r));
        else {
                text = docker_err_text(out);
                if (out->exit_status > 128 && out->exit_status < 128 + 65 && !*text)
                        msg = xasprintf("the helper was killed by signal %d (%s) before it "
                                        "reported: %s",
                                        out->exit_status - 128, strsignal(out->exit_status - 128),
                                        who);
                else if (strstr(text, "cannot start a stopped process") ||
                         strstr(text, "cannot start a container that has stopped"))
                        /* runc's two wordings of one fact, both seen
                         * here: its init, waiting to exec, is gone. */
                        msg = xasprintf("the helper was killed before it ran (the runtime's init, "
                                        "waiting to exec it, is gone): %s; docker: %s",
                                        who, text);
                else if (out->exit_status != 0)
                        msg = xasprintf("helper: exit %d%s%s", out->exit_status, *text ? ": " : "",
                                        text);
                else
                        msg = xstrdup("helper output is not a JSON object");
        }
        subject = container_state(c, c->subject);
        if (subject && !startswith(subject, "running")) {
                char *m = xasprintf("%s; the subject is no longer running (%s)", msg, subject);
                free(msg);
                msg = m;
        }
        return msg;
}

/* Runs the helper; returns the probe document or NULL with *ret_error. */
json_t *docker_helper_run(struct docker_ctx *c, const char *user, long anchor, char **ret_error)
{
        cleanup_strv char **a = NULL;
        struct command_output out = {};
        cleanup_free char *label = xasprintf("%s=%s", RUN_LABEL, c->run_id);
        cleanup_free char *pidns = xasprintf("container:%s", c->subject);
        cleanup_free char *anchor_s = xasprintf("%ld", anchor);
        json_t *doc;
        int r;

        /* Only the PID namespace is shared; same uid/gid as the subject so
         * the kernel's ptrace-read checks let us into /proc/<pid>/root and
         * every write attempt is decided exactly as for the subject. Run by
         * ID, with everything the image config could say overridden. */
        docker_args_push(&a, "create", "--pull", "never", "--name", c->helper, "--label", label,
                         "--pid", pidns, "--network", "none", "--cgroupns", "private",
                         "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
                         "--user", user, "--pids-limit", "64", "--memory", "64m", "--memory-swap",
                         "64m", "--stop-timeout", "0", "--log-driver", "none", "--no-healthcheck",
                         "--workdir", "/", "--entrypoint", "/" HELPER_BINARY, "--", c->helper_image,
                         "containment", "--anchor-pid", anchor_s, NULL);
        for (size_t i = 0; i < ELEMENTSOF(docker_allotted_roots); i++)
                docker_args_push(&a, "--allotted", docker_allotted_roots[i], NULL);
        /* Test-only: a helper that waits after it started gives the hostile
         * subjects of the tests a window they cannot miss. */
        if (c->o->faults & FAULT_SLOW_HELPER)
                docker_args_push(&a, "--test-hold-ms", "2000", NULL);
        r = docker_cli(c, a, -1, CMD_TIMEOUT, DOCKER_OUTPUT_MAX_BYTES, &out);
        if (r < 0 || out.exit_status != 0) {
                *ret_error = docker_cmd_error("create helper", r, &out);
                command_output_done(&out);
                return NULL;
        }
        command_output_done(&out);
        /* Its stdout, relayed by the engine, is the results channel: the
         * subject has no fd to it and, the helper being non-dumpable, cannot
         * reach it through /proc either. */
        r = docker_cli_idle(c, ARGS("start", "--attach", "--", c->helper), -1, HELPER_TIMEOUT,
                            HELPER_STALL_S * USEC_PER_SEC, PROBE_EVIDENCE_MAX_BYTES, &out);
        doc = r == 0 && out.exit_status == 0 && !out.out_truncated
                      ? json_loadb(out.out, out.out_len, JSON_REJECT_DUPLICATES, NULL)
                      : NULL;
        if (!json_is_object(doc)) {
                json_decref(doc);
                *ret_error = helper_failure(c, r, &out);
                command_output_done(&out);
                return NULL;
        }
        command_output_done(&out);
        return doc;
}
