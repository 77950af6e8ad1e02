/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "probe/namespace-ids.h"
#include "validate/command.h"
#include "validate/docker-provider.h"
#include "validate/sha256.h"
#include "validate/tar-writer.h"

#define RUN_LABEL            "org.openenvd.validation.run"
#define SUBJECT_USER         "65532:65532"
#define FAULT_BIND_TARGET    "/mnt/openenv-fault"
#define FAULT_VOLUME_DST     "/data"
#define FAULT_DEV_TMPFS_PATH "/dev/openenv-fault"
#define PROBE_MAX_BINARY     (64UL * 1024 * 1024)
#define BRIEF_OUTPUT_BYTES   (64UL * 1024) /* output of commands we only check the status of */
#define CMD_TIMEOUT          (60 * USEC_PER_SEC)
#define HELPER_TIMEOUT       (120 * USEC_PER_SEC)
#define CLEANUP_TIMEOUT      (30 * USEC_PER_SEC)

static const struct {
        const char *name;
        enum docker_fault fault;
} fault_names[] = {
        { "no-read-only", FAULT_NO_READ_ONLY },
        { "dev-tmpfs", FAULT_DEV_TMPFS },
        { "writable-bind", FAULT_WRITABLE_BIND },
        { "volume", FAULT_VOLUME },
        { "privileged", FAULT_PRIVILEGED },
        { "cap-add", FAULT_CAP_ADD },
        { "root", FAULT_ROOT },
        { "host-pid", FAULT_HOST_PID },
        { "broken-control", FAULT_BROKEN_CONTROL },
};

int docker_faults_parse(const char *s, unsigned *faults)
{
        cleanup_free char *copy = xstrdup(s);
        unsigned f = *faults;

        for (char *p = copy, *c; p; p = c) {
                bool found = false;
                c = strchr(p, ',');
                if (c)
                        *c++ = '\0';
                for (size_t i = 0; i < ELEMENTSOF(fault_names); i++)
                        if (streq(p, fault_names[i].name)) {
                                f |= fault_names[i].fault;
                                found = true;
                        }
                if (!found)
                        return -EINVAL;
        }
        *faults = f;
        return 0;
}

struct ctx {
        const struct docker_options *o;
        char *run_id;       /* owned */
        char *subject;      /* owned: container name */
        char *helper;       /* owned: container name */
        char *helper_image; /* owned: tag */
        char *bind_dir;     /* owned: host dir for FAULT_WRITABLE_BIND */
        char **volumes;     /* owned: anonymous volumes to remove */
        bool interrupted;
        bool cleaning;
};

/* Runs `docker [-H host] args...`. Records interruption. */
static int docker(struct ctx *c, char *const *args, int stdin_fd, usec_t timeout, size_t max,
                  struct command_output *out)
{
        cleanup_strv char **argv = NULL;
        int r;

        if (c->interrupted && !c->cleaning)
                return -ECANCELED;
        strv_push(&argv, xstrdup(c->o->docker));
        if (c->o->host) {
                strv_push(&argv, xstrdup("-H"));
                strv_push(&argv, xstrdup(c->o->host));
        }
        for (char *const *a = args; *a; a++)
                strv_push(&argv, xstrdup(*a));
        r = command_run(argv, stdin_fd, timeout, max, c->cleaning ? -1 : c->o->cancel_fd, out);
        if (r == -ECANCELED)
                c->interrupted = true;
        return r;
}

/* Last line of stderr, for messages. */
static char *err_line(const struct command_output *out)
{
        size_t n = out->err_len;
        const char *e = out->err;

        while (n > 0 && (e[n - 1] == '\n' || e[n - 1] == ' '))
                n--;
        size_t start = n;
        while (start > 0 && e[start - 1] != '\n')
                start--;
        if (n - start > 300)
                n = start + 300;
        return xstrndup(e + start, n - start);
}

