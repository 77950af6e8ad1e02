/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/model-proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "relay/http-proxy.h"

#define MODEL_KEY_MAX_BYTES 4096
#define DEFAULT_PLACEHOLDER "openenvd-placeholder"

struct model_proxy {
        struct http_proxy *proxy; /* owned */
        char *key;                /* owned, secret */
        char *placeholder;        /* owned */
        char *host;               /* owned: upstream authority for Host */
        bool openai;
        unsigned long forwarded;
};

static const char *const strip_model[] = { "authorization", "x-api-key", "host", "accept-encoding",
                                           NULL };

static bool credential_ok(const struct model_proxy *m, const struct http_head *h)
{
        size_t pl = strlen(m->placeholder);
        unsigned seen = 0, good = 0;

        /* Every credential header must be the placeholder, and there must be
         * one: the real key (or anything else) is refused, never forwarded. */
        for (size_t i = 0; i < h->n_headers; i++) {
                const struct http_header *hd = &h->headers[i];
                if (hd->name_len == 9 && strncasecmp(hd->name, "x-api-key", 9) == 0) {
                        seen++;
                        good += memeq_consttime(hd->value, hd->value_len, m->placeholder, pl);
                } else if (hd->name_len == 13 && strncasecmp(hd->name, "authorization", 13) == 0) {
                        seen++;
                        good += hd->value_len > 7 && strncasecmp(hd->value, "Bearer ", 7) == 0 &&
                                memeq_consttime(hd->value + 7, hd->value_len - 7, m->placeholder,
                                                pl);
                }
        }
        return seen > 0 && good == seen;
}

static int mp_on_request(void *userdata, struct http_exchange *x)
{
        struct model_proxy *m = userdata;
        char *id = NULL;

        if (!credential_ok(m, x->req)) {
                http_exchange_error(x, 401, "not_permitted");
                return HTTP_ACTION_RESPOND;
        }
        if (random_hex(16, &id) < 0) {
                http_exchange_error(x, 500, "infrastructure_error");
                return HTTP_ACTION_RESPOND;
        }
        x->strip = strip_model;
        strbuf_addf(&x->add_request, "Host: %s\r\nAccept-Encoding: identity\r\n", m->host);
        if (m->openai)
                strbuf_addf(&x->add_request, "Authorization: Bearer %s\r\n", m->key);
        else
                strbuf_addf(&x->add_request, "x-api-key: %s\r\n", m->key);
        strbuf_addf(&x->add_response, "x-openenvd-request-id: %s\r\n", id);
        free(id);
        m->forwarded++;
        return HTTP_ACTION_FORWARD;
}

static const struct http_proxy_ops model_proxy_ops = {
        .on_request = mp_on_request,
};

int model_proxy_new(struct loop *l, int listen_fd, const struct model_proxy_config *cfg,
                    struct model_proxy **ret)
{
        cleanup(model_proxy_freep) struct model_proxy *m = NULL;
        struct http_proxy_config pc = { .idle_timeout = cfg->idle_timeout };
        size_t len;
        int r;

        m = xcalloc(1, sizeof(*m));
        if (!cfg->provider || streq(cfg->provider, "anthropic"))
                m->openai = false;
        else if (streq(cfg->provider, "openai"))
                m->openai = true;
        else {
                safe_close(listen_fd);
                return -EINVAL;
        }
        r = http_proxy_upstream_tcp(&pc, cfg->upstream);
        if (r < 0) {
                safe_close(listen_fd);
                return r;
        }
        m->host = xstrdup(cfg->upstream);
        m->placeholder = xstrdup(cfg->placeholder ? cfg->placeholder : DEFAULT_PLACEHOLDER);
        r = read_full_file_at(AT_FDCWD, cfg->key_file, MODEL_KEY_MAX_BYTES, &m->key, &len);
        if (r < 0) {
                safe_close(listen_fd);
                return r;
        }
        /* Read once: the file must not outlive the daemon's start. */
        (void) unlink(cfg->key_file);
        while (len > 0 && (m->key[len - 1] == '\n' || m->key[len - 1] == '\r'))
                m->key[--len] = 0;
        /* A key with CR/LF/NUL would inject header lines. */
        if (len == 0 || strlen(m->key) != len || strpbrk(m->key, "\r\n") ||
            streq(m->key, m->placeholder)) {
                safe_close(listen_fd);
                return -EINVAL;
        }
        r = http_proxy_new(l, listen_fd, &pc, &model_proxy_ops, m, &m->proxy);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

struct model_proxy *model_proxy_free(struct model_proxy *m)
{
        if (!m)
                return NULL;
        http_proxy_free(m->proxy);
        if (m->key) {
                explicit_bzero(m->key, strlen(m->key));
                free(m->key);
        }
        free(m->placeholder);
        free(m->host);
        return mfree(m);
}

unsigned long model_proxy_forwarded(const struct model_proxy *m)
{
        return m->forwarded;
}
