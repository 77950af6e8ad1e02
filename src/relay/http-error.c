/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one error shape every answer of openenvd's own takes,
 * {"error":{"code","message"}}, and each code's words: a client reads why in
 * words, never a bare code (docs/DAEMON.md, "Control API").
 */
#include "base/json-writer.h"
#include "base/macro.h"
#include "base/util.h"
#include "relay/http-conn.h"

const char *http_error_message(const char *code, unsigned status)
{
        static const struct {
                const char *code, *message;
        } words[] = {
                { "bad_request", "the request is malformed" },
                { "body_too_large", "the request body is over the limit" },
                { "budget_exhausted", "the episode's model budget is spent" },
                { "conflict", "the unit's phase does not allow this now" },
                { "episode_unavailable", "no episode is live" },
                { "infrastructure_error", "the daemon failed; its log says why" },
                { "length_required", "a request body needs Content-Length or chunked framing" },
                { "method_not_allowed", "this method is not allowed here (Allow says which is)" },
                { "not_found", "no such route or record" },
                { "upstream_tls", "the model provider's TLS certificate was refused" },
                { "upstream_unavailable",
                  "the upstream (the env server, or the model provider) could not be reached or "
                  "broke its response" },
        };

        if (streq(code, "not_permitted"))
                return status == 401 ? "credentials missing or wrong"
                                     : "these credentials may not use this route";
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (streq(code, words[i].code))
                        return words[i].message;
        return "error";
}

void http_exchange_error_message(struct http_exchange *x, unsigned status, const char *code,
                                 const char *message)
{
        x->status = status;
        x->content_type = NULL;
        struct jwriter w;

        strbuf_reset(&x->body);
        jwriter_init(&w, &x->body);
        jwriter_object_begin(&w);
        jwriter_key(&w, "error");
        jwriter_object_begin(&w);
        jwriter_kv_string(&w, "code", code);
        jwriter_kv_string(&w, "message", message ? message : http_error_message(code, status));
        jwriter_object_end(&w);
        jwriter_object_end(&w);
}

void http_exchange_error(struct http_exchange *x, unsigned status, const char *code)
{
        http_exchange_error_message(x, status, code, NULL);
}