static char *cmd_error(const char *what, int r, const struct command_output *out)
{
        if (r == -ECANCELED)
                return xasprintf("%s: interrupted", what);
        if (r < 0)
                return xasprintf("%s: %s", what, strerror(-r));
        cleanup_free char *line = err_line(out);
        return xasprintf("%s: exit %d: %s", what, out->exit_status, line);
}

#define ARGS(...) ((char *const[]){ __VA_ARGS__, NULL })

static int set_error(struct docker_run *ret, enum docker_outcome oc, char *msg)
{
        ret->outcome = oc;
        free(ret->message);
        ret->message = msg;
        return -1;
}

static int check_engine(struct ctx *c, struct docker_run *ret)
{
        struct command_output out = {};
        int r = docker(c, ARGS("version", "--format", "{{.Server.Version}}"), -1, CMD_TIMEOUT, 4096,
                       &out);

        if (r < 0 || out.exit_status != 0) {
                char *m = cmd_error("docker engine unreachable", r, &out);
                command_output_done(&out);
                return set_error(ret, c->interrupted ? DOCKER_INTERRUPTED : DOCKER_FAILED, m);
        }
        command_output_done(&out);
        return 0;
}

/* Images that declare VOLUME would get persistent writable storage the
 * validator never allotted: refuse them before anything is created. */
static int check_image(struct ctx *c, struct docker_run *ret)
{
        struct command_output out = {};
        int r = docker(c,
                       ARGS("image", "inspect", "--format", "{{json .Config.Volumes}}",
                            (char *) c->o->image),
                       -1, CMD_TIMEOUT, DOCKER_OUTPUT_MAX_BYTES, &out);
        json_t *v;

        if (r < 0 || out.exit_status != 0) {
                enum docker_outcome oc = c->interrupted ? DOCKER_INTERRUPTED : DOCKER_BAD_INPUT;
                char *m = r < 0 || !strstr(out.err, "No such image")
                                  ? cmd_error("image inspect", r, &out)
                                  : xasprintf("no such image: %s", c->o->image);
                if (r < 0 && !c->interrupted)
                        oc = DOCKER_FAILED;
                command_output_done(&out);
                return set_error(ret, oc, m);
        }
        v = json_loadb(out.out, out.out_len, JSON_DECODE_ANY, NULL);
        command_output_done(&out);
        if (v && json_is_object(v) && json_object_size(v) > 0) {
                cleanup_strbuf struct strbuf sb = STRBUF_INIT;
                const char *k;
                json_t *x;
                json_object_foreach(v, k, x) strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", k);
                json_decref(v);
                return set_error(ret, DOCKER_BAD_INPUT,
                                 xasprintf("image declares volumes (%s): persistent writable "
                                           "storage is not allowed",
                                           sb.buf));
        }
        if (!v || !(json_is_null(v) || json_is_object(v))) {
                json_decref(v);
                return set_error(ret, DOCKER_FAILED,
                                 xstrdup("image inspect: unexpected Config.Volumes"));
        }
        json_decref(v);
        return 0;
}

/* Builds (once) the helper image from the static probe: an archive with the
 * single binary, imported under a tag derived from its SHA-256. */
