/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `openenvctl manifest validate FILE [--json] [-- CMD...]`: prints the
 * effective manifest (a human summary, or the full defaulted contract as
 * JSON) or every error (one "FILE:LINE:COLUMN: PATH: MESSAGE" line each, or
 * as JSON with --json). CMD is the env server's command as openenvd would be
 * given it (`openenvd -- CMD...`, an image's CMD): the manifest is checked
 * as the daemon would load it.
 * Exit codes (docs/CLI.md, docs/MANIFEST.md): 0 valid, 2 invalid (including a
 * file over MANIFEST_MAX_BYTES) or bad usage, 1 the file cannot be read.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "cli/cli.h"
#include "manifest/manifest.h"

/* {"file", "valid": false, "errors": [{line, column, path, message}],
 * "truncated"}: what a machine needs to point at the key. */
static json_t *errors_to_json(const struct manifest_errors *e)
{
        json_t *list = json_array();

        for (size_t i = 0; list && i < e->n; i++)
                json_array_append_new(list,
                                      json_pack("{s:I, s:I, s:s?, s:s?}", "line",
                                                (json_int_t) e->items[i].line, "column",
                                                (json_int_t) e->items[i].column, "path",
                                                e->items[i].path, "message", e->items[i].message));
        return json_pack("{s:s?, s:b, s:o?, s:b}", "file", e->file, "valid", 0, "errors", list,
                         "truncated", e->truncated);
}

static void fmt_u(char *buf, size_t n, uint64_t v)
{
        if (v)
                snprintf(buf, n, "%llu", (unsigned long long) v);
        else
                snprintf(buf, n, "-");
}

static void fmt_cpu(char *buf, size_t n, double v)
{
        if (v > 0)
                snprintf(buf, n, "%g", v);
        else
                snprintf(buf, n, "-");
}

static void print_limits_row(const char *name, const char *egress, uint16_t port,
                             const struct manifest_resources *r, const char *phases)
{
        char mem[32], pids[32], cpu[32], disk[32], p[16];

        fmt_u(mem, sizeof(mem), r->memory_mb);
        fmt_u(pids, sizeof(pids), r->pids);
        fmt_cpu(cpu, sizeof(cpu), r->cpu);
        fmt_u(disk, sizeof(disk), r->disk_mb);
        fmt_u(p, sizeof(p), port);
        printf("  %-20s %-12s %-6s %-10s %-8s %-6s %-8s %s\n", name, egress, p, mem, pids, cpu,
               disk, phases);
}

static void print_summary(const char *file, const struct manifest *m)
{
        const struct manifest_container *const *order;
        size_t n_order = manifest_observer_order(m, &order);

        printf("%s: valid\n", file);
        printf("app:              %s\n", m->app ? m->app : "(none)");
        printf("port:             %u\n", (unsigned) m->port);
        printf("kill_deadline_s:  %g\n", m->kill_deadline_s);
        printf("workspace_seed:   %s\n", m->workspace_seed ? m->workspace_seed : "(empty)");
        printf("privileged_assets:%s\n", m->n_assets ? "" : " (none)");
        for (size_t i = 0; i < m->n_assets; i++)
                printf("  %-16s %s\n", m->assets[i].name, m->assets[i].path);

        for (unsigned zk = 0; zk < MANIFEST_ZONE_MAX; zk++) {
                const struct manifest_zone *z = manifest_zone(m, zk);
                printf("\nzone %s (runtime %s", manifest_zone_kind_to_string(zk),
                       manifest_oci_to_string(z->oci));
                if (zk == MANIFEST_ZONE_SERVICES)
                        printf(", during_grading %s",
                               manifest_during_grading_to_string(z->during_grading));
                printf(")\n");
                printf("  %-20s %-12s %-6s %-10s %-8s %-6s %-8s %s\n", "CONTAINER", "EGRESS",
                       "PORT", "MEMORY_MB", "PIDS", "CPU", "DISK_MB", "PHASES");
                print_limits_row("(zone ceiling)", manifest_egress_to_string(z->egress), 0,
                                 &z->resources, "");
                for (size_t i = 0; i < z->n_containers; i++) {
                        const struct manifest_container *c = &z->containers[i];
                        struct strbuf ph = STRBUF_INIT;
                        cleanup_free char *cmd = manifest_container_command_line(c);

                        for (unsigned p = 0; p < PHASE_MANIFEST_MAX; p++)
                                if (manifest_container_lists(c, p))
                                        strbuf_addf(&ph, "%s%s", ph.len ? "," : "",
                                                    phase_to_string(p));
                        print_limits_row(c->name, manifest_egress_to_string(c->egress), c->port,
                                         &c->effective, ph.buf);
                        strbuf_release(&ph);
                        printf("      argv:   %s", cmd);
                        if (c->argv_source != MANIFEST_ARGV_MANIFEST)
                                printf("   (from the %s)", c->argv_source == MANIFEST_ARGV_APP
                                                                   ? "app"
                                                                   : "command line");
                        printf("\n      workdir: %s\n",
                               c->workdir ? c->workdir : "(openenvd's working directory)");
                        for (char **e = c->env; e && *e; e++)
                                printf("      env:    %s\n", *e);
                        if (c->n_reads) {
                                printf("      reads: ");
                                for (size_t r = 0; r < c->n_reads; r++) {
                                        cleanup_free char *s =
                                                manifest_read_to_string(&c->reads[r]);
                                        printf(" %s", s);
                                }
                                printf("\n");
                        }
                        if (c->expose.host)
                                printf("      expose: %s:%u\n", c->expose.host,
                                       (unsigned) c->expose.port);
                        if (c->state)
                                printf("      state:  %s\n", c->state);
                        if (c->output)
                                printf("      output: %s\n", c->output);
                        for (char **a = c->after; a && *a; a++)
                                printf("      after:  %s\n", *a);
                        if (c->rootfs)
                                printf("      rootfs: %s\n", c->rootfs);
                }
        }
        printf("\nobserver order:  ");
        for (size_t i = 0; i < n_order; i++)
                printf("%s%s", i ? " -> " : "", order[i]->name);
        printf("%s\n", n_order ? "" : "(none)");
}

int cli_manifest_validate(int argc, char **argv)
{
        cleanup_manifest_errors struct manifest_errors errors = { 0 };
        cleanup(manifest_freep) struct manifest *m = NULL;
        struct manifest_overrides o = {};
        const char *file = NULL;
        bool json = false;
        int r;

        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "--")) {
                        o.env_argv = argv + i + 1;
                        break;
                }
                if (streq(argv[i], "--json"))
                        json = true;
                else if (streq(argv[i], "--help") || streq(argv[i], "-h")) {
                        printf("Usage: openenvctl manifest validate FILE [--json] [-- CMD...]\n"
                               "  CMD: the env server's command, as given to openenvd -- CMD...\n"
                               "Exit: 0 valid, 1 cannot read FILE, 2 invalid.\n");
                        return EXIT_CODE_OK;
                } else if (argv[i][0] == '-' && argv[i][1]) {
                        fprintf(stderr, "openenvctl manifest validate: unknown option '%s'\n",
                                argv[i]);
                        return EXIT_CODE_INVALID;
                } else if (!file)
                        file = argv[i];
                else {
                        fprintf(stderr, "openenvctl manifest validate: more than one FILE given\n");
                        return EXIT_CODE_INVALID;
                }
        }
        if (!file) {
                fprintf(stderr, "Usage: openenvctl manifest validate FILE [--json] [-- CMD...]\n");
                return EXIT_CODE_INVALID;
        }

        manifest_errors_init(&errors, file);
        r = manifest_load_with(file, &o, &errors, &m);
        if (r == -EINVAL) {
                struct strbuf out = STRBUF_INIT;
                if (json)
                        (void) cli_print_json(errors_to_json(&errors), JSON_PRESERVE_ORDER);
                else {
                        manifest_errors_format(&errors, &out);
                        fputs(out.buf, stderr);
                }
                fprintf(stderr, "%s: invalid (%zu error%s)\n", file, errors.n,
                        errors.n == 1 ? "" : "s");
                strbuf_release(&out);
                return EXIT_CODE_INVALID;
        }
        if (r < 0) {
                fprintf(stderr, "%s: cannot read: %s\n", file,
                        r == -EBADFD ? "not a regular file" : strerror(-r));
                return EXIT_CODE_FAILED;
        }

        if (json) {
                if (cli_print_json(manifest_to_json(m), JSON_PRESERVE_ORDER) < 0) {
                        fprintf(stderr, "%s: out of memory rendering JSON\n", file);
                        return EXIT_CODE_FAILED;
                }
        } else {
                print_summary(file, m);
        }
        return EXIT_CODE_OK;
}
