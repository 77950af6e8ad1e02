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
                           char **ret_error)
{
        const char *port = NULL;
        unsigned char addr[sizeof(struct in6_addr)];
        unsigned p;
        bool v6 = false;

        if (auth[0] == '[') {
                const char *close = strchr(auth, ']');
                if (!close) {
                        *ret_error = xasprintf("'%s': unterminated '['", auth);
                        return -EINVAL;
                }
                u->host = xstrndup(auth + 1, (size_t) (close - auth - 1));
                if (close[1] == ':')
                        port = close + 2;
                else if (close[1] != '\0') {
                        *ret_error = xasprintf("'%s': unexpected text after ']'", auth);
                        return -EINVAL;
                }
                if (inet_pton(AF_INET6, u->host, addr) != 1) {
                        *ret_error = xasprintf("'%s' is not an IPv6 address", u->host);
                        return -EINVAL;
                }
                v6 = true;
        } else {
                const char *colon = strchr(auth, ':');
                u->host = colon ? xstrndup(auth, (size_t) (colon - auth)) : xstrdup(auth);
                port = colon ? colon + 1 : NULL;
        }
        if (port) {
                if (parse_uint(port, 1, 65535, &p) < 0) {
                        *ret_error = xasprintf("'%s' is not a port (1-65535)", port);
                        return -EINVAL;
                }
                u->port = (uint16_t) p;
        } else if (need_port) {
                *ret_error =
                        xasprintf("'%s': a port is needed (or write http:// or https://)", auth);
                return -EINVAL;
        }
        if (v6)
                add_literal(u, AF_INET6, addr);
        else if (inet_pton(AF_INET, u->host, addr) == 1)
                add_literal(u, AF_INET, addr);
        else if (is_dns_name(u->host)) {
                /* SNI and certificate names compare case-insensitively;
                 * send them in the canonical lower case. */
                for (char *c = u->host; *c; c++)
                        *c = (char) tolower((unsigned char) *c);
        } else {
                *ret_error = xasprintf("'%s' is not a host name or address", u->host);
                return -EINVAL;
        }
        return 0;
}

int model_upstream_new(const char *url, const char *ca_file, struct model_upstream **ret,
                       char **ret_error)
{
        cleanup(model_upstream_freep) struct model_upstream *u = xcalloc(1, sizeof(*u));
        cleanup_free char *auth = NULL, *tls_error = NULL;
        const char *rest;
        bool legacy = false;
        size_t n;
        int r;

        if ((rest = startswith(url, "https://"))) {
                u->tls = true;
                u->port = 443;
        } else if ((rest = startswith(url, "http://")))
                u->port = 80;
        else if (strstr(url, "://")) {
                *ret_error = xasprintf("'%.*s': the scheme must be http:// or https://",
                                       (int) (strstr(url, "://") - url), url);
                return -EINVAL;
        } else {
                rest = url; /* a.b.c.d:port, as before URLs */
                legacy = true;
        }
        /* Errors quote the host part only: a pasted URL may carry a key
         * in its query, and errors are logged. */
        n = strcspn(rest, "/?#");
        if (rest[n] != '\0' && !streq(rest + n, "/")) {
                *ret_error = xstrdup("a path, query or fragment is not supported (the proxy "
                                     "forwards the harness's request paths)");
                return -EINVAL;
        }
        auth = xstrndup(rest, n);
        if (strchr(auth, '@')) {
                /* Never a credential on a command line: --model-key-file. */
                *ret_error = xstrdup("credentials in the URL are not supported");
                return -EINVAL;
        }
        if (auth[0] == '\0') {
                *ret_error = xstrdup("no host");
                return -EINVAL;
        }
        r = parse_authority(u, auth, legacy, ret_error);
        if (r < 0)
                return r;
        if (legacy && u->proxy.n_upstream == 0) {
                *ret_error = xasprintf("'%s': without a scheme, only an IPv4 address:port", auth);
                return -EINVAL;
        }
        if (u->port == (u->tls ? 443 : 80))
                u->authority = strchr(u->host, ':') ? xasprintf("[%s]", u->host) : xstrdup(u->host);
        else
                u->authority = strchr(u->host, ':') ? xasprintf("[%s]:%u", u->host, u->port)
                                                    : xasprintf("%s:%u", u->host, u->port);
        if (ca_file && !u->tls) {
                *ret_error = xstrdup("a CA file (--model-ca-file) needs an https:// URL");
                return -EINVAL;
        }
        if (u->tls) {
                r = tls_client_new(ca_file, &u->proxy.tls, &tls_error);
                if (r < 0) {
                        *ret_error = ca_file ? xasprintf("%s: %s", ca_file, tls_error)
                                             : TAKE_PTR(tls_error);
                        return r;
                }
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

int model_upstream_resolve(struct model_upstream *u, char **ret_error)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_protocol = IPPROTO_TCP };
        struct addrinfo *res = NULL;
        char port[8];
        int r;

        if (u->proxy.n_upstream > 0)
                return 0;
        (void) snprintf(port, sizeof(port), "%u", u->port);
        r = getaddrinfo(u->host, port, &hints, &res);
        if (r != 0) {
                *ret_error = xasprintf("cannot resolve '%s': %s", u->host, gai_strerror(r));
                return -EADDRNOTAVAIL;
        }
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next)
                if (model_upstream_add_address(u, ai->ai_addr, ai->ai_addrlen) == -E2BIG)
                        break;
        freeaddrinfo(res);
        if (u->proxy.n_upstream == 0) {
                *ret_error = xasprintf("'%s' has no address", u->host);
                return -EADDRNOTAVAIL;
        }
        return 0;
}
