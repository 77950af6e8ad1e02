/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the env container takes from the process that started openenvd
 * (docs/DAEMON.md, "The env server's directory and environment"). Under
 * ENTRYPOINT ["openenvd", "--"], openenvd starts in the image's WORKDIR with
 * the image's ENV, which is what the image's CMD was written for (the real
 * OpenEnv images set PATH to their virtualenv and PYTHONPATH to the env's
 * code): the env server starts there, with that environment.
 *
 * Never passed on: openenvd's own variables (OPENENVD_*: its tokens among
 * them), anything named like a secret (*TOKEN*, *SECRET*, *PASSWORD*,
 * *API_KEY*, *_KEY, ...: the env zone is where agent code runs, and keys
 * reach a harness only as placeholders), and the daemon's own process
 * context (HOME, PWD, systemd's and ssh's sockets, ...), which would be
 * wrong or a way out inside a container. A manifest `env:` entry sets any
 * of them deliberately.
 *
 * Ownership: an env_origin owns its strings; the unit borrows it.
 */
#include <stddef.h>

enum env_origin_class {
        ENV_ORIGIN_PASS,    /* inherited */
        ENV_ORIGIN_SECRET,  /* withheld: openenvd's own or secret by name (logged by name) */
        ENV_ORIGIN_CONTEXT, /* dropped: the daemon's process context */
};

struct env_origin {
        char *workdir;   /* owned: the env's default working directory; NULL: "/" */
        char **vars;     /* owned "K=V": what the env server inherits */
        char **withheld; /* owned: names of the ENV_ORIGIN_SECRET variables */
};

/* Pure: what happens to the variable named name (len bytes, no '='). */
enum env_origin_class env_origin_classify(const char *name, size_t len);
/* Splits envp into what is passed on and what is withheld; workdir is
 * copied (NULL allowed). */
void env_origin_init(struct env_origin *o, char *const *envp, const char *workdir);
void env_origin_done(struct env_origin *o);
