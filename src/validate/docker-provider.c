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
#include "probe/containment-probe.h"
#include "probe/namespace-ids.h"
#include "base/command.h"
#include "validate/containment-grader.h"
#include "validate/docker-provider.h"
#include "validate/image-ref.h"
#include "validate/sha256.h"
#include "validate/tar-writer.h"

#define RUN_LABEL            "org.openenvd.validation.run"
#define SUBJECT_USER         "65532:65532"
#define FAULT_BIND_TARGET    "/mnt/openenv-fault"
#define FAULT_VOLUME_DST     "/data"
#define FAULT_DEV_TMPFS_PATH "/dev/openenv-fault"
#define HELPER_REPOSITORY    "openenvd-probe-helper"
#define HELPER_BINARY        "openenvd-probe"
#define PROBE_MAX_BINARY     (64UL * 1024 * 1024)
#define BRIEF_OUTPUT_BYTES   (64UL * 1024) /* output of commands we only check the status of */
#define CMD_TIMEOUT          (60 * USEC_PER_SEC)
#define CLEANUP_TIMEOUT      (30 * USEC_PER_SEC)
#define DIAGNOSE_TIMEOUT     (5 * USEC_PER_SEC)
/* The helper reports progress on stderr at every phase (a few ms apart). A
 * subject can SIGSTOP it (same uid, same PID namespace): then it falls
 * silent, and HELPER_STALL_S later we end the run and say so, so the whole
 * run ends well within 15 s of the stop. HELPER_TIMEOUT bounds a helper that
 * progresses, slowly. */
#define HELPER_STALL_S 10
#define HELPER_TIMEOUT (60 * USEC_PER_SEC)

/* The writable roots the subject is given (the --tmpfs and --shm-size
 * below): the helper's positive controls and the grader's exemptions. */
static const char *const allotted_roots[] = { "/tmp", "/dev/shm" };

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
        { "traceable-helper", FAULT_TRACEABLE_HELPER },
        { "slow-helper", FAULT_SLOW_HELPER },
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
        char *run_id;         /* owned */
        char *subject;        /* owned: container name */
        char *helper;         /* owned: container name */
        char *subject_image;  /* owned: the subject image's ID */
        char *helper_image;   /* owned: the helper image's ID */
        json_t *helper_shown; /* owned: {tag, id, layer} for the evidence */
        char *bind_dir;       /* owned: host dir for FAULT_WRITABLE_BIND */
        char **volumes;       /* owned: anonymous volumes to remove */
        bool interrupted;
        bool cleaning;
};

/* Runs `docker [--host=H] args...`; idle > 0 ends a command that stays
 * silent that long (-ETIME). Records interruption. */
static int docker_idle(struct ctx *c, char *const *args, int stdin_fd, usec_t timeout, usec_t idle,
                       size_t max, struct command_output *out)
{
        cleanup_strv char **argv = NULL;
        int r;

        if (c->interrupted && !c->cleaning)
                return -ECANCELED;
        strv_push(&argv, xstrdup(c->o->docker));
        /* One argument: a value can never be taken for an option. */
        if (c->o->host)
                strv_push(&argv, xasprintf("--host=%s", c->o->host));
        for (char *const *a = args; *a; a++)
                strv_push(&argv, xstrdup(*a));
        r = command_run(&(struct command_spec){ .argv = argv,
                                                .stdin_fd = stdin_fd,
                                                .timeout = timeout,
                                                .idle_timeout = idle,
                                                .max_out = max,
                                                .cancel_fd = c->cleaning ? -1 : c->o->cancel_fd },
                        out);
        if (r == -ECANCELED)
                c->interrupted = true;
        return r;
}

static int docker(struct ctx *c, char *const *args, int stdin_fd, usec_t timeout, size_t max,
                  struct command_output *out)
{
        return docker_idle(c, args, stdin_fd, timeout, 0, max, out);
}

/* Docker's whole error (stderr), not just its last line: the cause is often
 * on the line before "failed to start containers". The helper's progress
 * lines are dropped; bytes that are not printable ASCII become '?' (the text
 * can come from a hostile image and must be valid in a JSON report); bounded
 * by DOCKER_ERROR_MAX_BYTES. */
