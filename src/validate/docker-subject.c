/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The subject: created hardened (every option below), never started here;
 * then read back through the engine's own inspection, which is the launch
 * evidence the grader judges.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "base/json-util.h"
#include "base/limits.h"
#include "base/util.h"
#include "validate/docker-internal.h"

json_t *docker_container_inspect(struct docker_ctx *c, const char *name, char **ret_error)
{
        struct command_output out = {};
        json_t *v, *o;
        int r = docker_cli(c, ARGS("inspect", "--type", "container", "--", (char *) name), -1,
                           CMD_TIMEOUT, DOCKER_OUTPUT_MAX_BYTES, &out);

        if (r < 0 || out.exit_status != 0 || out.out_truncated) {
                *ret_error = out.out_truncated ? xstrdup("inspect: output too large")
                                               : docker_cmd_error("inspect", r, &out);
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

static json_t *strings_or_empty(json_t *v)
{
        json_t *a = json_array();
        size_t i;
        json_t *x;

        if (json_is_array(v))
                json_array_foreach(v, i, x) if (json_is_string(x)) json_array_append(a, x);
        return a;
}

/* Whether the engine runs a health check in the subject: commands of the
 * image's choosing, started beside the subject's processes while the helper
 * counts them (an unattributed process). Off means no Healthcheck or
 * Test ["NONE"] (--no-healthcheck). */
static bool healthcheck_on(const json_t *cfg)
{
        json_t *test = json_object_get(json_object_get(cfg, "Healthcheck"), "Test");

        return json_array_size(test) > 0 &&
               !streq_ptr(json_string_value(json_array_get(test, 0)), "NONE");
}

/* The launch section: what the engine was told, from its own inspection. */
json_t *docker_launch_from_inspect(json_t *ins)
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
        json_object_set_new(l, "healthcheck", json_boolean(healthcheck_on(cfg)));
        json_object_set_new(l, "init", json_boolean(json_is_true(json_object_get(hc, "Init"))));
        json_object_set_new(l, "cap_add", strings_or_empty(json_object_get(hc, "CapAdd")));
        json_object_set_new(l, "cap_drop", strings_or_empty(json_object_get(hc, "CapDrop")));
        json_object_set_new(l, "security_opt",
                            strings_or_empty(json_object_get(hc, "SecurityOpt")));
        json_object_set_new(l, "user", json_string(object_string(cfg, "User", "")));
        json_object_set_new(l, "pid_mode", json_string(object_string(hc, "PidMode", "")));
        json_object_set_new(l, "ipc_mode", json_string(object_string(hc, "IpcMode", "")));
        json_object_set_new(l, "uts_mode", json_string(object_string(hc, "UTSMode", "")));
        json_object_set_new(l, "network_mode", json_string(object_string(hc, "NetworkMode", "")));
        json_object_set_new(l, "userns_mode", json_string(object_string(hc, "UsernsMode", "")));
        json_object_set_new(l, "cgroupns_mode", json_string(object_string(hc, "CgroupnsMode", "")));
        v = json_object_get(hc, "Devices");
        json_object_set_new(l, "devices",
                            json_integer(json_is_array(v) ? (json_int_t) json_array_size(v) : 0));
        json_array_foreach(json_object_get(ins, "Mounts"), i, v)
        {
                json_t *m = json_object();
                json_object_set_new(m, "type", json_string(object_string(v, "Type", "")));
                json_object_set_new(m, "destination",
                                    json_string(object_string(v, "Destination", "")));
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
                        json_array_append_new(ips, json_string(object_string(b, "HostIp", "")));
        }
        json_object_set_new(l, "port_host_ips", ips);
        return l;
}

int docker_subject_create(struct docker_ctx *c, const char *user, struct docker_run *ret)
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

        docker_args_push(&a, "create", "--pull", "never", "--name", c->subject, "--label", label,
                         "--stop-timeout", "0", "--init", "--no-healthcheck", "--cgroupns",
                         "private", "--user", user, "--cap-drop", "ALL", "--security-opt",
                         "no-new-privileges", "--pids-limit", pids, "--memory", mem,
                         "--memory-swap", mem, "--cpus", cpus, "--shm-size", shm_s, "--tmpfs",
                         tmpfs, "--log-driver", "json-file", "--log-opt", "max-size=1m",
                         "--log-opt", "max-file=1", NULL);
        if (!(o->faults & FAULT_NO_READ_ONLY))
                docker_args_push(&a, "--read-only", NULL);
        if (o->loopback_publish)
                docker_args_push(&a, "--network", "bridge", "--publish", "127.0.0.1::8000", NULL);
        else
                docker_args_push(&a, "--network", "none", NULL);
        /* Test-only weakenings (docs/VALIDATE.md "Fault knobs"). */
        if (o->faults & FAULT_DEV_TMPFS)
                docker_args_push(&a, "--tmpfs",
                                 FAULT_DEV_TMPFS_PATH ":rw,nosuid,nodev,size=1m,mode=1777", NULL);
        if (o->faults & FAULT_WRITABLE_BIND) {
                cleanup_free char *m = NULL;
                char tmpl[] = "/tmp/openenv-fault-XXXXXX";
                if (!mkdtemp(tmpl) || chmod(tmpl, 01777) < 0)
                        return docker_run_fail(ret, DOCKER_FAILED, xasprintf("fault bind dir: %m"));
                c->bind_dir = xstrdup(tmpl);
                m = xasprintf("type=bind,src=%s,dst=" FAULT_BIND_TARGET, tmpl);
                docker_args_push(&a, "--mount", m, NULL);
        }
        if (o->faults & FAULT_VOLUME)
                docker_args_push(&a, "--mount", "type=volume,dst=" FAULT_VOLUME_DST, NULL);
        if (o->faults & FAULT_PRIVILEGED)
                docker_args_push(&a, "--privileged", NULL);
        if (o->faults & FAULT_CAP_ADD)
                docker_args_push(&a, "--cap-add", "NET_BIND_SERVICE", NULL);
        if (o->faults & FAULT_HOST_PID)
                docker_args_push(&a, "--pid", "host", NULL);
        /* By ID: exactly the image inspected above, whatever its tag now
         * points to. */
        docker_args_push(&a, "--", c->subject_image, NULL);

        r = docker_cli(c, a, -1, CMD_TIMEOUT, DOCKER_OUTPUT_MAX_BYTES, &out);
        if (r < 0 || out.exit_status != 0) {
                char *m = docker_cmd_error("create subject", r, &out);
                command_output_done(&out);
                return docker_run_fail(ret, c->interrupted ? DOCKER_INTERRUPTED : DOCKER_FAILED, m);
        }
        command_output_done(&out);
        return 0;
}

/* Persistent mounts on the created container that no fault knob asked for
 * (the image's VOLUMEs are refused before create; this catches anything
 * else). Records anonymous volumes for removal. Returns the first such mount
 * as "type at destination", or NULL: the subject is then not started, and the
 * launch evidence (which lists the mounts) fails the check. */
char *docker_unexpected_mount(struct docker_ctx *c, json_t *ins)
{
        char *found = NULL;
        size_t i;
        json_t *m;

        json_array_foreach(json_object_get(ins, "Mounts"), i, m)
        {
                const char *type = object_string(m, "Type", ""),
                           *dst = object_string(m, "Destination", "");
                if (streq(type, "volume") && *object_string(m, "Name", ""))
                        strv_push(&c->volumes, xstrdup(object_string(m, "Name", "")));
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
