/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenvd: run a preflight, then isolate the unit or step aside.
 *
 * Exit codes: 0 clean shutdown, 1 failure, 2 bad usage or invalid manifest,
 * 3 isolation unavailable under --require-isolation.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/log.h"
#include "base/mountinfo.h"
#include "base/parse-util.h"
#include "base/sibling-binary.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "base/version.h"
#include "daemon/daemon.h"
#include "manifest/manifest.h"
#include "preflight/preflight.h"
#include "relay/credentials.h"
#include "relay/model-proxy.h"
#include "relay/model-upstream.h"
#include "sandbox/container-spec.h"
#include "sandbox/host-view.h"
#include "unit/env-origin.h"
#include "unit/unit.h"

extern char **environ;

static void usage(FILE *f)
{
        fputs("Usage: openenvd [OPTIONS] [-- CMD...]\n"
              "  CMD                    the env server's command (an image's CMD under\n"
              "                         ENTRYPOINT [\"openenvd\", \"--\"]); default: the\n"
              "                         manifest's argv, else uvicorn <app>\n"
              "  --manifest FILE        openenv.yaml (default ./openenv.yaml; with CMD a\n"
              "                         missing ./openenv.yaml means all defaults)\n"
              "  --state DIR            private state (default /var/lib/openenvd)\n"
              "  --port N               external port (default: the manifest's)\n"
              "  --listen ADDR          listen address (default 0.0.0.0)\n"
              "  --require-isolation    refuse (exit 3) instead of stepping aside\n"
              "                         (also OPENENVD_REQUIRE_ISOLATION=1)\n"
              "  --token-file FILE      orchestrator token, read once\n"
              "                         (else $OPENENVD_TOKEN, else generated and printed)\n"
              "  --agent-token-file FILE  the agent's token: /mcp and openenvd.agent_paths\n"
              "                         only (else $OPENENVD_AGENT_TOKEN, else none)\n"
              "  --metrics-token-file FILE  a scraper's token: GET /metrics only\n"
              "                         (else $OPENENVD_METRICS_TOKEN, else none)\n"
              "  --model-url URL        model provider for the harness: https://HOST[:PORT]\n"
              "                         (TLS, verified), http://HOST[:PORT] or a.b.c.d:PORT\n"
              "                         (plain); a name is resolved once, at start\n"
              "  --model-ca-file FILE   trust only this CA (PEM) for an https model URL\n"
              "                         (default: the system CA store)\n"
              "  --model-key-file FILE  real model key: read once, then deleted\n"
              "  --model-provider NAME  anthropic (default) or openai\n"
              "  --rootfs DIR           containers' root: an unpacked image (default on a\n"
              "                         host: the host view, /usr, the loader paths, a\n"
              "                         filtered /etc and the unit's own directories)\n"
              "  --host-root-unfiltered REASON  containers' root: this host's whole /\n"
              "                         (logged with REASON as a WARNING)\n"
              "  --no-initial-episode   no episode at start (the orchestrator resets)\n"
              "  --no-standby           no standby episode, whatever the manifest says\n"
              "  --container-output W   log (default): each container's first lines also in\n"
              "                         this log, prefixed; none: in GET /logs only\n"
              "  --shim PATH            openenvd-shim (default: next to openenvd)\n"
              "  --observer-timeout S   one observer's run (default 300)\n"
              "  --start-timeout S      services and env readiness (default 60)\n"
              "  --verdict-history N    ended episodes whose verdict GET /verdict serves\n"
              "                         by id (1-4096, default 16)\n"
              "  --log-level LEVEL      err, warning, info (default), debug\n"
              "  --log-format FORMAT    text (default) or json: one object per line\n"
              "                         (also OPENENVD_LOG_FORMAT)\n"
              "  --version              print the version and exit\n",
              f);
}

