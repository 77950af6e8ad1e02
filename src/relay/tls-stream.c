/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "relay/tls-stream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "base/util.h"

struct tls_client {
        SSL_CTX *ctx; /* owned */
};

struct tls_stream {
        SSL *ssl; /* owned; borrows the fd */
        bool handshake_done;
        bool want_write;
        const char *error; /* static */
};

/* ret_err says what failed and the first queued OpenSSL error; returns r. */
static int tls_fail(struct error_detail *ret_err, int r, const char *what)
{
        unsigned long e = ERR_peek_error();
        const char *reason = NULL;

        if (e && ERR_SYSTEM_ERROR(e))
                reason = strerror(ERR_GET_REASON(e)); /* e.g. a missing CA file */
        else if (e)
                reason = ERR_reason_error_string(e);
        ERR_clear_error();
        return error_detail_set(ret_err, r, "%s: %s", what, reason ?: "unknown OpenSSL error");
}

int tls_client_new(const char *ca_file, struct tls_client **ret, struct error_detail *ret_err)
{
        cleanup(tls_client_freep) struct tls_client *c = xcalloc(1, sizeof(*c));
        static const unsigned char alpn[] = "\x08http/1.1";

        ERR_clear_error();
        c->ctx = SSL_CTX_new(TLS_client_method());
        if (!c->ctx)
                return tls_fail(ret_err, -ENOMEM, "cannot create a TLS context");
        if (SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION) != 1)
                return tls_fail(ret_err, -EINVAL, "cannot require TLS 1.2");
        /* The chain is checked during the handshake: a failure aborts it
         * before a single application byte (the key) is written. */
        SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
        /* A server-initiated renegotiation is refused rather than handled:
         * nothing in HTTP/1.1 to a model API needs it. */
        SSL_CTX_set_options(c->ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
        /* Partial writes and a moving buffer: the relay's buffers are
         * consumed as records go out (SSL_write(3), "WARNINGS"). Idle
         * connections give their 34 KiB of record buffers back. */
        SSL_CTX_set_mode(c->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                                         SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                         SSL_MODE_RELEASE_BUFFERS);
        if (SSL_CTX_set_alpn_protos(c->ctx, alpn, sizeof(alpn) - 1) != 0)
                return tls_fail(ret_err, -EINVAL, "cannot set ALPN");
        if (ca_file) {
                /* Pinned: the file is the whole trust store. It may hold an
                 * intermediate, which then anchors the chain by itself. */
                if (SSL_CTX_load_verify_locations(c->ctx, ca_file, NULL) != 1)
                        return tls_fail(ret_err, -EINVAL, "cannot load the CA file");
                X509_VERIFY_PARAM_set_flags(SSL_CTX_get0_param(c->ctx), X509_V_FLAG_PARTIAL_CHAIN);
        } else if (SSL_CTX_set_default_verify_paths(c->ctx) != 1)
                return tls_fail(ret_err, -EINVAL, "cannot use the system CA store");
        *ret = TAKE_PTR(c);
        return 0;
}

struct tls_client *tls_client_free(struct tls_client *c)
{
        if (!c)
                return NULL;
        SSL_CTX_free(c->ctx);
        return mfree(c);
}

