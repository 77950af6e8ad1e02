/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "enforce/enforce-plan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/json-util.h"
#include "base/limits.h"
#include "base/strbuf.h"
#include "base/string-table.h"
#include "base/util.h"

static const char *const enforce_guarantee_table[_G_MAX] = {
        [G_MASKED_PATHS] = "masked-paths",
        [G_READ_ONLY_ROOT] = "read-only-root",
        [G_NETWORK] = "network",
        [G_SOCKETS] = "sockets",
        [G_PROCESSES] = "processes",
        [G_NON_ROOT] = "non-root",
        [G_CAPABILITIES] = "capabilities",
        [G_PIDS_LIMIT] = "pids-limit",
        [G_MEMORY_LIMIT] = "memory-limit",
        [G_MOUNT] = "mount",
        [G_NAMESPACES] = "namespaces",
        [G_PTRACE] = "ptrace",
        [G_BPF] = "bpf",
        [G_KERNEL_INTERFACES] = "kernel-interfaces",
        [G_DEVICES] = "devices",
        [G_KERNEL_TUNABLES] = "kernel-tunables",
        [G_MODEL_KEY] = "model-key",
        [G_FD_ESCAPE] = "fd-escape",
        [G_SYMLINK_SOURCES] = "symlink-sources",
        [G_PROBE_REPORT] = "probe-report",
};

/* Long descriptions are split over two literals (no comma is missing). */
/* NOLINTBEGIN(bugprone-suspicious-missing-comma) */
static const char *const guarantee_descriptions[_G_MAX] = {
        [G_MASKED_PATHS] =
                "state dir, secrets, asset sources and masked kernel files are unreadable",
        [G_READ_ONLY_ROOT] = "/, /usr and /etc cannot be written",
        [G_NETWORK] = "no listener outside the zone is reachable",
        [G_SOCKETS] = ("the daemon's and other containers' sockets, hidden services included, "
                       "are unreachable by host path"),
        [G_PROCESSES] = "foreign processes can be neither seen nor signalled",
        [G_NON_ROOT] = "the principal is not root",
        [G_CAPABILITIES] = "no capability in any set",
        [G_PIDS_LIMIT] = "forking past pids.max is refused",
        [G_MEMORY_LIMIT] = "allocating past memory.max is stopped",
        [G_MOUNT] = "mount, fsopen and umount are refused",
        [G_NAMESPACES] = "unshare and setns are refused",
        [G_PTRACE] = "ptrace is refused",
        [G_BPF] = "BPF programs cannot be loaded",
        [G_KERNEL_INTERFACES] = "perf_event_open, keyctl and io_uring are refused",
        [G_DEVICES] = "no device node can be created",
        [G_KERNEL_TUNABLES] = "/proc/sys and /sys/fs/cgroup cannot be written",
        [G_MODEL_KEY] = "the real model key is nowhere in reach",
        [G_FD_ESCAPE] = "no inherited fd or /proc magic link leads out",
        [G_SYMLINK_SOURCES] = "symlinked mount sources are refused or lead nowhere",
        [G_PROBE_REPORT] = "the probe ran and reported every attempt",
};
/* NOLINTEND(bugprone-suspicious-missing-comma) */