enum {
        ARG_MANIFEST = 0x100,
        ARG_STATE,
        ARG_PORT,
        ARG_LISTEN,
        ARG_REQUIRE,
        ARG_TOKEN,
        ARG_AGENT_TOKEN,
        ARG_METRICS_TOKEN,
        ARG_MODEL_URL,
        ARG_MODEL_CA,
        ARG_MODEL_KEY,
        ARG_MODEL_PROVIDER,
        ARG_SHIM,
        ARG_OBSERVER_TIMEOUT,
        ARG_START_TIMEOUT,
        ARG_VERDICT_HISTORY,
        ARG_LOG_LEVEL,
        ARG_LOG_FORMAT,
        ARG_WEAKEN,
        ARG_ROOTFS,
        ARG_HOST_ROOT,
        ARG_NO_INITIAL,
        ARG_NO_STANDBY,
        ARG_UID_LOCK_DIR,
        ARG_VERSION,
        ARG_CONTAINER_OUTPUT,
};

/*
 * As PID 1 of a privileged container on a hybrid host, openenvd may find
 * only the v1 hierarchies mounted (runc 1.1 mounts no cgroup2 there) while
 * its cgroup namespace has a "0::" line. It owns this boot: mount the
 * cgroup2 tree beside the v1 ones. Never done when not PID 1 (a host's
 * mounts are the host's).
 */
