/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/credentials.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "relay/ws-frame.h"

#define TOKEN_MAX_BYTES 4096

static int load_one(const char *path, const char *env_name, char **ret)
{
        const char *env;

        if (path)
                return read_secret_file(path, TOKEN_MAX_BYTES, ret);
        env = getenv(env_name);
        *ret = env && *env ? xstrdup(env) : NULL;
        return 0;
}

/* "--token-file PATH: why" for a file that could not serve as a token;
 * returns r. */
static int file_error(struct error_detail *e, const char *option, const char *path, int r)
{
        if (r == -EINVAL)
                return error_detail_set(e, r,
                                        "%s %s: empty, or holds a NUL byte (a token is one line)",
                                        option, path);
        if (r == -EFBIG)
                return error_detail_set(e, r, "%s %s: over %d bytes", option, path,
                                        TOKEN_MAX_BYTES);
        return error_detail_set(e, r, "%s %s: %s", option, path, strerror(-r));
}

int credentials_load(struct credentials *c, const struct credential_files *files,
                     bool *ret_generated, struct error_detail *ret_err)
{
        const struct credential_files none = {};
        const char *token_file, *agent_token_file;
        int r;

        files = files ?: &none;
        token_file = files->orchestrator;
        agent_token_file = files->agent;
        *c = (struct credentials){};
        *ret_generated = false;
        r = load_one(token_file, "OPENENVD_TOKEN", &c->orchestrator);
        if (r < 0)
                (void) file_error(ret_err, "--token-file", token_file, r);
        if (r >= 0 && !c->orchestrator) {
                r = random_hex(32, &c->orchestrator);
                *ret_generated = r >= 0;
                if (r < 0)
                        (void) error_detail_set(ret_err, r, "a random token: %s", strerror(-r));
        }
        if (r >= 0) {
                r = load_one(agent_token_file, "OPENENVD_AGENT_TOKEN", &c->agent);
                if (r < 0)
                        (void) file_error(ret_err, "--agent-token-file", agent_token_file, r);
        }
        /* The agent would hold the orchestrator's rights. */
        if (r >= 0 && c->agent && streq(c->agent, c->orchestrator))
                r = error_detail_set(ret_err, -EINVAL,
                                     "the agent token is the orchestrator's: give the agent a "
                                     "token of its own");
        if (r >= 0) {
                r = load_one(files->metrics, "OPENENVD_METRICS_TOKEN", &c->metrics);
                if (r < 0)
                        (void) file_error(ret_err, "--metrics-token-file", files->metrics, r);
        }
        /* One secret, two principals: the wider one wins. */
        if (r >= 0 && c->metrics &&
            (streq(c->metrics, c->orchestrator) || (c->agent && streq(c->metrics, c->agent))))
                r = error_detail_set(ret_err, -EINVAL,
                                     "the metrics token is another principal's: give the scraper "
                                     "a token of its own");
        if (r < 0)
                credentials_done(c);
        return r;
}

void credentials_done(struct credentials *c)
{
        c->orchestrator = secret_free(c->orchestrator);
        c->agent = secret_free(c->agent);
        c->metrics = secret_free(c->metrics);
}

static enum principal principal_of(const struct credentials *c, const char *secret, size_t len)
{
        /* Both comparisons always run: timing tells nothing about which
         * principal (or none) a guess came close to. */
        bool orch = memeq_consttime(secret, len, c->orchestrator, strlen(c->orchestrator));
        bool agent = c->agent && memeq_consttime(secret, len, c->agent, strlen(c->agent));
        bool metrics = c->metrics && memeq_consttime(secret, len, c->metrics, strlen(c->metrics));

        return orch      ? PRINCIPAL_ORCHESTRATOR
               : agent   ? PRINCIPAL_AGENT
               : metrics ? PRINCIPAL_METRICS
                         : PRINCIPAL_NONE;
}

/* The password of "Basic base64(user:password)" into out; -EINVAL if it is
 * not well-formed. */
static int basic_password(const char *b64, size_t len, char *out, size_t out_size, size_t *ret_len)
{
        unsigned char dec[TOKEN_MAX_BYTES + 512];
        size_t pad = 0;
        const char *colon;
        int n;

        if (len == 0 || len % 4 != 0 || len / 4 * 3 > sizeof(dec))
                return -EINVAL;
        while (pad < 2 && b64[len - 1 - pad] == '=')
                pad++;
        n = EVP_DecodeBlock(dec, (const unsigned char *) b64, (int) len);
        if (n < (int) pad)
                return -EINVAL;
        n -= (int) pad;
        colon = memchr(dec, ':', (size_t) n);
        if (!colon || memchr(dec, 0, (size_t) n))
                return -EINVAL;
        *ret_len = (size_t) n - (size_t) ((const unsigned char *) colon + 1 - dec);
        if (*ret_len >= out_size) {
                explicit_bzero(dec, sizeof(dec));
                return -EINVAL;
        }
        memcpy(out, colon + 1, *ret_len);
        explicit_bzero(dec, sizeof(dec));
        return 0;
}

static enum principal header_principal(const struct credentials *c, const struct http_header *hd)
{
        char pw[TOKEN_MAX_BYTES + 1];
        size_t n;
        enum principal p;

        if (hd->value_len > 7 && strncasecmp(hd->value, "Bearer ", 7) == 0)
                return principal_of(c, hd->value + 7, hd->value_len - 7);
        if (hd->value_len > 6 && strncasecmp(hd->value, "Basic ", 6) == 0 &&
            basic_password(hd->value + 6, hd->value_len - 6, pw, sizeof(pw), &n) >= 0) {
                p = principal_of(c, pw, n);
                explicit_bzero(pw, sizeof(pw));
                return p;
        }
        return PRINCIPAL_NONE;
}

enum principal credentials_check(const struct credentials *c, const struct http_head *h,
                                 const char *query_token, unsigned n_query_tokens)
{
        enum principal from_header = PRINCIPAL_NONE, from_query = PRINCIPAL_NONE;
        const struct http_header *hd;
        size_t from = 0;
        unsigned n = 0;

        while ((hd = http_head_next(h, "authorization", &from))) {
                if (++n > 1)
                        return PRINCIPAL_NONE; /* ambiguous */
                from_header = header_principal(c, hd);
                if (from_header == PRINCIPAL_NONE)
                        return PRINCIPAL_NONE; /* a wrong credential is never ignored */
        }
        /* A query token only on a real WebSocket handshake: browsers and
         * WebSocket clients cannot set headers there. Anywhere else a token
         * in the URL ends up in logs and histories, so it proves nothing,
         * whatever Upgrade header (h2c, anything) comes with it. */
        if (n_query_tokens > 0 && ws_is_handshake(h)) {
                if (n_query_tokens > 1 || !query_token)
                        return PRINCIPAL_NONE;
                from_query = principal_of(c, query_token, strlen(query_token));
                if (from_query == PRINCIPAL_NONE || (n > 0 && from_query != from_header))
                        return PRINCIPAL_NONE;
                return from_query;
        }
        return from_header;
}