static const char *const enforce_result_table[_ENFORCE_RESULT_MAX] = {
        [ENFORCE_PENDING] = "pending", [ENFORCE_DENIED] = "denied",
        [ENFORCE_ALLOWED] = "allowed", [ENFORCE_ERROR] = "error",
        [ENFORCE_MISSING] = "missing", [ENFORCE_COMPLETE] = "complete",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING_FALLBACK(enforce_guarantee, enum enforce_guarantee, "unknown");
DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(enforce_guarantee);

const char *enforce_guarantee_description(enum enforce_guarantee g)
{
        return (unsigned) g < _G_MAX ? guarantee_descriptions[g] : "";
}

DEFINE_STRING_TABLE_LOOKUP_TO_STRING_FALLBACK(enforce_result, enum enforce_result, "error");

void enforce_plan_init(struct enforce_plan *p, const char *zone, const char *container)
{
        *p = (struct enforce_plan){ .zone = xstrdup(zone), .container = xstrdup(container) };
}

void enforce_plan_done(struct enforce_plan *p)
{
        for (size_t i = 0; i < p->n_attempts; i++) {
                free(p->attempts[i].name);
                free(p->attempts[i].kind);
                free(p->attempts[i].arg);
                free(p->attempts[i].detail);
        }
        free(p->attempts);
        free(p->zone);
        free(p->container);
        *p = (struct enforce_plan){ 0 };
}

void enforce_plan_add(struct enforce_plan *p, const char *name, enum enforce_guarantee g,
                      const char *kind, const char *arg, bool on_host)
{
        p->attempts = xrealloc(p->attempts, (p->n_attempts + 1) * sizeof(*p->attempts));
        p->attempts[p->n_attempts++] = (struct enforce_attempt){
                .name = xstrdup(name),
                .guarantee = g,
                .kind = xstrdup(kind),
                .arg = xstrdup(arg && *arg ? arg : "-"),
                .on_host = on_host,
                .expected = g == G_PROBE_REPORT ? ENFORCE_COMPLETE : ENFORCE_DENIED,
                .result = ENFORCE_PENDING,
        };
}

struct enforce_attempt *enforce_plan_find(struct enforce_plan *p, const char *name)
{
        for (size_t i = 0; i < p->n_attempts; i++)
                if (streq(p->attempts[i].name, name))
                        return &p->attempts[i];
        return NULL;
}

static void attempt_setv(struct enforce_attempt *a, enum enforce_result r, const char *fmt,
                         va_list ap) printf_fmt(3, 0);
static void attempt_setv(struct enforce_attempt *a, enum enforce_result r, const char *fmt,
                         va_list ap)
{
        struct strbuf sb = STRBUF_INIT;
        strbuf_vaddf(&sb, fmt, ap);
        free(a->detail);
        a->detail = strbuf_detach(&sb, NULL);
        a->result = r;
}

static void attempt_set(struct enforce_attempt *a, enum enforce_result r, const char *fmt, ...)
        printf_fmt(3, 4);
static void attempt_set(struct enforce_attempt *a, enum enforce_result r, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        attempt_setv(a, r, fmt, ap);
        va_end(ap);
}

void enforce_plan_set(struct enforce_plan *p, const char *name, enum enforce_result r,
                      const char *fmt, ...)
{
        struct enforce_attempt *a = enforce_plan_find(p, name);
        va_list ap;

        if (!a)
                return;
        va_start(ap, fmt);
        attempt_setv(a, r, fmt, ap);
        va_end(ap);
}

/* --- the plan ------------------------------------------------------------- */

static void add_probe(struct enforce_plan *p, enum enforce_guarantee g, const char *kind,
                      const char *arg, const char *fmt, ...) printf_fmt(5, 6);
static void add_probe(struct enforce_plan *p, enum enforce_guarantee g, const char *kind,
                      const char *arg, const char *fmt, ...)
{
        struct strbuf name = STRBUF_INIT;
        va_list ap;

        va_start(ap, fmt);
        strbuf_vaddf(&name, fmt, ap);
        va_end(ap);
        enforce_plan_add(p, name.buf, g, kind, arg, false);
        strbuf_release(&name);
}

void enforce_plan_build(struct enforce_plan *p, const struct enforce_targets *t)
{
        cleanup_free char *via_root = xasprintf("/proc/1/root%s", t->canary_file);
        cleanup_free char *via_self = xasprintf("/proc/self/root%s", t->canary_file);
        char num[32];
        size_t i;

        /* Masked paths: a file we know is there, every hidden source, the
         * kernel files the launcher masks. */
        add_probe(p, G_MASKED_PATHS, "read", t->canary_file, "read-state-canary");
        add_probe(p, G_MASKED_PATHS, "read", t->state_dir, "list-state-dir");
        add_probe(p, G_MASKED_PATHS, "read", "/run/secrets", "list-run-secrets");
        for (i = 0; t->hidden_paths && t->hidden_paths[i]; i++)
                add_probe(p, G_MASKED_PATHS, "read", t->hidden_paths[i], "read-hidden-%zu", i);
        for (i = 0; t->kernel_masked && t->kernel_masked[i]; i++)
                add_probe(p, G_MASKED_PATHS, "read", t->kernel_masked[i], "read-kernel-masked-%zu",
                          i);

        add_probe(p, G_READ_ONLY_ROOT, "write-dir", "/", "write-root");
        add_probe(p, G_READ_ONLY_ROOT, "write-dir", "/usr", "write-usr");
        add_probe(p, G_READ_ONLY_ROOT, "write-dir", "/etc", "write-etc");
        add_probe(p, G_READ_ONLY_ROOT, "root-rw", "/", "root-mount-rw");
        add_probe(p, G_READ_ONLY_ROOT, "root-rw", "/usr", "usr-mount-rw");
        add_probe(p, G_READ_ONLY_ROOT, "root-rw", "/etc", "etc-mount-rw");

        for (i = 0; t->canary_hosts && t->canary_hosts[i]; i++) {
                cleanup_free char *addr =
                        xasprintf("%s:%u", t->canary_hosts[i], (unsigned) t->canary_port);
                add_probe(p, G_NETWORK, "connect-tcp", addr, "connect-canary-%zu", i);
        }
        enforce_plan_add(p, "canary-listener-untouched", G_NETWORK, "host", NULL, true);

        for (i = 0; t->foreign_sockets && t->foreign_sockets[i]; i++)
                add_probe(p, G_SOCKETS, "connect-unix", t->foreign_sockets[i], "connect-socket-%zu",
                          i);
        enforce_plan_add(p, "canary-sockets-untouched", G_SOCKETS, "host", NULL, true);

        add_probe(p, G_PROCESSES, "proc-visible", NULL, "see-foreign-processes");
        (void) snprintf(num, sizeof(num), "%d", (int) t->host_pid);
        add_probe(p, G_PROCESSES, "kill", num, "signal-host-pid");

        add_probe(p, G_NON_ROOT, "uid", NULL, "uid-gid-not-zero");
        add_probe(p, G_CAPABILITIES, "caps", NULL, "capability-sets-empty");

        add_probe(p, G_MOUNT, "mount", NULL, "mount-tmpfs");
        add_probe(p, G_MOUNT, "fsopen", NULL, "fsopen-tmpfs");
        add_probe(p, G_MOUNT, "umount", t->state_dir, "umount-state-mask");

        add_probe(p, G_NAMESPACES, "unshare", "user", "unshare-user");
        add_probe(p, G_NAMESPACES, "unshare", "mount", "unshare-mount");
        add_probe(p, G_NAMESPACES, "unshare", "net", "unshare-net");
        add_probe(p, G_NAMESPACES, "setns", "/proc/self/ns/mnt", "setns-mnt");
        add_probe(p, G_NAMESPACES, "setns", "/proc/self/ns/net", "setns-net");

        add_probe(p, G_PTRACE, "ptrace-attach", "1", "ptrace-attach-shim");
        add_probe(p, G_PTRACE, "ptrace-traceme", NULL, "ptrace-traceme");

        add_probe(p, G_BPF, "bpf", NULL, "bpf-prog-load");
        add_probe(p, G_KERNEL_INTERFACES, "perf-event", NULL, "perf-event-open");
        add_probe(p, G_KERNEL_INTERFACES, "keyctl", NULL, "keyctl-join-session");
        add_probe(p, G_KERNEL_INTERFACES, "io-uring", NULL, "io-uring-setup");

        add_probe(p, G_DEVICES, "mknod-char", "1:3", "mknod-char-null");
        add_probe(p, G_DEVICES, "mknod-char", "0:0", "mknod-whiteout");

        add_probe(p, G_KERNEL_TUNABLES, "write-file", "/proc/sys/kernel/hostname",
                  "write-proc-sys-hostname");
        add_probe(p, G_KERNEL_TUNABLES, "write-file", "/proc/sysrq-trigger",
                  "write-proc-sysrq-trigger");
        add_probe(p, G_KERNEL_TUNABLES, "mkdir", "/sys/fs/cgroup/openenvd-probe", "mkdir-cgroup");
        add_probe(p, G_KERNEL_TUNABLES, "write-file", "/sys/fs/cgroup/cgroup.procs",
                  "write-cgroup-procs");

        add_probe(p, G_MODEL_KEY, "read", t->key_file, "read-model-key-file");
        add_probe(p, G_MODEL_KEY, "find-secret", t->key_marker_hex, "find-model-key");

        add_probe(p, G_FD_ESCAPE, "inherited-fds", NULL, "inherited-fds");
        add_probe(p, G_FD_ESCAPE, "read", via_root, "read-via-proc-1-root");
        add_probe(p, G_FD_ESCAPE, "read", via_self, "read-via-proc-self-root");

        add_probe(p, G_SYMLINK_SOURCES, "read", t->link_path, "follow-symlink-in-mount");
        enforce_plan_add(p, "symlinked-mount-source", G_SYMLINK_SOURCES, "host", NULL, true);

        /* Limits last: they exhaust the leaf for a moment. */
        (void) snprintf(num, sizeof(num), "%llu", (unsigned long long) t->fork_count);
        add_probe(p, G_PIDS_LIMIT, "fork-past-pids", num, "fork-past-pids-max");
        enforce_plan_add(p, "pids-max-hit", G_PIDS_LIMIT, "host", NULL, true);
        (void) snprintf(num, sizeof(num), "%llu", (unsigned long long) t->alloc_bytes);
        add_probe(p, G_MEMORY_LIMIT, "alloc-past-memory", num, "alloc-past-memory-max");
        enforce_plan_add(p, "memory-max-hit", G_MEMORY_LIMIT, "host", NULL, true);

        enforce_plan_add(p, "probe-report", G_PROBE_REPORT, "host", NULL, true);
}

char **enforce_plan_probe_argv(const struct enforce_plan *p, const char *probe, const char *out,
                               const char *fault)
{
        char **v = NULL;

        strv_push(&v, xstrdup(probe));
        strv_push(&v, xstrdup("attack"));
        strv_push(&v, xstrdup("--out"));
        strv_push(&v, xstrdup(out));
        if (fault) {
                strv_push(&v, xstrdup("--test-fault"));
                strv_push(&v, xstrdup(fault));
        }
        strv_push(&v, xstrdup("--"));
        for (size_t i = 0; i < p->n_attempts; i++) {
                const struct enforce_attempt *a = &p->attempts[i];
                if (a->on_host)
                        continue;
                strv_push(&v, xstrdup(a->name));
                strv_push(&v, xstrdup(enforce_guarantee_to_string(a->guarantee)));
                strv_push(&v, xstrdup(a->kind));
                strv_push(&v, xstrdup(a->arg));
        }
        return v;
}

/* --- evaluation ------------------------------------------------------------ */

/* One report line; returns NULL if it is acceptable, else why not. */
static const char *ingest_line(struct enforce_plan *p, const char *line, size_t len, bool *ret_end,
                               uint64_t *ret_end_count)
{
        json_error_t jerr;
        json_t *o;
        const char *why = NULL;

        if (len > ENFORCE_REPORT_MAX_LINE)
                return "line too long";
        o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!o || !json_is_object(o)) {
                json_decref(o);
                return "not a JSON object";
        }
        if (json_object_get(o, "end")) {
                json_t *n = json_object_get(o, "attempts");
                if (!json_is_true(json_object_get(o, "end")) || !json_is_integer(n) ||
                    json_integer_value(n) < 0)
                        why = "malformed end line";
                else if (*ret_end)
                        why = "second end line";
                else {
                        *ret_end = true;
                        *ret_end_count = (uint64_t) json_integer_value(n);
                }
                json_decref(o);
                return why;
        }

        const char *name = object_string(o, "name", NULL), *g = object_string(o, "guarantee", NULL);
        const char *kind = object_string(o, "kind", NULL),
                   *expected = object_string(o, "expected", NULL);
        const char *result = object_string(o, "result", NULL),
                   *detail = object_string(o, "detail", NULL);
        struct enforce_attempt *a = name ? enforce_plan_find(p, name) : NULL;

        if (!name || !g || !kind || !expected || !result || !detail)
                why = "missing or mistyped field";
        else if (!a || a->on_host)
                why = "report of an attempt that was not planned";
        else if (!streq(g, enforce_guarantee_to_string(a->guarantee)) || !streq(kind, a->kind) ||
                 !streq(expected, "denied"))
                why = "report contradicts the plan";
        else if (*ret_end)
                why = "report after the end line";
        if (why) {
                json_decref(o);
                return why;
        }

        a->n_reports++;
        if (a->n_reports > 1)
                attempt_set(a, ENFORCE_ERROR, "report duplicated");
        else if (streq(result, "denied"))
                attempt_set(a, ENFORCE_DENIED, "%s", detail);
        else if (streq(result, "allowed"))
                attempt_set(a, ENFORCE_ALLOWED, "%s", detail);
        else if (streq(result, "error"))
                attempt_set(a, ENFORCE_ERROR, "%s", detail);
        else
                attempt_set(a, ENFORCE_ERROR, "report garbled: result '%s'", result);
        json_decref(o);
        return NULL;
}

