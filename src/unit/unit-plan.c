/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/unit-plan.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "sandbox/host-view.h"

/* Everything an observer reads is data, never code, links or devices. */
#define VIEW_FLAGS (MS_RDONLY | MS_NOSYMFOLLOW | MS_NOEXEC | MS_NODEV | MS_NOSUID)
/* What a container may write: never setuid binaries or device nodes. */
#define RW_FLAGS (MS_NODEV | MS_NOSUID)

/* The unit's own image directories in the host view: read-only, runnable. */
#define HOST_VIEW_IMAGE_FLAGS (MS_RDONLY | MS_NODEV | MS_NOSUID)

#define DEFAULT_TMP_BYTES     (64ULL * 1024 * 1024)
#define CONTAINER_NOFILE      4096

static bool stat_is_dir(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool searchable_by_others(const char *path)
{
        cleanup_free char *blocker = NULL;
        return path_searchable_by_others(path, &blocker) == 0;
}

size_t unit_container_index(const struct manifest *m, const struct manifest_container *c)
{
        size_t i = 0;
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t k = 0; k < m->zones[z].n_containers; k++, i++)
                        if (&m->zones[z].containers[k] == c)
                                return i;
        return i;
}

static const char *const zone_cgroups[MANIFEST_ZONE_MAX] = {
        [MANIFEST_ZONE_AGENT] = "zones/agent",
        [MANIFEST_ZONE_SERVICES] = "zones/services",
        [MANIFEST_ZONE_OBSERVERS] = "zones/observers",
};

const char *unit_zone_cgroup(enum manifest_zone_kind z)
{
        return (unsigned) z < MANIFEST_ZONE_MAX ? zone_cgroups[z] : NULL;
}

struct cgroup_limits unit_cgroup_limits(const struct manifest_resources *res, unsigned n)
{
        return (struct cgroup_limits){
                .memory_bytes = res->memory_mb * 1024 * 1024 * n,
                .pids = res->pids * n,
                .cpu = res->cpu * n,
        };
}

size_t unit_container_count(const struct manifest *m)
{
        size_t n = 0;
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                n += m->zones[z].n_containers;
        return n;
}

static uid_t range_base(const struct unit_plan_context *ctx, const struct manifest_container *c)
{
        return (uid_t) (ctx->uid_base + unit_container_index(ctx->manifest, c) * UNIT_UID_RANGE);
}

uid_t unit_container_host_uid(const struct unit_plan_context *ctx,
                              const struct manifest_container *c)
{
        return range_base(ctx, c) + UNIT_PRINCIPAL_UID;
}

bool unit_container_is_env(const struct manifest_container *c)
{
        return c->zone == MANIFEST_ZONE_AGENT && streq(c->name, "env");
}

bool unit_container_activated(const struct manifest_container *c)
{
        return unit_container_is_env(c) || (c->zone == MANIFEST_ZONE_SERVICES && c->port);
}

char *unit_socket_dir(const struct unit_plan_context *ctx, const char *container)
{
        return xasprintf("%s/sock/%s", ctx->episode_dir, container);
}

char *unit_actions_dir(const struct unit_plan_context *ctx)
{
        return xasprintf("%s/actions", ctx->episode_dir);
}

char *unit_workspace_copy_dir(const struct unit_plan_context *ctx)
{
        return xasprintf("%s/workspace-copy", ctx->episode_dir);
}

bool unit_phase_sees_live_workspace(enum phase p)
{
        return p == PHASE_READY || p == PHASE_RUNNING || p == PHASE_PROVISIONING;
}

char *unit_observer_dir(const struct unit_plan_context *ctx, const char *observer, const char *sub)
{
        return xasprintf("%s/observers/%s/%s", ctx->episode_dir, observer, sub);
}

void unit_service_address(size_t i, char buf[static 16])
{
        /* 127.0.0.10, .11, ...: loopback addresses in the env's own netns. */
        (void) snprintf(buf, 16, "127.0.0.%zu", 10 + i);
}

