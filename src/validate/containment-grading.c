/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The grading state every section writes to: what was proven (violations),
 * what could not be (gaps), what cannot be believed (malformed), and each
 * process's and mount's own verdict.
 */
#include <stdarg.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "validate/containment-grading.h"

static void vadd(char ***v, const char *fmt, va_list ap) printf_fmt(2, 0);
static void vadd(char ***v, const char *fmt, va_list ap)
{
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;

        strbuf_vaddf(&sb, fmt, ap);
        /* The same gap seen on many processes is one line. */
        if (!strv_contains(*v, sb.buf))
                strv_push(v, strbuf_detach(&sb, NULL));
}

void grading_add(char ***v, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vadd(v, fmt, ap);
        va_end(ap);
}

/* A proven violation (FAIL) or a gap (SKIP); either is also recorded on the
 * item being graded, so the report shows each mount's and process's verdict
 * with its reasons. */
static void record_problem(struct grading *g, bool is_violation, const char *fmt, va_list ap)
        printf_fmt(3, 0);
static void record_problem(struct grading *g, bool is_violation, const char *fmt, va_list ap)
{
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;

        strbuf_vaddf(&sb, fmt, ap);
        grading_add(is_violation ? &g->violations : &g->unproven, "%s", sb.buf);
        if (is_violation)
                g->n_violations++;
        else
                g->n_unproven++;
        if (g->item)
                json_array_append_new(g->item, json_string(sb.buf));
}

void grading_violation(struct grading *g, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        record_problem(g, true, fmt, ap);
        va_end(ap);
}

void grading_gap(struct grading *g, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        record_problem(g, false, fmt, ap);
        va_end(ap);
}

void grading_malformed(struct grading *g, const char *fmt, ...)
{
        va_list ap;

        /* A handful say enough; a hostile document could repeat one forever. */
        if (strv_length(g->malformed) >= 8)
                return;
        va_start(ap, fmt);
        vadd(&g->malformed, fmt, ap);
        va_end(ap);
}

struct item_mark grading_item_begin(struct grading *g, json_t *obj)
{
        json_t *problems = json_array();

        if (!problems || json_object_set_new(obj, "problems", problems) < 0)
                oom();
        g->item = problems;
        return (struct item_mark){ g->n_violations, g->n_unproven };
}

void grading_item_end(struct grading *g, json_t *obj, struct item_mark m, const char *ok_verdict)
{
        const char *v = g->n_violations > m.violations ? "violation"
                        : g->n_unproven > m.unproven   ? "unproven"
                                                       : ok_verdict;
        json_object_set_new(obj, "verdict", json_string(v));
        g->item = NULL;
}

bool grading_str_in(const char *s, const char *const *list, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (streq(s, list[i]))
                        return true;
        return false;
}

/* Typed accessors: a present value of the wrong type is malformed; absent or
 * null is "unknown" (false return, no error). */
bool grading_get_bool(struct grading *g, const json_t *o, const char *k, bool *ret)
{
        json_t *v = json_object_get(o, k);
        if (!v || json_is_null(v))
                return false;
        if (!json_is_boolean(v)) {
                grading_malformed(g, "%s", k);
                return false;
        }
        *ret = json_is_true(v);
        return true;
}

bool grading_get_int(struct grading *g, const json_t *o, const char *k, json_int_t *ret)
{
        json_t *v = json_object_get(o, k);
        if (!v || json_is_null(v))
                return false;
        if (!json_is_integer(v)) {
                grading_malformed(g, "%s", k);
                return false;
        }
        *ret = json_integer_value(v);
        return true;
}

const char *grading_get_str(struct grading *g, const json_t *o, const char *k)
{
        json_t *v = json_object_get(o, k);
        if (!v || json_is_null(v))
                return NULL;
        if (!json_is_string(v)) {
                grading_malformed(g, "%s", k);
                return NULL;
        }
        return json_string_value(v);
}

json_t *grading_get_array(struct grading *g, const json_t *o, const char *k)
{
        json_t *v = json_object_get(o, k);
        if (!v || json_is_null(v))
                return NULL;
        if (!json_is_array(v)) {
                grading_malformed(g, "%s", k);
                return NULL;
        }
        return v;
}

json_t *grading_get_object(struct grading *g, const json_t *o, const char *k)
{
        json_t *v = json_object_get(o, k);
        if (!v || json_is_null(v))
                return NULL;
        if (!json_is_object(v)) {
                grading_malformed(g, "%s", k);
                return NULL;
        }
        return v;
}

bool grading_strings_contain(const json_t *arr, const char *s)
{
        size_t i;
        json_t *v;

        json_array_foreach(arr, i,
                           v) if (json_is_string(v) && streq(json_string_value(v), s)) return true;
        return false;
}

bool grading_is_allotted(const struct grading *g, const char *path)
{
        return grading_strings_contain(g->allotted, path);
}