void enforce_plan_ingest(struct enforce_plan *p, const char *buf, size_t len,
                         const struct enforce_probe_exit *ex)
{
        struct enforce_attempt *report = enforce_plan_find(p, "probe-report");
        struct strbuf problems = STRBUF_INIT;
        bool end = false;
        uint64_t end_count = 0;
        size_t n_probe = 0, line_no = 0;
        cleanup_free char *why_missing = NULL;

        for (size_t off = 0; buf && off < len;) {
                const char *nl = memchr(buf + off, '\n', len - off);
                size_t l = nl ? (size_t) (nl - (buf + off)) : len - off;
                line_no++;
                if (!nl) {
                        /* Every line the probe writes ends in \n: a torn
                         * last line is a probe that died mid-write. */
                        strbuf_addf(&problems, "%sline %zu: unterminated", problems.len ? "; " : "",
                                    line_no);
                        break;
                }
                const char *why = ingest_line(p, buf + off, l, &end, &end_count);
                if (why)
                        strbuf_addf(&problems, "%sline %zu: %s", problems.len ? "; " : "", line_no,
                                    why);
                off += l + 1;
        }

        for (size_t i = 0; i < p->n_attempts; i++)
                if (!p->attempts[i].on_host)
                        n_probe++;
        if (!ex->started)
                why_missing =
                        xasprintf("probe did not start: %s", ex->start_error ?: "unknown error");
        else if (ex->timed_out)
                why_missing = xstrdup("probe timed out and was killed");
        else if (ex->status != 0)
                why_missing = xasprintf("probe exited with status %d", ex->status);

        for (size_t i = 0; i < p->n_attempts; i++) {
                struct enforce_attempt *a = &p->attempts[i];
                if (a->on_host || a->n_reports > 0)
                        continue;
                attempt_set(a, ENFORCE_MISSING, "report missing%s%s", why_missing ? ": " : "",
                            why_missing ?: "");
        }

        if (!report) {
                strbuf_release(&problems);
                return;
        }
        if (why_missing)
                strbuf_addf(&problems, "%s%s", problems.len ? "; " : "", why_missing);
        if (!end)
                strbuf_addf(&problems, "%sno end line", problems.len ? "; " : "");
        else if (end_count != n_probe)
                strbuf_addf(&problems, "%send line counts %llu attempts, %zu planned",
                            problems.len ? "; " : "", (unsigned long long) end_count, n_probe);
        if (problems.len)
                attempt_set(report, ENFORCE_ERROR, "%s", problems.buf);
        else
                attempt_set(report, ENFORCE_COMPLETE, "%zu attempts reported, probe exited 0",
                            n_probe);
        strbuf_release(&problems);
}

