/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/env-origin.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

/* Substrings (any case) that make a name a secret's: the conventions of
 * cloud SDKs, model providers, CI systems and Hugging Face (HF_TOKEN,
 * ANTHROPIC_API_KEY, AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, PGPASSWORD...). */
static const char *const secret_words[] = {
        "TOKEN",      "SECRET",  "PASSWORD", "PASSWD",     "PASSPHRASE",
        "CREDENTIAL", "API_KEY", "APIKEY",   "ACCESS_KEY", "PRIVATE_KEY",
};

/* The daemon's own process context: meaningless or a way out inside a
 * container (the principal is another user with HOME=/tmp; its hostname is
 * its name; systemd's and ssh's sockets are the host's). */
static const char *const context_names[] = {
        "HOME",
        "HOSTNAME",
        "PWD",
        "OLDPWD",
        "SHLVL",
        "_",
        "NOTIFY_SOCKET",
        "LISTEN_PID",
        "LISTEN_FDS",
        "LISTEN_FDNAMES",
        "WATCHDOG_PID",
        "WATCHDOG_USEC",
        "INVOCATION_ID",
        "JOURNAL_STREAM",
        "MANAGERPID",
        "SYSTEMD_EXEC_PID",
        "XDG_RUNTIME_DIR",
        "DBUS_SESSION_BUS_ADDRESS",
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
};

static bool contains_word(const char *name, size_t len, const char *word)
{
        size_t wl = strlen(word);

        for (size_t i = 0; i + wl <= len; i++)
                if (strncasecmp(name + i, word, wl) == 0)
                        return true;
        return false;
}

enum env_origin_class env_origin_classify(const char *name, size_t len)
{
        if (len >= 9 && strncmp(name, "OPENENVD_", 9) == 0)
                return ENV_ORIGIN_SECRET;
        for (size_t i = 0; i < ELEMENTSOF(secret_words); i++)
                if (contains_word(name, len, secret_words[i]))
                        return ENV_ORIGIN_SECRET;
        /* SSH_KEY, SIGNING_KEY, KEY: a key by itself. */
        if ((len == 3 && strncasecmp(name, "KEY", 3) == 0) ||
            (len > 4 && strncasecmp(name + len - 4, "_KEY", 4) == 0))
                return ENV_ORIGIN_SECRET;
        for (size_t i = 0; i < ELEMENTSOF(context_names); i++)
                if (strlen(context_names[i]) == len && strncmp(name, context_names[i], len) == 0)
                        return ENV_ORIGIN_CONTEXT;
        return ENV_ORIGIN_PASS;
}

static bool env_has(char *const *v, const char *name, size_t len)
{
        for (; v && *v; v++)
                if (strncmp(*v, name, len) == 0 && (*v)[len] == '=')
                        return true;
        return false;
}

void env_origin_init(struct env_origin *o, char *const *envp, const char *workdir)
{
        *o = (struct env_origin){
                .workdir = workdir ? xstrdup(workdir) : NULL,
                .vars = xcalloc(1, sizeof(char *)),
                .withheld = xcalloc(1, sizeof(char *)),
        };
        for (char *const *e = envp; e && *e; e++) {
                const char *eq = strchr(*e, '=');
                size_t len = eq ? (size_t) (eq - *e) : strlen(*e);

                /* Not KEY=VALUE, or an empty name: nothing anyone set on purpose. */
                if (!eq || len == 0)
                        continue;
                switch (env_origin_classify(*e, len)) {
                case ENV_ORIGIN_PASS:
                        /* Of duplicates, the first is what getenv() sees. */
                        if (!env_has(o->vars, *e, len))
                                strv_push(&o->vars, xstrdup(*e));
                        break;
                case ENV_ORIGIN_SECRET:
                        strv_push(&o->withheld, xstrndup(*e, len));
                        break;
                case ENV_ORIGIN_CONTEXT:
                        break;
                }
        }
}

void env_origin_done(struct env_origin *o)
{
        o->workdir = mfree(o->workdir);
        o->vars = strv_free(o->vars);
        o->withheld = strv_free(o->withheld);
}
