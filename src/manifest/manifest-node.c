/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "manifest/manifest-node.h"

#include <errno.h>
#include <string.h>
#include <yaml.h>

#include "base/limits.h"
#include "base/util.h"

bool mnode_is_null(const struct mnode *n)
{
        if (n->kind != MNODE_SCALAR || !n->plain)
                return false;
        return n->len == 0 || streq(n->value, "~") || streq(n->value, "null") ||
               streq(n->value, "Null") || streq(n->value, "NULL");
}

static struct mnode *mdoc_new_node(struct mdoc *doc, enum mnode_kind kind, const yaml_mark_t *mark)
{
        struct mnode *n = xcalloc(1, sizeof(*n));

        n->kind = kind;
        n->line = (unsigned) mark->line + 1;
        n->column = (unsigned) mark->column + 1;
        if (doc->n_all == doc->alloc_all) {
                doc->alloc_all = doc->alloc_all ? doc->alloc_all * 2 : 64;
                doc->all = xrealloc(doc->all, doc->alloc_all * sizeof(struct mnode *));
        }
        doc->all[doc->n_all++] = n;
        return n;
}

static void mnode_append(struct mnode *parent, struct mnode *child)
{
        if (parent->n_children == parent->alloc) {
                parent->alloc = parent->alloc ? parent->alloc * 2 : 8;
                parent->children =
                        xrealloc(parent->children, parent->alloc * sizeof(struct mnode *));
        }
        parent->children[parent->n_children++] = child;
}

void mdoc_done(struct mdoc *doc)
{
        for (size_t i = 0; i < doc->n_all; i++) {
                free(doc->all[i]->value);
                free(doc->all[i]->children);
                free(doc->all[i]);
        }
        free(doc->all);
        *doc = (struct mdoc){ 0 };
}

/* Reader errors (bad UTF-8, control characters) carry a byte offset, not a
 * mark: derive line and column from the bytes before it. */
static void offset_to_position(const char *data, size_t len, size_t offset, unsigned *line,
                               unsigned *column)
{
        unsigned l = 1, c = 1;

        for (size_t i = 0; i < offset && i < len; i++) {
                if (data[i] == '\n') {
                        l++;
                        c = 1;
                } else if (((unsigned char) data[i] & 0xc0) != 0x80) {
                        c++; /* count characters, not continuation bytes */
                }
        }
        *line = l;
        *column = c;
}

static void report_parser_error(const yaml_parser_t *p, const char *data, size_t len,
                                struct manifest_errors *errors)
{
        const char *problem = p->problem ? p->problem : "unknown error";
        unsigned line, column;

        if (p->error == YAML_READER_ERROR) {
                offset_to_position(data, len, p->problem_offset, &line, &column);
                if (p->problem_value >= 0)
                        manifest_errors_add(errors, line, column, "",
                                            "invalid YAML: %s (byte 0x%02x at offset %zu)", problem,
                                            (unsigned) p->problem_value & 0xffu, p->problem_offset);
                else
                        manifest_errors_add(errors, line, column, "", "invalid YAML: %s", problem);
                return;
        }
        if (p->error == YAML_MEMORY_ERROR) {
                manifest_errors_add(errors, 1, 1, "", "invalid YAML: out of memory");
                return;
        }
        line = (unsigned) p->problem_mark.line + 1;
        column = (unsigned) p->problem_mark.column + 1;
        if (p->context)
                manifest_errors_add(errors, line, column, "", "invalid YAML: %s (%s)", problem,
                                    p->context);
        else
                manifest_errors_add(errors, line, column, "", "invalid YAML: %s", problem);
}

static void event_deletep(yaml_event_t *e)
{
        yaml_event_delete(e);
}

/* One event: returns 1 to continue, 0 at the end of the stream, -EINVAL on a
 * refused construct (error added). */
