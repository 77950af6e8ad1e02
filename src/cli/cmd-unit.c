/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenvctl status|episodes|verdict|logs|metrics: a running unit, for
 * people (a table) and machines (--json, the unit's own answer). Each is
 * one GET of a control route (docs/DAEMON.md) with the orchestrator's token.
 * Exit: 0 answered, 1 the unit answered an error (its message said), 2 bad
 * usage, 3 the unit could not be reached.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/text-escape.h"
#include "base/util.h"
#include "cli/cli.h"
#include "cli/logs-follow.h"
#include "cli/unit-client.h"

enum unit_cmd { CMD_STATUS, CMD_EPISODES, CMD_VERDICT, CMD_LOGS, CMD_METRICS };

static const char *const cmd_names[] = { "status", "episodes", "verdict", "logs", "metrics" };

static void help(FILE *f, enum unit_cmd cmd)
{
        fprintf(f,
                "Usage: openenvctl %s [--url URL] [--token-file FILE] %s\n"
                "\n"
                "  --url URL          the unit, as OpenEnv's client is given it:\n"
                "                     http://[openenv:TOKEN@]HOST[:PORT] (default: $OPENENVD_URL,\n"
                "                     else http://127.0.0.1:8000)\n"
                "  --token-file FILE  the orchestrator's token when the URL has none\n"
                "                     (else $OPENENVD_TOKEN)\n"
                "%s"
                "\n"
                "Exit: 0 answered, 1 the unit answered an error, 2 bad usage, 3 unreachable%s.\n",
                cmd_names[cmd],
                cmd == CMD_LOGS      ? "--container NAME [--episode ID] [--tail N]\n"
                                       "         [--follow] [--timestamps] [--json]"
                : cmd == CMD_VERDICT ? "[--episode ID] [--json]"
                : cmd == CMD_METRICS ? ""
                                     : "[--json]",
                cmd == CMD_LOGS
                        ? "  --container NAME   whose output\n"
                          "  --episode ID       one of the last 4 episodes (default: the live "
                          "one)\n"
                          "  --tail N           its last N lines (with --follow: start there)\n"
                          "  -f, --follow       print lines as they come (polls every 250 ms),\n"
                          "                     until the output ends: its container's EOF or\n"
                          "                     its episode's end; one episode, the first named\n"
                          "  -t, --timestamps   each line prefixed with the time it was read,\n"
                          "                     RFC 3339 UTC: 2026-12-06T19:19:12.123456Z LINE\n"
                          "  --json             the unit's JSON answer (format=json); with\n"
                          "                     --follow one JSON object per line as it comes\n"
                : cmd == CMD_VERDICT ? "  --episode ID       one of the recent episodes (default: "
                                       "the live one)\n"
                                       "  --json             the unit's JSON answer as it is\n"
                : cmd == CMD_METRICS ? ""
                                     : "  --json             the unit's JSON answer as it is\n",
                cmd == CMD_LOGS ? ";\n--follow: 0 once the output ended, 130/143 on SIGINT/SIGTERM"
                                : "");
}

/* A value from the unit for a table: one safe line whatever its bytes. */
static void put(const char *label, const char *value)
{
        cleanup_free char *v = text_escape(value ? value : "-");
        printf("%-10s %s\n", label, v);
}

static const char *str(json_t *o, const char *key)
{
        return json_string_value(json_object_get(o, key));
}

static void print_status(json_t *info, json_t *ready)
{
        json_t *sb = json_object_get(info, "standby");
        cleanup_free char *standby =
                xasprintf("%s%s%s", str(sb, "state") ?: "-", str(sb, "episode_id") ? " " : "",
                          str(sb, "episode_id") ?: "");
        cleanup_free char *readiness =
                xasprintf("%s%s%s", json_is_true(json_object_get(ready, "ready")) ? "yes" : "no",
                          str(ready, "reason") ? ": " : "", str(ready, "reason") ?: "");
        cleanup_free char *actions =
                xasprintf("%lld", (long long) json_integer_value(json_object_get(info, "actions")));

        put("version", str(info, "version"));
        put("ready", readiness);
        put("phase", str(info, "phase"));
        put("episode", str(info, "episode_id"));
        put("actions", actions);
        put("verdict", str(info, "verdict"));
        put("standby", standby);
}

static void print_episodes(json_t *eps)
{
        json_t *live = json_object_get(eps, "live"), *sb = json_object_get(eps, "standby"), *e;
        size_t i;

        printf("%-24s %-21s %-20s %s\n", "EPISODE", "STATE", "ENDED", "REASON");
        if (json_integer_value(json_object_get(eps, "concurrent")) > 1)
                /* Several at once: each lane's, and whether a session holds it. */
                json_array_foreach(json_object_get(eps, "live_episodes"), i, e)
                {
                        char lane[48];
                        (void) snprintf(lane, sizeof(lane), "(lane %lld%s)",
                                        (long long) json_integer_value(json_object_get(e, "lane")),
                                        json_is_true(json_object_get(e, "session")) ? ", in session"
                                                                                    : "");
                        printf("%-24s %-21s %-20s %s\n", str(e, "episode_id"), str(e, "phase"), "-",
                               lane);
                }
        else if (json_is_object(live))
                printf("%-24s %-21s %-20s %s\n", str(live, "episode_id"), str(live, "phase"), "-",
                       "-");
        if (json_is_object(sb))
                printf("%-24s %-21s %-20s %s\n", str(sb, "episode_id"), str(sb, "state"), "-",
                       "(standby)");
        json_array_foreach(json_object_get(eps, "recent"), i, e)
        {
                time_t t = (time_t) json_number_value(json_object_get(e, "ended_at"));
                struct tm tm;
                char ended[32] = "-";
                cleanup_free char *reason = text_escape(str(e, "reason") ?: "");

                if (t > 0 && gmtime_r(&t, &tm))
                        strftime(ended, sizeof(ended), "%Y-%m-%dT%H:%M:%SZ", &tm);
                printf("%-24s %-21s %-20s %s\n", str(e, "episode_id") ?: "-",
                       str(e, "verdict") ?: "none", ended, reason);
        }
}

static void print_verdict(json_t *v)
{
        json_t *blame = json_object_get(v, "blame"), *r;
        const char *name;

        put("episode", str(v, "episode_id"));
        put("verdict", str(v, "verdict") ?: "(none yet)");
        put("reason", str(v, "reason"));
        put("blame", str(blame, "subtree"));
        json_object_foreach(json_object_get(v, "observers"), name, r)
        {
                cleanup_free char *label = xasprintf("observer %s", name);
                cleanup_free char *text = json_dumps(r, JSON_COMPACT);
                put(label, text);
        }
}

static int get(const struct unit_client *c, const char *target, struct unit_answer *a)
{
        int rc = unit_client_fetch(c, target, a);

        /* No cancel_fd here: only a follower is interrupted mid-answer. */
        return rc < 0 ? EXIT_CODE_UNAVAILABLE : rc;
}

/* GET target; prints its body as it is (raw), or parsed into *ret_json. */
static int get_json(const struct unit_client *c, const char *target, json_t **ret)
{
        struct unit_answer a;
        int rc = get(c, target, &a);

        *ret = NULL;
        if (rc == EXIT_CODE_OK && !(*ret = json_loadb(a.body, a.len, 0, NULL))) {
                log_error("%s: the unit's answer is not JSON", target);
                rc = EXIT_CODE_UNAVAILABLE;
        }
        unit_answer_done(&a);
        return rc;
}

/* logs without --follow: the unit's text as it is, or its JSON answer. */
static int run_logs(const struct unit_client *c, const struct logs_follow *a)
{
        cleanup_free char *target = xasprintf("/logs?container=%s%s%s%s%s%s", a->container,
                                              a->episode ? "&episode_id=" : "", a->episode ?: "",
                                              a->tail ? "&tail=" : "", a->tail ?: "",
                                              a->json         ? "&format=json"
                                              : a->timestamps ? "&timestamps=1"
                                                              : "");
        struct unit_answer ans;
        json_t *j;
        int rc;

        if (a->json) {
                rc = get_json(c, target, &j);
                if (rc == EXIT_CODE_OK && cli_print_json(j, JSON_PRESERVE_ORDER) < 0)
                        oom();
                return rc;
        }
        rc = get(c, target, &ans);
        if (rc == EXIT_CODE_OK)
                fwrite(ans.body, 1, ans.len, stdout);
        unit_answer_done(&ans);
        fflush(stdout);
        return rc;
}

static int run(enum unit_cmd cmd, const struct unit_client *c, const char *episode, bool json,
               const struct logs_follow *logs)
{
        cleanup_free char *target = NULL;
        struct unit_answer a;
        json_t *j = NULL, *ready = NULL;
        int rc = EXIT_CODE_UNAVAILABLE;

        switch (cmd) {
        case CMD_LOGS:
                return run_logs(c, logs);
        case CMD_METRICS:
                rc = get(c, "/metrics", &a);
                if (rc == EXIT_CODE_OK)
                        fwrite(a.body, 1, a.len, stdout);
                unit_answer_done(&a);
                return rc;
        case CMD_STATUS:
                rc = get_json(c, "/info", &j);
                /* /readyz is 503 when not ready: its body says why all the same. */
                if (rc == EXIT_CODE_OK && unit_client_get(c, "/readyz", &a) == 0) {
                        ready = json_loadb(a.body, a.len, 0, NULL);
                        unit_answer_done(&a);
                }
                if (rc == EXIT_CODE_OK && !json)
                        print_status(j, ready);
                break;
        case CMD_EPISODES:
                rc = get_json(c, "/episodes", &j);
                if (rc == EXIT_CODE_OK && !json)
                        print_episodes(j);
                break;
        case CMD_VERDICT:
                target = episode ? xasprintf("/verdict?episode_id=%s", episode)
                                 : xstrdup("/verdict");
                rc = get_json(c, target, &j);
                if (rc == EXIT_CODE_OK && !json)
                        print_verdict(j);
                break;
        }
        if (rc == EXIT_CODE_OK && json) {
                if (ready)
                        json_object_set(j, "readiness", ready);
                if (cli_print_json(json_incref(j), JSON_PRESERVE_ORDER) < 0)
                        oom();
        }
        json_decref(ready);
        json_decref(j);
        fflush(stdout);
        return rc;
}

/* An id or name that goes into the query as it is: the unit's grammar. */
static bool query_value_ok(const char *s)
{
        size_t n = strlen(s);
        return n > 0 && n < 128 &&
               strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                         "0123456789._-") == n;
}