static int ensure_helper_image(struct ctx *c, struct docker_run *ret)
{
        cleanup_free char *bin = NULL;
        cleanup_close int tar_fd = -EBADF;
        struct command_output out = {};
        char hex[65];
        size_t len;
        int r;

        r = read_full_file_at(AT_FDCWD, c->o->probe_path, PROBE_MAX_BINARY, &bin, &len);
        if (r < 0)
                return set_error(ret, DOCKER_FAILED,
                                 xasprintf("probe helper %s: %s", c->o->probe_path, strerror(-r)));
        sha256_hex(bin, len, hex);
        c->helper_image = xasprintf("openenvd-probe-helper:%.16s", hex);

        r = docker(c, ARGS("image", "inspect", "--format", "{{.Id}}", c->helper_image), -1,
                   CMD_TIMEOUT, 4096, &out);
        if (r == 0 && out.exit_status == 0) {
                command_output_done(&out);
                return 0;
        }
        command_output_done(&out);
        if (c->interrupted)
                return set_error(ret, DOCKER_INTERRUPTED, xstrdup("interrupted"));

        tar_fd = memfd_create("openenvd-probe-image", MFD_CLOEXEC);
        if (tar_fd < 0)
                return set_error(ret, DOCKER_FAILED, xasprintf("memfd: %m"));
        if ((r = tar_add_dir(tar_fd, "etc/", 0755, 0, 0)) < 0 ||
            (r = tar_add_file(tar_fd, "openenvd-probe", 0755, 0, 0, bin, len)) < 0 ||
            (r = tar_finish(tar_fd)) < 0 ||
            (r = lseek(tar_fd, 0, SEEK_SET) < 0 ? negative_errno() : 0) < 0)
                return set_error(ret, DOCKER_FAILED, xasprintf("helper archive: %s", strerror(-r)));
        cleanup_free char *label = xasprintf("LABEL org.openenvd.probe.sha256=%s", hex);
        r = docker(c, ARGS("import", "--change", label, "-", c->helper_image), tar_fd, CMD_TIMEOUT,
                   4096, &out);
        if (r < 0 || out.exit_status != 0) {
                char *m = cmd_error("helper image import", r, &out);
                command_output_done(&out);
                return set_error(ret, c->interrupted ? DOCKER_INTERRUPTED : DOCKER_FAILED, m);
        }
        command_output_done(&out);
        return 0;
}

static json_t *inspect_container(struct ctx *c, const char *name, char **ret_error)
{
        struct command_output out = {};
        json_t *v, *o;
        int r = docker(c, ARGS("inspect", "--type", "container", (char *) name), -1, CMD_TIMEOUT,
                       DOCKER_OUTPUT_MAX_BYTES, &out);

        if (r < 0 || out.exit_status != 0 || out.out_truncated) {
                *ret_error = out.out_truncated ? xstrdup("inspect: output too large")
                                               : cmd_error("inspect", r, &out);
                command_output_done(&out);
                return NULL;
        }
        v = json_loadb(out.out, out.out_len, 0, NULL);
        command_output_done(&out);
        if (!v || !json_is_array(v) || json_array_size(v) != 1 ||
            !json_is_object(json_array_get(v, 0))) {
                json_decref(v);
                *ret_error = xstrdup("inspect: invalid inspection evidence");
                return NULL;
        }
        o = json_incref(json_array_get(v, 0));
        json_decref(v);
        return o;
}

static const char *jstr(json_t *o, const char *k)
{
        json_t *v = json_object_get(o, k);
        return json_is_string(v) ? json_string_value(v) : "";
}

static json_t *strings_or_empty(json_t *v)
{
        json_t *a = json_array();
        size_t i;
        json_t *x;

        if (json_is_array(v))
                json_array_foreach(v, i, x) if (json_is_string(x)) json_array_append(a, x);
        return a;
}

