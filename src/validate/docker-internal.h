/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the parts of the Docker provider (docker-provider.h), in
 * dependency order:
 *   docker-cli.c       `docker ...` run bounded and cancellable; its errors
 *   docker-image.c     the subject image, resolved once to its ID; the helper
 *                      image, trusted by content
 *   docker-subject.c   the hardened subject: created, and read back as the
 *                      engine's own account of the launch
 *   docker-helper.c    the probe helper in the subject's PID namespace, and
 *                      in words why it delivered nothing
 *   docker-cleanup.c   removing what a run created, verified by listing
 *   docker-provider.c  a run: fault knobs, the evidence, the measurement
 *
 * One struct docker_ctx lives for one run; every part borrows it.
 */
#include <jansson.h>
#include <stdbool.h>

#include "base/command.h"
#include "base/time-util.h"
#include "validate/docker-provider.h"

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

/* The writable roots the subject is given (the --tmpfs and --shm-size of
 * docker-subject.c): the helper's positive controls and the grader's
 * exemptions. */
#define DOCKER_N_ALLOTTED_ROOTS 2
extern const char *const docker_allotted_roots[DOCKER_N_ALLOTTED_ROOTS];

struct docker_ctx {
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

#define ARGS(...) ((char *const[]){ __VA_ARGS__, NULL })

/* docker-cli.c */
/* Runs `docker [--host=H] args...`; idle > 0 ends a command that stays
 * silent that long (-ETIME). Records interruption. */
int docker_cli_idle(struct docker_ctx *c, char *const *args, int stdin_fd, usec_t timeout,
                    usec_t idle, size_t max, struct command_output *out);
int docker_cli(struct docker_ctx *c, char *const *args, int stdin_fd, usec_t timeout, size_t max,
               struct command_output *out);
char *docker_err_text(const struct command_output *out);
char *docker_cmd_error(const char *what, int r, const struct command_output *out);
/* Sets the run's outcome and message (taken); returns -1. */
int docker_run_fail(struct docker_run *ret, enum docker_outcome oc, char *msg);
int docker_engine_check(struct docker_ctx *c, struct docker_run *ret);
/* Appends the strings up to a NULL to *argv. */
void docker_args_push(char ***argv, ...);

/* docker-image.c */
/* The subject image's {ref, id, entrypoint, cmd, volumes}; sets
 * c->subject_image and ret->image_id. NULL: the run failed (ret says why). */
json_t *docker_subject_image_resolve(struct docker_ctx *c, struct docker_run *ret);
/* Sets c->helper_image and c->helper_shown; < 0: the run failed. */
int docker_helper_image_ensure(struct docker_ctx *c, struct docker_run *ret);

/* docker-subject.c */
int docker_subject_create(struct docker_ctx *c, const char *user, struct docker_run *ret);
json_t *docker_container_inspect(struct docker_ctx *c, const char *name, char **ret_error);
json_t *docker_launch_from_inspect(json_t *ins);
char *docker_unexpected_mount(struct docker_ctx *c, json_t *ins);

/* docker-helper.c */
json_t *docker_helper_run(struct docker_ctx *c, const char *user, long anchor, char **ret_error);

/* docker-cleanup.c */
int docker_cleanup_run(struct docker_ctx *c, char **ret_error);
