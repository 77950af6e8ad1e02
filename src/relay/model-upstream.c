/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/model-upstream.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>

#include "base/parse-util.h"
#include "base/util.h"
#include "relay/tls-stream.h"

#define DNS_NAME_MAX  253
#define DNS_LABEL_MAX 63

/* RFC 1123 host name: letters, digits, '-' inside labels of 1..63 bytes. */
static bool is_dns_name(const char *s)
{
        size_t label = 0, n = strlen(s);

        if (n == 0 || n > DNS_NAME_MAX)
                return false;
        for (size_t i = 0; i <= n; i++) {
                char c = s[i];
                if (c == '.' || c == '\0') {
                        if (label == 0 || s[i - 1] == '-')
                                return false;
                        label = 0;
                        continue;
                }
                if (!(isalnum((unsigned char) c) || (c == '-' && label > 0)))
                        return false;
                if (++label > DNS_LABEL_MAX)
                        return false;
        }
        return true;
}

static void add_literal(struct model_upstream *u, int family, const void *addr)
{
        struct sockaddr_storage ss = { 0 };
        socklen_t len;

        if (family == AF_INET) {
                struct sockaddr_in *in = (struct sockaddr_in *) &ss;
                in->sin_family = AF_INET;
                in->sin_port = htons(u->port);
                memcpy(&in->sin_addr, addr, sizeof(in->sin_addr));
                len = sizeof(*in);
        } else {
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &ss;
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons(u->port);
                memcpy(&in6->sin6_addr, addr, sizeof(in6->sin6_addr));
                len = sizeof(*in6);
        }
        (void) model_upstream_add_address(u, (struct sockaddr *) &ss, len);
}

/* Splits "host[:port]" or "[v6][:port]" into u->host and u->port. */
static int parse_authority(struct model_upstream *u, const char *auth, bool need_port,
                           struct error_detail *ret_err)
{
        const char *port = NULL;
        unsigned char addr[sizeof(struct in6_addr)];
        unsigned p;
        bool v6 = false;

        if (auth[0] == '[') {
                const char *close = strchr(auth, ']');
                if (!close)
                        return error_detail_set(ret_err, -EINVAL, "'%s': unterminated '['", auth);
                u->host = xstrndup(auth + 1, (size_t) (close - auth - 1));
                if (close[1] == ':')
                        port = close + 2;
                else if (close[1] != '\0')
                        return error_detail_set(ret_err, -EINVAL, "'%s': unexpected text after ']'",
                                                auth);
                if (inet_pton(AF_INET6, u->host, addr) != 1)
                        return error_detail_set(ret_err, -EINVAL, "'%s' is not an IPv6 address",
                                                u->host);
                v6 = true;
        } else {
                const char *colon = strchr(auth, ':');
                u->host = colon ? xstrndup(auth, (size_t) (colon - auth)) : xstrdup(auth);
                port = colon ? colon + 1 : NULL;
        }
        if (port) {
                if (parse_uint(port, 1, 65535, &p) < 0)
                        return error_detail_set(ret_err, -EINVAL, "'%s' is not a port (1-65535)",
                                                port);
                u->port = (uint16_t) p;
        } else if (need_port)
                return error_detail_set(ret_err, -EINVAL,
                                        "'%s': a port is needed (or write http:// or https://)",
                                        auth);
        if (v6)
                add_literal(u, AF_INET6, addr);
        else if (inet_pton(AF_INET, u->host, addr) == 1)
                add_literal(u, AF_INET, addr);
        else if (is_dns_name(u->host)) {
                /* SNI and certificate names compare case-insensitively;
                 * send them in the canonical lower case. */
                for (char *c = u->host; *c; c++)
                        *c = (char) tolower((unsigned char) *c);
        } else
                return error_detail_set(ret_err, -EINVAL, "'%s' is not a host name or address",
                                        u->host);
        return 0;
}

