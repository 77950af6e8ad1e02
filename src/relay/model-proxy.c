/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/model-proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <http_parser.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/string-table.h"
#include "base/util.h"
#include "relay/http-proxy.h"
#include "relay/model-upstream.h"
#include "relay/model-usage.h"

#define MODEL_KEY_MAX_BYTES 4096
#define DEFAULT_PLACEHOLDER "openenvd-placeholder"

/*
 * What a key may buy: the providers' model endpoints, nothing else
 * (docs/RELAY.md, "Allowlist", says why each is in or out). Targets are
 * compared byte for byte with the request target, query included, so no
 * spelling (percent-encoding, dot segments, doubled or trailing slashes,
 * case, extra parameters) reaches anything but these.
 */
static const char *const anthropic_targets[] = {
        "/v1/messages",
        "/v1/messages?beta=true", /* the SDK's beta client: same endpoint, beta headers */
        "/v1/messages/count_tokens",
        "/v1/messages/count_tokens?beta=true",
        NULL,
};
static const char *const openai_targets[] = {
        "/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/embeddings", NULL,
};

struct model_provider {
        const char *name;
        const char *key_header; /* the real credential: "<key_header>: <key_prefix><key>" */
        const char *key_prefix;
        const char *const *targets; /* POST only */
};

static const struct model_provider providers[] = {
        { "anthropic", "x-api-key", "", anthropic_targets },
        { "openai", "Authorization", "Bearer ", openai_targets },
};

static const char *const model_budget_dim_table[MODEL_BUDGET_DIM_MAX] = { "requests", "bytes",
                                                                          "tokens" };

/*
 * The request headers a provider gets from the harness: what the providers'
 * SDKs send, nothing else (plus the body's framing, which the engine always
 * keeps). Credentials, Host and Accept-Encoding are the proxy's own (added
 * below); anything else could steer the key: OpenAI's organization and
 * project headers bill another project the key can reach, Cookie or
 * X-Forwarded-* speak for someone else, Connection could name the body's
 * framing or the key as hop-by-hop for a proxy on the way, and an unknown
 * header is a header nobody vetted.
 */
static const char *const keep_model[] = {
        "accept",      "anthropic-beta", "anthropic-version", "content-type", "idempotency-key",
        "openai-beta", "user-agent",     "x-stainless-*",     NULL,
};

struct model_proxy {
        struct http_proxy *proxy;              /* owned */
        const struct model_provider *provider; /* static */
        const struct model_upstream *upstream; /* borrowed */
        char *key;                             /* owned, secret */
        char *placeholder;                     /* owned */
        struct model_budget budget;
        uint64_t forwarded;
        uint64_t refused_credentials, refused_allowlist, refused_budget;
        uint64_t tokens_in, tokens_out;
        uint64_t responses_without_usage;
};

/* One forwarded exchange: its usage as the response streams past. */
struct model_exchange {
        struct model_usage usage;
        bool response;    /* the response head arrived */
        bool success;     /* ... with a 2xx status */
        uint64_t in, out; /* what is already added to the totals */
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(model_budget_dim, enum model_budget_dim);

static const struct model_provider *provider_find(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(providers); i++)
                if (streq(providers[i].name, name))
                        return &providers[i];
        return NULL;
}

bool model_provider_known(const char *name)
{
        return provider_find(name) != NULL;
}

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

static bool endpoint_allowed(const struct model_proxy *m, const struct http_head *h)
{
        /* An upgrade would turn the connection into an unmetered tunnel. */
        if (h->method != HTTP_POST || h->upgrade)
                return false;
        for (const char *const *t = m->provider->targets; *t; t++)
                if (strlen(*t) == h->target_len && memcmp(*t, h->target, h->target_len) == 0)
                        return true;
        return false;
}

static uint64_t bytes_used(const struct model_proxy *m)
{
        struct http_proxy_stats ps;

        http_proxy_stats(m->proxy, &ps);
        return ps.bytes_up + ps.bytes_down;
}

