/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The Docker provider of `openenvctl validate`: launches the subject image
 * hardened, runs the trusted openenvd-probe helper as the subject's user in
 * the subject's PID namespace, and assembles the evidence document the
 * grader judges (docs/VALIDATE.md). It talks to the engine only through the
 * docker CLI (fork/execve, argv arrays with "--" before every positional
 * argument, bounded output, timeouts).
 *
 * Trust: the image reference is checked against Docker's grammar before any
 * command sees it, then resolved once to its immutable ID, and the subject is
 * created from that ID (what was inspected is what runs). The helper image is
 * built locally by `docker import` of a deterministic tarball holding just the
 * static probe, execute-only, and is trusted by content, never by name: a
 * cached image is used only if its single layer's digest is the tarball's
 * SHA-256, and always by ID.
 *
 * Ownership: every container it creates carries the label
 * org.openenvd.validation.run=<run id>; cleanup lists by that label, removes
 * (the subject first: it holds the PID namespace the helper lives in), and
 * lists again, and only an empty second listing counts as removed.
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
        FAULT_TRACEABLE_HELPER = 1 << 9, /* helper binary readable (0755): dumpable */
        FAULT_SLOW_HELPER = 1 << 10,     /* helper waits 2 s after start: attacks need no luck */
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

/* Outcome classes, mapped to verdicts by the CLI. */
enum docker_outcome {
        DOCKER_MEASURED,    /* evidence assembled (possibly without probe results) */
        DOCKER_BAD_INPUT,   /* not a reference, no such image, no command: unusable */
        DOCKER_FAILED,      /* engine unreachable, cleanup failed, internal: error */
        DOCKER_INTERRUPTED, /* cancel_fd fired; cleanup was still done */
};

struct docker_run {
        enum docker_outcome outcome;
        json_t *evidence; /* owned; DOCKER_MEASURED only */
        char *message;    /* owned; why, for the other outcomes */
        char *run_id;     /* owned */
        char *image_id;   /* owned: the subject image's ID, once resolved */
};

/* Always cleans up what it created before returning. Returns 0; the outcome
 * is in ret. */
int docker_measure_containment(const struct docker_options *o, struct docker_run *ret);
void docker_run_done(struct docker_run *r);
