/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Client-side TLS over a non-blocking socket, for the relay's event loop
 * (OpenSSL 3 from Debian; the only module that includes OpenSSL).
 *
 * struct tls_client is the shared, immutable configuration: TLS 1.2 at
 * least, the peer's certificate chain verified against the system CA store
 * or against one pinned CA file (then only that CA is trusted), no
 * renegotiation, ALPN "http/1.1". struct tls_stream is one connection: it
 * sends SNI and checks the certificate's names against the host it was
 * created for (X509_check_host rules: DNS SANs, or IP SANs for an address).
 *
 * Every operation returns -EAGAIN when it must wait; tls_stream_want_write()
 * then says for which readiness (a TLS read may need to write and a write
 * may need to read). The stream borrows the fd; the caller closes it after
 * tls_stream_free(). Writes go through write(2): the process ignores SIGPIPE
 * (the daemon does, as splice(2) needs it too).
 */
#include <stdbool.h>
#include <sys/types.h>

#include "base/error-detail.h"
#include "base/macro.h"

struct tls_client;
struct tls_stream;

/* ca_file: PEM file of the only trusted CA(s), or NULL for the system store.
 * On failure ret_err (may be NULL) says why. */
int tls_client_new(const char *ca_file, struct tls_client **ret, struct error_detail *ret_err);
struct tls_client *tls_client_free(struct tls_client *c);
DEFINE_CLEANUP_FUNC(struct tls_client, tls_client_free);

/* host: DNS name (sent as SNI) or IP literal; borrowed only during the call. */
int tls_stream_new(struct tls_client *c, int fd, const char *host, struct tls_stream **ret);
/* Sends close_notify if the handshake completed (best effort, never waits). */
struct tls_stream *tls_stream_free(struct tls_stream *s);
DEFINE_CLEANUP_FUNC(struct tls_stream, tls_stream_free);

/* 0 done, -EAGAIN, -EPROTO (handshake or verification failed: see
 * tls_stream_error()), other -errno from the socket. */
int tls_stream_handshake(struct tls_stream *s);
/* > 0 bytes, 0 EOF (close_notify or a TCP EOF), -EAGAIN, -ECONNRESET, -EPROTO. */
ssize_t tls_stream_read(struct tls_stream *s, void *buf, size_t len);
/* > 0 bytes taken (partial writes happen), -EAGAIN, -EPIPE, -EPROTO. After
 * -EAGAIN the next call must offer at least the same bytes again. */
ssize_t tls_stream_write(struct tls_stream *s, const void *buf, size_t len);
/* After -EAGAIN: true if the operation waits for EPOLLOUT, false for EPOLLIN. */
bool tls_stream_want_write(const struct tls_stream *s);
/* Why the last operation failed, as a static string ("certificate has
 * expired", "hostname mismatch", ...), or NULL. Never contains peer data. */
const char *tls_stream_error(const struct tls_stream *s);
