/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The relay's own answers: a status line with its reason phrase, the body
 * the policy set, and the one error shape every answer of openenvd's own
 * takes, {"error":{"code","message"}}, with each code's words: a client reads
 * why in words, never a bare code (docs/DAEMON.md, "Control API").
 */
#include "base/json-writer.h"
#include "base/macro.h"
#include "base/util.h"
#include "relay/http-conn.h"

static const char *status_reason(unsigned status)
{
        switch (status) {
        case 101:
                return "Switching Protocols";
        case 200:
                return "OK";
        case 400:
                return "Bad Request";
        case 401:
                return "Unauthorized";
        case 403:
                return "Forbidden";
        case 404:
                return "Not Found";
        case 405:
                return "Method Not Allowed";
        case 408:
                return "Request Timeout";
        case 409:
                return "Conflict";
        case 411:
                return "Length Required";
        case 413:
                return "Content Too Large";
        case 429:
                return "Too Many Requests";
        case 431:
                return "Request Header Fields Too Large";
        case 500:
                return "Internal Server Error";
        case 502:
                return "Bad Gateway";
        case 503:
                return "Service Unavailable";
        default:
                return "Status";
        }
}

void http_exchange_respond(struct http_exchange *x, unsigned status, const char *json)
{
        x->status = status;
        x->content_type = NULL;
        strbuf_reset(&x->body);
        strbuf_adds(&x->body, json);
}

void http_exchange_respond_body(struct http_exchange *x, unsigned status, const char *content_type,
                                const char *body, size_t len)
{
        x->status = status;
        x->content_type = content_type;
        strbuf_reset(&x->body);
        strbuf_add(&x->body, body, len);
}

/* The answer as it goes to the client. */
void http_answer_append(struct strbuf *out, const struct http_exchange *x, bool close)
{
        strbuf_addf(out, "HTTP/1.1 %u %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n", x->status,
                    status_reason(x->status),
                    x->content_type ? x->content_type : "application/json", x->body.len);
        strbuf_add(out, x->headers.buf, x->headers.len);
        if (close)
                strbuf_adds(out, "Connection: close\r\n");
        strbuf_adds(out, "\r\n");
        if (!x->req_is_head)
                strbuf_add(out, x->body.buf, x->body.len);
}

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
        struct jwriter w;

        x->status = status;
        x->content_type = NULL;
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

/*
 * Whether a local answer ends its connection whatever the client asked for.
 * A request refused before its client proved who it is, or a malformed one,
 * closes: its body is never read (at most lingered over), and a client that
 * wants another try connects again. An authenticated client keeps its
 * connection through the answers a correct request can get (404, 409, 5xx).
 */
bool http_answer_closes(unsigned status, bool authenticated)
{
        if (status < 400)
                return false;
        if (!authenticated)
                return true;
        switch (status) {
        case 400:
        case 401:
        case 403:
        case 405:
        case 408:
        case 411:
        case 413:
        case 431:
                return true;
        default:
                return false;
        }
}
