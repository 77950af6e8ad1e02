/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenv-probe: the trusted helper of `openenv validate`. Built static so it
 * can be the only file of a locally imported image (no registry, no libc in
 * the image); runs as the subject's uid/gid inside the subject's PID
 * namespace and prints one JSON evidence document on stdout.
 *
 *   openenv-probe containment [--anchor-pid N] [--allotted PATH]...
 *
 * Exit 0 when a document was written, 1 otherwise (the document's absence is
 * itself the evidence: "containment evidence is unavailable").
 */
#include <stdio.h>
#include <string.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/parse-util.h"
#include "base/util.h"
#include "probe/containment-probe.h"

int main(int argc, char **argv)
{
        cleanup_strv char **allotted = NULL;
        struct containment_probe_options o = {
                .anchor_pid = 1,
                .proc_path = "/proc",
                .walk = { .max_depth = PROBE_WALK_MAX_DEPTH,
                          .max_entries = PROBE_WALK_MAX_ENTRIES,
                          .max_findings = PROBE_WALK_MAX_FINDINGS },
        };
        struct jwriter w;
        int r;

        if (argc < 2 || !streq(argv[1], "containment")) {
                fputs("usage: openenv-probe containment [--anchor-pid N] [--allotted PATH]...\n",
                      stderr);
                return 2;
        }
        for (int i = 2; i < argc; i++) {
                if (streq(argv[i], "--anchor-pid") && i + 1 < argc) {
                        int pid;
                        if (parse_int(argv[++i], 1, INT32_MAX, &pid) < 0) {
                                fprintf(stderr, "openenv-probe: bad pid '%s'\n", argv[i]);
                                return 2;
                        }
                        o.anchor_pid = pid;
                } else if (streq(argv[i], "--allotted") && i + 1 < argc) {
                        if (argv[i + 1][0] != '/') {
                                fprintf(stderr, "openenv-probe: not absolute: '%s'\n", argv[i + 1]);
                                return 2;
                        }
                        strv_push(&allotted, xstrdup(argv[++i]));
                } else if (streq(argv[i], "--proc") && i + 1 < argc)
                        o.proc_path = argv[++i];
                else {
                        fprintf(stderr, "openenv-probe: unknown argument '%s'\n", argv[i]);
                        return 2;
                }
        }
        o.allotted = allotted;

        jwriter_init(&w);
        r = containment_probe_run(&o, &w);
        if (r < 0 || w.failed || w.depth != 0) {
                fprintf(stderr, "openenv-probe: cannot measure: %s\n",
                        r < 0 ? strerror(-r) : "writer state");
                jwriter_release(&w);
                return 1;
        }
        strbuf_addch(&w.out, '\n');
        if (w.out.len > PROBE_EVIDENCE_MAX_BYTES) {
                fputs("openenv-probe: evidence exceeds PROBE_EVIDENCE_MAX_BYTES\n", stderr);
                jwriter_release(&w);
                return 1;
        }
        r = write_all(STDOUT_FILENO, w.out.buf, w.out.len);
        jwriter_release(&w);
        return r < 0 ? 1 : 0;
}
