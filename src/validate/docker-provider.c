/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One validation run: the fault knobs, the evidence document and the
 * measurement that fills it, step by step; the parts are listed in
 * docker-internal.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/json-util.h"
#include "base/limits.h"
#include "base/mountinfo.h"
#include "base/util.h"
#include "probe/namespace-ids.h"
#include "validate/containment-grader.h"
#include "validate/docker-internal.h"
#include "validate/image-ref.h"

const char *const docker_allotted_roots[DOCKER_N_ALLOTTED_ROOTS] = { "/tmp", "/dev/shm" };

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

static void host_mounts_add(json_t *arr, const char *path)
{
        cleanup(mountinfo_freep) struct mountinfo *mi = NULL;

        if (mountinfo_load_at(AT_FDCWD, path, &mi) < 0)
                return;
        for (size_t i = 0; i < mi->n_entries; i++) {
                const struct mountinfo_entry *e = &mi->entries[i];
                char dev[32];

                (void) snprintf(dev, sizeof(dev), "%u:%u", e->major, e->minor);
                json_array_append_new(arr,
                                      json_pack("{s:s,s:s,s:s,s:s,s:s}", "dev", dev, "optional",
                                                e->optional, "fstype", e->fstype, "source",
                                                e->source, "mount_point", e->mount_point));
        }
}

/* The host's mounts, when the engine runs on our kernel: the grader tells a
 * subject mount backed by host storage by its device number and peer group
 * (docs/VALIDATE.md "What backs a mount"). Ours and PID 1's (the engine may
 * live in either namespace); NULL if neither could be read, so that the
 * grader says it could not compare rather than finding nothing shared. */
static json_t *host_mounts(void)
{
        json_t *arr = json_array();

        if (!arr)
                oom();
        host_mounts_add(arr, "/proc/self/mountinfo");
        host_mounts_add(arr, "/proc/1/mountinfo");
        if (json_array_size(arr) == 0) {
                json_decref(arr);
                return NULL;
        }
        return arr;
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
        for (size_t i = 0; i < ELEMENTSOF(docker_allotted_roots); i++)
                json_array_append_new(json_object_get(ev, "allotted_roots"),
                                      json_string(docker_allotted_roots[i]));
        return ev;
}

/* Measurement stops here without a helper document: the grader reports
 * why (SKIP, unless something already proves a violation). */
static int no_probe(struct docker_ctx *c, json_t *ev, struct docker_run *ret, char *why)
{
        json_object_set_new(ev, "probe_error", json_string(why));
        free(why);
        return c->interrupted ? docker_run_fail(ret, DOCKER_INTERRUPTED, xstrdup("interrupted"))
                              : 0;
}

static int measure(struct docker_ctx *c, struct docker_run *ret)
{
        const struct docker_options *o = c->o;
        const char *user = o->faults & FAULT_ROOT ? "0:0" : SUBJECT_USER;
        json_t *ins, *ev, *image, *probe, *state, *hm;
        char *err = NULL, *mount;
        long anchor = 1;
        struct command_output out = {};
        int r;

        if (docker_engine_check(c, ret) < 0 || !(image = docker_subject_image_resolve(c, ret)))
                return -1;
        ev = ret->evidence = evidence_new(image); /* partial evidence is still evidence */
        if (json_array_size(json_object_get(image, "volumes")) > 0)
                /* Creating it would already make the volumes on the host. */
                return no_probe(c, ev, ret,
                                xstrdup("not launched: the image declares VOLUMEs, which Docker "
                                        "would back with persistent storage"));
        if (docker_helper_image_ensure(c, ret) < 0)
                return -1;
        json_object_set(ev, "helper_image", c->helper_shown);
        if (docker_subject_create(c, user, ret) < 0)
                return -1;
        ins = docker_container_inspect(c, c->subject, &err);
        if (!ins)
                return docker_run_fail(ret, c->interrupted ? DOCKER_INTERRUPTED : DOCKER_FAILED,
                                       err);
        if (!streq_ptr(object_string(json_object_get(json_object_get(ins, "Config"), "Labels"),
                                     RUN_LABEL, ""),
                       c->run_id)) {
                json_decref(ins);
                return docker_run_fail(ret, DOCKER_FAILED,
                                       xstrdup("inspected container does not carry our run label"));
        }
        json_object_set_new(ev, "launch", docker_launch_from_inspect(ins));
        mount = docker_unexpected_mount(c, ins);
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

        r = docker_cli(c, ARGS("start", "--", c->subject), -1, CMD_TIMEOUT, DOCKER_OUTPUT_MAX_BYTES,
                       &out);
        if (r < 0 || out.exit_status != 0) {
                char *m = docker_cmd_error("start subject", r, &out);
                command_output_done(&out);
                return no_probe(c, ev, ret, m);
        }
        command_output_done(&out);
        ins = docker_container_inspect(c, c->subject, &err);
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
        if (streq(object_string(json_object_get(ins, "HostConfig"), "PidMode", ""), "host"))
                anchor = (long) json_integer_value(json_object_get(state, "Pid"));
        json_decref(ins);

        probe = docker_helper_run(c, user, anchor, &err);
        if (!probe)
                return no_probe(c, ev, ret, err);
        json_object_set_new(ev, "probe", probe);
        /* Now, with the subject still running: the runtime mounts what it
         * backs the subject with at start, not at create. */
        if (engine_is_local(o) && (hm = host_mounts()))
                json_object_set_new(ev, "host_mounts", hm);
        return 0;
}

int docker_measure_containment(const struct docker_options *o, struct docker_run *ret)
{
        struct docker_ctx c = { .o = o };
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
                docker_run_fail(&run, DOCKER_INTERRUPTED, xstrdup("interrupted"));
        /* Whatever happened above: remove what we created. */
        if (docker_cleanup_run(&c, &cerr) < 0) {
                cleanup_free char *m = run.message;
                run.message = m ? xasprintf("%s; %s", m, cerr) : xstrdup(cerr);
                free(cerr);
                /* Interrupted or not: a cleanup that could not be verified
                 * is an error (3), never "everything created was removed". */
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
