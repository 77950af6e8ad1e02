/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The model proxy, attacked from the harness's side (keys, endpoints,
 * budgets) and from the provider's (certificates), over two providers: the
 * byte-exact Python upstream over plain TCP (upstream.py), and a TLS stub
 * written here: an OpenSSL server thread on 127.0.0.1 whose CA and leaf
 * certificates are made at test time with the OpenSSL API. Only loopback
 * addresses are ever used; names like provider.test are pinned to
 * 127.0.0.1 (model_upstream_add_address), never resolved.
 *
 * "Nothing reached the provider" is checked on the provider's own records
 * (the stub counts handshakes and requests; upstream.py logs paths), not on
 * the proxy's say-so.
 */

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include "base/fd-util.h"
#include "base/macro.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "relay/http-chunked.h"
#include "relay/http-head.h"
#include "relay/listen-socket.h"
#include "relay/model-proxy.h"
#include "relay/model-upstream.h"
#include "relay-test.h"
#include "test-helpers.h"

#define REAL_KEY    "sk-real-key-never-leaks-0123456789"
#define PLACEHOLDER "openenvd-placeholder"
#define STUB_HOST   "provider.test"

static struct model_proxy *mp;
static struct model_upstream *mup;
static char model_sock[300], key_file[300];

/* --- the proxy under test --- */

static void model_dirs(void)
{
        signal(SIGPIPE, SIG_IGN);
        cr_assert(mkdtemp(tmpdir));
        snprintf(model_sock, sizeof(model_sock), "%s/model.sock", tmpdir);
        snprintf(key_file, sizeof(key_file), "%s/key", tmpdir);
}

/* A proxy for mup (set up by the caller), then the loop. */
static void model_proxy_start(const char *provider, struct model_budget budget)
{
        cleanup_close int kfd = open(key_file, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        int lfd;

        cr_assert(kfd >= 0);
        cr_assert(write_all(kfd, REAL_KEY "\n", strlen(REAL_KEY "\n")) >= 0);
        test_loop_new();
        cr_assert(socket_listen_unix(model_sock, 0666, &lfd) == 0);
        struct model_proxy_config cfg = {
                .upstream = mup, .provider = provider, .key_file = key_file, .budget = budget
        };
        cr_assert(model_proxy_new(loop, lfd, &cfg, &mp) == 0);
        start_loop();
}

static struct response model_request(const char *req)
{
        struct cl c = { .fd = cl_connect_unix(model_sock), .in = STRBUF_INIT };
        struct response r;

        cl_send(c.fd, req);
        cr_assert(cl_response(&c, startswith(req, "HEAD ") != NULL, &r), "no response to %s", req);
        close(c.fd);
        strbuf_release(&c.in);
        /* Nothing the harness receives ever carries the key. */
        cr_assert_null(strstr(r.head.buf, REAL_KEY));
        cr_assert_null(strstr(r.body.buf, REAL_KEY));
        return r;
}

static struct model_proxy_stats stats(void)
{
        struct model_proxy_stats st;
        model_proxy_stats(mp, &st);
        return st;
}

/* --- plain upstream (upstream.py) --- */

static uint16_t plain_port;

static void setup_plain(const char *provider)
{
        char *argv[] = { (char *) "/usr/bin/python3", (char *) TEST_SRCDIR "/relay/upstream.py",
                         (char *) "tcp", (char *) REAL_KEY, NULL };
        cleanup_free char *up = NULL;
        cleanup_error_detail struct error_detail err = {};
        int ufd;

        model_dirs();
        cr_assert(socket_listen_tcp("127.0.0.1", 0, &ufd) == 0);
        cr_assert(socket_local_port(ufd, &plain_port) == 0);
        upstream_pid = spawn_upstream(argv, ufd);
        /* The spelling from before URLs: plain HTTP to an IPv4 address. */
        up = xasprintf("127.0.0.1:%u", plain_port);
        cr_assert(model_upstream_new(up, NULL, &mup, &err) == 0, "%s", error_detail_text(&err));
        model_proxy_start(provider, (struct model_budget){ 0 });
}

static void setup_plain_anthropic(void)
{
        setup_plain("anthropic");
}

static void setup_plain_openai(void)
{
        setup_plain("openai");
}

/* --- the TLS stub provider --- */

struct pki {
        EVP_PKEY *ca_key, *other_ca_key, *leaf_key;
        X509 *ca, *other_ca;
        X509 *leaf;          /* provider.test + 127.0.0.1, by ca */
        X509 *leaf_other_ca; /* the same names, by a CA nobody trusts */
        X509 *leaf_expired;  /* by ca, expired yesterday */
        char ca_file[300];   /* ca as PEM */
};

static struct pki pki;
static long serial = 1;

static void add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *value)
{
        X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, ctx, nid, value);

        cr_assert(e, "extension %d=%s", nid, value);
        cr_assert(X509_add_ext(x, e, -1) == 1);
        X509_EXTENSION_free(e);
}

/* A certificate for key, valid from now+from_s to now+to_s, signed by
 * issuer (NULL: self-signed). */