static void pid1_mount_cgroup2(void)
{
        cleanup(mountinfo_freep) struct mountinfo *mounts = NULL;
        cleanup_free char *self = NULL;

        if (getpid() != 1)
                return;
        if (mountinfo_load_at(AT_FDCWD, "/proc/self/mountinfo", &mounts) < 0)
                return;
        for (size_t i = 0; i < mounts->n_entries; i++)
                if (streq(mounts->entries[i].fstype, "cgroup2"))
                        return;
        if (read_full_file_at(AT_FDCWD, "/proc/self/cgroup", (size_t) 64 * 1024, &self, NULL) < 0 ||
            !(startswith(self, "0::") || strstr(self, "\n0::")))
                return;
        if (mkdir("/sys/fs/cgroup/unified", 0555) < 0 && errno != EEXIST)
                return (void) log_debug_errno(-errno, "cgroup2: mkdir: %m");
        if (mount("cgroup2", "/sys/fs/cgroup/unified", "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  NULL) < 0)
                return (void) log_debug_errno(-errno, "cgroup2: mount: %m");
        log_info("mounted cgroup2 at /sys/fs/cgroup/unified");
}

/*
 * As PID 1 of a container that is not privileged, openenvd finds its cgroup
 * hierarchies mounted read-only (Docker mounts them "ro" unless
 * --privileged). In its own cgroup namespace (--cgroupns=private) each
 * mount's root is the container's own cgroup, so a writable view lets it
 * create cgroups below its own and nowhere else; the limits Docker set on
 * the container still bound them all. Remounting takes CAP_SYS_ADMIN over
 * this mount namespace, nothing else. Views of a wider tree (root not "/",
 * the host's cgroup namespace) are left alone. docs/LANES.md.
 */
static void pid1_remount_cgroups_writable(void)
{
        cleanup(mountinfo_freep) struct mountinfo *mounts = NULL;
        unsigned n = 0;

        if (getpid() != 1)
                return;
        if (mountinfo_load_at(AT_FDCWD, "/proc/self/mountinfo", &mounts) < 0)
                return;
        for (size_t i = 0; i < mounts->n_entries; i++) {
                const struct mountinfo_entry *e = &mounts->entries[i];

                if (!(streq(e->fstype, "cgroup") || streq(e->fstype, "cgroup2")) ||
                    !streq(e->root, "/") || !startswith(e->mount_point, "/sys/fs/cgroup/") ||
                    !mount_options_has(e->mount_options, "ro"))
                        continue;
                /* MS_BIND: the mount's own flags only, not the superblock. */
                if (mount(NULL, e->mount_point, NULL,
                          MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                        log_debug_errno(-errno, "cgroup: remount %s writable: %m", e->mount_point);
                else
                        n++;
        }
        if (n > 0)
                log_info("remounted %u read-only cgroup mounts writable", n);
}

/*
 * The manifest, with the command line's env command. An image that has no
 * openenv.yaml (OpenEnv's own connect4_env has none) runs with all defaults
 * when it brings its command: the default ./openenv.yaml may then be
 * missing; a --manifest that names nothing is an error.
 */
static int load_manifest(const struct daemon_options *o, struct manifest_errors *errs,
                         struct manifest **ret)
{
        const struct manifest_overrides ov = { .env_argv = o->env_command };
        char cwd[PATH_MAX];
        int r;

        r = manifest_load_with(o->manifest_path, &ov, errs, ret);
        if (r != -ENOENT || o->manifest_given || !o->env_command)
                return r;
        if (!getcwd(cwd, sizeof(cwd)))
                return -errno;
        r = manifest_parse_with("", 0, cwd, 0, &ov, errs, ret);
        if (r >= 0)
                log_info("no %s: all defaults (port %u); the env server's command is the "
                         "command line's",
                         o->manifest_path, (unsigned) (*ret)->port);
        return r;
}

/*
 * Where and with what the env server starts: here, with our environment
 * (an image's WORKDIR and ENV), minus what env-origin.h withholds. The
 * directory must be reachable by the container's uid, which is not ours.
 */
static void env_origin_from_here(struct env_origin *ret)
{
        cleanup_free char *blocker = NULL, *names = NULL;
        char cwd[PATH_MAX];
        const char *workdir = cwd;

        if (!getcwd(cwd, sizeof(cwd))) {
                log_warning_errno(-errno, "working directory: %m; the env server starts in /");
                workdir = NULL;
        } else if (path_searchable_by_others(cwd, &blocker) < 0) {
                log_warning("the env server starts in / rather than %s: %s is not searchable by "
                            "others (mode o+x), and the env runs as another uid (start openenvd "
                            "elsewhere, or set workdir: in the manifest)",
                            cwd, blocker ? blocker : cwd);
                workdir = NULL;
        }
        env_origin_init(ret, environ, workdir);
        if (ret->withheld[0]) {
                names = strv_join(ret->withheld, ", ");
                log_info("the env server does not inherit %s (openenvd's own, or secret by name; "
                         "a manifest env: entry passes one on deliberately)",
                         names);
        }
}

/*
 * The env server starts where we were started, when its container's root is
 * the host view or an image's whole root; below a mount point the container
 * gets its own (a clone under /tmp, say) that directory is not there, and
 * every episode would fail at chdir. Said once, before any starts: true if
 * so (the manifest's workdir: for env, if set, wins and nothing is said).
 */
static bool env_start_hidden(const struct manifest *m, const struct daemon_options *o,
                             const struct env_origin *origin)
{
        const struct manifest_container *env = manifest_find_container(m, "env");
        const char *by;

        if (!origin->workdir || (env && env->workdir) || (o->rootfs && !streq(o->rootfs, "/")))
                return false;
        by = host_view_hidden_by(origin->workdir, !o->rootfs);
        if (!by)
                return false;
        log_error("the env server would start in %s (openenvd's working directory), which its "
                  "container does not see: %s there is the container's own; start openenvd in "
                  "the unit's directory outside %s, or set workdir: for env in the manifest",
                  origin->workdir, by, by);
        return true;
}

/*
 * Every container sees each asset's source masked (unit_masks()). The
 * manifest refuses an asset that is or holds its own directory; where the
 * env server starts (openenvd's directory, when its root is the host's) only
 * the daemon knows, and an asset there would hide the env's code in every
 * episode. Said once, before any starts: true if so.
 */
static bool env_start_masked(const struct manifest *m, const struct daemon_options *o,
                             const struct env_origin *origin)
{
        const struct manifest_container *env = manifest_find_container(m, "env");
        const char *wd = origin->workdir;

        if (!wd || (env && env->workdir) || (o->rootfs && !streq(o->rootfs, "/")))
                return false;
        for (size_t i = 0; i < m->n_assets; i++) {
                const char *a = m->assets[i].path;
                size_t n = strlen(a);
                if (!streq(a, "/") && (strncmp(wd, a, n) != 0 || (wd[n] && wd[n] != '/')))
                        continue;
                log_error("the env server would start in %s (openenvd's working directory), which "
                          "asset '%s' (%s) %s: every container sees an asset's source masked; "
                          "start openenvd in the unit's own directory, out of the asset, or set "
                          "workdir: for env in the manifest",
                          wd, m->assets[i].name, a, streq(wd, a) ? "is" : "holds");
                return true;
        }
        return false;
}

static const struct option longopts[] = {
        { "manifest", required_argument, NULL, ARG_MANIFEST },
        { "state", required_argument, NULL, ARG_STATE },
        { "port", required_argument, NULL, ARG_PORT },
        { "listen", required_argument, NULL, ARG_LISTEN },
        { "require-isolation", no_argument, NULL, ARG_REQUIRE },
        { "token-file", required_argument, NULL, ARG_TOKEN },
        { "agent-token-file", required_argument, NULL, ARG_AGENT_TOKEN },
        { "metrics-token-file", required_argument, NULL, ARG_METRICS_TOKEN },
        { "model-url", required_argument, NULL, ARG_MODEL_URL },
        { "model-ca-file", required_argument, NULL, ARG_MODEL_CA },
        { "model-key-file", required_argument, NULL, ARG_MODEL_KEY },
        { "model-provider", required_argument, NULL, ARG_MODEL_PROVIDER },
        { "shim", required_argument, NULL, ARG_SHIM },
        { "observer-timeout", required_argument, NULL, ARG_OBSERVER_TIMEOUT },
        { "start-timeout", required_argument, NULL, ARG_START_TIMEOUT },
        { "verdict-history", required_argument, NULL, ARG_VERDICT_HISTORY },
        { "log-level", required_argument, NULL, ARG_LOG_LEVEL },
        { "log-format", required_argument, NULL, ARG_LOG_FORMAT },
        { "test-weaken", required_argument, NULL, ARG_WEAKEN },
        { "rootfs", required_argument, NULL, ARG_ROOTFS },
        { "host-root-unfiltered", required_argument, NULL, ARG_HOST_ROOT },
        { "no-initial-episode", no_argument, NULL, ARG_NO_INITIAL },
        { "no-standby", no_argument, NULL, ARG_NO_STANDBY },
        { "test-uid-lock-dir", required_argument, NULL, ARG_UID_LOCK_DIR },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, ARG_VERSION },
        { "container-output", required_argument, NULL, ARG_CONTAINER_OUTPUT },
        {},
};

/*
 * --log-format before anything else is parsed: an error about an option
 * that comes before it on the command line (or about the command line
 * itself) is logged in the format asked for, not as text in a JSON log.
 * getopt's own messages are off in both passes (opterr): unknown options
 * and missing arguments are reported through the log below.
 */
static bool log_format_first(int argc, char **argv)
{
        bool set = false;
        int c, r;

        opterr = 0;
        while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) >= 0)
                if (c == ARG_LOG_FORMAT && (r = log_format_from_string(optarg)) >= 0) {
                        log_set_format(r);
                        set = true;
                }
        optind = 0; /* glibc: the next getopt_long() starts over */
        return set;
}

/* Command-line values that main() turns into options. */
struct raw_args {
        const char *model_url;
        const char *model_ca_file;
};

static int parse_args(int argc, char **argv, struct daemon_options *o, struct raw_args *raw)
{
        const char *env = getenv("OPENENVD_REQUIRE_ISOLATION");
        unsigned port;
        int c, r;

        *raw = (struct raw_args){ 0 };
        *o = (struct daemon_options){
                .manifest_path = "openenv.yaml",
                .state_dir = "/var/lib/openenvd",
                .listen_address = "0.0.0.0",
                .require_isolation = env && (streq(env, "1") || streq(env, "true")),
                .model_provider = "anthropic",
                .observer_timeout_s = 300,
                .start_timeout_s = 60,
                .verdict_history = UNIT_VERDICT_HISTORY_DEFAULT,
        };
        /* "+": options end at the first operand, so nothing of the env
         * server's command is ever taken for one of ours. */
        while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) >= 0) {
                switch (c) {
                case ARG_MANIFEST:
                        o->manifest_path = optarg;
                        o->manifest_given = true;
                        break;
                case ARG_STATE:
                        if (optarg[0] != '/') {
                                log_error("--state must be an absolute path");
                                return -EINVAL;
                        }
                        o->state_dir = optarg;
                        break;
                case ARG_PORT:
                        r = parse_uint(optarg, 1, 65535, &port);
                        if (r < 0) {
                                log_error("--port: '%s' is not a port (1-65535)", optarg);
                                return r;
                        }
                        o->port = (uint16_t) port;
                        break;
                case ARG_LISTEN:
                        o->listen_address = optarg;
                        break;
                case ARG_REQUIRE:
                        o->require_isolation = true;
                        break;
                case ARG_TOKEN:
                        o->token_file = optarg;
                        break;
                case ARG_AGENT_TOKEN:
                        o->agent_token_file = optarg;
                        break;
                case ARG_METRICS_TOKEN:
                        o->metrics_token_file = optarg;
                        break;
                case ARG_MODEL_URL:
                        raw->model_url = optarg;
                        break;
                case ARG_MODEL_CA:
                        raw->model_ca_file = optarg;
                        break;
                case ARG_MODEL_KEY:
                        o->model_key_file = optarg;
                        break;
                case ARG_MODEL_PROVIDER:
                        if (!model_provider_known(optarg)) {
                                log_error("--model-provider: anthropic or openai");
                                return -EINVAL;
                        }
                        o->model_provider = optarg;
                        break;
                case ARG_SHIM:
                        o->shim_path = optarg;
                        break;
                case ARG_OBSERVER_TIMEOUT:
                case ARG_START_TIMEOUT:
                        r = parse_double(optarg, 0.1, 86400,
                                         c == ARG_OBSERVER_TIMEOUT ? &o->observer_timeout_s
                                                                   : &o->start_timeout_s);
                        if (r < 0) {
                                log_error("timeout: '%s' is not a number of seconds", optarg);
                                return r;
                        }
                        break;
                case ARG_VERDICT_HISTORY:
                        r = parse_uint(optarg, 1, UNIT_VERDICT_HISTORY_MAX, &o->verdict_history);
                        if (r < 0) {
                                log_error("--verdict-history: '%s' is not a count of episodes "
                                          "(1-%d)",
                                          optarg, UNIT_VERDICT_HISTORY_MAX);
                                return r;
                        }
                        break;
                case ARG_LOG_LEVEL:
                        r = log_level_from_string(optarg);
                        if (r < 0) {
                                log_error("--log-level: unknown level '%s'", optarg);
                                return r;
                        }
                        log_set_level(r);
                        break;
                case ARG_LOG_FORMAT:
                        r = log_format_from_string(optarg);
                        if (r < 0) {
                                log_error("--log-format: unknown format '%s' (text or json)",
                                          optarg);
                                return r;
                        }
                        log_set_format(r);
                        break;
                case ARG_WEAKEN:
                        /* Test-only: proves the enforcement check can fail. The
                         * daemon takes two of the knobs. */
                        r = container_weaken_from_string(optarg);
                        if (r < 0 || !(r & (WEAKEN_NO_SECCOMP | WEAKEN_NO_MASKS))) {
                                log_error("--test-weaken: unknown knob '%s'", optarg);
                                return -EINVAL;
                        }
                        o->weaken |= (unsigned) r;
                        break;
                case ARG_ROOTFS: {
                        struct stat st;
                        if (optarg[0] != '/' || stat(optarg, &st) < 0 || !S_ISDIR(st.st_mode)) {
                                log_error("--rootfs: '%s' is not an absolute path to a directory",
                                          optarg);
                                return -EINVAL;
                        }
                        o->rootfs = optarg;
                        break;
                }
                case ARG_HOST_ROOT:
                        /* The whole host only deliberately, and said why. */
                        if (!optarg[0]) {
                                log_error("--host-root-unfiltered: give the reason");
                                return -EINVAL;
                        }
                        o->host_root_reason = optarg;
                        break;
                case ARG_NO_INITIAL:
                        o->no_initial_episode = true;
                        break;
                case ARG_NO_STANDBY:
                        o->no_standby = true;
                        break;
                case ARG_CONTAINER_OUTPUT:
                        if (!streq(optarg, "log") && !streq(optarg, "none")) {
                                log_error("--container-output: '%s' (log or none)", optarg);
                                return -EINVAL;
                        }
                        o->quiet_containers = streq(optarg, "none");
                        break;
                case ARG_UID_LOCK_DIR:
                        /* Test-only: a private lock dir for the uid blocks. */
                        o->uid_lock_dir = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        exit(0);
                case ARG_VERSION:
                        printf("openenvd %s\n", openenvd_version);
                        exit(0);
                default:
                        log_error("%s: unknown option, or it needs an argument (try "
                                  "'openenvd --help')",
                                  argv[optind - 1]);
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                if (!streq(argv[optind - 1], "--")) {
                        log_error("unexpected argument '%s' (the env server's command goes "
                                  "after --: openenvd [OPTIONS] -- CMD...)",
                                  argv[optind]);
                        return -EINVAL;
                }
                o->env_command = argv + optind;
        }
        if (raw->model_url && !o->model_key_file) {
                log_error("--model-url needs --model-key-file");
                return -EINVAL;
        }
        if (o->model_key_file && !raw->model_url) {
                log_error("--model-key-file needs --model-url");
                return -EINVAL;
        }
        if (raw->model_ca_file && !raw->model_url) {
                log_error("--model-ca-file needs --model-url");
                return -EINVAL;
        }
        if (o->host_root_reason && o->rootfs) {
                log_error("--host-root-unfiltered and --rootfs name two different roots");
                return -EINVAL;
        }
        if (o->host_root_reason)
                o->rootfs = "/";
        return 0;
}

