/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where the model proxy sends requests: `--model-url`, parsed, resolved and
 * (for https) given its TLS configuration once, when the daemon starts, then
 * shared read-only by every episode's model proxies.
 *
 *   https://api.anthropic.com         TLS, port 443, verified as api.anthropic.com
 *   https://HOST:PORT                 TLS on another port
 *   http://HOST[:PORT]                plain (port 80): a local stub or gateway
 *   a.b.c.d:PORT                      plain, the historical spelling of http://a.b.c.d:PORT
 *
 * HOST is a DNS name, an IPv4 address or a bracketed IPv6 address. No user
 * info, path (other than "/"), query or fragment: the proxy forwards the
 * harness's request paths as they are.
 *
 * Name resolution (getaddrinfo(3)) blocks, so it happens in
 * model_upstream_resolve(), called at start-up only; the event loop never
 * resolves. The addresses (at most HTTP_MAX_UPSTREAM_ADDRS) are kept for the
 * daemon's life: a provider that moves needs a daemon restart.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/error-detail.h"
#include "base/macro.h"
#include "relay/http-proxy.h"

struct tls_client;

struct model_upstream {
        bool tls;
        char *host; /* owned: DNS name or address (IPv6 without brackets) */
        uint16_t port;
        char *authority; /* owned: the Host header ("host", "host:port", "[v6]:port") */
        /* The upstream half of an http_proxy_config, ready to copy: the
         * addresses, and for https .tls (owned here) and .tls_host (= host). */
        struct http_proxy_config proxy;
};

/*
 * Parses url; an address literal is resolved on the spot, a name later by
 * model_upstream_resolve(). ca_file (https only) pins the trusted CA; NULL
 * trusts the system store. -EINVAL with ret_err (may be NULL) saying what is
 * wrong, for "--model-url: <error>".
 */
int model_upstream_new(const char *url, const char *ca_file, struct model_upstream **ret,
                       struct error_detail *ret_err);
struct model_upstream *model_upstream_free(struct model_upstream *u);
DEFINE_CLEANUP_FUNC(struct model_upstream, model_upstream_free);

/* Resolves a DNS name (nothing to do for an address). Blocking: start-up
 * only. -EADDRNOTAVAIL with ret_err when the name does not resolve. */
int model_upstream_resolve(struct model_upstream *u, struct error_detail *ret_err);
/* Uses sa instead of resolving the name (the name still drives SNI and the
 * certificate check): for tests, which only ever use loopback addresses. */
int model_upstream_add_address(struct model_upstream *u, const struct sockaddr *sa, socklen_t len);