int model_upstream_new(const char *url, const char *ca_file, struct model_upstream **ret,
                       struct error_detail *ret_err)
{
        cleanup(model_upstream_freep) struct model_upstream *u = xcalloc(1, sizeof(*u));
        cleanup_free char *auth = NULL;
        cleanup_error_detail struct error_detail tls_error = {};
        const char *rest;
        bool legacy = false;
        size_t n;
        int r;

        if ((rest = startswith(url, "https://"))) {
                u->tls = true;
                u->port = 443;
        } else if ((rest = startswith(url, "http://")))
                u->port = 80;
        else if (strstr(url, "://"))
                return error_detail_set(ret_err, -EINVAL,
                                        "'%.*s': the scheme must be http:// or https://",
                                        (int) (strstr(url, "://") - url), url);
        else {
                rest = url; /* a.b.c.d:port, as before URLs */
                legacy = true;
        }
        /* Errors quote the host part only: a pasted URL may carry a key
         * in its query, and errors are logged. */
        n = strcspn(rest, "/?#");
        if (rest[n] != '\0' && !streq(rest + n, "/"))
                return error_detail_set(ret_err, -EINVAL,
                                        "a path, query or fragment is not supported (the proxy "
                                        "forwards the harness's request paths)");
        auth = xstrndup(rest, n);
        /* Never a credential on a command line: --model-key-file. */
        if (strchr(auth, '@'))
                return error_detail_set(ret_err, -EINVAL,
                                        "credentials in the URL are not supported");
        if (auth[0] == '\0')
                return error_detail_set(ret_err, -EINVAL, "no host");
        r = parse_authority(u, auth, legacy, ret_err);
        if (r < 0)
                return r;
        if (legacy && u->proxy.n_upstream == 0)
                return error_detail_set(ret_err, -EINVAL,
                                        "'%s': without a scheme, only an IPv4 address:port", auth);
        if (u->port == (u->tls ? 443 : 80))
                u->authority = strchr(u->host, ':') ? xasprintf("[%s]", u->host) : xstrdup(u->host);
        else
                u->authority = strchr(u->host, ':') ? xasprintf("[%s]:%u", u->host, u->port)
                                                    : xasprintf("%s:%u", u->host, u->port);
        if (ca_file && !u->tls)
                return error_detail_set(ret_err, -EINVAL,
                                        "a CA file (--model-ca-file) needs an https:// URL");
        if (u->tls) {
                /* A pinned CA's failure names the file. */
                r = tls_client_new(ca_file, &u->proxy.tls, ca_file ? &tls_error : ret_err);
                if (r < 0 && ca_file)
                        return error_detail_set(ret_err, r, "%s: %s", ca_file,
                                                error_detail_text(&tls_error));
                if (r < 0)
                        return r;
                u->proxy.tls_host = u->host;
        }
        *ret = TAKE_PTR(u);
        return 0;
}

struct model_upstream *model_upstream_free(struct model_upstream *u)
{
        if (!u)
                return NULL;
        tls_client_free(u->proxy.tls);
        free(u->host);
        free(u->authority);
        return mfree(u);
}

int model_upstream_add_address(struct model_upstream *u, const struct sockaddr *sa, socklen_t len)
{
        return http_proxy_upstream_add(&u->proxy, sa, len);
}

int model_upstream_resolve(struct model_upstream *u, struct error_detail *ret_err)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_protocol = IPPROTO_TCP };
        struct addrinfo *res = NULL;
        char port[8];
        int r;

        if (u->proxy.n_upstream > 0)
                return 0;
        (void) snprintf(port, sizeof(port), "%u", u->port);
        r = getaddrinfo(u->host, port, &hints, &res);
        if (r != 0)
                return error_detail_set(ret_err, -EADDRNOTAVAIL, "cannot resolve '%s': %s", u->host,
                                        gai_strerror(r));
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next)
                if (model_upstream_add_address(u, ai->ai_addr, ai->ai_addrlen) == -E2BIG)
                        break;
        freeaddrinfo(res);
        if (u->proxy.n_upstream == 0)
                return error_detail_set(ret_err, -EADDRNOTAVAIL, "'%s' has no address", u->host);
        return 0;
}
