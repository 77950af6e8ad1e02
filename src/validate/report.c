/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/exit-code.h"
#include "base/json-util.h"
#include "base/macro.h"
#include "base/string-table.h"
#include "base/util.h"
#include "validate/containment-grader.h"
#include "validate/report.h"

static const char *const validate_verdict_table[_VERDICT_MAX] = {
        [VERDICT_PASS] = "pass",   [VERDICT_WARN] = "warn",
        [VERDICT_FAIL] = "fail",   [VERDICT_UNUSABLE] = "unusable",
        [VERDICT_ERROR] = "error", [VERDICT_INTERRUPTED] = "interrupted",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING_FALLBACK(validate_verdict, enum validate_verdict, "error");

/* Verdict -> exit code: the one map (docs/VALIDATE.md, --help). */
static const int verdict_exit_codes[_VERDICT_MAX] = {
        [VERDICT_PASS] = EXIT_CODE_OK,           [VERDICT_WARN] = EXIT_CODE_OK,
        [VERDICT_FAIL] = EXIT_CODE_FAILED,       [VERDICT_UNUSABLE] = EXIT_CODE_INVALID,
        [VERDICT_ERROR] = EXIT_CODE_UNAVAILABLE, [VERDICT_INTERRUPTED] = -1, /* 128 + the signal */
};

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
                return verdict_exit_codes[VERDICT_ERROR];
        if (verdict_exit_codes[r->verdict] < 0)
                return EXIT_CODE_SIGNAL(r->signal);
        return verdict_exit_codes[r->verdict];
}

json_t *validate_report_to_json(const struct validate_report *r)
{
        json_t *o = json_object(), *results = json_array();

        if (!o || !results)
                oom();
        json_array_append_new(results, check_result_to_json(r->result));
        json_object_set_new(o, "schema_version", json_integer(VALIDATE_REPORT_SCHEMA_VERSION));
        json_object_set_new(o, "policy_version", json_integer(CONTAINMENT_POLICY_VERSION));
        json_object_set_new(o, "target", text_to_json(r->target));
        json_object_set_new(o, "image_id", text_to_json(r->image_id));
        json_object_set_new(o, "run_id", text_to_json(r->run_id));
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
