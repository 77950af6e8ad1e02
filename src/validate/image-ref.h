/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Docker's image reference grammar (github.com/distribution/reference,
 * reference.go), checked before a reference reaches any docker command, so
 * that a user- or attacker-supplied string can never be read as an option
 * ("--format={{.Id}}") or as anything but an image:
 *
 *   reference  := name [ ":" tag ] [ "@" digest ]
 *   name       := [ domain "/" ] path            (at most 255 bytes)
 *   domain     := host [ ":" port ]
 *   host       := domain-component ( "." domain-component )* | "[" ipv6 "]"
 *   domain-component := [a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]
 *   path       := path-component ( "/" path-component )*
 *   path-component := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
 *   tag        := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
 *   digest     := algorithm ":" [0-9a-fA-F]{32,}
 *   algorithm  := [A-Za-z][A-Za-z0-9]* ( [-_+.] [A-Za-z][A-Za-z0-9]* )*
 *
 * A 64-hex image ID and "sha256:<64 hex>" are references by this grammar too
 * (a name, and a name with a tag). Pure: no engine, no allocation.
 */

#define IMAGE_REF_NAME_MAX 255 /* NameTotalLengthMax */
#define IMAGE_REF_TAG_MAX  128

/* 0 if ref is a valid reference, else -EINVAL and, if ret_reason is not
 * NULL, a static sentence saying what is wrong. */
int image_ref_check(const char *ref, const char **ret_reason);
