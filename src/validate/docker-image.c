/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The two images of a run. The subject image is resolved once to its
 * immutable ID (what was inspected is what runs); the helper image holds the
 * static probe alone and is trusted by content, never by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/util.h"
#include "validate/docker-internal.h"
#include "validate/sha256.h"
#include "validate/tar-writer.h"

static bool is_image_id(const char *s)
{
        const char *hex = s ? startswith(s, "sha256:") : NULL;
        return hex && strlen(hex) == 64 && strspn(hex, "0123456789abcdef") == 64;
}

/* `docker image inspect -- ref`: the single object, or NULL with *ret_error
 * and *ret_missing (no such image). Bounded: a hostile image's metadata may
 * be huge. */
static json_t *inspect_image(struct docker_ctx *c, const char *ref, bool *ret_missing,
                             char **ret_error)
{
        struct command_output out = {};
        json_t *v, *o;
        int r = docker_cli(c, ARGS("image", "inspect", "--", (char *) ref), -1, CMD_TIMEOUT,
                           DOCKER_OUTPUT_MAX_BYTES, &out);

        *ret_missing = r == 0 && out.exit_status != 0 && strstr(out.err, "No such image");
        if (r < 0 || out.exit_status != 0 || out.out_truncated) {
                *ret_error = out.out_truncated ? xstrdup("image inspect: metadata too large")
                                               : docker_cmd_error("image inspect", r, &out);
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
json_t *docker_subject_image_resolve(struct docker_ctx *c, struct docker_run *ret)
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
                docker_run_fail(ret, oc,
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
                docker_run_fail(
                        ret, DOCKER_FAILED,
                        xstrdup("image inspect: unexpected Config.Entrypoint, Cmd or Volumes"));
                return NULL;
        }
        ret->image_id = xstrdup(json_string_value(json_object_get(img, "Id")));
        c->subject_image = xstrdup(ret->image_id);
        if (json_array_size(entrypoint) == 0 && json_array_size(cmd) == 0) {
                json_decref(entrypoint);
                json_decref(cmd);
                json_decref(img);
                docker_run_fail(
                        ret, DOCKER_BAD_INPUT,
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

/* The helper's layer: the static probe alone, execute-only. Not readable
 * means the kernel marks the process non-dumpable at exec (would_dump()), so
 * the subject, same uid and PID namespace, cannot ptrace it or open its
 * /proc/<pid>/mem, fd or root. The archive is deterministic (fixed owner,
 * mode, mtime), so its SHA-256 is the image layer's digest. */
static int helper_layer(const struct docker_options *o, char **ret_tar, size_t *ret_len,
                        char ret_hex[65])
{
        cleanup_free char *bin = NULL;
        cleanup_close int fd = -EBADF;
        mode_t mode = o->faults & FAULT_TRACEABLE_HELPER ? 0755 : 0111;
        size_t len;
        int r;

        r = read_full_file_at(AT_FDCWD, o->probe_path, PROBE_MAX_BINARY, &bin, &len);
        if (r < 0)
                return r;
        fd = memfd_create("openenvd-probe-layer", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if ((r = tar_add_dir(fd, "etc/", 0755, 0, 0)) < 0 ||
            (r = tar_add_file(fd, HELPER_BINARY, mode, 0, 0, bin, len)) < 0 ||
            (r = tar_finish(fd)) < 0)
                return r;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        r = read_full_fd(fd, PROBE_MAX_BINARY + 65536, ret_tar, ret_len);
        if (r < 0)
                return r;
        sha256_hex(*ret_tar, *ret_len, ret_hex);
        return 0;
}

#if defined(__x86_64__)
#define HELPER_ARCH "amd64"
#elif defined(__aarch64__)
#define HELPER_ARCH "arm64"
#else
#define HELPER_ARCH "unknown"
#endif

/* j (a new reference, consumed: ASCII we made, so only memory can fail it)
 * as compact JSON. */
static char *dump_json(json_t *j)
{
        char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

        json_decref(j);
        if (!s)
                oom();
        return s;
}

/* The helper image as a `docker load` archive (manifest.json, config, layer),
 * every byte fixed by the layer: no creation time of now, as `docker import`
 * would stamp. So the image ID (the config's digest) is the same for every
 * run, and concurrent runs that all find no cached helper load one image
 * instead of each leaving its own (untagged once the tag moves on). */
static int helper_archive(const char *tar, size_t tar_len, const char *hex, const char *tag,
                          int *ret_fd)
{
        cleanup_free char *config = NULL, *manifest = NULL, *layer_dir = NULL, *layer = NULL;
        cleanup_free char *config_name = NULL, *digest = xasprintf("sha256:%s", hex);
        cleanup_close int fd = -EBADF;
        char config_hex[65];
        int r;

        /* Compact, in this order: the bytes (and so the image ID) are what
         * they were when this was a format string. */
        config = dump_json(
                json_pack("{s:s,s:s,s:s,s:{s:{s:s}},s:{s:s,s:[s]},s:[{s:s,s:s}]}", "architecture",
                          HELPER_ARCH, "os", "linux", "created", "1970-01-01T00:00:00Z", "config",
                          "Labels", "org.openenvd.probe.layer", digest, "rootfs", "type", "layers",
                          "diff_ids", digest, "history", "created", "1970-01-01T00:00:00Z",
                          "created_by", "openenvd-probe helper"));
        sha256_hex(config, strlen(config), config_hex);
        config_name = xasprintf("%s.json", config_hex);
        layer_dir = xasprintf("%s/", hex);
        layer = xasprintf("%s/layer.tar", hex);
        manifest = dump_json(json_pack("[{s:s,s:[s],s:[s]}]", "Config", config_name, "RepoTags",
                                       tag, "Layers", layer));
        fd = memfd_create("openenvd-probe-image", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if ((r = tar_add_dir(fd, layer_dir, 0755, 0, 0)) < 0 ||
            (r = tar_add_file(fd, layer, 0644, 0, 0, tar, tar_len)) < 0 ||
            (r = tar_add_file(fd, config_name, 0644, 0, 0, config, strlen(config))) < 0 ||
            (r = tar_add_file(fd, "manifest.json", 0644, 0, 0, manifest, strlen(manifest))) < 0 ||
            (r = tar_finish(fd)) < 0)
                return r;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
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
int docker_helper_image_ensure(struct docker_ctx *c, struct docker_run *ret)
{
        cleanup_close int tar_fd = -EBADF;
        cleanup_free char *tag = NULL, *layer = NULL, *err = NULL, *id = NULL, *tar = NULL;
        struct command_output out = {};
        size_t tar_len = 0;
        bool missing;
        char hex[65];
        json_t *img;
        int r;

        r = helper_layer(c->o, &tar, &tar_len, hex);
        if (r < 0)
                return docker_run_fail(
                        ret, DOCKER_FAILED,
                        xasprintf("probe helper %s: %s", c->o->probe_path, strerror(-r)));
        tag = xasprintf("%s:%s", HELPER_REPOSITORY, hex);
        layer = xasprintf("sha256:%s", hex);

        img = inspect_image(c, tag, &missing, &err);
        if (img && helper_image_matches(img, layer))
                id = xstrdup(json_string_value(json_object_get(img, "Id")));
        json_decref(img);
        if (c->interrupted)
                return docker_run_fail(ret, DOCKER_INTERRUPTED, xstrdup("interrupted"));

        if (!id) {
                r = helper_archive(tar, tar_len, hex, tag, &tar_fd);
                if (r < 0)
                        return docker_run_fail(ret, DOCKER_FAILED,
                                               xasprintf("helper image archive: %s", strerror(-r)));
                r = docker_cli(c, ARGS("load", "--quiet"), tar_fd, CMD_TIMEOUT, 4096, &out);
                if (r < 0 || out.exit_status != 0) {
                        char *m = docker_cmd_error("helper image load", r, &out);
                        command_output_done(&out);
                        return docker_run_fail(
                                ret, c->interrupted ? DOCKER_INTERRUPTED : DOCKER_FAILED, m);
                }
                command_output_done(&out);
                /* What the tag names now, checked like a cached one: a
                 * concurrent run loads the very same image under it. */
                free(err);
                err = NULL;
                img = inspect_image(c, tag, &missing, &err);
                if (img && helper_image_matches(img, layer))
                        id = xstrdup(json_string_value(json_object_get(img, "Id")));
                json_decref(img);
                if (!id || !is_image_id(id))
                        return docker_run_fail(
                                ret, c->interrupted ? DOCKER_INTERRUPTED : DOCKER_FAILED,
                                xasprintf("helper image %s does not hold the layer %s "
                                          "that was loaded",
                                          tag, layer));
        }
        c->helper_image = TAKE_PTR(id);
        c->helper_shown =
                json_pack("{s:s,s:s,s:s}", "tag", tag, "id", c->helper_image, "layer", layer);
        if (!c->helper_shown)
                oom();
        return 0;
}
