/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "base/json-util.h"
#include "base/string-table.h"
#include "base/text-escape.h"
#include "base/util.h"
#include "validate/check-result.h"

static const char *const check_status_table[_CHECK_STATUS_MAX] = {
        [CHECK_PASS] = "pass",
        [CHECK_FAIL] = "fail",
        [CHECK_SKIP] = "skip",
        [CHECK_ERROR] = "error",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING_FALLBACK(check_status, enum check_status, "error");

struct check_result *check_result_new(const char *check_id, enum check_status status)
{
        struct check_result *r = xcalloc(1, sizeof(*r));

        r->check_id = xstrdup(check_id);
        r->status = status;
        r->evidence = xcalloc(1, sizeof(char *));
        r->measured = json_object();
        if (!r->measured)
                oom();
        return r;
}

struct check_result *check_result_free(struct check_result *r)
{
        if (!r)
                return NULL;
        free(r->check_id);
        strv_free(r->evidence);
        free(r->remediation);
        json_decref(r->measured);
        return mfree(r);
}

/* What the subject made reaches evidence escaped where it was read (the
 * probe, argv): this is the backstop for anything else (docker's messages),
 * so that no line of a table or report can be forged or dropped. */
void check_result_add_evidence(struct check_result *r, const char *line)
{
        strv_push(&r->evidence, text_is_safe(line) ? xstrdup(line) : text_escape(line));
}

json_t *check_result_to_json(const struct check_result *r)
{
        json_t *o = json_object(), *ev = json_array();

        if (!o || !ev)
                oom();
        for (char **l = r->evidence; *l; l++)
                json_array_append_new(ev, text_to_json(*l));
        json_object_set_new(o, "check_id", json_string(r->check_id));
        json_object_set_new(o, "status", json_string(check_status_to_string(r->status)));
        json_object_set_new(o, "evidence", ev);
        json_object_set_new(o, "remediation", text_to_json(r->remediation));
        json_object_set(o, "measured", r->measured);
        json_object_set_new(o, "duration_s", json_real(r->duration_s));
        return o;
}

void check_result_print_table(const struct check_result *r, const char *target, FILE *f)
{
        const char *st = check_status_to_string(r->status);
        char up[8] = "";

        for (size_t i = 0; st[i] && i + 1 < sizeof(up); i++)
                up[i] = (char) (st[i] >= 'a' && st[i] <= 'z' ? st[i] - 'a' + 'A' : st[i]);
        if (target)
                fprintf(f, "TARGET  %s\n", target);
        fprintf(f, "%-26s %-6s %s\n", "CHECK", "STATUS", "EVIDENCE");
        fprintf(f, "%-26s %-6s %s\n", r->check_id, up, r->evidence[0] ? r->evidence[0] : "");
        for (size_t i = 1; r->evidence[0] && r->evidence[i]; i++)
                fprintf(f, "%-26s %-6s %s\n", "", "", r->evidence[i]);
        if (r->remediation)
                fprintf(f, "\nREMEDIATION  %s\n", r->remediation);
        fprintf(f, "\nduration %.1fs\n", r->duration_s);
}
