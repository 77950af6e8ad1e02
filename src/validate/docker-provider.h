/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The Docker provider of `openenvctl validate`: launches the subject image
 * hardened, runs the trusted openenvd-probe helper as the subject's user in
 * the subject's PID namespace, and assembles the evidence document the
 * grader judges (docs/VALIDATE.md). It talks to the engine only through the
 * docker CLI (fork/execve, argv arrays, bounded output, timeouts).
 *
 * Ownership: every container it creates carries the label
 * org.openenvd.validation.run=<run id>; cleanup lists by that label, removes,
 * and lists again, and only an empty second listing counts as removed. The
 * helper image is built locally by `docker import` of a tarball holding just
 * the static probe (no registry) and is named after the probe's SHA-256, so it
 * is reused across runs and never confused with other bytes.
 *
 * Fault knobs weaken the launch on purpose; they exist only so the tests can
 * prove the check fails. They are never on by default.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

enum docker_fault {
        FAULT_NO_READ_ONLY = 1 << 0,
        FAULT_DEV_TMPFS = 1 << 1,
        FAULT_WRITABLE_BIND = 1 << 2,
        FAULT_VOLUME = 1 << 3,
        FAULT_PRIVILEGED = 1 << 4,
        FAULT_CAP_ADD = 1 << 5,
        FAULT_ROOT = 1 << 6,
        FAULT_HOST_PID = 1 << 7,
        FAULT_BROKEN_CONTROL = 1 << 8,
};

/* Parses "a,b,c" of fault names into *faults (OR-ed); -EINVAL names unknown. */
int docker_faults_parse(const char *s, unsigned *faults);

struct docker_options {
        const char *docker;     /* borrowed: CLI binary, "docker" */
        const char *host;       /* borrowed: -H value, NULL = DOCKER_HOST / default */
        const char *image;      /* borrowed */
        const char *probe_path; /* borrowed: the static openenvd-probe */
        uint64_t disk_mb;       /* writable budget split between /tmp and /dev/shm */
        uint64_t memory_mb;
        unsigned pids;
        double cpus;
        bool loopback_publish; /* else --network none */
        unsigned faults;
        int cancel_fd; /* readable = stop now (signalfd), or -1 */
};

/* Outcome classes, mapped to exit codes by the CLI. */
enum docker_outcome {
        DOCKER_MEASURED,    /* evidence assembled (possibly without probe results) */
        DOCKER_BAD_INPUT,   /* no such image, image declares volumes: exit 2 */
        DOCKER_FAILED,      /* engine unreachable, cleanup failed, internal: exit 3 */
        DOCKER_INTERRUPTED, /* cancel_fd fired; cleanup was still done */
};

struct docker_run {
        enum docker_outcome outcome;
        json_t *evidence; /* owned; DOCKER_MEASURED only */
        char *message;    /* owned; why, for the other outcomes */
        char *run_id;     /* owned */
};

/* Always cleans up what it created before returning. Returns 0; the outcome
 * is in ret. */
int docker_measure_containment(const struct docker_options *o, struct docker_run *ret);
void docker_run_done(struct docker_run *r);