/* The launch section: what the engine was told, from its own inspection. */
static json_t *launch_from_inspect(json_t *ins)
{
        json_t *hc = json_object_get(ins, "HostConfig");
        json_t *cfg = json_object_get(ins, "Config");
        json_t *l = json_object(), *mounts = json_array(), *tmpfs = json_array(),
               *ips = json_array(), *v;
        const char *k;
        size_t i;

        json_object_set_new(l, "read_only_rootfs",
                            json_boolean(json_is_true(json_object_get(hc, "ReadonlyRootfs"))));
        json_object_set_new(l, "privileged",
                            json_boolean(json_is_true(json_object_get(hc, "Privileged"))));
        json_object_set_new(l, "init", json_boolean(json_is_true(json_object_get(hc, "Init"))));
        json_object_set_new(l, "cap_add", strings_or_empty(json_object_get(hc, "CapAdd")));
        json_object_set_new(l, "cap_drop", strings_or_empty(json_object_get(hc, "CapDrop")));
        json_object_set_new(l, "security_opt",
                            strings_or_empty(json_object_get(hc, "SecurityOpt")));
        json_object_set_new(l, "user", json_string(jstr(cfg, "User")));
        json_object_set_new(l, "pid_mode", json_string(jstr(hc, "PidMode")));
        json_object_set_new(l, "ipc_mode", json_string(jstr(hc, "IpcMode")));
        json_object_set_new(l, "uts_mode", json_string(jstr(hc, "UTSMode")));
        json_object_set_new(l, "network_mode", json_string(jstr(hc, "NetworkMode")));
        json_object_set_new(l, "userns_mode", json_string(jstr(hc, "UsernsMode")));
        json_object_set_new(l, "cgroupns_mode", json_string(jstr(hc, "CgroupnsMode")));
        v = json_object_get(hc, "Devices");
        json_object_set_new(l, "devices",
                            json_integer(json_is_array(v) ? (json_int_t) json_array_size(v) : 0));
        json_array_foreach(json_object_get(ins, "Mounts"), i, v)
        {
                json_t *m = json_object();
                json_object_set_new(m, "type", json_string(jstr(v, "Type")));
                json_object_set_new(m, "destination", json_string(jstr(v, "Destination")));
                json_object_set_new(m, "rw", json_boolean(json_is_true(json_object_get(v, "RW"))));
                json_array_append_new(mounts, m);
        }
        json_object_set_new(l, "mounts", mounts);
        json_object_foreach(json_object_get(hc, "Tmpfs"), k, v)
                json_array_append_new(tmpfs, json_string(k));
        json_object_set_new(l, "tmpfs", tmpfs);
        json_object_foreach(json_object_get(hc, "PortBindings"), k, v)
        {
                size_t j;
                json_t *b;
                json_array_foreach(v, j, b)
                        json_array_append_new(ips, json_string(jstr(b, "HostIp")));
        }
        json_object_set_new(l, "port_host_ips", ips);
        return l;
}

static bool engine_is_local(const struct docker_options *o)
{
        const char *h = o->host ? o->host : getenv("DOCKER_HOST");
        return !h || !*h || startswith(h, "unix://");
}

/* Our own namespaces, as "the host's" when the engine runs on our kernel. */
static json_t *host_namespaces(void)
{
        cleanup_close int fd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct ns_ids ids;
        json_t *o = json_object();

        if (fd < 0)
                return o;
        ns_ids_read_at(fd, &ids);
        for (int k = 0; k < _NS_KIND_MAX; k++)
                if (ids.has[k])
                        json_object_set_new(o, ns_kind_to_string(k),
                                            json_integer((json_int_t) ids.ino[k]));
        return o;
}

static void push_args(char ***argv, ...)
{
        va_list ap;
        const char *s;

        va_start(ap, argv);
        while ((s = va_arg(ap, const char *)))
                strv_push(argv, xstrdup(s));
        va_end(ap);
}