static int mdoc_handle_event(struct mdoc *doc, const yaml_event_t *ev, struct mnode **stack,
                             size_t *depth, unsigned *documents, struct manifest_errors *errors)
{
        unsigned line = (unsigned) ev->start_mark.line + 1;
        unsigned column = (unsigned) ev->start_mark.column + 1;
        const yaml_char_t *anchor = NULL, *tag = NULL;
        struct mnode *n;
        enum mnode_kind kind;

        switch (ev->type) {
        case YAML_STREAM_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
        case YAML_NO_EVENT:
                return 1;
        case YAML_STREAM_END_EVENT:
                return 0;
        case YAML_DOCUMENT_START_EVENT:
                if (++*documents > 1) {
                        manifest_errors_add(errors, line, column, "",
                                            "only one YAML document is allowed");
                        return -EINVAL;
                }
                return 1;
        case YAML_ALIAS_EVENT:
                /* Aliases are how "billion laughs" bombs expand; the contract
                 * never needs them, so they are refused outright. */
                manifest_errors_add(errors, line, column, "",
                                    "YAML aliases (*%s) are not allowed in a manifest",
                                    (const char *) ev->data.alias.anchor);
                return -EINVAL;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
                if (*depth > 0)
                        (*depth)--;
                return 1;
        case YAML_SCALAR_EVENT:
                anchor = ev->data.scalar.anchor;
                tag = ev->data.scalar.tag;
                kind = MNODE_SCALAR;
                break;
        case YAML_SEQUENCE_START_EVENT:
                anchor = ev->data.sequence_start.anchor;
                tag = ev->data.sequence_start.tag;
                kind = MNODE_SEQ;
                break;
        case YAML_MAPPING_START_EVENT:
                anchor = ev->data.mapping_start.anchor;
                tag = ev->data.mapping_start.tag;
                kind = MNODE_MAP;
                break;
        default:
                return 1;
        }

        if (anchor) {
                manifest_errors_add(errors, line, column, "",
                                    "YAML anchors (&%s) are not allowed in a manifest",
                                    (const char *) anchor);
                return -EINVAL;
        }
        if (tag) {
                manifest_errors_add(errors, line, column, "",
                                    "YAML tags (%s) are not allowed in a manifest",
                                    (const char *) tag);
                return -EINVAL;
        }
        if (kind == MNODE_SCALAR) {
                if (ev->data.scalar.length > MANIFEST_MAX_SCALAR) {
                        manifest_errors_add(errors, line, column, "",
                                            "scalar of %zu bytes is longer than the limit of %d",
                                            ev->data.scalar.length, MANIFEST_MAX_SCALAR);
                        return -EINVAL;
                }
                if (memchr(ev->data.scalar.value, 0, ev->data.scalar.length)) {
                        manifest_errors_add(errors, line, column, "",
                                            "NUL characters are not allowed in a manifest");
                        return -EINVAL;
                }
        } else if (*depth >= MANIFEST_MAX_DEPTH) {
                manifest_errors_add(errors, line, column, "",
                                    "nesting is deeper than the limit of %d", MANIFEST_MAX_DEPTH);
                return -EINVAL;
        }

        if (*depth > 0) {
                struct mnode *parent = stack[*depth - 1];
                if (parent->kind == MNODE_MAP && parent->n_children % 2 == 0 &&
                    kind != MNODE_SCALAR) {
                        manifest_errors_add(errors, line, column, "",
                                            "mapping keys must be scalars");
                        return -EINVAL;
                }
        } else if (doc->root) {
                /* Cannot happen within one document; be defensive. */
                return -EINVAL;
        }

        n = mdoc_new_node(doc, kind, &ev->start_mark);
        if (kind == MNODE_SCALAR) {
                n->value = xstrndup((const char *) ev->data.scalar.value, ev->data.scalar.length);
                n->len = ev->data.scalar.length;
                n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        }
        if (*depth > 0)
                mnode_append(stack[*depth - 1], n);
        else
                doc->root = n;
        if (kind != MNODE_SCALAR)
                stack[(*depth)++] = n;
        return 1;
}

int mdoc_parse(const char *data, size_t len, struct manifest_errors *errors, struct mdoc *ret)
{
        struct mdoc doc = { 0 };
        struct mnode *stack[MANIFEST_MAX_DEPTH];
        size_t depth = 0, events = 0;
        unsigned documents = 0;
        yaml_parser_t parser;
        int r = 0;

        if (!yaml_parser_initialize(&parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&parser, (const unsigned char *) data, len);
        yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);

        for (;;) {
                cleanup(event_deletep) yaml_event_t ev = { 0 };

                if (!yaml_parser_parse(&parser, &ev)) {
                        report_parser_error(&parser, data, len, errors);
                        r = -EINVAL;
                        break;
                }
                if (++events > MANIFEST_MAX_NODES) {
                        manifest_errors_add(errors, (unsigned) ev.start_mark.line + 1,
                                            (unsigned) ev.start_mark.column + 1, "",
                                            "more than %d YAML nodes", MANIFEST_MAX_NODES);
                        r = -EINVAL;
                        break;
                }
                r = mdoc_handle_event(&doc, &ev, stack, &depth, &documents, errors);
                if (r <= 0)
                        break;
        }
        yaml_parser_delete(&parser);
        if (r < 0) {
                mdoc_done(&doc);
                return r;
        }
        *ret = doc;
        return 0;
}
