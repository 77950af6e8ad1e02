/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/macro.h"
#include "base/util.h"
#include "validate/containment-grader.h"
#include "validate/report.h"

/* Verdict -> name and exit code: the one table (docs/VALIDATE.md, --help). */
static const struct {
        const char *name;
        int exit_code; /* -1: 128 + the signal */
} verdicts[_VERDICT_MAX] = {
        [VERDICT_PASS] = { "pass", 0 },   [VERDICT_WARN] = { "warn", 0 },
        [VERDICT_FAIL] = { "fail", 1 },   [VERDICT_UNUSABLE] = { "unusable", 2 },
        [VERDICT_ERROR] = { "error", 3 }, [VERDICT_INTERRUPTED] = { "interrupted", -1 },
};

const char *validate_verdict_to_string(enum validate_verdict v)
{
        return v >= 0 && v < _VERDICT_MAX ? verdicts[v].name : "error";
}

enum validate_verdict validate_verdict_for(const struct check_result *r)
{
        switch (r->status) {
        case CHECK_PASS:
                return VERDICT_PASS;
        case CHECK_SKIP: /* a skip is a warning */
                return VERDICT_WARN;
        case CHECK_FAIL:
                return VERDICT_FAIL;
        default:
                return VERDICT_ERROR;
        }
}

int validate_report_exit_code(const struct validate_report *r)
{
        if (r->verdict < 0 || r->verdict >= _VERDICT_MAX)
                return verdicts[VERDICT_ERROR].exit_code;
        if (verdicts[r->verdict].exit_code < 0)
                return 128 + r->signal;
        return verdicts[r->verdict].exit_code;
}

static json_t *string_or_null(const char *s)
{
        return s ? json_string(s) : json_null();
}

json_t *validate_report_to_json(const struct validate_report *r)
{
        json_t *o = json_object(), *results = json_array();

        if (!o || !results)
                oom();
        json_array_append_new(results, check_result_to_json(r->result));
        json_object_set_new(o, "schema_version", json_integer(VALIDATE_REPORT_SCHEMA_VERSION));
        json_object_set_new(o, "policy_version", json_integer(CONTAINMENT_POLICY_VERSION));
        json_object_set_new(o, "target", string_or_null(r->target));
        json_object_set_new(o, "image_id", string_or_null(r->image_id));
        json_object_set_new(o, "run_id", string_or_null(r->run_id));
        json_object_set_new(o, "verdict", json_string(validate_verdict_to_string(r->verdict)));
        json_object_set_new(o, "exit_code", json_integer(validate_report_exit_code(r)));
        json_object_set_new(o, "results", results);
        return o;
}

void validate_report_print_table(const struct validate_report *r, FILE *f)
{
        json_t *mounts = json_object_get(r->result->measured, "mounts"), *m;
        size_t i;

        check_result_print_table(r->result, r->target, f);
        /* Each mount with its verdict: the reader sees why. */
        if (json_array_size(mounts) > 0) {
                fprintf(f, "\n%-16s %-10s %s\n", "MOUNT", "FSTYPE", "MOUNT POINT");
                json_array_foreach(mounts, i, m)
                {
                        const char *v = json_string_value(json_object_get(m, "verdict"));
                        const char *fs = json_string_value(json_object_get(m, "fstype"));
                        const char *mp = json_string_value(json_object_get(m, "mount_point"));
                        fprintf(f, "%-16s %-10s %s\n", v ? v : "?", fs ? fs : "?", mp ? mp : "?");
                }
        }
        fprintf(f, "\nVERDICT %s (exit %d; report schema %d, policy %d)\n",
                validate_verdict_to_string(r->verdict), validate_report_exit_code(r),
                VALIDATE_REPORT_SCHEMA_VERSION, CONTAINMENT_POLICY_VERSION);
}