int cli_unit(int argc, char **argv)
{
        enum { ARG_URL = 0x100, ARG_TOKEN, ARG_EPISODE, ARG_CONTAINER, ARG_TAIL };
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "json", no_argument, NULL, 'j' },
                { "follow", no_argument, NULL, 'f' },
                { "timestamps", no_argument, NULL, 't' },
                { "url", required_argument, NULL, ARG_URL },
                { "token-file", required_argument, NULL, ARG_TOKEN },
                { "episode", required_argument, NULL, ARG_EPISODE },
                { "container", required_argument, NULL, ARG_CONTAINER },
                { "tail", required_argument, NULL, ARG_TAIL },
                {},
        };
        const char *url = getenv("OPENENVD_URL") ?: "http://127.0.0.1:8000", *token_file = NULL,
                   *episode = NULL, *container = NULL, *tail = NULL;
        cleanup_error_detail struct error_detail error = {};
        struct unit_client c;
        enum unit_cmd cmd = CMD_STATUS;
        bool json = false, follow = false, timestamps = false;
        int opt, rc;

        while (!streq(argv[0], cmd_names[cmd]))
                cmd++;
        optind = 0;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "hjft", opts, NULL)) >= 0) {
                switch (opt) {
                case 'h':
                        help(stdout, cmd);
                        return EXIT_CODE_OK;
                case 'j':
                        json = true;
                        break;
                case 'f':
                        follow = true;
                        break;
                case 't':
                        timestamps = true;
                        break;
                case ARG_URL:
                        url = optarg;
                        break;
                case ARG_TOKEN:
                        token_file = optarg;
                        break;
                case ARG_EPISODE:
                        episode = optarg;
                        break;
                case ARG_CONTAINER:
                        container = optarg;
                        break;
                case ARG_TAIL:
                        tail = optarg;
                        break;
                default:
                        log_error("%s: unknown option, or it needs an argument (try 'openenvctl "
                                  "%s --help')",
                                  argv[optind - 1], cmd_names[cmd]);
                        return EXIT_CODE_INVALID;
                }
        }
        if (optind < argc) {
                log_error("unexpected argument '%s' (try 'openenvctl %s --help')", argv[optind],
                          cmd_names[cmd]);
                return EXIT_CODE_INVALID;
        }
        if ((cmd == CMD_LOGS) != (container != NULL) ||
            (episode && cmd != CMD_LOGS && cmd != CMD_VERDICT) || (json && cmd == CMD_METRICS) ||
            ((follow || timestamps) && cmd != CMD_LOGS)) {
                log_error("%s takes %s (try 'openenvctl %s --help')", cmd_names[cmd],
                          cmd == CMD_LOGS ? "--container NAME" : "no such option", cmd_names[cmd]);
                return EXIT_CODE_INVALID;
        }
        if ((episode && !query_value_ok(episode)) || (container && !query_value_ok(container))) {
                log_error("an episode id or container name is 1 to 127 of [A-Za-z0-9._-]");
                return EXIT_CODE_INVALID;
        }
        if (tail && (cmd != CMD_LOGS || strspn(tail, "0123456789") != strlen(tail) || !*tail ||
                     strlen(tail) > 6)) {
                log_error(
                        "--tail takes a number of lines, with logs (try 'openenvctl logs --help')");
                return EXIT_CODE_INVALID;
        }
        if (unit_client_init(&c, url, token_file, &error) < 0) {
                log_error("%s", error_detail_text(&error));
                return EXIT_CODE_INVALID;
        }
        struct logs_follow logs = { .container = container,
                                    .episode = episode,
                                    .tail = tail,
                                    .timestamps = timestamps,
                                    .json = json };
        rc = cmd == CMD_LOGS && follow ? logs_follow(&c, &logs)
                                       : run(cmd, &c, episode, json, &logs);
        unit_client_done(&c);
        return rc;
}