static X509 *cert_new(EVP_PKEY *key, const char *cn, bool ca, const char *san, X509 *issuer,
                      EVP_PKEY *issuer_key, long from_s, long to_s)
{
        X509 *x = X509_new();
        X509V3_CTX v3;
        X509_NAME *name;

        cr_assert(x);
        cr_assert(X509_set_version(x, 2) == 1);
        cr_assert(ASN1_INTEGER_set(X509_get_serialNumber(x), serial++) == 1);
        cr_assert(X509_gmtime_adj(X509_getm_notBefore(x), from_s));
        cr_assert(X509_gmtime_adj(X509_getm_notAfter(x), to_s));
        cr_assert(X509_set_pubkey(x, key) == 1);
        name = X509_get_subject_name(x);
        cr_assert(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *) cn,
                                             -1, -1, 0) == 1);
        cr_assert(X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name) == 1);
        X509V3_set_ctx_nodb(&v3);
        X509V3_set_ctx(&v3, issuer ?: x, x, NULL, NULL, 0);
        add_ext(x, &v3, NID_basic_constraints, ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
        add_ext(x, &v3, NID_key_usage,
                ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature");
        add_ext(x, &v3, NID_subject_key_identifier, "hash");
        if (!ca)
                add_ext(x, &v3, NID_ext_key_usage, "serverAuth");
        if (san)
                add_ext(x, &v3, NID_subject_alt_name, san);
        cr_assert(X509_sign(x, issuer_key ?: key, EVP_sha256()) > 0);
        return x;
}

static void pki_make(void)
{
        const long day = 86400;
        const char *san = "DNS:" STUB_HOST ",IP:127.0.0.1";
        FILE *f;

        pki.ca_key = EVP_EC_gen("P-256");
        pki.other_ca_key = EVP_EC_gen("P-256");
        pki.leaf_key = EVP_EC_gen("P-256");
        cr_assert(pki.ca_key && pki.other_ca_key && pki.leaf_key);
        pki.ca = cert_new(pki.ca_key, "openenvd test CA", true, NULL, NULL, NULL, -day, day);
        pki.other_ca = cert_new(pki.other_ca_key, "unknown CA", true, NULL, NULL, NULL, -day, day);
        pki.leaf = cert_new(pki.leaf_key, STUB_HOST, false, san, pki.ca, pki.ca_key, -day, day);
        pki.leaf_other_ca = cert_new(pki.leaf_key, STUB_HOST, false, san, pki.other_ca,
                                     pki.other_ca_key, -day, day);
        pki.leaf_expired =
                cert_new(pki.leaf_key, STUB_HOST, false, san, pki.ca, pki.ca_key, -2 * day, -day);
        snprintf(pki.ca_file, sizeof(pki.ca_file), "%s/ca.pem", tmpdir);
        f = fopen(pki.ca_file, "we");
        cr_assert(f && PEM_write_X509(f, pki.ca) == 1);
        fclose(f);
}

#define STUB_BUF  (2 * 1024 * 1024) /* a request the stub takes */
#define BIG_BYTES (3 * 1024 * 1024) /* the text of the stub's big answer */

struct stub {
        int lfd;
        uint16_t port;
        SSL_CTX *ctx;
        pthread_t accept_thread;
        bool running;
        pthread_mutex_t lock;
        unsigned handshakes, handshake_failures, requests; /* under lock */
        char sni[256];                                     /* under lock */
        char last_head[8192];                              /* under lock */
        sem_t release; /* the harness has the first SSE event: send the rest */
};

static struct stub stub = { .lfd = -EBADF, .lock = PTHREAD_MUTEX_INITIALIZER };

static unsigned stub_count(const unsigned *field)
{
        unsigned v;

        pthread_mutex_lock(&stub.lock);
        v = *field;
        pthread_mutex_unlock(&stub.lock);
        return v;
}

/* The proxy's 502 can overtake the stub thread's bookkeeping of the failed
 * handshake: wait for it, bounded. */
static void stub_wait_handshake_failure(void)
{
        for (int i = 0; i < 2000 && stub_count(&stub.handshake_failures) == 0; i++)
                usleep(10000);
        cr_assert(stub_count(&stub.handshake_failures) > 0, "the stub saw no failed handshake");
}

static void stub_write(SSL *s, const char *data, size_t len)
{
        size_t done = 0;

        while (done < len) {
                int n = SSL_write(s, data + done, (int) (len - done));
                if (n <= 0)
                        return;
                done += (size_t) n;
        }
}

static void stub_writes(SSL *s, const char *data)
{
        stub_write(s, data, strlen(data));
}

static void stub_chunk(SSL *s, const char *data)
{
        char head[32];

        snprintf(head, sizeof(head), "%zx\r\n", strlen(data));
        stub_writes(s, head);
        stub_writes(s, data);
        stub_writes(s, "\r\n");
}

static void stub_json(SSL *s, unsigned status, const char *body)
{
        char head[256];

        snprintf(head, sizeof(head),
                 "HTTP/1.1 %u X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                 status, strlen(body));
        stub_writes(s, head);
        stub_writes(s, body);
}

/* Provider answers. The JSON ones carry usage-shaped decoys where a model
 * writes (a tool input, message text): they must never count. */
#define ANTHROPIC_JSON                                                                   \
        "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":["    \
        "{\"type\":\"text\",\"text\":\"hi \\\"usage\\\":{\\\"output_tokens\\\":777}\"}," \
        "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{\"usage\":"      \
        "{\"input_tokens\":999999}}}],\"stop_reason\":\"end_turn\",\"usage\":"           \
        "{\"input_tokens\":10,\"cache_read_input_tokens\":2,\"output_tokens\":5}}"
#define OPENAI_JSON                                                                            \
        "{\"id\":\"c1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":" \
        "{\"role\":\"assistant\",\"content\":\"hi\",\"usage\":{\"prompt_tokens\":5000}}}],"    \
        "\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":4,\"total_tokens\":15}}"

static void stub_sse_anthropic(SSL *s)
{
        struct timespec deadline;

        stub_writes(s, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n");
        stub_chunk(s, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":"
                      "{\"id\":\"m1\",\"content\":[],\"usage\":{\"input_tokens\":10,"
                      "\"output_tokens\":1}}}\n\n");
        stub_chunk(s, "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\","
                      "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\r\n\r\n");
        /* The rest only once the harness has read the above: a proxy that
         * buffered the stream would leave the test waiting here. */
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 20;
        if (sem_timedwait(&stub.release, &deadline) < 0)
                return;
        stub_chunk(s, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":"
                      "{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":7}}\n\n");
        stub_chunk(s, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
        stub_writes(s, "0\r\n\r\n");
}

static void stub_sse_openai(SSL *s)
{
        stub_writes(s, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n");
        stub_chunk(s, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":null}\n\n");
        stub_chunk(s, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,"
                      "\"completion_tokens\":3,\"total_tokens\":11}}\n\ndata: [DONE]\n\n");
        stub_writes(s, "0\r\n\r\n");
}

/* A large request gets a larger answer: the text, then the usage. */
static void stub_big(SSL *s, size_t request_len)
{
        struct strbuf b = STRBUF_INIT;

        strbuf_adds(&b, "{\"content\":[{\"type\":\"text\",\"text\":\"");
        for (size_t i = 0; i < BIG_BYTES; i++)
                strbuf_addch(&b, (char) ('a' + i % 26));
        strbuf_addf(&b, "\"}],\"usage\":{\"input_tokens\":%zu,\"output_tokens\":1}}", request_len);
        stub_json(s, 200, b.buf);
        strbuf_release(&b);
}

static void stub_respond(SSL *s, const char *head, const char *body)
{
        bool anthropic = strstr(head, "\r\nx-api-key: " REAL_KEY "\r\n");
        bool openai = strstr(head, "\r\nAuthorization: Bearer " REAL_KEY "\r\n");

        if (!anthropic && !openai)
                stub_json(s, 401, "{\"error\":\"key\"}");
        else if (strlen(body) > 100000)
                stub_big(s, strlen(body));
        else if (!strstr(body, "\"stream\":true"))
                stub_json(s, 200, anthropic ? ANTHROPIC_JSON : OPENAI_JSON);
        else if (anthropic)
                stub_sse_anthropic(s);
        else
                stub_sse_openai(s);
}

static size_t content_length(const char *head)
{
        const char *cl = strcasestr(head, "\r\ncontent-length:");
        return cl ? strtoul(cl + 17, NULL, 10) : 0;
}

/* One connection: handshake, then requests until EOF. */
static void *stub_conn(void *arg)
{
        int fd = (int) (intptr_t) arg;
        struct timeval tv = { .tv_sec = 20 };
        char *buf = xmalloc(STUB_BUF + 1);
        size_t len = 0;
        SSL *s;

        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        s = SSL_new(stub.ctx);
        cr_assert(s && SSL_set_fd(s, fd) == 1);
        if (SSL_accept(s) != 1) {
                pthread_mutex_lock(&stub.lock);
                stub.handshake_failures++;
                pthread_mutex_unlock(&stub.lock);
                goto out;
        }
        pthread_mutex_lock(&stub.lock);
        stub.handshakes++;
        snprintf(stub.sni, sizeof(stub.sni), "%s",
                 SSL_get_servername(s, TLSEXT_NAMETYPE_host_name) ?: "");
        pthread_mutex_unlock(&stub.lock);
        for (;;) {
                char *end;
                size_t head_len, body_len;
                int n;

                buf[len] = 0;
                while (!(end = strstr(buf, "\r\n\r\n"))) {
                        n = SSL_read(s, buf + len, (int) (STUB_BUF - len));
                        if (n <= 0)
                                goto out;
                        len += (size_t) n;
                        buf[len] = 0;
                }
                head_len = (size_t) (end + 4 - buf);
                body_len = content_length(buf);
                /* A big body waits: the proxy's TLS writes must wait too. */
                if (body_len > 100000)
                        usleep(100000);
                cr_assert(head_len + body_len <= STUB_BUF);
                while (len < head_len + body_len) {
                        n = SSL_read(s, buf + len, (int) (STUB_BUF - len));
                        if (n <= 0)
                                goto out;
                        len += (size_t) n;
                }
                pthread_mutex_lock(&stub.lock);
                stub.requests++;
                snprintf(stub.last_head, sizeof(stub.last_head), "%.*s", (int) head_len, buf);
                pthread_mutex_unlock(&stub.lock);
                {
                        char save = buf[head_len + body_len];
                        buf[head_len + body_len] = 0;
                        end[2] = 0;
                        stub_respond(s, buf, buf + head_len);
                        buf[head_len + body_len] = save;
                }
                memmove(buf, buf + head_len + body_len, len - head_len - body_len);
                len -= head_len + body_len;
        }
out:
        SSL_free(s);
        close(fd);
        free(buf);
        return NULL;
}

static void *stub_accept(void *arg)
{
        (void) arg;
        for (;;) {
                pthread_t t;
                int fd = accept4(stub.lfd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0) {
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        return NULL; /* shut down by stub_stop() */
                }
                cr_assert(pthread_create(&t, NULL, stub_conn, (void *) (intptr_t) fd) == 0);
                pthread_detach(t);
        }
}

/* A TLS server presenting cert on lfd (taken), by default on 127.0.0.1. */
static void stub_start(X509 *cert, int lfd)
{
        stub.ctx = SSL_CTX_new(TLS_server_method());
        cr_assert(stub.ctx);
        cr_assert(SSL_CTX_use_certificate(stub.ctx, cert) == 1);
        cr_assert(SSL_CTX_use_PrivateKey(stub.ctx, pki.leaf_key) == 1);
        cr_assert(sem_init(&stub.release, 0, 0) == 0);
        if (lfd < 0) {
                cr_assert(socket_listen_tcp("127.0.0.1", 0, &lfd) == 0);
                cr_assert(socket_local_port(lfd, &stub.port) == 0);
        }
        stub.lfd = lfd;
        /* The listeners are non-blocking; the stub blocks. */
        cr_assert(fcntl(stub.lfd, F_SETFL, 0) == 0);
        cr_assert(pthread_create(&stub.accept_thread, NULL, stub_accept, NULL) == 0);
        stub.running = true;
}

static void stub_stop(void)
{
        if (!stub.running)
                return;
        (void) shutdown(stub.lfd, SHUT_RDWR);
        pthread_join(stub.accept_thread, NULL);
        stub.lfd = safe_close(stub.lfd);
        /* Connection threads hold their own references to the context. */
        SSL_CTX_free(stub.ctx);
        stub.running = false;
}

static struct sockaddr_in loopback(uint16_t port)
{
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };

        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return sa;
}

/*
 * The stub presents *cert (a pki field: made here); the proxy goes to https://<host>:<port> with
 * the test CA pinned (or the system store if !pin), host pinned to 127.0.0.1.
 */
static void setup_tls(const char *provider, X509 *const *cert, const char *host, bool pin,
                      struct model_budget budget)
{
        cleanup_free char *url = NULL;
        cleanup_error_detail struct error_detail err = {};
        struct sockaddr_in sa;
        unsigned char ip[4];

        model_dirs();
        pki_make();
        stub_start(*cert, -EBADF);
        url = xasprintf("https://%s:%u", host, stub.port);
        cr_assert(model_upstream_new(url, pin ? pki.ca_file : NULL, &mup, &err) == 0, "%s",
                  error_detail_text(&err));
        sa = loopback(stub.port);
        if (inet_pton(AF_INET, host, ip) != 1)
                cr_assert(model_upstream_add_address(mup, (struct sockaddr *) &sa, sizeof(sa)) ==
                          0);
        model_proxy_start(provider, budget);
}

static void model_teardown(void)
{
        /* The loop stops first: nothing runs on it while the proxy goes. */
        stop_loop();
        mp = model_proxy_free(mp);
        mup = model_upstream_free(mup);
        stub_stop();
        teardown();
}

#define ANTHROPIC_AUTH "x-api-key: " PLACEHOLDER
#define OPENAI_AUTH    "Authorization: Bearer " PLACEHOLDER

/* A POST as an SDK sends it, Content-Length counted. */
static char *post(const char *target, const char *auth, const char *body)
{
        return xasprintf("POST %s HTTP/1.1\r\nHost: harness\r\n%s\r\nanthropic-version: "
                         "2023-06-01\r\nContent-Type: application/json\r\nContent-Length: "
                         "%zu\r\n\r\n%s",
                         target, auth, strlen(body), body);
}

static struct response model_post(const char *target, const char *auth, const char *body)
{
        cleanup_free char *req = post(target, auth, body);
        return model_request(req);
}

static struct response messages(void)
{
        return model_post("/v1/messages", ANTHROPIC_AUTH, "{\"model\":\"m\"}");
}

/* A request with a 2-byte body to target, for lists of literals. */
#define ANTHROPIC_REQ(target)                                                         \
        "POST " target " HTTP/1.1\r\nHost: harness\r\nx-api-key: " PLACEHOLDER "\r\n" \
        "Content-Length: 2\r\n\r\n{}"

static void assert_status(struct response r, unsigned status, const char *code)
{
        cr_assert_eq(r.status, status, "%u %s", r.status, r.body.buf);
        if (code) {
                cleanup_free char *want =
                        xasprintf("{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}", code,
                                  http_error_message(code, status));
                cr_assert_str_eq(r.body.buf, want);
        }
        response_release(&r);
}

/* --- plain upstream: credentials and the historical setup --- */

TestSuite(model, .fini = model_teardown, .timeout = 60);

Test(model, wrong_or_missing_key_is_401_and_not_forwarded, .init = setup_plain_anthropic)
{
        static const char *const reqs[] = {
                "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
                "POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: wrong\r\nContent-Length: "
                "2\r\n\r\n{}",
                "POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: " REAL_KEY
                "\r\nContent-Length: 2\r\n\r\n{}",
                "POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: openenvd-placeholder\r\n"
                "Authorization: Bearer " REAL_KEY "\r\nContent-Length: 2\r\n\r\n{}",
                "POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: "
                "openenvd-placeholderX\r\nContent-Length: 2\r\n\r\n{}",
        };
        struct stat st;

        cr_assert(stat(key_file, &st) < 0 && errno == ENOENT, "key file not deleted");
        for (size_t i = 0; i < ELEMENTSOF(reqs); i++)
                assert_status(model_request(reqs[i]), 401, "not_permitted");
        cr_assert_eq(stats().forwarded, 0);
        cr_assert_eq(stats().refused_credentials, ELEMENTSOF(reqs));
}

Test(model, placeholder_swapped_for_real_key, .init = setup_plain_anthropic)
{
        struct response r =
                model_request("POST /v1/messages HTTP/1.1\r\nHost: x\r\n"
                              "x-api-key: openenvd-placeholder\r\nContent-Length: 5\r\n\r\nhello");
        cr_assert_eq(r.status, 200);
        cr_assert_str_eq(r.body.buf, "{\"key_ok\": true, \"body\": \"hello\"}");
        cr_assert(head_has(&r, "x-openenvd-request-id: "));
        response_release(&r);
        r = model_request("POST /v1/messages HTTP/1.1\r\nHost: x\r\n"
                          "Authorization: Bearer openenvd-placeholder\r\nContent-Length: "
                          "15\r\n\r\n{\"stream\":true}");
        cr_assert_eq(r.status, 200);
        cr_assert_str_eq(r.body.buf, "data: one\n\ndata: two\n\n");
        cr_assert(head_has(&r, "x-openenvd-request-id: "));
        response_release(&r);
        cr_assert_eq(stats().forwarded, 2);
        cr_assert(stats().bytes_up > 0 && stats().bytes_down > 0);
}

/* What upstream.py saw (its /log), asked directly, not through the proxy. */
static char *plain_upstream_log(void)
{
        struct cl c = { .fd = cl_connect_port(plain_port), .in = STRBUF_INIT };
        struct response r;
        char *s;

        cl_send(c.fd, "GET /log HTTP/1.1\r\nHost: x\r\n\r\n");
        cr_assert(cl_response(&c, false, &r));
        s = xstrdup(r.body.buf);
        response_release(&r);
        close(c.fd);
        strbuf_release(&c.in);
        return s;
}

Test(model, trace_and_other_paths_never_reach_a_plain_provider, .init = setup_plain_anthropic)
{
        cleanup_free char *log = NULL;

        assert_status(model_request("TRACE /v1/messages HTTP/1.1\r\nHost: x\r\n"
                                    "x-api-key: openenvd-placeholder\r\n\r\n"),
                      403, "not_permitted");
        assert_status(model_request("POST /stream HTTP/1.1\r\nHost: x\r\n"
                                    "x-api-key: openenvd-placeholder\r\nContent-Length: 0\r\n\r\n"),
                      403, "not_permitted");
        log = plain_upstream_log();
        cr_assert_str_eq(log, "[]");
}

/* What upstream.py received: {"heads": [...], "trailers": [...]}. */
static char *plain_upstream_raw(void)
{
        struct cl c = { .fd = cl_connect_port(plain_port), .in = STRBUF_INIT };
        struct response r;
        char *s;

        cl_send(c.fd, "GET /raw HTTP/1.1\r\nHost: x\r\n\r\n");
        cr_assert(cl_response(&c, false, &r));
        s = xstrdup(r.body.buf);
        response_release(&r);
        close(c.fd);
        strbuf_release(&c.in);
        return s;
}

/* Issue 24: header fields sent after the last chunk reached the provider
 * (a key of the harness's own, another organization, another Host). */
Test(model, request_trailers_never_reach_the_provider, .init = setup_plain_anthropic)
{
        static const char req[] = "POST /v1/messages HTTP/1.1\r\nHost: x\r\n"
                                  "x-api-key: openenvd-placeholder\r\n"
                                  "Transfer-Encoding: chunked\r\n\r\n"
                                  "2\r\n{}\r\n0\r\n"
                                  "x-api-key: sk-attacker-own\r\n"
                                  "OpenAI-Organization: org-other\r\n"
                                  "Host: evil.example\r\n\r\n";
        struct cl c = { .fd = cl_connect_unix(model_sock), .in = STRBUF_INIT };
        cleanup_free char *raw = NULL;
        struct response r;

        /* Twice on one connection: the body's end is still found. */
        cl_send(c.fd, req);
        cl_send(c.fd, req);
        for (int i = 0; i < 2; i++) {
                cr_assert(cl_response(&c, false, &r), "no response %d", i);
                cr_assert_eq(r.status, 200, "%u %s", r.status, r.body.buf);
                cr_assert_str_eq(r.body.buf, "{\"key_ok\": true, \"body\": \"{}\"}");
                response_release(&r);
        }
        close(c.fd);
        strbuf_release(&c.in);
        raw = plain_upstream_raw();
        cr_assert_not_null(strstr(raw, "\"trailers\": []"), "%s", raw);
        cr_assert_null(strstr(raw, "sk-attacker-own"), "%s", raw);
        cr_assert_null(strstr(raw, "org-other"), "%s", raw);
        cr_assert_null(strstr(raw, "evil.example"), "%s", raw);
        cr_assert_eq(stats().forwarded, 2);
}

Test(model, malformed_request_trailers_cut_the_request, .init = setup_plain_anthropic)
{
        static const char *const bad[] = { "X: a\nY: b\r\n\r\n", " folded\r\n\r\n",
                                           "X: a\rb\r\n\r\n" };
        cleanup_free char *raw = NULL;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct cl c = { .fd = cl_connect_unix(model_sock), .in = STRBUF_INIT };
                cleanup_free char *req = xasprintf(
                        "POST /v1/messages HTTP/1.1\r\nHost: x\r\n"
                        "x-api-key: openenvd-placeholder\r\nTransfer-Encoding: chunked\r\n\r\n"
                        "2\r\n{}\r\n0\r\n%s",
                        bad[i]);
                cl_send(c.fd, req);
                cr_assert(cl_wait_close(c.fd), "%zu: not closed", i);
                close(c.fd);
                strbuf_release(&c.in);
        }
        raw = plain_upstream_raw();
        cr_assert_not_null(strstr(raw, "\"trailers\": []"), "%s", raw);
}

/* Issue 24: every request header but the credentials went to the provider. */
Test(model, only_allowlisted_headers_reach_the_provider, .init = setup_plain_anthropic)
{
        cleanup_free char *raw = NULL;
        struct response r = model_request(
                "POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: openenvd-placeholder\r\n"
                "anthropic-version: 2023-06-01\r\nX-Stainless-Lang: python\r\n"
                "Content-Type: application/json\r\nCookie: session=other\r\n"
                "X-Forwarded-For: 10.9.8.7\r\nForwarded: for=10.9.8.7\r\n"
                "OpenAI-Organization: org-other\r\nOpenAI-Project: proj-other\r\n"
                "Proxy-Authorization: Basic b3RoZXI=\r\nX-Unvetted: 1\r\n"
                "Connection: keep-alive, Content-Length\r\n"
                "Content-Length: 2\r\n\r\n{}");

        cr_assert_eq(r.status, 200, "%u %s", r.status, r.body.buf);
        response_release(&r);
        raw = plain_upstream_raw();
        cr_assert_not_null(strstr(raw, "anthropic-version: 2023-06-01"), "%s", raw);
        cr_assert_not_null(strstr(raw, "X-Stainless-Lang: python"), "%s", raw);
        cr_assert_not_null(strstr(raw, "Content-Length: 2"), "%s", raw);
        cr_assert_not_null(strstr(raw, "x-api-key: " REAL_KEY), "%s", raw);
        static const char *const never[] = {
                "Cookie",     "10.9.8.7",    "org-other", "proj-other", "Proxy-Authorization",
                "X-Unvetted", "placeholder", "Connection"
        };
        for (size_t i = 0; i < ELEMENTSOF(never); i++)
                cr_assert_null(strstr(raw, never[i]), "%s reached the provider: %s", never[i], raw);
}

Test(model, openai_uses_bearer, .init = setup_plain_openai)
{
        struct response r = model_request(
                "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                "Authorization: Bearer openenvd-placeholder\r\nContent-Length: 0\r\n\r\n");
        cr_assert_eq(r.status, 200);
        cr_assert_str_eq(r.body.buf, "{\"key_ok\": true, \"body\": \"\"}");
        response_release(&r);
}

/* --- TLS: what the provider must prove before it sees the key --- */

TestSuite(model_tls, .fini = model_teardown, .timeout = 60);

Test(model_tls, pinned_ca_valid_certificate_forwards_with_the_real_key)
{
        cleanup_free char *host = NULL;
        struct response r;

        setup_tls("anthropic", &pki.leaf, STUB_HOST, true, (struct model_budget){ 0 });
        r = messages();
        cr_assert_eq(r.status, 200, "%u %s", r.status, r.body.buf);
        cr_assert_str_eq(r.body.buf, ANTHROPIC_JSON);
        cr_assert(head_has(&r, "x-openenvd-request-id: "));
        response_release(&r);

        pthread_mutex_lock(&stub.lock);
        host = xasprintf("\r\nHost: " STUB_HOST ":%u\r\n", stub.port);
        cr_assert_str_eq(stub.sni, STUB_HOST);
        cr_assert(strstr(stub.last_head, "\r\nx-api-key: " REAL_KEY "\r\n"), "%s", stub.last_head);
        cr_assert(strstr(stub.last_head, host), "%s", stub.last_head);
        cr_assert(strstr(stub.last_head, "\r\nAccept-Encoding: identity\r\n"));
        cr_assert_null(strstr(stub.last_head, PLACEHOLDER));
        cr_assert_null(strstr(stub.last_head, "Host: harness"));
        pthread_mutex_unlock(&stub.lock);

        cr_assert_eq(stats().forwarded, 1);
        cr_assert_eq(stats().tls_failures, 0);
        /* 10 + 2 cached in, 5 out; the decoys in text and tool input ignored. */
        cr_assert_eq(stats().tokens_in, 12);
        cr_assert_eq(stats().tokens_out, 5);
}

Test(model_tls, address_url_is_verified_against_the_ip_san_without_sni)
{
        struct response r;

        setup_tls("openai", &pki.leaf, "127.0.0.1", true, (struct model_budget){ 0 });
        r = model_post("/v1/chat/completions", OPENAI_AUTH, "{\"model\":\"m\"}");
        cr_assert_eq(r.status, 200, "%u %s", r.status, r.body.buf);
        cr_assert_str_eq(r.body.buf, OPENAI_JSON);
        response_release(&r);
        pthread_mutex_lock(&stub.lock);
        cr_assert_str_eq(stub.sni, "", "SNI never names an address");
        cr_assert(strstr(stub.last_head, "\r\nAuthorization: Bearer " REAL_KEY "\r\n"));
        pthread_mutex_unlock(&stub.lock);
        cr_assert_eq(stats().tokens_in, 11);
        cr_assert_eq(stats().tokens_out, 4);
}

/* A refused certificate: 502 upstream_tls, the stub saw a failed handshake
 * and never a request, the reason is in the stats. */
static void assert_tls_refused(const char *reason)
{
        struct model_proxy_stats st;

        assert_status(messages(), 502, "upstream_tls");
        stub_wait_handshake_failure();
        cr_assert_eq(stub_count(&stub.requests), 0);
        cr_assert_eq(stub_count(&stub.handshakes), 0);
        st = stats();
        cr_assert_eq(st.tls_failures, 1);
        cr_assert(st.last_tls_failure && strstr(st.last_tls_failure, reason), "%s",
                  st.last_tls_failure ?: "(null)");
}

Test(model_tls, wrong_host_name_is_refused_before_the_request)
{
        /* The stub's certificate names provider.test, not wrong.test. */
        setup_tls("anthropic", &pki.leaf, "wrong.test", true, (struct model_budget){ 0 });
        assert_tls_refused("hostname mismatch");
}

Test(model_tls, unknown_ca_is_refused)
{
        setup_tls("anthropic", &pki.leaf_other_ca, STUB_HOST, true, (struct model_budget){ 0 });
        assert_tls_refused("local issuer");
}

Test(model_tls, system_store_does_not_trust_a_private_ca)
{
        setup_tls("anthropic", &pki.leaf, STUB_HOST, false, (struct model_budget){ 0 });
        assert_tls_refused("local issuer");
}

Test(model_tls, expired_certificate_is_refused)
{
        setup_tls("anthropic", &pki.leaf_expired, STUB_HOST, true, (struct model_budget){ 0 });
        assert_tls_refused("expired");
}

Test(model_tls, event_stream_is_relayed_as_it_arrives_and_its_usage_counted)
{
        struct cl c;
        struct http_head h;
        struct http_chunked ch;
        struct strbuf body = STRBUF_INIT;
        cleanup_free char *req = NULL;
        size_t end = 0;
        bool released = false;

        setup_tls("anthropic", &pki.leaf, STUB_HOST, true, (struct model_budget){ 0 });
        c = (struct cl){ .fd = cl_connect_unix(model_sock), .in = STRBUF_INIT };
        req = post("/v1/messages", ANTHROPIC_AUTH, "{\"model\":\"m\",\"stream\":true}");
        cl_send(c.fd, req);
        while (http_head_find_end(c.in.buf, c.in.len, &end) <= 0)
                cr_assert(cl_fill(&c), "no response head");
        cr_assert(http_head_parse(c.in.buf, end, true, false, &h) == 0);
        cr_assert_eq(h.status, 200);
        cr_assert_eq(h.body, HTTP_BODY_CHUNKED);
        cl_take(&c, end);
        http_chunked_init(&ch);
        for (;;) {
                size_t used = 0;
                int r = http_chunked_feed(&ch, c.in.buf, c.in.len, chunk_data, &body, &used);
                cr_assert(r >= 0);
                cl_take(&c, used);
                if (r > 0)
                        break;
                if (!released && strstr(body.buf, "\"text\":\"Hel\"")) {
                        /* The first events are here while the stub still
                         * holds the rest back; their usage already counts. */
                        cr_assert_null(strstr(body.buf, "message_delta"));
                        cr_assert_eq(stats().tokens_in, 10);
                        cr_assert_eq(stats().tokens_out, 1);
                        sem_post(&stub.release);
                        released = true;
                        continue;
                }
                cr_assert(cl_fill(&c), "stream ended early: %s", body.buf);
        }
        cr_assert(released);
        cr_assert(strstr(body.buf, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
        /* message_delta's output_tokens is cumulative: 7, not 1 + 7. */
        cr_assert_eq(stats().tokens_in, 10);
        cr_assert_eq(stats().tokens_out, 7);
        cr_assert_eq(stats().responses_without_usage, 0);
        strbuf_release(&body);
        strbuf_release(&c.in);
        close(c.fd);
}

Test(model_tls, openai_stream_usage_comes_from_the_last_chunk)
{
        struct response r;

        setup_tls("openai", &pki.leaf, STUB_HOST, true, (struct model_budget){ 0 });
        r = model_post("/v1/chat/completions", OPENAI_AUTH,
                       "{\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        cr_assert_eq(r.status, 200, "%u %s", r.status, r.body.buf);
        cr_assert(strstr(r.body.buf, "data: [DONE]"));
        response_release(&r);
        cr_assert_eq(stats().tokens_in, 8);
        cr_assert_eq(stats().tokens_out, 3);
}

Test(model_tls, large_bodies_cross_tls_under_back_pressure)
{
        struct strbuf body = STRBUF_INIT, want = STRBUF_INIT;
        struct cl c;
        struct response r;
        cleanup_free char *req = NULL;

        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        cleanup_error_detail struct error_detail err = {};
        int lfd;

        /* Over a unix socket: its send buffer does not grow as TCP's does
         * on loopback, so the proxy's TLS writes really have to wait for
         * the stub (which pauses before reading a big body). */
        model_dirs();
        pki_make();
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/provider.sock", tmpdir);
        cr_assert(socket_listen_unix(sa.sun_path, 0600, &lfd) == 0);
        stub_start(pki.leaf, lfd);
        cr_assert(model_upstream_new("https://" STUB_HOST, pki.ca_file, &mup, &err) == 0);
        cr_assert(model_upstream_add_address(mup, (struct sockaddr *) &sa, sizeof(sa)) == 0);
        model_proxy_start("anthropic", (struct model_budget){ 0 });
        strbuf_adds(&body, "{\"model\":\"m\",\"pad\":\"");
        for (int i = 0; i < 1024 * 1024; i++)
                strbuf_addch(&body, 'p');
        strbuf_adds(&body, "\"}");
        req = post("/v1/messages", ANTHROPIC_AUTH, body.buf);
        c = (struct cl){ .fd = cl_connect_unix(model_sock), .in = STRBUF_INIT };
        /* Sent whole, and read late: both directions fill their buffers,
         * so TLS writes wait for the stub and TLS reads for the harness. */
        cl_send(c.fd, req);
        usleep(100000);
        cr_assert(cl_response(&c, false, &r));
        cr_assert_eq(r.status, 200);
        cr_assert_gt(r.body.len, BIG_BYTES);
        cr_assert(endswith(r.body.buf, ",\"output_tokens\":1}}"));
        for (size_t i = 0; i < 1000; i++)
                strbuf_addch(&want, (char) ('a' + i % 26));
        cr_assert(strstr(r.body.buf, want.buf));
        response_release(&r);
        close(c.fd);
        strbuf_release(&c.in);
        cr_assert_eq(stats().tokens_in, body.len);
        cr_assert_eq(stats().tokens_out, 1);
        cr_assert_geq(stats().bytes_down, BIG_BYTES);
        cr_assert_geq(stats().bytes_up, body.len);
        strbuf_release(&body);
        strbuf_release(&want);
}

Test(model_tls, a_dead_address_is_skipped_for_the_next_one)
{
        cleanup_free char *url = NULL;
        cleanup_error_detail struct error_detail err = {};
        struct sockaddr_in dead, live;
        int fd;
        uint16_t dead_port;

        model_dirs();
        pki_make();
        stub_start(pki.leaf, -EBADF);
        /* A port nobody listens on: bound, then closed. */
        cr_assert(socket_listen_tcp("127.0.0.1", 0, &fd) == 0);
        cr_assert(socket_local_port(fd, &dead_port) == 0);
        close(fd);
        url = xasprintf("https://" STUB_HOST ":%u", stub.port);
        cr_assert(model_upstream_new(url, pki.ca_file, &mup, &err) == 0, "%s",
                  error_detail_text(&err));
        dead = loopback(dead_port);
        live = loopback(stub.port);
        cr_assert(model_upstream_add_address(mup, (struct sockaddr *) &dead, sizeof(dead)) == 0);
        cr_assert(model_upstream_add_address(mup, (struct sockaddr *) &live, sizeof(live)) == 0);
        model_proxy_start("anthropic", (struct model_budget){ 0 });
        for (int i = 0; i < 2; i++)
                assert_status(messages(), 200, NULL);
        cr_assert_eq(stub_count(&stub.requests), 2);
        cr_assert_eq(stats().upstream_failures, 0);
}

/* --- the allowlist: what a key buys --- */

Test(model_tls, only_the_model_endpoints_are_forwarded)
{
        static const char *const refused[] = {
                "TRACE /v1/messages HTTP/1.1\r\nHost: h\r\nx-api-key: " PLACEHOLDER "\r\n\r\n",
                "GET /v1/models HTTP/1.1\r\nHost: h\r\nx-api-key: " PLACEHOLDER "\r\n\r\n",
                "GET /v1/messages HTTP/1.1\r\nHost: h\r\nx-api-key: " PLACEHOLDER "\r\n\r\n",
                "PUT /v1/messages HTTP/1.1\r\nHost: h\r\nx-api-key: " PLACEHOLDER
                "\r\nContent-Length: 2\r\n\r\n{}",
                "DELETE /v1/messages HTTP/1.1\r\nHost: h\r\nx-api-key: " PLACEHOLDER "\r\n\r\n",
                "OPTIONS * HTTP/1.1\r\nHost: h\r\nx-api-key: " PLACEHOLDER "\r\n\r\n",
                "HEAD /v1/messages HTTP/1.1\r\nHost: h\r\nx-api-key: " PLACEHOLDER "\r\n\r\n",
                ANTHROPIC_REQ("/v1/../admin"),
                ANTHROPIC_REQ("/v1/messages/../../v1/organizations"),
                ANTHROPIC_REQ("/v1/./messages"),
                ANTHROPIC_REQ("/v1/%6Dessages"),
                ANTHROPIC_REQ("/%76%31/messages"),
                ANTHROPIC_REQ("/v1/messages%2F..%2Fmodels"),
                ANTHROPIC_REQ("//v1/messages"),
                ANTHROPIC_REQ("/v1//messages"),
                ANTHROPIC_REQ("/v1/messages/"),
                ANTHROPIC_REQ("/V1/Messages"),
                ANTHROPIC_REQ("/v1/messages;x"),
                ANTHROPIC_REQ("/v1/messages?beta=false"),
                ANTHROPIC_REQ("/v1/messages?beta=true&x=1"),
                ANTHROPIC_REQ("/v1/messages?"),
                ANTHROPIC_REQ("/v1/messages/batches"),
                ANTHROPIC_REQ("/v1/files"),
                ANTHROPIC_REQ("/v1/chat/completions"),
                "POST /v1/messages HTTP/1.1\r\nHost: h\r\nx-api-key: " PLACEHOLDER
                "\r\nUpgrade: websocket\r\nConnection: upgrade\r\nContent-Length: 2\r\n\r\n{}",
        };
        /* Refused by the HTTP engine before any policy runs. */
        static const char *const malformed[] = {
                ANTHROPIC_REQ("https://api.anthropic.com/v1/messages"),
                ANTHROPIC_REQ("/v1/mess ages"),
                "POST /v1/messages HTTP/1.1\r\nHost: h\r\nx-api-key: " PLACEHOLDER
                "\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}",
        };
        struct response r;

        setup_tls("anthropic", &pki.leaf, STUB_HOST, true, (struct model_budget){ 0 });
        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                r = model_request(refused[i]);
                cr_assert_eq(r.status, 403, "%s: %u", refused[i], r.status);
                if (!startswith(refused[i], "HEAD "))
                        cr_assert_str_eq(r.body.buf,
                                         "{\"error\":{\"code\":\"not_permitted\",\"message\":"
                                         "\"these credentials may not use this route\"}}");
                response_release(&r);
        }
        for (size_t i = 0; i < ELEMENTSOF(malformed); i++) {
                r = model_request(malformed[i]);
                cr_assert_eq(r.status, 400, "%s: %u", malformed[i], r.status);
                response_release(&r);
        }
        /* Not a connection, let alone a request, reached the provider. */
        cr_assert_eq(stub_count(&stub.handshakes) + stub_count(&stub.handshake_failures), 0);
        cr_assert_eq(stub_count(&stub.requests), 0);
        cr_assert_eq(stats().refused_allowlist, ELEMENTSOF(refused));
        cr_assert_eq(stats().forwarded, 0);

        /* The SDK's beta spelling and count_tokens are model endpoints. */
        assert_status(model_request(ANTHROPIC_REQ("/v1/messages?beta=true")), 200, NULL);
        assert_status(model_request(ANTHROPIC_REQ("/v1/messages/count_tokens")), 200, NULL);
        cr_assert_eq(stub_count(&stub.requests), 2);
}

Test(model_tls, openai_endpoints_only)
{
        static const char *const targets[] = {
                "/v1/models",
                "/v1/files",
                "/v1/batches",
                "/v1/fine_tuning/jobs",
                "/v1/images/generations",
                "/v1/assistants",
                "/v1/messages",
                "/v1/chat/completions/",
                "/v1/responses/resp_1/cancel",
        };
        static const char *const allowed[] = { "/v1/chat/completions", "/v1/completions",
                                               "/v1/responses", "/v1/embeddings" };

        setup_tls("openai", &pki.leaf, STUB_HOST, true, (struct model_budget){ 0 });
        for (size_t i = 0; i < ELEMENTSOF(targets); i++) {
                cleanup_free char *req = xasprintf(
                        "POST %s HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer " PLACEHOLDER
                        "\r\nContent-Length: 2\r\n\r\n{}",
                        targets[i]);
                assert_status(model_request(req), 403, "not_permitted");
        }
        cr_assert_eq(stub_count(&stub.requests), 0);
        for (size_t i = 0; i < ELEMENTSOF(allowed); i++) {
                cleanup_free char *req = xasprintf(
                        "POST %s HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer " PLACEHOLDER
                        "\r\nOpenAI-Project: proj_other\r\nContent-Length: 2\r\n\r\n{}",
                        allowed[i]);
                assert_status(model_request(req), 200, NULL);
        }
        cr_assert_eq(stub_count(&stub.requests), ELEMENTSOF(allowed));
        pthread_mutex_lock(&stub.lock);
        cr_assert_null(strcasestr(stub.last_head, "openai-project"), "%s", stub.last_head);
        pthread_mutex_unlock(&stub.lock);
}

/* --- the budget: one episode's worth --- */

Test(model_tls, request_budget_exhausted_is_429_and_nothing_forwarded)
{
        struct model_proxy_stats st;

        setup_tls("anthropic", &pki.leaf, STUB_HOST, true, (struct model_budget){ .requests = 2 });
        assert_status(messages(), 200, NULL);
        assert_status(messages(), 200, NULL);
        assert_status(messages(), 429, "budget_exhausted");
        assert_status(model_post("/v1/messages", ANTHROPIC_AUTH, "{\"stream\":true}"), 429,
                      "budget_exhausted");
        cr_assert_eq(stub_count(&stub.requests), 2);
        st = stats();
        cr_assert_eq(st.forwarded, 2);
        cr_assert_eq(st.refused_budget, 2);
        cr_assert_eq(st.budget_exhausted, MODEL_BUDGET_BIT(MODEL_BUDGET_REQUESTS));
}

Test(model_tls, byte_budget_exhausted_is_429)
{
        struct model_proxy_stats st;

        /* One request fits (about 150 bytes up), its answer (about 500
         * down) spends the rest. */
        setup_tls("anthropic", &pki.leaf, STUB_HOST, true, (struct model_budget){ .bytes = 300 });
        /* A declared body the budget cannot cover never leaves. */
        assert_status(model_request("POST /v1/messages HTTP/1.1\r\nHost: h\r\n" ANTHROPIC_AUTH
                                    "\r\nContent-Length: 5000\r\n\r\n"),
                      429, "budget_exhausted");
        assert_status(model_request("POST /v1/messages HTTP/1.1\r\nHost: h\r\n" ANTHROPIC_AUTH
                                    "\r\nContent-Length: 18446744073709551000\r\n\r\n"),
                      429, "budget_exhausted");
        cr_assert_eq(stub_count(&stub.requests), 0);
        cr_assert_eq(stats().budget_exhausted, 0);
        assert_status(messages(), 200, NULL);
        st = stats();
        cr_assert_eq(st.budget_exhausted, MODEL_BUDGET_BIT(MODEL_BUDGET_BYTES));
        cr_assert_geq(st.bytes_up + st.bytes_down, 300);
        assert_status(messages(), 429, "budget_exhausted");
        cr_assert_eq(stub_count(&stub.requests), 1);
        cr_assert_eq(stats().refused_budget, 3);
}

Test(model_tls, token_budget_exhausted_is_429)
{
        struct model_proxy_stats st;
        cleanup_free char *json = NULL;
        json_t *j;

        /* Each answer reports 12 + 5 tokens: two fit under 20 when asked. */
        setup_tls("anthropic", &pki.leaf, STUB_HOST, true, (struct model_budget){ .tokens = 20 });
        assert_status(messages(), 200, NULL);
        assert_status(messages(), 200, NULL);
        assert_status(messages(), 429, "budget_exhausted");
        cr_assert_eq(stub_count(&stub.requests), 2);
        st = stats();
        cr_assert_eq(st.tokens_in + st.tokens_out, 34);
        cr_assert_eq(st.budget_exhausted, MODEL_BUDGET_BIT(MODEL_BUDGET_TOKENS));

        /* What the verdict records. */
        j = model_proxy_stats_to_json(&st);
        json = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
        json_decref(j);
        cr_assert_null(strstr(json, REAL_KEY));
        cr_assert(strstr(json, "\"budget\":{\"bytes\":null,\"requests\":null,\"tokens\":20}"), "%s",
                  json);
        cr_assert(strstr(json, "\"budget_exhausted\":[\"tokens\"]"), "%s", json);
        cr_assert(strstr(json, "\"forwarded\":2,"), "%s", json);
        cr_assert(strstr(json, "\"provider\":\"anthropic\""), "%s", json);
        cr_assert(strstr(json, "\"refused_budget\":1,"), "%s", json);
        cr_assert(strstr(json, "\"tokens_in\":24,\"tokens_out\":10"), "%s", json);
}

/* --- --model-url --- */

static char *url_error(const char *url, const char *ca_file)
{
        struct model_upstream *u = NULL;
        struct error_detail err = {};

        cr_assert_eq(model_upstream_new(url, ca_file, &u, &err), -EINVAL, "%s accepted", url);
        cr_assert_null(u);
        cr_assert(err.message);
        cr_assert_eq(err.error, EINVAL);
        return err.message;
}

Test(model_url, parses_what_the_daemon_accepts)
{
        cr_assert(model_upstream_new("https://API.Anthropic.com", NULL, &mup, NULL) == 0);
        cr_assert(mup->tls && mup->port == 443 && mup->proxy.tls && mup->proxy.n_upstream == 0);
        cr_assert_str_eq(mup->host, "api.anthropic.com");
        cr_assert_str_eq(mup->authority, "api.anthropic.com");
        cr_assert_str_eq(mup->proxy.tls_host, "api.anthropic.com");
        mup = model_upstream_free(mup);

        cr_assert(model_upstream_new("https://gw.example:8443/", NULL, &mup, NULL) == 0);
        cr_assert_str_eq(mup->authority, "gw.example:8443");
        mup = model_upstream_free(mup);

        cr_assert(model_upstream_new("http://127.0.0.1:8080", NULL, &mup, NULL) == 0);
        cr_assert(!mup->tls && !mup->proxy.tls && mup->proxy.n_upstream == 1);
        cr_assert_str_eq(mup->authority, "127.0.0.1:8080");
        cr_assert(model_upstream_resolve(mup, NULL) == 0, "an address needs no resolving");
        cr_assert_eq(mup->proxy.n_upstream, 1);
        mup = model_upstream_free(mup);

        cr_assert(model_upstream_new("http://[::1]:8080", NULL, &mup, NULL) == 0);
        cr_assert_eq(mup->proxy.upstream[0].sa.ss_family, AF_INET6);
        cr_assert_str_eq(mup->authority, "[::1]:8080");
        mup = model_upstream_free(mup);

        cr_assert(model_upstream_new("127.0.0.1:9", NULL, &mup, NULL) == 0);
        cr_assert(!mup->tls && mup->port == 9);
        mup = model_upstream_free(mup);
}

Test(model_url, refuses_with_a_reason)
{
        static const struct {
                const char *url, *reason;
        } bad[] = {
                { "ftp://x.example", "scheme" },
                { "https://", "no host" },
                { "https://user:pw@api.example", "credentials" },
                { "https://api.example/v1", "path" },
                { "https://api.example?x=1", "query" },
                { "https://api.example:0", "not a port" },
                { "https://api.example:99999", "not a port" },
                { "https://api_example.com", "not a host name" },
                { "https://-api.example", "not a host name" },
                { "http://[::1", "unterminated" },
                { "http://[not-v6]:80", "not an IPv6" },
                { "localhost", "a port is needed" },
                { "localhost:80", "only an IPv4" },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                cleanup_free char *err = url_error(bad[i].url, NULL);
                cr_assert(strstr(err, bad[i].reason), "%s: %s", bad[i].url, err);
        }
        {
                /* Errors are logged: they never quote what follows the host. */
                cleanup_free char *err = url_error("https://api.example/v1?key=" REAL_KEY, NULL);
                cr_assert_null(strstr(err, REAL_KEY), "%s", err);
        }
        {
                cleanup_free char *err = url_error("http://127.0.0.1:80", "/etc/hostname");
                cr_assert(strstr(err, "needs an https"), "%s", err);
        }
        {
                cleanup_free char *err = url_error("https://a.example", "/nonexistent/ca.pem");
                cr_assert(strstr(err, "/nonexistent/ca.pem"), "%s", err);
        }
}
