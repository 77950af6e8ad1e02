/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * systemd's readiness protocol (sd_notify(3)), by hand: one datagram with
 * "READY=1" (or "STOPPING=1", "STATUS=...") to the unix socket named by
 * $NOTIFY_SOCKET (a path, or "@name" for the abstract namespace). Without
 * the variable it does nothing: a daemon not started by systemd (or by a
 * Type=notify unit) is not told anything. Never blocks: the socket is a
 * datagram one and a full queue drops the message (-EAGAIN).
 */

/* 0 sent, 0 when $NOTIFY_SOCKET is unset, or -errno. */
int sd_notify_send(const char *state);