static bool is_ip_literal(const char *host)
{
        unsigned char buf[sizeof(struct in6_addr)];

        return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

int tls_stream_new(struct tls_client *c, int fd, const char *host, struct tls_stream **ret)
{
        cleanup(tls_stream_freep) struct tls_stream *s = xcalloc(1, sizeof(*s));

        ERR_clear_error();
        s->ssl = SSL_new(c->ctx);
        if (!s->ssl || SSL_set_fd(s->ssl, fd) != 1)
                return -ENOMEM;
        /* SNI names a host, never an address (RFC 6066 section 3). The
         * expected name is checked by OpenSSL during verification; a partial
         * wildcard ("a*.example") never matches. */
        if (!is_ip_literal(host) && SSL_set_tlsext_host_name(s->ssl, host) != 1)
                return -EINVAL;
        SSL_set_hostflags(s->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        if (SSL_set1_host(s->ssl, host) != 1)
                return -EINVAL;
        SSL_set_connect_state(s->ssl);
        ERR_clear_error();
        *ret = TAKE_PTR(s);
        return 0;
}

struct tls_stream *tls_stream_free(struct tls_stream *s)
{
        if (!s)
                return NULL;
        if (s->ssl) {
                /* close_notify tells the server the connection ended on
                 * purpose; one non-blocking attempt, no reply awaited. */
                if (s->handshake_done && !(SSL_get_shutdown(s->ssl) & SSL_SENT_SHUTDOWN))
                        (void) SSL_shutdown(s->ssl);
                ERR_clear_error();
                SSL_free(s->ssl);
        }
        return mfree(s);
}

/* Maps the outcome of an SSL_* call that returned n <= 0 (SSL_get_error(3)). */
static int stream_result(struct tls_stream *s, int n, int saved_errno)
{
        int e = SSL_get_error(s->ssl, n);
        unsigned long err;

        switch (e) {
        case SSL_ERROR_WANT_READ:
                s->want_write = false;
                return -EAGAIN;
        case SSL_ERROR_WANT_WRITE:
                s->want_write = true;
                return -EAGAIN;
        case SSL_ERROR_ZERO_RETURN:
                return 0;
        case SSL_ERROR_SYSCALL:
                ERR_clear_error();
                s->error = "connection lost";
                return saved_errno > 0 ? -saved_errno : -ECONNRESET;
        default:
                break;
        }
        err = ERR_peek_error();
        if (ERR_GET_LIB(err) == ERR_LIB_SSL &&
            ERR_GET_REASON(err) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
                /* A TCP EOF without close_notify: a truncation attack and a
                 * sloppy server look the same; the caller treats it as a
                 * reset. */
                ERR_clear_error();
                s->error = "connection closed without close_notify";
                return -ECONNRESET;
        }
        if (SSL_get_verify_result(s->ssl) != X509_V_OK)
                s->error = X509_verify_cert_error_string(SSL_get_verify_result(s->ssl));
        else
                s->error = (err ? ERR_reason_error_string(err) : NULL) ?: "TLS protocol error";
        ERR_clear_error();
        return -EPROTO;
}

int tls_stream_handshake(struct tls_stream *s)
{
        int n;

        ERR_clear_error();
        errno = 0;
        n = SSL_do_handshake(s->ssl);
        if (n == 1) {
                s->handshake_done = true;
                return 0;
        }
        n = stream_result(s, n, errno);
        /* A closed connection during the handshake is a failed handshake. */
        if (n == 0 || (n < 0 && n != -EAGAIN && n != -EPROTO)) {
                s->error = s->error ?: "connection closed during the handshake";
                return -EPROTO;
        }
        return n;
}

ssize_t tls_stream_read(struct tls_stream *s, void *buf, size_t len)
{
        size_t got = 0;
        int r;

        ERR_clear_error();
        errno = 0;
        r = SSL_read_ex(s->ssl, buf, len, &got);
        if (r == 1)
                return (ssize_t) got;
        return stream_result(s, r, errno);
}

ssize_t tls_stream_write(struct tls_stream *s, const void *buf, size_t len)
{
        size_t sent = 0;
        int r;

        ERR_clear_error();
        errno = 0;
        r = SSL_write_ex(s->ssl, buf, len, &sent);
        if (r == 1)
                return (ssize_t) sent;
        r = stream_result(s, r, errno);
        return r == 0 ? -EPIPE : r;
}

bool tls_stream_want_write(const struct tls_stream *s)
{
        return s->want_write;
}

const char *tls_stream_error(const struct tls_stream *s)
{
        return s->error;
}