/* An invalid manifest: every error, one per line, as text on stderr, or
 * one JSON log entry each. */
static void report_manifest_errors(const struct manifest_errors *errs, const char *path)
{
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;

        manifest_errors_format(errs, &sb);
        if (log_get_format() != LOG_FORMAT_JSON) {
                fputs(sb.buf, stderr);
                return;
        }
        for (char *line = sb.buf, *eol; line && *line; line = eol ? eol + 1 : NULL) {
                eol = strchr(line, '\n');
                if (eol)
                        *eol = '\0';
                log_error_fields(LOG_FIELDS({ "manifest", path }), "%s", line);
        }
}

int main(int argc, char **argv)
{
        struct daemon_options opts;
        struct raw_args raw;
        cleanup_manifest_errors struct manifest_errors errs;
        cleanup(manifest_freep) struct manifest *m = NULL;
        cleanup(preflight_report_freep) struct preflight_report *pre = NULL;
        cleanup(model_upstream_freep) struct model_upstream *upstream = NULL;
        cleanup_free char *shim = NULL, *reasons = NULL;
        cleanup_error_detail struct error_detail url_error = {}, token_error = {};
        cleanup(env_origin_done) struct env_origin origin = {};
        cleanup(credentials_done) struct credentials creds = {};
        int r;

        const char *log_format = getenv("OPENENVD_LOG_FORMAT");
        bool log_format_flag;

        /* First: every return below runs its cleanup. */
        manifest_errors_init(&errs, NULL);
        log_set_program("openenvd");
        /* Before anything is logged, so every line has the same format;
         * the flag wins over the environment. */
        log_format_flag = log_format_first(argc, argv);
        if (log_format) {
                r = log_format_from_string(log_format);
                if (r < 0) {
                        log_error("OPENENVD_LOG_FORMAT: unknown format '%s' (text or json)",
                                  log_format);
                        return DAEMON_EXIT_INVALID;
                }
                if (!log_format_flag)
                        log_set_format(r);
        }
        if (parse_args(argc, argv, &opts, &raw) < 0)
                return DAEMON_EXIT_INVALID;
        /* The URL (and CA file) are checked before anything else starts. */
        if (raw.model_url &&
            model_upstream_new(raw.model_url, raw.model_ca_file, &upstream, &url_error) < 0) {
                log_error("--model-url: %s", error_detail_text(&url_error));
                return DAEMON_EXIT_INVALID;
        }

        /* Errors name the file as it was given: /x/y.yaml:3:1: ... */
        manifest_errors_done(&errs);
        manifest_errors_init(&errs, opts.manifest_path);
        r = load_manifest(&opts, &errs, &m);
        if (r < 0) {
                if (r != -EINVAL) {
                        log_error_errno(r, "cannot read %s: %m", opts.manifest_path);
                        return DAEMON_EXIT_INVALID;
                }
                report_manifest_errors(&errs, opts.manifest_path);
                return DAEMON_EXIT_INVALID;
        }
        /* The first line of every start that gets going (a bad command
         * line or manifest is only its errors, each naming the file). */
        log_info("version %s", openenvd_version);

        /* Tokens before the preflight: a file that cannot serve is bad
         * usage, said at once with its path (not after the checks). */
        r = credentials_load(&creds,
                             &(struct credential_files){ .orchestrator = opts.token_file,
                                                         .agent = opts.agent_token_file,
                                                         .metrics = opts.metrics_token_file },
                             &opts.token_generated, &token_error);
        if (r < 0) {
                log_error_errno(r, "%s", error_detail_text(&token_error));
                return DAEMON_EXIT_INVALID;
        }
        opts.creds = &creds;

        pid1_remount_cgroups_writable();
        pid1_mount_cgroup2();
        r = preflight_run(&(struct preflight_options){ .rootfs = opts.rootfs }, &pre);
        if (r < 0) {
                log_error_errno(r, "preflight: %m");
                return DAEMON_EXIT_FAILURE;
        }
        if (!pre->isolation) {
                reasons = preflight_report_reasons(pre);
                if (opts.require_isolation) {
                        log_error("isolation disabled: %s; refusing to start (--require-isolation)",
                                  reasons);
                        return DAEMON_EXIT_NO_ISOLATION;
                }
                if (m->require && m->require[0]) {
                        cleanup_free char *req = strv_join(m->require, ", ");
                        log_error("isolation disabled: %s; refusing to start (the manifest's "
                                  "enforcement.require: %s)",
                                  reasons, req);
                        return DAEMON_EXIT_NO_ISOLATION;
                }
                log_warning("isolation disabled: %s", reasons);
                return daemon_exec_fallback(&opts, m);
        }

        /* Isolation holds, but a general-purpose host's / as the containers'
         * root leaves its world-readable files and world-connectable sockets
         * in reach of every zone: said once, loudly (docs/SECURITY.md). */
        const struct preflight_check *root = preflight_report_find(pre, "containers_root");
        if (root && !root->ok)
                log_warning("WARNING: %s; the reason given: %s", root->detail,
                            opts.host_root_reason ?: "none");
        /* As PID 1 or in Docker, / is the image's own root, not a host's:
         * it stays the root (preflight.h); the host view is for a host. */
        if (!opts.rootfs && !preflight_root_is_host(true, &pre->env))
                opts.rootfs = "/";
        if (!opts.shim_path) {
                shim = sibling_binary_find("openenvd-shim", NULL); /* freed on return */
                opts.shim_path = shim;
        }
        if (access(opts.shim_path, X_OK) < 0) {
                log_error_errno(-errno, "shim %s: %m", opts.shim_path);
                return DAEMON_EXIT_FAILURE;
        }
        /* getaddrinfo() blocks: the one place it may run is here, before
         * the event loop. The addresses are kept for the daemon's life. */
        if (upstream) {
                if (model_upstream_resolve(upstream, &url_error) < 0) {
                        log_error("--model-url: %s", error_detail_text(&url_error));
                        return DAEMON_EXIT_FAILURE;
                }
                opts.model_upstream = upstream;
        }
        env_origin_from_here(&origin);
        if (env_start_hidden(m, &opts, &origin) || env_start_masked(m, &opts, &origin))
                return DAEMON_EXIT_INVALID;
        opts.env_origin = &origin;
        return daemon_run_isolated(&opts, m);
}
