/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenvd-probe: the trusted helper of `openenvctl validate`. Built static so it
 * can be the only file of a locally imported image (no registry, no libc in
 * the image); runs as the subject's uid/gid inside the subject's PID
 * namespace and prints one JSON evidence document on stdout.
 *
 *   openenvd-probe containment [--anchor-pid N] [--allotted PATH]...
 *
 * Exit 0 when a document was written, 1 otherwise (the document's absence is
 * itself the evidence: "containment evidence is unavailable"). Progress lines
 * go to stderr so the provider can tell a helper the subject stopped from a
 * slow one. The helper shares the subject's uid and PID namespace; it is
 * shipped execute-only (mode 0111), which makes the kernel mark it
 * non-dumpable at exec, so the subject can neither ptrace it nor reach its
 * memory or its stdout, the only channel its results travel on.
 *
 * It is also the attacker of `openenvctl check enforcement`, run as the
 * principal inside a throwaway container of each zone:
 *
 *   openenvd-probe attack --out FILE [--test-fault KNOB] -- NAME GUARANTEE KIND ARG ...
 *
 * runs every attempt (probe/attack.h) in order and appends one JSON object
 * per attempt to FILE as soon as it is known, then {"end":true,"attempts":N}.
 * The check treats a missing, duplicated or garbled line, or a missing end,
 * as a failure: a probe that dies part-way can never pass.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/parse-util.h"
#include "base/util.h"
#include "base/version.h"
#include "probe/attack.h"
#include "probe/containment-probe.h"
#include "base/json-writer.h"

static int write_line(int fd, struct jwriter *w, enum probe_fault fault)
{
        size_t len;

        if (w->failed || w->depth != 0)
                return -EINVAL;
        strbuf_addch(w->out, '\n');
        len = fault == PROBE_FAULT_GARBLE ? w->out->len / 2 : w->out->len;
        return write_all(fd, w->out->buf, len);
}