char *unit_hosts_file(const struct manifest *m)
{
        const struct manifest_zone *svc = manifest_zone(m, MANIFEST_ZONE_SERVICES);
        struct strbuf sb = STRBUF_INIT;
        size_t i = 0;

        strbuf_adds(&sb, "127.0.0.1 localhost\n::1 localhost\n");
        for (size_t k = 0; k < svc->n_containers; k++) {
                const struct manifest_container *c = &svc->containers[k];
                char addr[16];
                if (!c->expose.host)
                        continue;
                unit_service_address(i++, addr);
                strbuf_addf(&sb, "%s %s\n", addr, c->expose.host);
        }
        return strbuf_detach(&sb, NULL);
}

static void strv_add_unique(char ***v, char *s)
{
        if (strv_contains(*v, s))
                free(s);
        else
                strv_push(v, s);
}

/*
 * Where an asset's mask goes: on the asset itself, or, when a directory on
 * the way to it is closed to others (an author's 0700 assets/), on that
 * directory. Containers are "others" to every host file, so none can pass
 * it: hiding it hides nothing a container could reach, and a mask below it
 * could not even be placed (the launchers resolve masks as the container's
 * root: EACCES, and the container would not start).
 */
static char *asset_mask_path(const char *path)
{
        cleanup_free char *parent = xstrdup(path);
        char *slash = strrchr(parent, '/');
        char *blocker = NULL;

        if (slash && slash != parent) {
                *slash = '\0';
                if (path_searchable_by_others(parent, &blocker) == -EACCES && blocker)
                        return blocker;
                free(blocker);
        }
        return xstrdup(path);
}

/* The history of an asset is the asset: in a git work tree its bytes are
 * also in .git (objects, packs: `git log --all -p` shows them), readable
 * wherever that directory is seen — a unit started in its own checkout, an
 * image built by `COPY . /app` from the env's repository. So the .git of
 * every work tree around an asset is masked with it (a directory or, in a
 * linked worktree or a submodule, the file naming the git dir), the
 * innermost and those around it (a submodule's objects are also in its
 * superproject's .git/modules). Found once per call by lstat() up to /. */
