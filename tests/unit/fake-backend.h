/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A fake episode backend (src/unit/episode-backend.h) for the engine's
 * in-process tests: no process is started, no mount is made, nothing needs
 * root. A "container" is a record the test drives: it becomes ready when
 * the test says (or at once), exits when the test says (with a status, or
 * killed by the daemon), writes the output the test gives it. The member
 * code around it is the real one: its exit arrives through an fd (an
 * eventfd standing in for the pidfd), its output through the real pipe, its
 * readiness through the shim's real READY=1 pipe, and its activation socket
 * answers the daemon's GET /health like an env server would.
 *
 * Storage is plain directories in the episode's dir, laid out as
 * episode-fs.h says; the workspace is full when the test says so
 * (fake_workspace_fill()), never else. Ownership: the backend owns every record it made
 * (freed containers too, for the test to read) until fake_backend_done().
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/event-loop.h"
#include "unit/episode-backend.h"

#define FAKE_MAX_MEMBERS 128
#define FAKE_MAX_CONNS   16

struct fake_backend;

struct fake_member {
        struct fake_backend *fb;
        char *name;
        unsigned seq;   /* start order in the backend */
        uid_t host_uid; /* its spec's: which episode slot's range it runs in */
        int exit_fd;    /* eventfd: readable once exited */
        int log_fd;     /* the container's stdout+stderr (write end) */
        int notify_fd;  /* the shim's readiness pipe (write end), -EBADF: none */
        int listen_fd;  /* its activation socket (a dup), -EBADF: none */
        struct loop_source *listen_src;
        /* Made ahead of its turn (the shim's gate): the read end of the
         * gate, until the release is read; the release's text. */
        int gate_fd;
        char release[512];
        bool gated, released;
        bool exited, freed;
        int status, init_signal;
        unsigned kills; /* signals the daemon sent */
        int last_signal;
};

struct fake_backend {
        struct loop *loop;
        bool manual_ready; /* false: READY=1 as soon as it starts */
        /* A name whose next starts fail (spawn error), NULL: none. */
        const char *fail_start;
        struct fake_member *members[FAKE_MAX_MEMBERS];
        size_t n_members;
        struct {
                int fd;
                struct loop_source *src;
        } conns[FAKE_MAX_CONNS];
        struct member_launcher launcher;
        struct episode_backend backend;
};

void fake_backend_init(struct fake_backend *fb, struct loop *l);
void fake_backend_done(struct fake_backend *fb);

/* The newest container named name whose principal runs (started, or made
 * ahead and released) and that was not freed, else NULL. */
struct fake_member *fake_find(struct fake_backend *fb, const char *name);
/* The newest container named name ever made (gated or not), else NULL. */
struct fake_member *fake_last(struct fake_backend *fb, const char *name);
/* The last member name started with a host uid in [first, first + count)
 * (one episode slot's range), NULL: none. */
struct fake_member *fake_in_uids(struct fake_backend *fb, const char *name, uid_t first,
                                 uint32_t count);
/* How many times a principal named name started (a gated container's once
 * released). */
unsigned fake_starts(struct fake_backend *fb, const char *name);
/* Whether its principal runs: not gated, or released (the daemon's whole
 * release message read from the gate). */
bool fake_principal_started(struct fake_member *fm);
/* The shim's side of the gate goes (it died): the release fails. */
void fake_close_gate(struct fake_member *fm);
/* The shim's READY=1 (every port listens). */
void fake_ready(struct fake_member *fm);
/* Its output (stdout+stderr). */
void fake_output(struct fake_member *fm, const char *text);
/* It exits with status (128 + n: killed by signal n). */
void fake_exit(struct fake_member *fm, int status);
/* From now on the workspace of the episode in episode_dir reports full at
 * sealing (episode-fs.h: EPISODE_FS_FULL_BYTES or EPISODE_FS_FULL_INODES). */
#define FAKE_FULL_MARK "fake-full"
void fake_workspace_fill(const char *episode_dir, int how);