static int attack_main(int argc, char **argv)
{
        struct attack_context ctx;
        enum probe_fault fault = PROBE_FAULT_NONE;
        const char *out = NULL;
        cleanup_close int fd = -EBADF;
        int i, n_attempts, r;

        /* Before anything is opened: what did we inherit? */
        attack_context_init(&ctx);

        for (i = 2; i < argc && !streq(argv[i], "--"); i++) {
                if (streq(argv[i], "--out") && i + 1 < argc)
                        out = argv[++i];
                else if (streq(argv[i], "--test-fault") && i + 1 < argc) {
                        const char *k = argv[++i];
                        int f = probe_fault_from_string(k);
                        if (f < 0) {
                                fprintf(stderr, "openenvd-probe: unknown fault '%s'\n", k);
                                return 2;
                        }
                        fault = (enum probe_fault) f;
                } else {
                        fprintf(stderr, "openenvd-probe: unknown argument '%s'\n", argv[i]);
                        return 2;
                }
        }
        if (!out || i >= argc || (argc - i - 1) % 4 != 0) {
                fputs("usage: openenvd-probe attack --out FILE -- (NAME GUARANTEE KIND ARG)...\n",
                      stderr);
                return 2;
        }
        n_attempts = (argc - i - 1) / 4;
        if (fault == PROBE_FAULT_SILENT)
                return 0;

        fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
                fprintf(stderr, "openenvd-probe: %s: %s\n", out, strerror(errno));
                return 1;
        }
        for (int k = 0; k < n_attempts; k++) {
                char **a = argv + i + 1 + (ptrdiff_t) 4 * k;
                struct attack_outcome o;
                cleanup_strbuf struct strbuf line = STRBUF_INIT;
                struct jwriter w;

                if (fault == PROBE_FAULT_PARTIAL && k >= n_attempts / 2)
                        return 0;
                (void) attack_run(a[2], a[3], &ctx, &o);
                jwriter_init(&w, &line);
                jwriter_object_begin(&w);
                jwriter_kv_text(&w, "name", a[0]);
                jwriter_kv_text(&w, "guarantee", a[1]);
                jwriter_kv_text(&w, "kind", a[2]);
                jwriter_kv_text(&w, "expected", "denied");
                jwriter_kv_text(&w, "result", attack_result_to_string(o.result));
                jwriter_kv_text(&w, "detail", o.detail);
                jwriter_object_end(&w);
                r = write_line(fd, &w, fault);
                if (r < 0) {
                        fprintf(stderr, "openenvd-probe: %s: %s\n", out, strerror(-r));
                        return 1;
                }
                if (fault == PROBE_FAULT_CRASH)
                        (void) raise(SIGSEGV);
        }

        cleanup_strbuf struct strbuf end = STRBUF_INIT;
        struct jwriter w;
        jwriter_init(&w, &end);
        jwriter_object_begin(&w);
        jwriter_kv_bool(&w, "end", true);
        jwriter_kv_uint(&w, "attempts", (uint64_t) n_attempts);
        jwriter_object_end(&w);
        r = write_line(fd, &w, fault);
        return r < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
        /* First, before anything else can change it: did the kernel make us
         * non-dumpable at exec (execute-only binary)? See containment-probe.h. */
        int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);

        if (argc >= 2 && streq(argv[1], "--version")) {
                printf("openenvd-probe %s\n", openenvd_version);
                return 0;
        }
        if (argc >= 2 && streq(argv[1], "attack"))
                return attack_main(argc, argv);

        cleanup_strv char **allotted = NULL;
        struct containment_probe_options o = {
                .anchor_pid = 1,
                .proc_path = "/proc",
                .walk = { .max_depth = PROBE_WALK_MAX_DEPTH,
                          .max_entries = PROBE_WALK_MAX_ENTRIES,
                          .max_findings = PROBE_WALK_MAX_FINDINGS },
                .dumpable_at_start = dumpable,
                .progress_fd = STDERR_FILENO,
        };
        cleanup_strbuf struct strbuf report = STRBUF_INIT;
        struct jwriter w;
        int r;

        if (argc < 2 || !streq(argv[1], "containment")) {
                fputs("usage: openenvd-probe containment [--anchor-pid N] [--allotted PATH]...\n"
                      "       openenvd-probe attack --out FILE -- (NAME GUARANTEE KIND ARG)...\n"
                      "       openenvd-probe --version\n",
                      stderr);
                return 2;
        }
        for (int i = 2; i < argc; i++) {
                if (streq(argv[i], "--anchor-pid") && i + 1 < argc) {
                        int pid;
                        if (parse_int(argv[++i], 1, INT32_MAX, &pid) < 0) {
                                fprintf(stderr, "openenvd-probe: bad pid '%s'\n", argv[i]);
                                return 2;
                        }
                        o.anchor_pid = pid;
                } else if (streq(argv[i], "--allotted") && i + 1 < argc) {
                        if (argv[i + 1][0] != '/') {
                                fprintf(stderr, "openenvd-probe: not absolute: '%s'\n",
                                        argv[i + 1]);
                                return 2;
                        }
                        strv_push(&allotted, xstrdup(argv[++i]));
                } else if (streq(argv[i], "--proc") && i + 1 < argc)
                        o.proc_path = argv[++i];
                else if (streq(argv[i], "--test-hold-ms") && i + 1 < argc) {
                        if (parse_uint(argv[++i], 0, 10000, &o.test_hold_ms) < 0) {
                                fprintf(stderr, "openenvd-probe: bad hold '%s'\n", argv[i]);
                                return 2;
                        }
                } else {
                        fprintf(stderr, "openenvd-probe: unknown argument '%s'\n", argv[i]);
                        return 2;
                }
        }
        o.allotted = allotted;

        jwriter_init(&w, &report);
        r = containment_probe_run(&o, &w);
        if (r < 0 || w.failed || w.depth != 0) {
                fprintf(stderr, "openenvd-probe: cannot measure: %s\n",
                        r < 0 ? strerror(-r) : "writer state");
                return 1;
        }
        strbuf_addch(&report, '\n');
        if (report.len > PROBE_EVIDENCE_MAX_BYTES) {
                fputs("openenvd-probe: evidence exceeds PROBE_EVIDENCE_MAX_BYTES\n", stderr);
                return 1;
        }
        r = write_all(STDOUT_FILENO, report.buf, report.len);
        return r < 0 ? 1 : 0;
}