static unsigned budget_exhausted(const struct model_proxy *m)
{
        const struct model_budget *b = &m->budget;
        unsigned r = 0;

        if (b->requests && m->forwarded >= b->requests)
                r |= MODEL_BUDGET_BIT(MODEL_BUDGET_REQUESTS);
        if (b->bytes && bytes_used(m) >= b->bytes)
                r |= MODEL_BUDGET_BIT(MODEL_BUDGET_BYTES);
        if (b->tokens && m->tokens_in + m->tokens_out >= b->tokens)
                r |= MODEL_BUDGET_BIT(MODEL_BUDGET_TOKENS);
        return r;
}

/* The request cannot be paid for: a budget is used up, or its declared body
 * alone would go past the byte budget (a chunked body is counted as it goes). */
static bool budget_refuses(const struct model_proxy *m, const struct http_head *h)
{
        if (budget_exhausted(m))
                return true;
        /* The first test keeps the sum from wrapping (a Content-Length is
         * any 64-bit number; the budget is at most 2^50). */
        return m->budget.bytes && h->body == HTTP_BODY_LENGTH &&
               (h->content_length >= m->budget.bytes ||
                bytes_used(m) + h->head_len + h->content_length > m->budget.bytes);
}

static int mp_on_request(void *userdata, struct http_exchange *x)
{
        struct model_proxy *m = userdata;
        char *id = NULL;

        if (!credential_ok(m, x->req)) {
                m->refused_credentials++;
                http_exchange_error(x, 401, "not_permitted");
                return HTTP_ACTION_RESPOND;
        }
        if (!endpoint_allowed(m, x->req)) {
                m->refused_allowlist++;
                http_exchange_error(x, 403, "not_permitted");
                return HTTP_ACTION_RESPOND;
        }
        if (budget_refuses(m, x->req)) {
                m->refused_budget++;
                http_exchange_error(x, 429, "budget_exhausted");
                return HTTP_ACTION_RESPOND;
        }
        if (random_hex(16, &id) < 0) {
                http_exchange_error(x, 500, "infrastructure_error");
                return HTTP_ACTION_RESPOND;
        }
        x->keep = keep_model;
        strbuf_addf(&x->add_request, "Host: %s\r\nAccept-Encoding: identity\r\n",
                    m->upstream->authority);
        strbuf_addf(&x->add_request, "%s: %s%s\r\n", m->provider->key_header,
                    m->provider->key_prefix, m->key);
        strbuf_addf(&x->add_response, "x-openenvd-request-id: %s\r\n", id);
        free(id);
        x->data = xcalloc(1, sizeof(struct model_exchange));
        m->forwarded++;
        return HTTP_ACTION_FORWARD;
}

static bool is_event_stream(const struct http_head *h)
{
        static const char sse[] = "text/event-stream";

        for (size_t i = 0; i < h->n_headers; i++) {
                const struct http_header *hd = &h->headers[i];
                if (hd->name_len == 12 && strncasecmp(hd->name, "content-type", 12) == 0)
                        return hd->value_len >= sizeof(sse) - 1 &&
                               strncasecmp(hd->value, sse, sizeof(sse) - 1) == 0;
        }
        return false;
}

static void mp_on_response_head(void *userdata, struct http_exchange *x, const struct http_head *h)
{
        struct model_exchange *e = x->data;

        (void) userdata;
        if (!e)
                return;
        e->response = true;
        e->success = h->status / 100 == 2;
        model_usage_init(&e->usage, is_event_stream(h));
}

static void mp_on_response_data(void *userdata, struct http_exchange *x, const char *data,
                                size_t len)
{
        struct model_proxy *m = userdata;
        struct model_exchange *e = x->data;
        uint64_t in, out;

        if (!e || !e->response)
                return;
        model_usage_feed(&e->usage, data, len);
        /* Counted as reported, not at the end: a long stream weighs on the
         * budget while it runs. Reports are cumulative, totals only grow. */
        model_usage_tokens(&e->usage, &in, &out);
        if (in > e->in) {
                m->tokens_in += in - e->in;
                e->in = in;
        }
        if (out > e->out) {
                m->tokens_out += out - e->out;
                e->out = out;
        }
}

static void mp_on_exchange_done(void *userdata, struct http_exchange *x)
{
        struct model_proxy *m = userdata;
        struct model_exchange *e = x->data;

        if (e->success && !e->usage.seen)
                m->responses_without_usage++;
        free(e);
}