static int create_subject(struct ctx *c, const char *user, struct docker_run *ret)
{
        const struct docker_options *o = c->o;
        cleanup_strv char **a = NULL;
        struct command_output out = {};
        uint64_t budget = o->disk_mb * 1024 * 1024;
        uint64_t shm = MIN((uint64_t) 64 * 1024 * 1024, budget / 2), tmp = budget - shm;
        cleanup_free char *label = xasprintf("%s=%s", RUN_LABEL, c->run_id);
        cleanup_free char *pids = xasprintf("%u", o->pids);
        cleanup_free char *mem = xasprintf("%" PRIu64 "m", o->memory_mb);
        cleanup_free char *cpus = xasprintf("%.3f", o->cpus);
        cleanup_free char *shm_s = xasprintf("%" PRIu64, shm);
        /* The broken-control fault mounts /tmp read-only: the positive
         * control must then fail (EROFS), whatever the image's /tmp mode
         * that Docker's tmpcopyup would carry over. */
        cleanup_free char *tmpfs = xasprintf("/tmp:%s,nosuid,nodev,size=%" PRIu64 ",mode=1777",
                                             o->faults & FAULT_BROKEN_CONTROL ? "ro" : "rw", tmp);
        int r;

        push_args(&a, "create", "--name", c->subject, "--label", label, "--stop-timeout", "0",
                  "--init", "--cgroupns", "private", "--user", user, "--cap-drop", "ALL",
                  "--security-opt", "no-new-privileges", "--pids-limit", pids, "--memory", mem,
                  "--memory-swap", mem, "--cpus", cpus, "--shm-size", shm_s, "--tmpfs", tmpfs,
                  "--log-driver", "json-file", "--log-opt", "max-size=1m", "--log-opt",
                  "max-file=1", NULL);
        if (!(o->faults & FAULT_NO_READ_ONLY))
                push_args(&a, "--read-only", NULL);
        if (o->loopback_publish)
                push_args(&a, "--network", "bridge", "--publish", "127.0.0.1::8000", NULL);
        else
                push_args(&a, "--network", "none", NULL);
        /* Test-only weakenings (docs/VALIDATE.md "Fault knobs"). */
        if (o->faults & FAULT_DEV_TMPFS)
                push_args(&a, "--tmpfs", FAULT_DEV_TMPFS_PATH ":rw,nosuid,nodev,size=1m,mode=1777",
                          NULL);
        if (o->faults & FAULT_WRITABLE_BIND) {
                cleanup_free char *m = NULL;
                char tmpl[] = "/tmp/openenv-fault-XXXXXX";
                if (!mkdtemp(tmpl) || chmod(tmpl, 01777) < 0)
                        return set_error(ret, DOCKER_FAILED, xasprintf("fault bind dir: %m"));
                c->bind_dir = xstrdup(tmpl);
                m = xasprintf("type=bind,src=%s,dst=" FAULT_BIND_TARGET, tmpl);
                push_args(&a, "--mount", m, NULL);
        }
        if (o->faults & FAULT_VOLUME)
                push_args(&a, "--mount", "type=volume,dst=" FAULT_VOLUME_DST, NULL);
        if (o->faults & FAULT_PRIVILEGED)
                push_args(&a, "--privileged", NULL);
        if (o->faults & FAULT_CAP_ADD)
                push_args(&a, "--cap-add", "NET_BIND_SERVICE", NULL);
        if (o->faults & FAULT_HOST_PID)
                push_args(&a, "--pid", "host", NULL);
        push_args(&a, "--", o->image, NULL);

        r = docker(c, a, -1, CMD_TIMEOUT, DOCKER_OUTPUT_MAX_BYTES, &out);
        if (r < 0 || out.exit_status != 0) {
                char *m = cmd_error("create subject", r, &out);
                command_output_done(&out);
                return set_error(ret, c->interrupted ? DOCKER_INTERRUPTED : DOCKER_FAILED, m);
        }
        command_output_done(&out);
        return 0;
}

/* Persistent mounts on the created container that no fault knob asked for
 * come from the image: refuse. Records anonymous volumes for removal. */
static int check_mounts(struct ctx *c, json_t *ins, struct docker_run *ret)
{
        size_t i;
        json_t *m;

        json_array_foreach(json_object_get(ins, "Mounts"), i, m)
        {
                const char *type = jstr(m, "Type"), *dst = jstr(m, "Destination");
                if (streq(type, "volume") && *jstr(m, "Name"))
                        strv_push(&c->volumes, xstrdup(jstr(m, "Name")));
                if (streq(type, "bind") && (c->o->faults & FAULT_WRITABLE_BIND) &&
                    streq(dst, FAULT_BIND_TARGET))
                        continue;
                if (streq(type, "volume") && (c->o->faults & FAULT_VOLUME) &&
                    streq(dst, FAULT_VOLUME_DST))
                        continue;
                if (streq(type, "bind") || streq(type, "volume"))
                        return set_error(ret, DOCKER_BAD_INPUT,
                                         xasprintf("image declares an unsupported persistent "
                                                   "mount (%s at %s)",
                                                   type, dst));
        }
        return 0;
}