static char *err_text(const struct command_output *out)
{
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;
        const char *p = out->err ? out->err : "", *end = p + out->err_len;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t n = (size_t) ((nl ? nl : end) - p);

                while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\r' || p[n - 1] == '\t'))
                        n--;
                if (n > 0 && !(n >= strlen(CONTAINMENT_PROBE_PROGRESS) &&
                               memcmp(p, CONTAINMENT_PROBE_PROGRESS,
                                      strlen(CONTAINMENT_PROBE_PROGRESS)) == 0)) {
                        if (sb.len > 0)
                                strbuf_adds(&sb, "; ");
                        for (size_t i = 0; i < n; i++)
                                strbuf_addch(&sb, p[i] >= ' ' && p[i] < 0x7f ? p[i] : '?');
                }
                p = nl ? nl + 1 : end;
        }
        if (sb.len > DOCKER_ERROR_MAX_BYTES) {
                sb.len = DOCKER_ERROR_MAX_BYTES;
                sb.buf[sb.len] = '\0';
                strbuf_adds(&sb, "...");
        }
        return strbuf_detach(&sb, NULL);
}

static char *cmd_error(const char *what, int r, const struct command_output *out)
{
        if (r == -ECANCELED)
                return xasprintf("%s: interrupted", what);
        if (r == -ETIMEDOUT)
                return xasprintf("%s: timed out", what);
        if (r < 0)
                return xasprintf("%s: %s", what, strerror(-r));
        cleanup_free char *text = err_text(out);
        return xasprintf("%s: exit %d%s%s", what, out->exit_status, *text ? ": " : "", text);
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
        int r = docker(c, ARGS("version", "--format={{.Server.Version}}"), -1, CMD_TIMEOUT, 4096,
                       &out);

        if (r < 0 || out.exit_status != 0) {
                char *m = cmd_error("docker engine unreachable", r, &out);
                command_output_done(&out);
                return set_error(ret, c->interrupted ? DOCKER_INTERRUPTED : DOCKER_FAILED, m);
        }
        command_output_done(&out);
        return 0;
}

static bool is_image_id(const char *s)
{
        const char *hex = s ? startswith(s, "sha256:") : NULL;
        return hex && strlen(hex) == 64 && strspn(hex, "0123456789abcdef") == 64;
}

/* `docker image inspect -- ref`: the single object, or NULL with *ret_error
 * and *ret_missing (no such image). Bounded: a hostile image's metadata may
 * be huge. */
static json_t *inspect_image(struct ctx *c, const char *ref, bool *ret_missing, char **ret_error)
{
        struct command_output out = {};
        json_t *v, *o;
        int r = docker(c, ARGS("image", "inspect", "--", (char *) ref), -1, CMD_TIMEOUT,
                       DOCKER_OUTPUT_MAX_BYTES, &out);

        *ret_missing = r == 0 && out.exit_status != 0 && strstr(out.err, "No such image");
        if (r < 0 || out.exit_status != 0 || out.out_truncated) {
                *ret_error = out.out_truncated ? xstrdup("image inspect: metadata too large")
                                               : cmd_error("image inspect", r, &out);
                command_output_done(&out);
                return NULL;
        }
        v = json_loadb(out.out, out.out_len, 0, NULL);
        command_output_done(&out);
        o = json_array_size(v) == 1 ? json_array_get(v, 0) : NULL;
        if (!json_is_object(o) || !is_image_id(json_string_value(json_object_get(o, "Id")))) {
                json_decref(v);
                *ret_error = xstrdup("image inspect: not an image object with an ID");
                return NULL;
        }
        json_incref(o);
        json_decref(v);
        return o;
}

/* A list of strings, or null: Config.Entrypoint/Cmd. Anything else is NULL. */
static json_t *string_list(json_t *v)
{
        size_t i;
        json_t *x;

        if (json_is_null(v) || !v)
                return json_null();
        if (!json_is_array(v))
                return NULL;
        json_array_foreach(v, i, x) if (!json_is_string(x)) return NULL;
        return json_incref(v);
}

