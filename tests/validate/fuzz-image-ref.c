/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: image references given on the command line (or by whoever
 * drives `openenvctl validate`). Whatever is accepted must be harmless as a
 * docker argument: never option-shaped, never empty, no whitespace or
 * control bytes, within the length bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "validate/image-ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = malloc(size + 1);

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        if (image_ref_check(s, NULL) == 0) {
                size_t n = strlen(s);
                if (n == 0 || s[0] == '-' || n > IMAGE_REF_MAX_BYTES)
                        abort();
                for (size_t i = 0; i < n; i++)
                        if ((unsigned char) s[i] <= ' ' || (unsigned char) s[i] >= 0x7f)
                                abort();
        }
        free(s);
        return 0;
}