/* Runs the helper; returns the probe document or NULL with *ret_error. */
static json_t *run_helper(struct ctx *c, const char *user, long anchor, char **ret_error)
{
        cleanup_strv char **a = NULL;
        struct command_output out = {};
        cleanup_free char *label = xasprintf("%s=%s", RUN_LABEL, c->run_id);
        cleanup_free char *pidns = xasprintf("container:%s", c->subject);
        cleanup_free char *anchor_s = xasprintf("%ld", anchor);
        json_t *doc;
        int r;

        /* Only the PID namespace is shared; same uid/gid as the subject so
         * the kernel's ptrace-read checks let us into /proc/<pid>/root and
         * every write attempt is decided exactly as for the subject. */
        push_args(&a, "create", "--name", c->helper, "--label", label, "--pid", pidns, "--network",
                  "none", "--cgroupns", "private", "--read-only", "--cap-drop", "ALL",
                  "--security-opt", "no-new-privileges", "--user", user, "--pids-limit", "64",
                  "--memory", "64m", "--memory-swap", "64m", "--stop-timeout", "0", "--log-driver",
                  "none", "--", c->helper_image, "/openenvd-probe", "containment", "--anchor-pid",
                  anchor_s, "--allotted", "/tmp", "--allotted", "/dev/shm", NULL);
        r = docker(c, a, -1, CMD_TIMEOUT, DOCKER_OUTPUT_MAX_BYTES, &out);
        if (r < 0 || out.exit_status != 0) {
                *ret_error = cmd_error("create helper", r, &out);
                command_output_done(&out);
                return NULL;
        }
        command_output_done(&out);
        r = docker(c, ARGS("start", "--attach", c->helper), -1, HELPER_TIMEOUT,
                   PROBE_EVIDENCE_MAX_BYTES, &out);
        if (r < 0 || out.exit_status != 0 || out.out_truncated) {
                *ret_error = out.out_truncated ? xstrdup("helper output exceeds the bound")
                                               : cmd_error("helper", r, &out);
                command_output_done(&out);
                return NULL;
        }
        doc = json_loadb(out.out, out.out_len, JSON_REJECT_DUPLICATES, NULL);
        command_output_done(&out);
        if (!doc || !json_is_object(doc)) {
                json_decref(doc);
                *ret_error = xstrdup("helper output is not a JSON object");
                return NULL;
        }
        return doc;
}

static char **list_owned(struct ctx *c, int *ret_r)
{
        struct command_output out = {};
        cleanup_free char *filter = xasprintf("label=%s=%s", RUN_LABEL, c->run_id);
        char **names = NULL;
        int r = docker(
                c, ARGS("ps", "--all", "--no-trunc", "--filter", filter, "--format", "{{.Names}}"),
                -1, CLEANUP_TIMEOUT, DOCKER_OUTPUT_MAX_BYTES, &out);

        if (r < 0 || out.exit_status != 0) {
                *ret_r = r < 0 ? r : -EIO;
                command_output_done(&out);
                return NULL;
        }
        for (char *p = out.out, *nl; p && *p; p = nl) {
                nl = strchr(p, '\n');
                if (nl)
                        *nl++ = '\0';
                if (*p)
                        strv_push(&names, xstrdup(p));
        }
        command_output_done(&out);
        *ret_r = 0;
        return names ? names : xcalloc(1, sizeof(char *));
}

/* Removes everything this run created; verified by listing, not by rm's
 * error text (engines word "no such container" differently). */