bool enforce_attempt_held(const struct enforce_attempt *a)
{
        return a->result == a->expected;
}

bool enforce_plan_guarantee_held(const struct enforce_plan *p, enum enforce_guarantee g)
{
        size_t n = 0;
        for (size_t i = 0; i < p->n_attempts; i++) {
                if (p->attempts[i].guarantee != g)
                        continue;
                n++;
                if (!enforce_attempt_held(&p->attempts[i]))
                        return false;
        }
        /* A guarantee nothing tested is not a guarantee that held. */
        return n > 0;
}

bool enforce_plan_held(const struct enforce_plan *p)
{
        for (int g = 0; g < _G_MAX; g++)
                if (!enforce_plan_guarantee_held(p, (enum enforce_guarantee) g))
                        return false;
        return true;
}

json_t *enforce_plan_to_json(const struct enforce_plan *p)
{
        json_t *o = json_object(), *gs = json_array(), *as = json_array();

        for (int g = 0; g < _G_MAX; g++) {
                json_t *failed = json_array();
                for (size_t i = 0; i < p->n_attempts; i++)
                        if (p->attempts[i].guarantee == (enum enforce_guarantee) g &&
                            !enforce_attempt_held(&p->attempts[i]))
                                json_array_append_new(failed, json_string(p->attempts[i].name));
                json_array_append_new(
                        gs,
                        json_pack("{s:s,s:s,s:b,s:o}", "guarantee",
                                  enforce_guarantee_to_string((enum enforce_guarantee) g),
                                  "description",
                                  enforce_guarantee_description((enum enforce_guarantee) g), "held",
                                  enforce_plan_guarantee_held(p, (enum enforce_guarantee) g),
                                  "failed", failed));
        }
        for (size_t i = 0; i < p->n_attempts; i++) {
                const struct enforce_attempt *a = &p->attempts[i];
                json_array_append_new(
                        as, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:b}", "name", a->name,
                                      "guarantee", enforce_guarantee_to_string(a->guarantee),
                                      "where", a->on_host ? "host" : "probe", "kind", a->kind,
                                      "expected", enforce_result_to_string(a->expected), "result",
                                      enforce_result_to_string(a->result), "detail",
                                      a->detail ?: "", "held", enforce_attempt_held(a)));
        }
        json_object_set_new(o, "zone", json_string(p->zone));
        json_object_set_new(o, "container", json_string(p->container));
        json_object_set_new(o, "held", json_boolean(enforce_plan_held(p)));
        json_object_set_new(o, "guarantees", gs);
        json_object_set_new(o, "attempts", as);
        return o;
}

void enforce_plans_format(const struct enforce_plan *plans, size_t n, FILE *f)
{
        fprintf(f, "%-10s %-12s %-18s %-7s %s\n", "ZONE", "CONTAINER", "GUARANTEE", "RESULT",
                "FAILING ATTEMPTS");
        for (size_t k = 0; k < n; k++) {
                const struct enforce_plan *p = &plans[k];
                for (int g = 0; g < _G_MAX; g++) {
                        bool held = enforce_plan_guarantee_held(p, (enum enforce_guarantee) g);
                        fprintf(f, "%-10s %-12s %-18s %-7s", p->zone, p->container,
                                enforce_guarantee_to_string((enum enforce_guarantee) g),
                                held ? "held" : "FAILED");
                        bool first = true;
                        for (size_t i = 0; i < p->n_attempts; i++) {
                                const struct enforce_attempt *a = &p->attempts[i];
                                if (a->guarantee != (enum enforce_guarantee) g ||
                                    enforce_attempt_held(a))
                                        continue;
                                fprintf(f, "%s%s [%s: %s]", first ? " " : ", ", a->name,
                                        enforce_result_to_string(a->result), a->detail ?: "");
                                first = false;
                        }
                        fputc('\n', f);
                }
        }
}