/* Resolves the subject image once, to its ID, and records what the grader
 * needs of its config: the command, and the VOLUMEs it declares (each a
 * violation: Docker would give it persistent storage). */
static json_t *resolve_subject_image(struct ctx *c, struct docker_run *ret)
{
        const struct docker_options *o = c->o;
        cleanup_free char *err = NULL;
        json_t *img, *cfg, *shown, *entrypoint, *cmd, *vols, *v;
        bool missing = false;
        const char *k;

        img = inspect_image(c, o->image, &missing, &err);
        if (!img) {
                enum docker_outcome oc = c->interrupted ? DOCKER_INTERRUPTED
                                         : missing      ? DOCKER_BAD_INPUT
                                                        : DOCKER_FAILED;
                set_error(ret, oc,
                          missing ? xasprintf("no such image: %s", o->image) : TAKE_PTR(err));
                return NULL;
        }
        cfg = json_object_get(img, "Config");
        entrypoint = string_list(json_object_get(cfg, "Entrypoint"));
        cmd = string_list(json_object_get(cfg, "Cmd"));
        vols = json_object_get(cfg, "Volumes");
        if (!entrypoint || !cmd || !(json_is_null(vols) || !vols || json_is_object(vols))) {
                json_decref(entrypoint);
                json_decref(cmd);
                json_decref(img);
                set_error(ret, DOCKER_FAILED,
                          xstrdup("image inspect: unexpected Config.Entrypoint, Cmd or Volumes"));
                return NULL;
        }
        ret->image_id = xstrdup(json_string_value(json_object_get(img, "Id")));
        c->subject_image = xstrdup(ret->image_id);
        if (json_array_size(entrypoint) == 0 && json_array_size(cmd) == 0) {
                json_decref(entrypoint);
                json_decref(cmd);
                json_decref(img);
                set_error(ret, DOCKER_BAD_INPUT,
                          xstrdup("image has no command: it declares neither ENTRYPOINT nor CMD, "
                                  "so there is nothing to run"));
                return NULL;
        }
        shown = json_pack("{s:s,s:s,s:o,s:o,s:[]}", "ref", o->image, "id", ret->image_id,
                          "entrypoint", entrypoint, "cmd", cmd, "volumes");
        if (!shown)
                oom();
        json_object_foreach(vols, k, v)
                json_array_append_new(json_object_get(shown, "volumes"), json_string(k));
        json_decref(img);
        return shown;
}

/* The helper's tarball: the static probe alone, execute-only. Not readable
 * means the kernel marks the process non-dumpable at exec (would_dump()), so
 * the subject, same uid and PID namespace, cannot ptrace it or open its
 * /proc/<pid>/mem, fd or root. The archive is deterministic (fixed owner,
 * mode, mtime), so its SHA-256 is the image layer's digest. */
