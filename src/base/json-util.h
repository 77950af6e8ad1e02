/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * JSON building blocks every renderer needs (the manifest, the OCI bundle,
 * reports). Built into its own library (base_json_dep) so that base itself
 * stays libc-only for the static shim and probe. The names avoid jansson's
 * json_ prefix. A string that is not UTF-8 has no JSON string: an array
 * leaves it out, str_or_null_to_json() returns NULL (as json_string()).
 */
#include <stddef.h>

#include <jansson.h>

/* A new array of the strings of a NULL-terminated vector (NULL: empty);
 * out of memory aborts. */
json_t *strv_to_json(char *const *v);
/* A new array of the n strings v[0..n). */
json_t *strn_to_json(const char *const *v, size_t n);
/* A new string, or JSON null for NULL. */
json_t *str_or_null_to_json(const char *s);
/* A new string of arbitrary text (a container's output, a file name): never
 * NULL, never dropped. Bytes that are not part of well-formed UTF-8 become
 * "\xNN", one per byte, as text_escape() writes them (line breaks and other
 * controls stay: JSON escapes them); s NULL: JSON null. */
json_t *text_to_json(const char *s);
/* The string at key of object o; fallback when o is not an object, the key
 * is absent or its value is not a string. */
const char *object_string(const json_t *o, const char *key, const char *fallback);
