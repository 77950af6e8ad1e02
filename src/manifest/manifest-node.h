/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Internal: the small positioned tree the typed pass walks, built from
 * libyaml's event stream (never its document API, so every limit applies
 * while parsing, before anything is materialised).
 *
 * Ownership: struct mdoc owns every node (the `all` vector), so freeing is a
 * flat loop. Invariants: maps hold key/value pairs in children[2i],
 * children[2i+1] and every key is a scalar; scalars never contain NUL bytes;
 * depth <= MANIFEST_MAX_DEPTH; no anchors, aliases or tags exist in the tree.
 */
#include <stdbool.h>
#include <stddef.h>

#include "manifest/manifest-errors.h"

enum mnode_kind {
        MNODE_SCALAR,
        MNODE_MAP,
        MNODE_SEQ,
};

struct mnode {
        enum mnode_kind kind;
        unsigned line, column; /* 1-based, from the yaml start mark */
        bool plain;            /* scalar written without quotes or block style */
        char *value;           /* owned: scalar text, NUL-terminated */
        size_t len;
        struct mnode **children; /* owned vector of borrowed pointers (doc owns nodes) */
        size_t n_children;
        size_t alloc;
};

struct mdoc {
        struct mnode *root; /* borrowed from all; NULL for an empty stream */
        struct mnode **all; /* owned */
        size_t n_all;
        size_t alloc_all;
};

/* 0 on success; -EINVAL after adding the (positioned) error to errors. */
int mdoc_parse(const char *data, size_t len, struct manifest_errors *errors, struct mdoc *ret);
void mdoc_done(struct mdoc *doc);

/* YAML 1.2 core-schema null: "", "~", "null", "Null", "NULL" when plain. */
bool mnode_is_null(const struct mnode *n);
static inline size_t mnode_map_size(const struct mnode *n)
{
        return n->kind == MNODE_MAP ? n->n_children / 2 : 0;
}
static inline const struct mnode *mnode_key(const struct mnode *n, size_t i)
{
        return n->children[2 * i];
}
static inline const struct mnode *mnode_value(const struct mnode *n, size_t i)
{
        return n->children[2 * i + 1];
}