static int helper_tarball(const struct docker_options *o, int *ret_fd, char ret_hex[65])
{
        cleanup_free char *bin = NULL, *tar = NULL;
        cleanup_close int fd = -EBADF;
        mode_t mode = o->faults & FAULT_TRACEABLE_HELPER ? 0755 : 0111;
        size_t len, tar_len;
        int r;

        r = read_full_file_at(AT_FDCWD, o->probe_path, PROBE_MAX_BINARY, &bin, &len);
        if (r < 0)
                return r;
        fd = memfd_create("openenvd-probe-image", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if ((r = tar_add_dir(fd, "etc/", 0755, 0, 0)) < 0 ||
            (r = tar_add_file(fd, HELPER_BINARY, mode, 0, 0, bin, len)) < 0 ||
            (r = tar_finish(fd)) < 0)
                return r;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        r = read_full_fd(fd, PROBE_MAX_BINARY + 65536, &tar, &tar_len);
        if (r < 0)
                return r;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        sha256_hex(tar, tar_len, ret_hex);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* An image is our helper only if it is exactly our tarball (one layer, its
 * digest) and its config adds nothing that would change how it runs. */
static bool helper_image_matches(json_t *img, const char *layer)
{
        json_t *layers = json_object_get(json_object_get(img, "RootFS"), "Layers");
        json_t *cfg = json_object_get(img, "Config"), *env = json_object_get(cfg, "Env");
        static const char *const unset[] = { "Entrypoint", "Volumes", "Healthcheck", "OnBuild" };

        if (json_array_size(layers) != 1 ||
            !streq_ptr(json_string_value(json_array_get(layers, 0)), layer))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(unset); i++) {
                json_t *v = json_object_get(cfg, unset[i]);
                if (v && !json_is_null(v))
                        return false;
        }
        return !env || json_is_null(env) || (json_is_array(env) && json_array_size(env) == 0);
}

/* Finds or imports the helper image and pins it by ID (c->helper_image). A
 * cached image under our tag is used only if it matches the tarball; anything
 * else under that tag (a look-alike planted by someone who can reach the
 * engine) is replaced by a fresh import, and what was imported is checked
 * again. */
static int ensure_helper_image(struct ctx *c, struct docker_run *ret)
{
        cleanup_close int tar_fd = -EBADF;
        cleanup_free char *tag = NULL, *layer = NULL, *label = NULL, *err = NULL, *id = NULL;
        struct command_output out = {};
        bool missing;
        char hex[65];
        json_t *img;
        int r;

        r = helper_tarball(c->o, &tar_fd, hex);
        if (r < 0)
                return set_error(ret, DOCKER_FAILED,
                                 xasprintf("probe helper %s: %s", c->o->probe_path, strerror(-r)));
        tag = xasprintf("%s:%s", HELPER_REPOSITORY, hex);
        layer = xasprintf("sha256:%s", hex);

        img = inspect_image(c, tag, &missing, &err);
        if (img && helper_image_matches(img, layer))
                id = xstrdup(json_string_value(json_object_get(img, "Id")));
        json_decref(img);
        if (c->interrupted)
                return set_error(ret, DOCKER_INTERRUPTED, xstrdup("interrupted"));

        if (!id) {
                label = xasprintf("LABEL org.openenvd.probe.layer=%s", layer);
                r = docker(c, ARGS("import", "--change", label, "--", "-", tag), tar_fd,
                           CMD_TIMEOUT, 4096, &out);
                if (r < 0 || out.exit_status != 0) {
                        char *m = cmd_error("helper image import", r, &out);
                        command_output_done(&out);
                        return set_error(ret, c->interrupted ? DOCKER_INTERRUPTED : DOCKER_FAILED,
                                         m);
                }
                /* `docker import` prints the new image's ID. */
                id = xstrndup(out.out, strcspn(out.out, "\n"));
                command_output_done(&out);
                free(err);
                err = NULL;
                img = is_image_id(id) ? inspect_image(c, id, &missing, &err) : NULL;
                if (!img || !helper_image_matches(img, layer)) {
                        json_decref(img);
                        return set_error(ret, c->interrupted ? DOCKER_INTERRUPTED : DOCKER_FAILED,
                                         xasprintf("helper image %s does not hold the layer %s "
                                                   "that was imported",
                                                   id, layer));
                }
                json_decref(img);
        }
        c->helper_image = TAKE_PTR(id);
        c->helper_shown =
                json_pack("{s:s,s:s,s:s}", "tag", tag, "id", c->helper_image, "layer", layer);
        if (!c->helper_shown)
                oom();
        return 0;
}

static json_t *inspect_container(struct ctx *c, const char *name, char **ret_error)
{
        struct command_output out = {};
        json_t *v, *o;
        int r = docker(c, ARGS("inspect", "--type", "container", "--", (char *) name), -1,
                       CMD_TIMEOUT, DOCKER_OUTPUT_MAX_BYTES, &out);

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

        push_args(&a, "create", "--pull", "never", "--name", c->subject, "--label", label,
                  "--stop-timeout", "0", "--init", "--cgroupns", "private", "--user", user,
                  "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--pids-limit", pids,
                  "--memory", mem, "--memory-swap", mem, "--cpus", cpus, "--shm-size", shm_s,
                  "--tmpfs", tmpfs, "--log-driver", "json-file", "--log-opt", "max-size=1m",
                  "--log-opt", "max-file=1", NULL);
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
        /* By ID: exactly the image inspected above, whatever its tag now
         * points to. */
        push_args(&a, "--", c->subject_image, NULL);

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
 * (the image's VOLUMEs are refused before create; this catches anything
 * else). Records anonymous volumes for removal. Returns the first such mount
 * as "type at destination", or NULL: the subject is then not started, and the
 * launch evidence (which lists the mounts) fails the check. */
static char *unexpected_mount(struct ctx *c, json_t *ins)
{
        char *found = NULL;
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
                if (!found && (streq(type, "bind") || streq(type, "volume")))
                        found = xasprintf("%s at %s", type, dst);
        }
        return found;
}

/* `docker ps` works while the engine holds a container's lock (a start that
 * waits on a stopped runtime init); inspect and top would hang. Returns the
 * container's state ("created", "running", "exited", ...) and status text. */
static char *container_state(struct ctx *c, const char *name)
{
        struct command_output out = {};
        cleanup_free char *filter = xasprintf("label=%s=%s", RUN_LABEL, c->run_id);
        char *state = NULL;
        int r = docker(c,
                       ARGS("ps", "--all", "--no-trunc", "--filter", filter,
                            "--format={{.Names}}\t{{.State}}\t{{.Status}}"),
                       -1, DIAGNOSE_TIMEOUT, BRIEF_OUTPUT_BYTES, &out);

        if (r < 0 || out.exit_status != 0) {
                command_output_done(&out);
                return NULL;
        }
        for (char *p = out.out, *nl; p && *p && !state; p = nl) {
                char *tab;
                nl = strchr(p, '\n');
                if (nl)
                        *nl++ = '\0';
                tab = strchr(p, '\t');
                if (tab && (size_t) (tab - p) == strlen(name) &&
                    strncmp(p, name, strlen(name)) == 0)
                        state = xstrdup(tab + 1);
        }
        command_output_done(&out);
        if (state)
                for (char *t = strchr(state, '\t'); t; t = strchr(t, '\t'))
                        *t = ' ';
        return state;
}

/* The STAT column of the helper's processes (`ps -o stat`), e.g. "T" for a
 * stopped one; NULL if unknown. Only for a running container. */
static char *helper_process_state(struct ctx *c)
{
        struct command_output out = {};
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;
        int r = docker(c, ARGS("top", "--", c->helper, "-o", "pid,stat"), -1, DIAGNOSE_TIMEOUT,
                       BRIEF_OUTPUT_BYTES, &out);
        bool header = true;

        if (r < 0 || out.exit_status != 0) {
                command_output_done(&out);
                return NULL;
        }
        for (char *p = out.out, *nl; p && *p; p = nl) {
                char *stat;
                nl = strchr(p, '\n');
                if (nl)
                        *nl++ = '\0';
                if (header) {
                        header = false;
                        continue;
                }
                stat = p + strcspn(p, " \t");
                stat += strspn(stat, " \t");
                stat[strcspn(stat, " \t")] = '\0';
                if (*stat)
                        strbuf_addf(&sb, "%s%s", sb.len ? "," : "", stat);
        }
        command_output_done(&out);
        return sb.len ? strbuf_detach(&sb, NULL) : NULL;
}

/* Why the helper did not deliver a document, in words a reader can act on.
 * The subject shares the helper's uid and PID namespace, so it can signal
 * it (or the runtime's init that is about to exec it): those cases are named
 * as such. Ends with the subject's state if it is no longer running. */
static char *helper_failure(struct ctx *c, int r, const struct command_output *out)
{
        static const char *const who =
                "a process of the subject's uid in its PID namespace can signal it";
        cleanup_free char *state = NULL, *stat = NULL, *subject = NULL, *text = NULL;
        char *msg;

        if (r == -ECANCELED)
                return xstrdup("helper: interrupted");
        if (r == 0 && out->out_truncated)
                return xstrdup("helper output exceeds PROBE_EVIDENCE_MAX_BYTES");
        if (r == -ETIME || r == -ETIMEDOUT) {
                state = container_state(c, c->helper);
                if (state && startswith(state, "created"))
                        msg = xasprintf("the helper never started: for %d s the runtime's init, "
                                        "waiting in the subject's PID namespace to exec it, made "
                                        "no progress (stopped or frozen there: %s)",
                                        HELPER_STALL_S, who);
                else if (state && startswith(state, "running") &&
                         (stat = helper_process_state(c)) && (stat[0] == 'T' || stat[0] == 't'))
                        msg = xasprintf("the helper was stopped (process state %s) and made no "
                                        "progress for %d s: %s",
                                        stat, HELPER_STALL_S, who);
                else if (r == -ETIME)
                        msg = xasprintf("the helper made no progress for %d s (container %s, "
                                        "process state %s)",
                                        HELPER_STALL_S, state ? state : "unknown",
                                        stat ? stat : "unknown");
                else
                        msg = xasprintf("the helper did not finish in time (container %s)",
                                        state ? state : "unknown");
        } else if (r < 0)
                msg = xasprintf("helper: %s", strerror(-r));
        else {
                text = err_text(out);
                if (out->exit_status > 128 && out->exit_status < 128 + 65 && !*text)
                        msg = xasprintf("the helper was killed by signal %d (%s) before it "
                                        "reported: %s",
                                        out->exit_status - 128, strsignal(out->exit_status - 128),
                                        who);
                else if (strstr(text, "cannot start a stopped process"))
                        msg = xasprintf("the helper was killed before it ran (the runtime's init, "
                                        "waiting to exec it, is gone): %s; docker: %s",
                                        who, text);
                else if (out->exit_status != 0)
                        msg = xasprintf("helper: exit %d%s%s", out->exit_status, *text ? ": " : "",
                                        text);
                else
                        msg = xstrdup("helper output is not a JSON object");
        }
        subject = container_state(c, c->subject);
        if (subject && !startswith(subject, "running")) {
                char *m = xasprintf("%s; the subject is no longer running (%s)", msg, subject);
                free(msg);
                msg = m;
        }
        return msg;
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
         * every write attempt is decided exactly as for the subject. Run by
         * ID, with everything the image config could say overridden. */
        push_args(&a, "create", "--pull", "never", "--name", c->helper, "--label", label, "--pid",
                  pidns, "--network", "none", "--cgroupns", "private", "--read-only", "--cap-drop",
                  "ALL", "--security-opt", "no-new-privileges", "--user", user, "--pids-limit",
                  "64", "--memory", "64m", "--memory-swap", "64m", "--stop-timeout", "0",
                  "--log-driver", "none", "--no-healthcheck", "--workdir", "/", "--entrypoint",
                  "/" HELPER_BINARY, "--", c->helper_image, "containment", "--anchor-pid", anchor_s,
                  NULL);
        for (size_t i = 0; i < ELEMENTSOF(allotted_roots); i++)
                push_args(&a, "--allotted", allotted_roots[i], NULL);
        /* Test-only: a helper that waits after it started gives the hostile
         * subjects of the tests a window they cannot miss. */
        if (c->o->faults & FAULT_SLOW_HELPER)
                push_args(&a, "--test-hold-ms", "2000", NULL);
        r = docker(c, a, -1, CMD_TIMEOUT, DOCKER_OUTPUT_MAX_BYTES, &out);
        if (r < 0 || out.exit_status != 0) {
                *ret_error = cmd_error("create helper", r, &out);
                command_output_done(&out);
                return NULL;
        }
        command_output_done(&out);
        /* Its stdout, relayed by the engine, is the results channel: the
         * subject has no fd to it and, the helper being non-dumpable, cannot
         * reach it through /proc either. */
        r = docker_idle(c, ARGS("start", "--attach", "--", c->helper), -1, HELPER_TIMEOUT,
                        HELPER_STALL_S * USEC_PER_SEC, PROBE_EVIDENCE_MAX_BYTES, &out);
        doc = r == 0 && out.exit_status == 0 && !out.out_truncated
                      ? json_loadb(out.out, out.out_len, JSON_REJECT_DUPLICATES, NULL)
                      : NULL;
        if (!json_is_object(doc)) {
                json_decref(doc);
                *ret_error = helper_failure(c, r, &out);
                command_output_done(&out);
                return NULL;
        }
        command_output_done(&out);
        return doc;
}

/* The names of this run's containers, or NULL with *ret_error. */
static char **list_owned(struct ctx *c, char **ret_error)
{
        struct command_output out = {};
        cleanup_free char *filter = xasprintf("label=%s=%s", RUN_LABEL, c->run_id);
        char **names = NULL;
        int r = docker(c,
                       ARGS("ps", "--all", "--no-trunc", "--filter", filter, "--format={{.Names}}"),
                       -1, CLEANUP_TIMEOUT, DOCKER_OUTPUT_MAX_BYTES, &out);

        if (r < 0 || out.exit_status != 0) {
                *ret_error = cmd_error("docker ps", r, &out);
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
        return names ? names : xcalloc(1, sizeof(char *));
}

/* Removes everything this run created; verified by listing, not by rm's
 * error text (engines word "no such container" differently). */
static int cleanup_run(struct ctx *c, char **ret_error)
{
        cleanup_strv char **names = NULL, **left = NULL;
        cleanup_free char *err = NULL;
        struct command_output out = {};
        int r;

        c->cleaning = true;
        names = list_owned(c, &err);
        if (!names) {
                *ret_error = xasprintf("cleanup: cannot list the containers of run %s: %s",
                                       c->run_id, err);
                return -EIO;
        }
        /* The subject first: its end kills every process in its PID
         * namespace, including a runtime init the subject stopped, which
         * releases an engine still waiting to start the helper. */
        if (strv_contains(names, c->subject)) {
                (void) docker(c, ARGS("rm", "--force", "--volumes", "--", c->subject), -1,
                              CLEANUP_TIMEOUT, BRIEF_OUTPUT_BYTES, &out);
                command_output_done(&out);
        }
        if (names[0]) {
                cleanup_strv char **a = NULL;
                push_args(&a, "rm", "--force", "--volumes", "--", NULL);
                for (char **n = names; *n; n++)
                        if (!streq(*n, c->subject))
                                strv_push(&a, xstrdup(*n));
                if (strv_length(a) > 4)
                        (void) docker(c, a, -1, CLEANUP_TIMEOUT, BRIEF_OUTPUT_BYTES, &out);
                command_output_done(&out);
        }
        free(err);
        err = NULL;
        left = list_owned(c, &err);
        if (!left || left[0]) {
                *ret_error = xasprintf("could not remove validation container%s%s",
                                       left && left[0] ? " " : "", left && left[0] ? left[0] : "");
                return -EIO;
        }
        for (char **v = c->volumes; v && *v; v++) {
                (void) docker(c, ARGS("volume", "rm", "--force", "--", *v), -1, CLEANUP_TIMEOUT,
                              BRIEF_OUTPUT_BYTES, &out);
                command_output_done(&out);
                r = docker(c, ARGS("volume", "inspect", "--", *v), -1, CLEANUP_TIMEOUT,
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

/* The evidence skeleton: the contract and the image (docs/VALIDATE.md). */
static json_t *evidence_new(json_t *image)
{
        /* The contract's identity, not the (possibly faulted) launch one: a
         * root subject must fail against 65532. */
        json_t *ev = json_pack("{s:i,s:{s:i,s:i},s:[],s:o}", "schema", CONTAINMENT_EVIDENCE_SCHEMA,
                               "subject_user", "uid", 65532, "gid", 65532, "allotted_roots",
                               "image", image);
        if (!ev)
                oom();
        for (size_t i = 0; i < ELEMENTSOF(allotted_roots); i++)
                json_array_append_new(json_object_get(ev, "allotted_roots"),
                                      json_string(allotted_roots[i]));
        return ev;
}

/* Measurement stops here without a helper document: the grader reports
 * why (SKIP, unless something already proves a violation). */
static int no_probe(struct ctx *c, json_t *ev, struct docker_run *ret, char *why)
{
        json_object_set_new(ev, "probe_error", json_string(why));
        free(why);
        return c->interrupted ? set_error(ret, DOCKER_INTERRUPTED, xstrdup("interrupted")) : 0;
}

static int measure(struct ctx *c, struct docker_run *ret)
{
        const struct docker_options *o = c->o;
        const char *user = o->faults & FAULT_ROOT ? "0:0" : SUBJECT_USER;
        json_t *ins, *ev, *image, *probe, *state;
        char *err = NULL, *mount;
        long anchor = 1;
        struct command_output out = {};
        int r;

        if (check_engine(c, ret) < 0 || !(image = resolve_subject_image(c, ret)))
                return -1;
        ev = ret->evidence = evidence_new(image); /* partial evidence is still evidence */
        if (json_array_size(json_object_get(image, "volumes")) > 0)
                /* Creating it would already make the volumes on the host. */
                return no_probe(c, ev, ret,
                                xstrdup("not launched: the image declares VOLUMEs, which Docker "
                                        "would back with persistent storage"));
        if (ensure_helper_image(c, ret) < 0)
                return -1;
        json_object_set(ev, "helper_image", c->helper_shown);
        if (create_subject(c, user, ret) < 0)
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
        json_object_set_new(ev, "launch", launch_from_inspect(ins));
        mount = unexpected_mount(c, ins);
        json_decref(ins);
        if (engine_is_local(o))
                json_object_set_new(ev, "host_ns", host_namespaces());
        if (mount) {
                char *m = xasprintf("not started: the container has a persistent mount nobody "
                                    "asked for (%s)",
                                    mount);
                free(mount);
                return no_probe(c, ev, ret, m);
        }

        r = docker(c, ARGS("start", "--", c->subject), -1, CMD_TIMEOUT, DOCKER_OUTPUT_MAX_BYTES,
                   &out);
        if (r < 0 || out.exit_status != 0) {
                char *m = cmd_error("start subject", r, &out);
                command_output_done(&out);
                return no_probe(c, ev, ret, m);
        }
        command_output_done(&out);
        ins = inspect_container(c, c->subject, &err);
        if (!ins)
                return no_probe(c, ev, ret, err);
        state = json_object_get(ins, "State");
        if (!json_is_true(json_object_get(state, "Running"))) {
                char *m = xasprintf("subject is not running (exit code %" JSON_INTEGER_FORMAT ")",
                                    json_integer_value(json_object_get(state, "ExitCode")));
                json_decref(ins);
                return no_probe(c, ev, ret, m);
        }
        /* In a private PID namespace the subject's init is 1; when it shares
         * the host's, the helper shares it too and sees the host pid. */
        if (streq(jstr(json_object_get(ins, "HostConfig"), "PidMode"), "host"))
                anchor = (long) json_integer_value(json_object_get(state, "Pid"));
        json_decref(ins);

        probe = run_helper(c, user, anchor, &err);
        if (!probe)
                return no_probe(c, ev, ret, err);
        json_object_set_new(ev, "probe", probe);
        return 0;
}

int docker_measure_containment(const struct docker_options *o, struct docker_run *ret)
{
        struct ctx c = { .o = o };
        struct docker_run run = { .outcome = DOCKER_MEASURED };
        cleanup_free char *hex = NULL;
        const char *why = NULL;
        char *cerr = NULL;
        int r;

        /* Before any docker command sees it. */
        if (image_ref_check(o->image, &why) < 0) {
                run.outcome = DOCKER_BAD_INPUT;
                run.message = xasprintf("not a valid image reference: %s", why);
                *ret = run;
                return 0;
        }
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
        free(c.subject_image);
        free(c.helper_image);
        json_decref(c.helper_shown);
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
        free(r->image_id);
        *r = (struct docker_run){};
}