static int cleanup_run(struct ctx *c, char **ret_error)
{
        cleanup_strv char **names = NULL, **left = NULL;
        struct command_output out = {};
        int r;

        c->cleaning = true;
        names = list_owned(c, &r);
        if (!names) {
                *ret_error = xasprintf("cleanup: cannot list containers of run %s: %s", c->run_id,
                                       strerror(-r));
                return -EIO;
        }
        if (names[0]) {
                cleanup_strv char **a = NULL;
                push_args(&a, "rm", "--force", "--volumes", NULL);
                for (char **n = names; *n; n++)
                        strv_push(&a, xstrdup(*n));
                (void) docker(c, a, -1, CLEANUP_TIMEOUT, BRIEF_OUTPUT_BYTES, &out);
                command_output_done(&out);
        }
        left = list_owned(c, &r);
        if (!left || left[0]) {
                *ret_error = xasprintf("could not remove validation container%s%s",
                                       left && left[0] ? " " : "", left && left[0] ? left[0] : "");
                return -EIO;
        }
        for (char **v = c->volumes; v && *v; v++) {
                (void) docker(c, ARGS("volume", "rm", "--force", *v), -1, CLEANUP_TIMEOUT,
                              BRIEF_OUTPUT_BYTES, &out);
                command_output_done(&out);
                r = docker(c, ARGS("volume", "inspect", *v), -1, CLEANUP_TIMEOUT,
                           BRIEF_OUTPUT_BYTES, &out);
                bool gone = r == 0 && out.exit_status != 0;
                command_output_done(&out);
                if (!gone) {
                        *ret_error = xasprintf("could not remove volume %s", *v);
                        return -EIO;
                }
        }
        if (c->bind_dir) {
                r = rm_rf_at(AT_FDCWD, c->bind_dir);
                if (r < 0 && r != -ENOENT) {
                        *ret_error =
                                xasprintf("could not remove %s: %s", c->bind_dir, strerror(-r));
                        return -EIO;
                }
        }
        return 0;
}

