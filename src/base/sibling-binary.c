/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/sibling-binary.h"

#include <linux/limits.h> /* PATH_MAX: base/limits.h shadows <limits.h> here */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/util.h"

/* Relative to the directory of the running program, in order. */
static const char *const sibling_dirs[] = {
        "",                     /* installed side by side */
        "../libexec/openenvd/", /* <prefix>/bin -> <prefix>/libexec/openenvd */
        "../sandbox/shim/",     /* build tree: src/<module>/ -> src/sandbox/shim/ */
        "../probe/",            /* build tree: src/probe/ */
};

char *sibling_binary_find(const char *name, const char *env_override)
{
        const char *env = env_override ? getenv(env_override) : NULL;
        char self[PATH_MAX];
        ssize_t n;
        char *slash;

        if (env && *env)
                return xstrdup(env);
        n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n > 0) {
                self[n] = '\0';
                slash = strrchr(self, '/');
                if (slash) {
                        *slash = '\0';
                        for (size_t i = 0; i < ELEMENTSOF(sibling_dirs); i++) {
                                char *p = xasprintf("%s/%s%s", self, sibling_dirs[i], name);
                                if (access(p, X_OK) == 0)
                                        return p;
                                free(p);
                        }
                }
        }
        return xasprintf("/usr/libexec/openenvd/%s", name);
}