static const struct http_proxy_ops model_proxy_ops = {
        .on_request = mp_on_request,
        .on_response_head = mp_on_response_head,
        .on_response_data = mp_on_response_data,
        .on_exchange_done = mp_on_exchange_done,
};

int model_proxy_new(struct loop *l, int listen_fd, const struct model_proxy_config *cfg,
                    struct model_proxy **ret)
{
        cleanup(model_proxy_freep) struct model_proxy *m = NULL;
        struct http_proxy_config pc;
        size_t len;
        int r;

        m = xcalloc(1, sizeof(*m));
        m->provider = provider_find(cfg->provider ?: "anthropic");
        if (!m->provider) {
                safe_close(listen_fd);
                return -EINVAL;
        }
        if (cfg->upstream->proxy.n_upstream == 0) {
                safe_close(listen_fd);
                return -EDESTADDRREQ;
        }
        m->upstream = cfg->upstream;
        m->budget = cfg->budget;
        m->placeholder = xstrdup(cfg->placeholder ?: DEFAULT_PLACEHOLDER);
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
        pc = cfg->upstream->proxy;
        pc.idle_timeout = cfg->idle_timeout;
        pc.max_connections = MODEL_PROXY_MAX_CONNECTIONS;
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
        /* First: closing connections ends their exchanges (mp_on_exchange_done). */
        http_proxy_free(m->proxy);
        if (m->key) {
                explicit_bzero(m->key, strlen(m->key));
                free(m->key);
        }
        free(m->placeholder);
        return mfree(m);
}

void model_proxy_stats(const struct model_proxy *m, struct model_proxy_stats *ret)
{
        struct http_proxy_stats ps;

        http_proxy_stats(m->proxy, &ps);
        *ret = (struct model_proxy_stats){
                .provider = m->provider->name,
                .forwarded = m->forwarded,
                .refused_credentials = m->refused_credentials,
                .refused_allowlist = m->refused_allowlist,
                .refused_budget = m->refused_budget,
                .bytes_up = ps.bytes_up,
                .bytes_down = ps.bytes_down,
                .tokens_in = m->tokens_in,
                .tokens_out = m->tokens_out,
                .responses_without_usage = m->responses_without_usage,
                .upstream_failures = ps.upstream_failures,
                .tls_failures = ps.tls_failures,
                .last_tls_failure = ps.last_tls_failure,
                .budget = m->budget,
                .budget_exhausted = budget_exhausted(m),
        };
}

static json_t *json_count(uint64_t v)
{
        return json_integer((json_int_t) MIN(v, (uint64_t) INT64_MAX));
}

static json_t *json_limit(uint64_t v)
{
        return v ? json_count(v) : json_null();
}

json_t *model_proxy_stats_to_json(const struct model_proxy_stats *s)
{
        json_t *exhausted = json_array();

        for (unsigned d = 0; d < MODEL_BUDGET_DIM_MAX; d++)
                if (s->budget_exhausted & MODEL_BUDGET_BIT(d))
                        json_array_append_new(exhausted,
                                              json_string(model_budget_dim_to_string(d)));
        return json_pack(
                "{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
                "s:{s:o, s:o, s:o}, s:o}",
                "provider", s->provider, "forwarded", json_count(s->forwarded),
                "refused_credentials", json_count(s->refused_credentials), "refused_allowlist",
                json_count(s->refused_allowlist), "refused_budget", json_count(s->refused_budget),
                "bytes_up", json_count(s->bytes_up), "bytes_down", json_count(s->bytes_down),
                "tokens_in", json_count(s->tokens_in), "tokens_out", json_count(s->tokens_out),
                "responses_without_usage", json_count(s->responses_without_usage),
                "upstream_failures", json_count(s->upstream_failures), "tls_failures",
                json_count(s->tls_failures), "last_tls_failure",
                s->last_tls_failure ? json_string(s->last_tls_failure) : json_null(), "budget",
                "requests", json_limit(s->budget.requests), "bytes", json_limit(s->budget.bytes),
                "tokens", json_limit(s->budget.tokens), "budget_exhausted", exhausted);
}