static void add_asset_git_dirs(char ***v, const char *asset)
{
        cleanup_free char *d = xstrdup(asset);
        char *slash;

        while ((slash = strrchr(d, '/'))) {
                struct stat st;

                *slash = '\0';
                cleanup_free char *git = xasprintf("%s/.git", d);
                if (lstat(git, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
                        strv_add_unique(v, asset_mask_path(git));
        }
}

char **unit_masks(const struct unit_plan_context *ctx)
{
        const struct manifest *m = ctx->manifest;
        char **v = NULL;

        strv_push(&v, xstrdup(ctx->state_dir));
        strv_push(&v, xstrdup("/run/secrets"));
        /* Each asset's source as it is: a directory hidden under an empty
         * tmpfs, a file under /dev/null. Never a file's parent: that is
         * where an image keeps openenv.yaml and the env's own code beside
         * the answers (issue 26). What the unit needs is never below an
         * asset (the manifest refuses it, manifest-rules.c), and files
         * beside one are no asset: the author names each. */
        for (size_t i = 0; i < m->n_assets; i++) {
                strv_add_unique(&v, asset_mask_path(m->assets[i].path));
                add_asset_git_dirs(&v, m->assets[i].path);
        }
        if (ctx->extra_masks)
                for (char *const *e = ctx->extra_masks; *e; e++)
                        strv_add_unique(&v, xstrdup(*e));
        return v;
}

static void add_forward(struct container_spec *s, enum forward_kind kind, const char *host,
                        uint16_t port, const char *path)
{
        s->forwards = xrealloc(s->forwards, (s->n_forwards + 1) * sizeof(*s->forwards));
        s->forwards[s->n_forwards++] = (struct forward){
                .kind = kind,
                .host = xstrdup(host),
                .port = port,
                .path = xstrdup(path),
        };
}

/* The daemon's listening socket, pass_fds[0] (the launcher's caller adds
 * the fd), forwarded to port on loopback. */
static void add_activation(struct container_spec *s, uint16_t port)
{
        s->forwards = xrealloc(s->forwards, (s->n_forwards + 1) * sizeof(*s->forwards));
        s->forwards[s->n_forwards++] = (struct forward){
                .kind = FORWARD_FD_TO_TCP,
                .host = xstrdup("127.0.0.1"),
                .port = port,
                .pass_index = 0,
        };
        s->n_pass_fds = 1;
}

static char *service_env_name(const char *name)
{
        char *s = xasprintf("OPENENVD_SERVICE_%s=", name);
        for (char *p = s + strlen("OPENENVD_SERVICE_"); *p != '='; p++)
                *p = *p == '-' ? '_' : (char) toupper((unsigned char) *p);
        return s;
}

static void plan_env(const struct unit_plan_context *ctx, const struct manifest_container *c,
                     struct container_spec *s)
{
        const struct manifest *m = ctx->manifest;
        bool is_env = unit_container_is_env(c);
        char ***v = &s->env;

        /* Every entry is set, not appended: of duplicate keys getenv() and
         * Python see the first, so a later value must replace it. */
        strv_env_set(v,
                     xstrdup("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
        strv_env_set(v, xstrdup("HOME=/tmp"));
        strv_env_set(v, xstrdup("LANG=C.UTF-8"));
        /* The root is read-only: don't let Python try to write .pyc files. */
        strv_env_set(v, xstrdup("PYTHONDONTWRITEBYTECODE=1"));
        strv_env_set(v, xstrdup("PYTHONUNBUFFERED=1"));
        /* The env server runs with the environment its command was
         * written for (an image's ENV), minus openenvd's own and secrets
         * (env-origin.h). */
        if (is_env && ctx->env_origin)
                for (char *const *e = ctx->env_origin->vars; e && *e; e++)
                        strv_env_set(v, xstrdup(*e));
        strv_env_set(v, xasprintf("OPENENVD_CONTAINER=%s", c->name));
        strv_env_set(v, xasprintf("OPENENVD_ZONE=%s", manifest_zone_kind_to_string(c->zone)));
        strv_env_set(v, xasprintf("OPENENVD_EPISODE=%s", ctx->episode_id));
        strv_env_set(v, xstrdup("OPENENVD_SOCKETS=/run/openenvd"));
        strv_env_set(v, xstrdup("OPENENVD_WORKSPACE=/workspace"));
        strv_env_set(v, xstrdup("OPENENVD_OUT=/out"));
        strv_env_set(v, xstrdup("OPENENVD_INPUTS=/inputs"));
        strv_env_set(v, xstrdup("OPENENVD_ASSETS=/assets"));
        strv_env_set(v, xstrdup("OPENENVD_SERVICES=/services"));

        if (c->zone == MANIFEST_ZONE_AGENT && !is_env) {
                /* The harness only ever holds the placeholder; the model proxy
                 * swaps in the real key outside the zone. */
                strv_env_set(v,
                             xasprintf("MCP_URL=http://127.0.0.1:%d/mcp", UNIT_HARNESS_MCP_PORT));
                strv_env_set(v, xasprintf("MODEL_BASE_URL=http://127.0.0.1:%d",
                                          UNIT_HARNESS_MODEL_PORT));
                strv_env_set(v, xasprintf("ANTHROPIC_BASE_URL=http://127.0.0.1:%d",
                                          UNIT_HARNESS_MODEL_PORT));
                strv_env_set(v, xstrdup("ANTHROPIC_API_KEY=" UNIT_MODEL_PLACEHOLDER));
                strv_env_set(v, xasprintf("OPENAI_BASE_URL=http://127.0.0.1:%d/v1",
                                          UNIT_HARNESS_MODEL_PORT));
                strv_env_set(v, xstrdup("OPENAI_API_KEY=" UNIT_MODEL_PLACEHOLDER));
        }
        if (is_env) {
                const struct manifest_zone *svc = manifest_zone(m, MANIFEST_ZONE_SERVICES);
                for (size_t k = 0; k < svc->n_containers; k++) {
                        const struct manifest_container *x = &svc->containers[k];
                        cleanup_free char *key = NULL;
                        if (!x->expose.host)
                                continue;
                        key = service_env_name(x->name);
                        strv_env_set(v, xasprintf("%shttp://%s:%u", key, x->expose.host,
                                                  (unsigned) x->expose.port));
                }
        }
        if (c->zone == MANIFEST_ZONE_OBSERVERS)
                unit_plan_turn_env(ctx, c, v);
        /* The container's own environment comes last and wins. */
        for (char **e = c->env; e && *e; e++)
                strv_env_set(v, xstrdup(*e));
}

void unit_plan_turn_env(const struct unit_plan_context *ctx, const struct manifest_container *c,
                        char ***v)
{
        static const char *const keys[] = { "OPENENVD_PHASE=", "OPENENVD_ACTIONS=" };

        strv_env_set(v, xasprintf("%s%s", keys[0], phase_to_string(ctx->phase)));
        /* The daemon's own count (steps, /ws steps, MCP tool calls on the
         * unit's port): the one step count no agent code can write, unlike
         * anything in the workspace or a service the env reaches. Final
         * from sealing on. */
        strv_env_set(v, xasprintf("%s%llu", keys[1], (unsigned long long) ctx->actions));
        /* Also here, for a release that adds to an environment set before:
         * the container's own value still wins. */
        for (char **e = c->env; e && *e; e++)
                for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                        if (startswith(*e, keys[i]))
                                strv_env_set(v, xstrdup(*e));
}

/* The manifest's, else (the env only) the daemon's start-up directory when
 * the container's root is the host's (whole, or the host view), else "/". */
static const char *plan_workdir(const struct unit_plan_context *ctx,
                                const struct manifest_container *c, bool host_root)
{
        if (c->workdir)
                return c->workdir;
        if (ctx->env_origin && ctx->env_origin->workdir && host_root)
                return ctx->env_origin->workdir;
        return "/";
}

/* Whether the container gets the host view: no image of its own, none from
 * the daemon (--rootfs, or "/" under --host-root-unfiltered), a view made. */
static bool plan_uses_host_view(const struct unit_plan_context *ctx,
                                const struct manifest_container *c)
{
        return !(c->rootfs && !streq(c->rootfs, "/")) && !ctx->rootfs && ctx->host_view;
}

/* A path the view can bind as it is: absolute, no "." or ".." or empty
 * component (the spec's validation would refuse the whole container). */
static bool image_path_ok(const char *p)
{
        if (p[0] != '/' || strlen(p) >= PATH_MAX)
                return false;
        for (const char *c = p + 1; *c;) {
                size_t n = strcspn(c, "/");
                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                c += n;
                if (*c == '/' && !*++c)
                        return false; /* a trailing slash */
        }
        return true;
}

/* A directory of the unit's image, when another uid could reach it on the
 * host anyway: a bind must never open what a 0700 ancestor closes (a root
 * shell's PATH holds /root/.cargo/bin, say, below a 0700 /root). */
static void image_dir_add(const struct unit_plan_context *ctx, char ***dirs, const char *p)
{
        bool (*is_dir)(const char *) = ctx->is_dir ?: stat_is_dir;
        bool (*reachable)(const char *) = ctx->reachable ?: searchable_by_others;

        if (!image_path_ok(p) || host_view_covers(ctx->host_view, p) || !is_dir(p) ||
            !reachable(p) || strv_contains(*dirs, p) ||
            strv_length(*dirs) >= HOST_VIEW_MAX_IMAGE_PATHS)
                return;
        strv_push(dirs, xstrdup(p));
}

/* A directory as it is, except a bin directory, which stands for its
 * prefix: a virtualenv's bin (its packages sit in lib/ beside it), an
 * install's bin (its config and data in etc/, share/, run/ beside it). */
static void image_prefix_add(const struct unit_plan_context *ctx, char ***dirs, const char *d)
{
        const char *slash = strrchr(d, '/');

        if (slash && slash != d && streq(slash, "/bin")) {
                cleanup_free char *prefix = xstrndup(d, (size_t) (slash - d));
                image_dir_add(ctx, dirs, prefix);
                return;
        }
        image_dir_add(ctx, dirs, d);
}

/* An argv entry that is a host path: a directory, or a file's directory
 * (a script imports its siblings; a data file's directory holds more). */
static void image_argv_add(const struct unit_plan_context *ctx, char ***dirs, const char *a)
{
        bool (*is_dir)(const char *) = ctx->is_dir ?: stat_is_dir;
        const char *slash = strrchr(a, '/');

        if (a[0] != '/' || !slash)
                return;
        if (is_dir(a)) {
                image_prefix_add(ctx, dirs, a);
                return;
        }
        cleanup_free char *parent = xstrndup(a, (size_t) (slash - a));
        if (*parent)
                image_prefix_add(ctx, dirs, parent);
}

static const char *env_get(char **env, const char *key)
{
        size_t n = strlen(key);
        for (char **e = env; e && *e; e++)
                if (strncmp(*e, key, n) == 0 && (*e)[n] == '=')
                        return *e + n + 1;
        return NULL;
}

static void image_env_add(const struct unit_plan_context *ctx, char ***dirs, char **env,
                          const char *key, bool is_path)
{
        const char *v = env_get(env, key);
        if (!v)
                return;
        cleanup_free char *copy = xstrdup(v);
        for (char *save = NULL, *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save))
                if (is_path)
                        image_prefix_add(ctx, dirs, t);
                else
                        image_dir_add(ctx, dirs, t);
}

static bool below_another(char *const *dirs, size_t n, size_t i)
{
        for (size_t j = 0; j < n; j++) {
                size_t l = strlen(dirs[j]);
                if (j != i && strncmp(dirs[i], dirs[j], l) == 0 && dirs[i][l] == '/')
                        return true;
        }
        return false;
}

/* Drops every directory that lies below another one of the list: the
 * ancestor's bind shows it already. Decided on the whole list first, then
 * compacted (no entry is compared after it moved or was freed). */
static void image_dirs_prune(char **dirs)
{
        if (!dirs)
                return;
        size_t n = strv_length(dirs), out = 0;
        cleanup_free bool *drop = xcalloc(n ?: 1, sizeof(bool));

        for (size_t i = 0; i < n; i++)
                drop[i] = below_another(dirs, n, i);
        for (size_t i = 0; i < n; i++) {
                if (drop[i])
                        free(dirs[i]);
                else
                        dirs[out++] = dirs[i];
        }
        dirs[out] = NULL;
}

/*
 * The host view (sandbox/host-view.h): its fixed binds, then the unit's own
 * image paths, by one rule that needs no list from anyone: the directories
 * the container's argv names (a file's directory), its working directory,
 * each PYTHONPATH entry and each PATH entry, a bin directory standing for
 * its prefix (argv and PATH), when they exist on the host, are searchable by
 * others all the way down and the view does not hold them already (/usr,
 * /etc, ...). Nothing else of the host is in reach.
 */
static void plan_host_view(const struct unit_plan_context *ctx, struct container_spec *s)
{
        const struct host_view *v = ctx->host_view;
        cleanup_strv char **dirs = NULL;

        for (size_t i = 0; i < v->n_binds; i++)
                container_spec_add_bind(s, v->binds[i].source, v->binds[i].target,
                                        v->binds[i].flags, v->binds[i].is_file);
        image_dir_add(ctx, &dirs, s->workdir);
        for (char **a = s->argv; a && *a; a++)
                image_argv_add(ctx, &dirs, *a);
        image_env_add(ctx, &dirs, s->env, "PYTHONPATH", false);
        image_env_add(ctx, &dirs, s->env, "PATH", true);
        image_dirs_prune(dirs);
        for (char **d = dirs; d && *d; d++)
                container_spec_add_bind(s, *d, *d, HOST_VIEW_IMAGE_FLAGS, false);
}

static void plan_observer_views(const struct unit_plan_context *ctx,
                                const struct manifest_container *c, struct container_spec *s)
{
        for (size_t i = 0; i < c->n_reads; i++) {
                const struct manifest_read *r = &c->reads[i];
                cleanup_free char *src = NULL, *dst = NULL;

                switch (r->kind) {
                case MANIFEST_READ_WORKSPACE:
                        /* Alive beside agent code: the workspace as it is
                         * (read-only, no links, no exec). Later: a custody
                         * copy made once the agent zone was empty, so no
                         * FIFO, device or sparse file the agent left can
                         * stall or flood an observer. */
                        if (unit_phase_sees_live_workspace(ctx->phase)) {
                                src = xasprintf("%s/workspace/merged", ctx->episode_dir);
                        } else {
                                cleanup_free char *copy = unit_workspace_copy_dir(ctx);
                                src = xasprintf("%s/%s", copy, UNIT_WORKSPACE_COPY_NAME);
                        }
                        container_spec_add_bind(s, src, "/workspace", VIEW_FLAGS, false);
                        break;
                case MANIFEST_READ_ASSET:
                        /* The daemon's private copy (<state>/assets/<name>, made
                         * once, world-readable, masked like the whole state
                         * dir): a file asset appears as /assets/<name>/<basename>. */
                        src = xasprintf("%s/assets/%s", ctx->state_dir, r->target);
                        dst = xasprintf("/assets/%s", r->target);
                        container_spec_add_bind(s, src, dst, VIEW_FLAGS, false);
                        break;
                case MANIFEST_READ_SERVICE_STATE:
                        src = xasprintf("%s/services/%s/merged", ctx->episode_dir, r->target);
                        dst = xasprintf("/services/%s", r->target);
                        container_spec_add_bind(s, src, dst, VIEW_FLAGS, false);
                        break;
                case MANIFEST_READ_ACTIONS:
                        /* The daemon's own file, in a directory no container
                         * writes: the record as of the last inspection or
                         * sealing (rewritten whole, never appended). */
                        src = unit_actions_dir(ctx);
                        container_spec_add_bind(s, src, "/actions", VIEW_FLAGS, false);
                        break;
                case MANIFEST_READ_OUTPUT:
                        /* Never the upstream's live /out: a custody copy made
                         * after the upstream's cgroup was empty. */
                        src = xasprintf("%s/observers/%s/inputs/%s", ctx->episode_dir, c->name,
                                        r->target);
                        dst = xasprintf("/inputs/%s", r->target);
                        container_spec_add_bind(s, src, dst, VIEW_FLAGS, false);
                        break;
                }
        }
}

uint64_t unit_container_nofile(void)
{
        struct rlimit rl;

        /* A container's limit is set soft = hard, and no process raises a
         * hard limit above its own without CAP_SYS_RESOURCE in the initial
         * user namespace: under a daemon started with a lower hard limit
         * every container start failed with EPERM. */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY &&
            rl.rlim_max < CONTAINER_NOFILE)
                return rl.rlim_max;
        return CONTAINER_NOFILE;
}

int unit_plan_container(const struct unit_plan_context *ctx, const struct manifest_container *c,
                        struct container_spec *ret)
{
        const struct manifest *m = ctx->manifest;
        struct container_spec s = { .stdio_fd = -EBADF };
        cleanup_free char *sock = unit_socket_dir(ctx, c->name);
        uint64_t disk_mb = c->effective.disk_mb;

        s.name = xstrdup(c->name);
        s.argv = strv_copy(c->argv);
        /* The manifest's default root ("/") is the daemon's default root:
         * --rootfs, "/" under --host-root-unfiltered, else the host view. */
        bool view = plan_uses_host_view(ctx, c);
        if (view)
                s.rootfs = xstrdup(ctx->host_view->root);
        else
                s.rootfs = xstrdup(c->rootfs && !streq(c->rootfs, "/") ? c->rootfs
                                                                       : ctx->rootfs ?: "/");
        s.workdir = xstrdup(plan_workdir(ctx, c, view || streq(s.rootfs, "/")));
        s.host_uid = range_base(ctx, c);
        s.uid_count = UNIT_UID_RANGE;
        s.uid = UNIT_PRINCIPAL_UID;
        s.gid = UNIT_PRINCIPAL_GID;
        s.tmp_bytes = disk_mb ? disk_mb * 1024 * 1024 : DEFAULT_TMP_BYTES;
        s.nofile = unit_container_nofile();
        s.masks = unit_masks(ctx);
        plan_env(ctx, c, &s);
        /* First, so that the zone's own mounts (/workspace, /etc/hosts, ...)
         * go on top of the view. */
        if (view)
                plan_host_view(ctx, &s);

        /* The one way out of every container: both launchers bind it at
         * /run/openenvd (nosuid, nodev, noexec), resolved O_NOFOLLOW. */
        s.socket_dir = xstrdup(sock);

        switch (c->zone) {
        case MANIFEST_ZONE_AGENT: {
                cleanup_free char *ws = xasprintf("%s/workspace/merged", ctx->episode_dir);
                container_spec_add_bind(&s, ws, "/workspace", RW_FLAGS, false);
                if (streq(c->name, "env")) {
                        const struct manifest_zone *svc = manifest_zone(m, MANIFEST_ZONE_SERVICES);
                        cleanup_free char *hosts = xasprintf("%s/hosts", ctx->episode_dir);
                        size_t i = 0;

                        container_spec_add_bind(&s, hosts, "/etc/hosts",
                                                MS_RDONLY | RW_FLAGS | MS_NOEXEC, true);
                        /* The env server listens on TCP in its own netns; the shim
                         * bridges the daemon's listening socket (fd 3) to it, so any
                         * TCP server works unchanged. */
                        add_activation(&s, c->port ?: m->port);
                        for (size_t k = 0; k < svc->n_containers; k++) {
                                const struct manifest_container *x = &svc->containers[k];
                                cleanup_free char *path = NULL;
                                char addr[16];
                                if (!x->expose.host)
                                        continue;
                                unit_service_address(i++, addr);
                                path = xasprintf("/run/openenvd/svc-%s.sock", x->name);
                                add_forward(&s, FORWARD_TCP_TO_UNIX, addr, x->expose.port, path);
                        }
                } else {
                        add_forward(&s, FORWARD_TCP_TO_UNIX, "127.0.0.1", UNIT_HARNESS_MCP_PORT,
                                    "/run/openenvd/mcp.sock");
                        add_forward(&s, FORWARD_TCP_TO_UNIX, "127.0.0.1", UNIT_HARNESS_MODEL_PORT,
                                    "/run/openenvd/model.sock");
                }
                break;
        }
        case MANIFEST_ZONE_SERVICES:
                if (c->state) {
                        cleanup_free char *st =
                                xasprintf("%s/services/%s/merged", ctx->episode_dir, c->name);
                        container_spec_add_bind(&s, st, c->state, RW_FLAGS, false);
                }
                if (c->port)
                        add_activation(&s, c->port);
                break;
        case MANIFEST_ZONE_OBSERVERS: {
                cleanup_free char *out = unit_observer_dir(ctx, c->name, "out");
                container_spec_add_bind(&s, out, "/out", RW_FLAGS | MS_NOEXEC, false);
                plan_observer_views(ctx, c, &s);
                break;
        }
        case MANIFEST_ZONE_MAX:
                break;
        }

        *ret = s;
        return 0;
}