static int measure(struct ctx *c, struct docker_run *ret)
{
        const struct docker_options *o = c->o;
        const char *user = o->faults & FAULT_ROOT ? "0:0" : SUBJECT_USER;
        json_t *ins, *ev, *su, *allotted, *probe;
        char *err = NULL;
        long anchor = 1;
        struct command_output out = {};
        int r;

        if (check_engine(c, ret) < 0 || check_image(c, ret) < 0 ||
            ensure_helper_image(c, ret) < 0 || create_subject(c, user, ret) < 0)
                return -1;
        ins = inspect_container(c, c->subject, &err);
        if (!ins)
                return set_error(ret, c->interrupted ? DOCKER_INTERRUPTED : DOCKER_FAILED, err);
        if (!streq_ptr(jstr(json_object_get(json_object_get(ins, "Config"), "Labels"), RUN_LABEL),
                       c->run_id)) {
                json_decref(ins);
                return set_error(ret, DOCKER_FAILED,
                                 xstrdup("inspected container does not carry our run label"));
        }
        if (check_mounts(c, ins, ret) < 0) {
                json_decref(ins);
                return -1;
        }

        ev = json_object();
        json_object_set_new(ev, "schema", json_integer(1));
        su = json_object();
        /* The contract's identity, not the (possibly faulted) launch one:
         * a root subject must fail against 65532. */
        json_object_set_new(su, "uid", json_integer(65532));
        json_object_set_new(su, "gid", json_integer(65532));
        json_object_set_new(ev, "subject_user", su);
        allotted = json_array();
        json_array_append_new(allotted, json_string("/tmp"));
        json_array_append_new(allotted, json_string("/dev/shm"));
        json_object_set_new(ev, "allotted_roots", allotted);
        json_object_set_new(ev, "launch", launch_from_inspect(ins));
        json_decref(ins);
        if (engine_is_local(o))
                json_object_set_new(ev, "host_ns", host_namespaces());
        ret->evidence = ev; /* from here on, partial evidence is still evidence */

        r = docker(c, ARGS("start", c->subject), -1, CMD_TIMEOUT, BRIEF_OUTPUT_BYTES, &out);
        if (r < 0 || out.exit_status != 0) {
                char *m = cmd_error("start subject", r, &out);
                command_output_done(&out);
                json_object_set_new(ev, "probe_error", json_string(m));
                free(m);
                return c->interrupted ? set_error(ret, DOCKER_INTERRUPTED, xstrdup("interrupted"))
                                      : 0;
        }
        command_output_done(&out);
        ins = inspect_container(c, c->subject, &err);
        if (!ins) {
                json_object_set_new(ev, "probe_error", json_string(err));
                free(err);
                return c->interrupted ? set_error(ret, DOCKER_INTERRUPTED, xstrdup("interrupted"))
                                      : 0;
        }
        json_t *state = json_object_get(ins, "State");
        if (!json_is_true(json_object_get(state, "Running"))) {
                cleanup_free char *m =
                        xasprintf("subject is not running (exit code %" JSON_INTEGER_FORMAT ")",
                                  json_integer_value(json_object_get(state, "ExitCode")));
                json_object_set_new(ev, "probe_error", json_string(m));
                json_decref(ins);
                return 0;
        }
        /* In a private PID namespace the subject's init is 1; when it shares
         * the host's, the helper shares it too and sees the host pid. */
        if (streq(jstr(json_object_get(ins, "HostConfig"), "PidMode"), "host"))
                anchor = (long) json_integer_value(json_object_get(state, "Pid"));
        json_decref(ins);

        probe = run_helper(c, user, anchor, &err);
        if (!probe) {
                json_object_set_new(ev, "probe_error", json_string(err));
                free(err);
                return c->interrupted ? set_error(ret, DOCKER_INTERRUPTED, xstrdup("interrupted"))
                                      : 0;
        }
        json_object_set_new(ev, "probe", probe);
        return 0;
}

int docker_measure_containment(const struct docker_options *o, struct docker_run *ret)
{
        struct ctx c = { .o = o };
        struct docker_run run = { .outcome = DOCKER_MEASURED };
        cleanup_free char *hex = NULL;
        char *cerr = NULL;
        int r;

        r = random_hex(6, &hex);
        if (r < 0) {
                run.outcome = DOCKER_FAILED;
                run.message = xasprintf("random: %s", strerror(-r));
                *ret = run;
                return 0;
        }
        c.run_id = xstrdup(hex);
        c.subject = xasprintf("openenv-validation-%s-subject", hex);
        c.helper = xasprintf("openenv-validation-%s-probe", hex);

        (void) measure(&c, &run);
        if (c.interrupted && run.outcome == DOCKER_MEASURED)
                set_error(&run, DOCKER_INTERRUPTED, xstrdup("interrupted"));
        /* Whatever happened above: remove what we created. */
        if (cleanup_run(&c, &cerr) < 0) {
                cleanup_free char *m = run.message;
                run.message = m ? xasprintf("%s; %s", m, cerr) : xstrdup(cerr);
                free(cerr);
                if (run.outcome != DOCKER_INTERRUPTED)
                        run.outcome = DOCKER_FAILED;
        }
        if (run.outcome != DOCKER_MEASURED) {
                json_decref(run.evidence);
                run.evidence = NULL;
        }
        run.run_id = TAKE_PTR(c.run_id);
        free(c.subject);
        free(c.helper);
        free(c.helper_image);
        free(c.bind_dir);
        strv_free(c.volumes);
        *ret = run;
        return 0;
}

void docker_run_done(struct docker_run *r)
{
        json_decref(r->evidence);
        free(r->message);
        free(r->run_id);
        *r = (struct docker_run){};
}
