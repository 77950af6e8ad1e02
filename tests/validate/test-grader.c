/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runtime.host_containment grader on synthetic evidence: every rule, and
 * the precedence (malformed FAIL, violations FAIL even with gaps, gaps SKIP,
 * else PASS). The "good" document is shaped like a real hardened Docker
 * subject's (docs/VALIDATE.md); each test changes one thing.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <string.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "probe/containment-probe.h"
#include "validate/check-result.h"
#include "validate/containment-grader.h"
#include "validate/report.h"
#include "test-helpers.h"

#define NS_SUBJ                                                                             \
        "{\"cgroup\":11,\"ipc\":12,\"mnt\":13,\"net\":14,\"pid\":15,\"time\":1,\"user\":2," \
        "\"uts\":16}"
#define PROC(pid, comm)                                                                    \
        "{\"pid\":" #pid ",\"comm\":\"" comm "\",\"uid\":[65532,65532,65532,65532],"       \
        "\"gid\":[65532,65532,65532,65532],\"groups\":[65532],\"groups_truncated\":false," \
        "\"cap_inh\":\"0000000000000000\",\"cap_prm\":\"0000000000000000\","               \
        "\"cap_eff\":\"0000000000000000\",\"cap_bnd\":\"0000000000000000\","               \
        "\"cap_amb\":\"0000000000000000\",\"no_new_privs\":1,\"seccomp\":2,\"ns\":" NS_SUBJ "}"
#define MNT(id, dev, root, mp, mopt, fs, sopt)                                            \
        "{\"mount_id\":" #id ",\"parent_id\":72,\"dev\":\"" dev "\",\"root\":\"" root     \
        "\",\"mount_point\":\"" mp "\",\"mount_options\":\"" mopt "\",\"optional\":\"\"," \
        "\"fstype\":\"" fs "\",\"source\":\"x\",\"super_options\":\"" sopt "\"}"

static const char
        good[] = "{\"schema\":1,\"subject_user\":{\"uid\":65532,\"gid\":65532},"
                 "\"allotted_roots\":[\"/tmp\",\"/dev/shm\"],"
                 "\"launch\":{\"read_only_rootfs\":true,\"privileged\":false,\"init\":true,"
                 "\"cap_add\":[],\"cap_drop\":[\"ALL\"],\"security_opt\":[\"no-new-privileges\"],"
                 "\"user\":\"65532:65532\",\"pid_mode\":\"\",\"ipc_mode\":\"private\",\"uts_mode\":"
                 "\"\","
                 "\"network_mode\":\"none\",\"userns_mode\":\"\",\"cgroupns_mode\":\"private\","
                 "\"devices\":0,\"mounts\":[],\"tmpfs\":[\"/tmp\"],\"port_host_ips\":[]},"
                 "\"host_ns\":{\"cgroup\":1001,\"ipc\":1002,\"mnt\":1003,\"net\":1004,\"pid\":1005,"
                 "\"time\":1,\"user\":2,\"uts\":1006},"
                 "\"probe\":{\"probe_schema\":1,\"helper\":{\"uid\":65532,\"gid\":65532,\"ns\":{}},"
                 "\"anchor_pid\":1,"
                 "\"processes\":[" PROC(
                         1, "docker-init") "," PROC(7,
                                                    "busybox") "],"
                                                               "\"processes_truncated\":false,"
                                                               "\"foreign_processes\":0,"
                                                               "\"unreadable_processes\":0,"
                                                               "\"mounts\":[" MNT(72, "0:39", "/", "/", "ro,relatime", "overlay", "rw,lowerdir=/a") "," MNT(73, "0:42", "/", "/proc", "rw,nosuid", "proc", "rw") "," MNT(74, "0:43", "/", "/dev", "rw,nosuid", "tmpfs", "rw,size=65536k,mode=755") "," MNT(75,
                                                                                                                                                                                                                                                                                                           "0:44",
                                                                                                                                                                                                                                                                                                           "/", "/dev/pts", "rw,nosuid", "devpts", "rw,gid=5") "," MNT(76,
                                                                                                                                                                                                                                                                                                                                                                       "0:45", "/", "/sys", "ro,nosuid", "sysfs", "ro") "," MNT(77,
                                                                                                                                                                                                                                                                                                                                                                                                                                "0:46",
                                                                                                                                                                                                                                                                                                                                                                                                                                "/", "/sys/fs/cgroup", "rw,nosuid", "tmpfs", "rw,mode=755") "," MNT(87,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    "0:41",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    "/",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    "/dev/mqueue",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    "rw,nosuid",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    "mqueue", "rw") "," MNT(88,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                            "0:47", "/", "/dev/shm", "rw,nosuid",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                            "tmpfs",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                            "rw,size=16384k") "," MNT(89, "254:0", "/usr/bin/tini-static", "/sbin/docker-init", "ro,relatime", "ext4", "rw") "," MNT(90,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     "0:48",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     "/",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     "/tmp",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     "rw,nosuid",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     "tmpfs", "rw,size=16384k") "," MNT(91,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                        "254:0", "/c/resolv.conf",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                        "/etc/resolv.conf",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                        "ro,relatime",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                        "ext4",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                        "rw") "," MNT(92,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "254:0", "/c/hostname",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "/etc/hostname",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "ro,relatime", "ext4", "rw") "," MNT(93, "254:0", "/c/hosts", "/etc/hosts", "ro,relatime", "ext4", "rw") "," MNT(54,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                       "0:43",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                       "/null", "/proc/keys", "rw,nosuid", "tmpfs", "rw,size=65536k") "],"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "\"mounts_truncated\":false,\"mounts_malformed\":0,"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "\"write_checks\":["
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "{\"mount_id\":74,\"path\":\"/dev\",\"kind\":\"walk\",\"result\":\"denied\",\"errno\":0,"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "\"visited\":15,\"not_storage\":11,\"nested_mounts\":3,\"truncated\":false,\"findings\":[]},"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "{\"mount_id\":75,\"path\":\"/dev/pts\",\"kind\":\"root\",\"result\":\"denied\",\"errno\":13},"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "{\"mount_id\":77,\"path\":\"/sys/fs/cgroup\",\"kind\":\"walk\",\"result\":\"denied\","
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "\"errno\":0,\"visited\":10,\"truncated\":false,\"findings\":[]},"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "{\"mount_id\":87,\"path\":\"/dev/mqueue\",\"kind\":\"root\",\"result\":\"writable\",\"errno\":0},"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "{\"mount_id\":54,\"path\":\"/proc/keys\",\"kind\":\"file\",\"result\":\"not-storage\","
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "\"errno\":0,\"type\":\"c\"}],"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "\"controls\":[{\"root\":\"/tmp\",\"result\":\"writable\",\"errno\":0},"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "{\"root\":\"/dev/shm\",\"result\":\"writable\",\"errno\":0}]}}";

/* The fixture above, brought to the current schema: the image section, the
 * helper's account of itself, and the errno every refusal carries. */
static json_t *ev(void)
{
        json_error_t e;
        json_t *v = json_loads(good, 0, &e), *p, *c;
        size_t i;

        cr_assert_not_null(v, "fixture: %s at %d:%d", e.text, e.line, e.column);
        json_object_set_new(v, "schema", json_integer(CONTAINMENT_EVIDENCE_SCHEMA));
        json_object_set_new(v, "image",
                            json_pack("{s:s,s:s,s:n,s:[s,s,s],s:[]}", "ref", "img:1", "id",
                                      "sha256:03a8f51c30d7551685a3408fc12c64ed281e4ca3df504ae8be1cf"
                                      "cdc47e27981",
                                      "entrypoint", "cmd", "/bin/busybox", "sleep", "3600",
                                      "volumes"));
        json_object_set_new(v, "helper_image",
                            json_pack("{s:s,s:s,s:s}", "tag", "openenvd-probe-helper:ab", "id",
                                      "sha256:cd", "layer", "sha256:ab"));
        p = json_object_get(v, "probe");
        json_object_set_new(p, "probe_schema", json_integer(CONTAINMENT_PROBE_SCHEMA));
        json_object_set_new(p, "walk_bounds",
                            json_pack("{s:i,s:i,s:i}", "max_depth", 8, "max_entries", 4096,
                                      "max_findings", 16));
        /* The host's mount table: its disk, its /dev/shm, and the engine's
         * view of the subject's root overlay (read-only in the subject). */
        json_object_set_new(
                v, "host_mounts",
                json_pack("[{s:s,s:s,s:s,s:s,s:s},{s:s,s:s,s:s,s:s,s:s},{s:s,s:s,s:s,s:s,s:s}]",
                          "dev", "254:0", "optional", "shared:1", "fstype", "ext4", "source",
                          "/dev/vda", "mount_point", "/", "dev", "0:23", "optional", "shared:5",
                          "fstype", "tmpfs", "source", "tmpfs", "mount_point", "/dev/shm", "dev",
                          "0:39", "optional", "", "fstype", "overlay", "source", "overlay",
                          "mount_point", "/var/lib/docker/overlay2/x/merged"));
        json_object_set_new(json_object_get(p, "helper"), "dumpable_at_start", json_integer(0));
        json_object_set_new(json_object_get(p, "helper"), "tracer_pid", json_integer(0));
        json_array_foreach(json_object_get(p, "write_checks"), i,
                           c) if (streq(json_string_value(json_object_get(c, "result")), "denied"))
                json_object_set_new(c, "errno", json_integer(EACCES));
        return v;
}

static json_t *probe(json_t *v)
{
        return json_object_get(v, "probe");
}

static json_t *find_by(json_t *arr, const char *key, const char *val)
{
        size_t i;
        json_t *x;
        json_array_foreach(
                arr, i, x) if (streq_ptr(json_string_value(json_object_get(x, key)), val)) return x;
        cr_assert_fail("no %s=%s", key, val);
        return NULL;
}

static json_t *mount(json_t *v, const char *mp)
{
        return find_by(json_object_get(probe(v), "mounts"), "mount_point", mp);
}

static json_t *proc1(json_t *v)
{
        return json_array_get(json_object_get(probe(v), "processes"), 0);
}

static bool has_line(const struct check_result *r, const char *needle)
{
        for (char **l = r->evidence; *l; l++)
                if (strstr(*l, needle))
                        return true;
        return false;
}

static void dump(const struct check_result *r)
{
        for (char **l = r->evidence; *l; l++)
                cr_log_info("  %s", *l);
}

#define expect(v, want, needle)                                                                 \
        do {                                                                                    \
                cleanup(check_result_freep) struct check_result *r_ = containment_grade(v);     \
                dump(r_);                                                                       \
                cr_assert_eq(r_->status, want, "status %s, want %s",                            \
                             check_status_to_string(r_->status), check_status_to_string(want)); \
                cr_assert(has_line(r_, needle), "no evidence line with '%s'", needle);          \
                if ((want) == CHECK_FAIL)                                                       \
                        cr_assert_not_null(r_->remediation);                                    \
                else                                                                            \
                        cr_assert_null(r_->remediation);                                        \
                json_decref(v);                                                                 \
        } while (0)

Test(grader, hardened_subject_passes)
{
        json_t *v = ev();
        cleanup(check_result_freep) struct check_result *r = containment_grade(v);
        json_t *j;

        cr_assert_eq(r->status, CHECK_PASS);
        cr_assert_str_eq(r->check_id, "runtime.host_containment");
        cr_assert(has_line(r, "measured containment matches the contract"));
        cr_assert(has_line(r, "/dev/mqueue (mqueue)"));
        cr_assert_null(r->remediation);
        cr_assert_eq(validate_verdict_for(r), VERDICT_PASS);
        j = check_result_to_json(r);
        cr_assert_str_eq(json_string_value(json_object_get(j, "status")), "pass");
        cr_assert_eq(json_integer_value(
                             json_object_get(json_object_get(j, "measured"), "process_count")),
                     2);
        json_decref(j);
        json_decref(v);
}

Test(grader, missing_evidence_skips)
{
        cleanup(check_result_freep) struct check_result *r = containment_grade(NULL);
        cr_assert_eq(r->status, CHECK_SKIP);
        cr_assert(has_line(r, "containment evidence is unavailable"));
        cr_assert_eq(validate_verdict_for(r), VERDICT_WARN);
}

Test(grader, malformed_evidence_fails)
{
        cleanup(check_result_freep) struct check_result *a = containment_grade_text("{", 1);
        cr_assert_eq(a->status, CHECK_FAIL);
        cr_assert(has_line(a, "malformed containment evidence"));
        cr_assert_eq(validate_verdict_for(a), VERDICT_FAIL);

        json_t *v = ev();
        json_object_set_new(probe(v), "processes", json_string("nope"));
        expect(v, CHECK_FAIL, "malformed containment evidence: processes");
        v = ev();
        json_object_set_new(v, "schema", json_integer(1));
        expect(v, CHECK_FAIL, "malformed containment evidence: schema");
        v = ev();
        json_object_set_new(proc1(v), "no_new_privs", json_string("1"));
        expect(v, CHECK_FAIL, "malformed containment evidence: no_new_privs");
        v = json_array();
        expect(v, CHECK_FAIL, "malformed");
}

/* ---- launch rules ---- */

static void launch_set(json_t *v, const char *k, json_t *x)
{
        json_object_set_new(json_object_get(v, "launch"), k, x);
}

Test(grader, launch_rules_each_fail)
{
        json_t *v = ev();
        launch_set(v, "read_only_rootfs", json_false());
        expect(v, CHECK_FAIL, "image root is writable");
        v = ev();
        launch_set(v, "privileged", json_true());
        expect(v, CHECK_FAIL, "privileged");
        v = ev();
        launch_set(v, "cap_add", json_pack("[s]", "CAP_SYS_ADMIN"));
        expect(v, CHECK_FAIL, "capability added: CAP_SYS_ADMIN");
        v = ev();
        launch_set(v, "cap_drop", json_array());
        expect(v, CHECK_FAIL, "capabilities not all dropped");
        v = ev();
        launch_set(v, "security_opt", json_array());
        expect(v, CHECK_FAIL, "no-new-privileges is not set");
        v = ev();
        launch_set(v, "security_opt",
                   json_pack("[s,s]", "no-new-privileges", "seccomp=unconfined"));
        expect(v, CHECK_FAIL, "seccomp is unconfined");
        v = ev();
        launch_set(v, "user", json_string("0:0"));
        expect(v, CHECK_FAIL, "subject user is root");
        v = ev();
        launch_set(v, "user", json_string(""));
        expect(v, CHECK_FAIL, "subject user is root");
        v = ev();
        launch_set(v, "user", json_string("1000:1000"));
        expect(v, CHECK_FAIL, "not 65532:65532");
        v = ev();
        launch_set(v, "pid_mode", json_string("host"));
        expect(v, CHECK_FAIL, "host's PID namespace");
        v = ev();
        launch_set(v, "network_mode", json_string("host"));
        expect(v, CHECK_FAIL, "host's network namespace");
        v = ev();
        launch_set(v, "ipc_mode", json_string("container:abc"));
        expect(v, CHECK_FAIL, "another container's IPC namespace");
        v = ev();
        launch_set(v, "cgroupns_mode", json_string("host"));
        expect(v, CHECK_FAIL, "cgroup namespace is not private");
        v = ev();
        launch_set(v, "devices", json_integer(1));
        expect(v, CHECK_FAIL, "host devices exposed");
        v = ev();
        launch_set(v, "mounts",
                   json_pack("[{s:s,s:s,s:b}]", "type", "volume", "destination", "/data", "rw", 1));
        expect(v, CHECK_FAIL, "volume mount at /data");
        v = ev();
        launch_set(v, "mounts",
                   json_pack("[{s:s,s:s,s:b}]", "type", "bind", "destination", "/src", "rw", 0));
        expect(v, CHECK_FAIL, "bind mount at /src");
        v = ev();
        launch_set(v, "tmpfs", json_pack("[s,s]", "/tmp", "/var/cache"));
        expect(v, CHECK_FAIL, "extra tmpfs at /var/cache");
        v = ev();
        launch_set(v, "port_host_ips", json_pack("[s]", "0.0.0.0"));
        expect(v, CHECK_FAIL, "not 127.0.0.1");
        v = ev();
        json_object_del(v, "launch");
        expect(v, CHECK_SKIP, "launch settings were not inspected");
}

/* ---- process rules ---- */

Test(grader, process_rules_each_fail)
{
        json_t *v = ev();
        json_object_set_new(proc1(v), "uid", json_pack("[i,i,i,i]", 0, 0, 0, 0));
        expect(v, CHECK_FAIL, "runs as root (uid 0)");
        v = ev();
        json_object_set_new(proc1(v), "gid", json_pack("[i,i,i,i]", 65532, 65532, 65532, 1));
        expect(v, CHECK_FAIL, "has gid 1, not 65532");
        v = ev();
        json_object_set_new(proc1(v), "groups", json_pack("[i,i]", 65532, 27));
        expect(v, CHECK_FAIL, "supplementary group 27");
        v = ev();
        json_object_set_new(proc1(v), "cap_bnd", json_string("0000000000000400"));
        expect(v, CHECK_FAIL, "holds capabilities: cap_bnd=0000000000000400");
        v = ev();
        json_object_set_new(proc1(v), "cap_amb", json_string("0000000000000001"));
        expect(v, CHECK_FAIL, "cap_amb=");
        v = ev();
        json_object_set_new(proc1(v), "no_new_privs", json_integer(0));
        expect(v, CHECK_FAIL, "lacks no_new_privs");
        v = ev();
        json_object_set_new(proc1(v), "seccomp", json_integer(0));
        expect(v, CHECK_FAIL, "without seccomp");
        v = ev();
        json_object_set_new(json_object_get(proc1(v), "ns"), "pid", json_integer(1005));
        expect(v, CHECK_FAIL, "shares the host's pid namespace (measured)");
        v = ev();
        json_object_set_new(json_object_get(v, "host_ns"), "net", json_integer(14));
        expect(v, CHECK_FAIL, "shares the host's net namespace");
        v = ev();
        json_object_set_new(
                json_object_get(json_array_get(json_object_get(probe(v), "processes"), 1), "ns"),
                "mnt", json_integer(99));
        expect(v, CHECK_FAIL, "is in another mnt namespace");
        v = ev();
        json_object_set_new(probe(v), "foreign_processes", json_integer(120));
        expect(v, CHECK_FAIL, "120 processes outside the subject");
}

Test(grader, user_and_time_namespaces_may_be_shared)
{
        json_t *v = ev();
        json_object_set_new(json_object_get(v, "host_ns"), "user", json_integer(2));
        json_object_set_new(json_object_get(v, "host_ns"), "time", json_integer(1));
        expect(v, CHECK_PASS, "matches the contract");
}

Test(grader, unknown_process_fields_skip)
{
        json_t *v = ev();
        json_object_set_new(proc1(v), "seccomp", json_null());
        expect(v, CHECK_SKIP, "partly unknown");
        v = ev();
        json_object_del(proc1(v), "cap_eff");
        expect(v, CHECK_SKIP, "partly unknown");
        v = ev();
        json_object_set_new(probe(v), "processes", json_array());
        expect(v, CHECK_SKIP, "process inventory is missing");
        v = ev();
        json_object_set_new(probe(v), "processes_truncated", json_true());
        expect(v, CHECK_SKIP, "process inventory is truncated");
        v = ev();
        json_object_set_new(probe(v), "anchor_errno", json_integer(13));
        expect(v, CHECK_SKIP, "init could not be measured");
        v = ev();
        json_object_set_new(probe(v), "unreadable_processes", json_integer(3));
        expect(v, CHECK_SKIP, "could not be attributed");
        v = ev();
        json_object_del(v, "host_ns");
        expect(v, CHECK_PASS, "host namespaces not comparable");
}

/* ---- mounts and write checks ---- */

static void add_mount(json_t *v, const char *mp, const char *mopt, const char *fs, int id,
                      json_t *check)
{
        json_array_append_new(json_object_get(probe(v), "mounts"),
                              json_pack("{s:i,s:i,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "mount_id", id,
                                        "parent_id", 72, "dev", "0:99", "root", "/", "mount_point",
                                        mp, "mount_options", mopt, "optional", "", "fstype", fs,
                                        "source", "x", "super_options", "rw"));
        if (check)
                json_array_append_new(json_object_get(probe(v), "write_checks"), check);
}

Test(grader, read_only_root_required_by_flags)
{
        json_t *v = ev();
        json_object_set_new(mount(v, "/"), "mount_options", json_string("rw,relatime"));
        json_array_append_new(json_object_get(probe(v), "write_checks"),
                              json_pack("{s:i,s:s,s:s,s:s,s:i,s:b,s:[]}", "mount_id", 72, "path",
                                        "/", "kind", "walk", "result", "denied", "errno", EROFS,
                                        "truncated", 0, "findings"));
        expect(v, CHECK_FAIL, "image root / is mounted read-write");
}

Test(grader, read_only_judged_by_mount_or_superblock)
{
        /* rw mount over an ro superblock: read-only, no check needed. */
        json_t *v = ev();
        add_mount(v, "/opt", "rw,relatime", "ext4", 200, NULL);
        json_object_set_new(mount(v, "/opt"), "super_options", json_string("ro,errors=continue"));
        expect(v, CHECK_PASS, "matches the contract");
        /* ro mount of an rw superblock: read-only too. */
        v = ev();
        add_mount(v, "/opt", "ro,relatime", "ext4", 200, NULL);
        expect(v, CHECK_PASS, "matches the contract");
        /* rw at both layers without a check: unproven. */
        v = ev();
        add_mount(v, "/opt", "rw,relatime", "ext4", 200, NULL);
        expect(v, CHECK_SKIP, "no write check for /opt");
        /* rw at both layers, the subject is denied by DAC: fine. */
        v = ev();
        add_mount(v, "/opt", "rw,relatime", "ext4", 200,
                  json_pack("{s:i,s:s,s:s,s:s,s:i,s:b,s:[]}", "mount_id", 200, "path", "/opt",
                            "kind", "walk", "result", "denied", "errno", EACCES, "truncated", 0,
                            "findings"));
        expect(v, CHECK_PASS, "matches the contract");
}

Test(grader, writable_storage_outside_roots_fails)
{
        json_t *v = ev();
        add_mount(v, "/data", "rw,relatime", "ext4", 201,
                  json_pack("{s:i,s:s,s:s,s:s,s:i,s:b,s:[{s:s,s:s,s:s,s:i}]}", "mount_id", 201,
                            "path", "/data", "kind", "walk", "result", "writable", "errno", 0,
                            "truncated", 0, "findings", "path", "/data", "type", "d", "result",
                            "writable", "errno", 0));
        cleanup(check_result_freep) struct check_result *r = containment_grade(v);
        cr_assert_eq(r->status, CHECK_FAIL);
        cr_assert(has_line(r, "subject can write directory /data (on /data, ext4)"));
        cr_assert_str_eq(json_string_value(json_array_get(
                                 json_object_get(r->measured, "writable_outside_roots"), 0)),
                         "/data");
        json_decref(v);
}

Test(grader, dev_nested_writable_tmpfs_fails)
{
        json_t *v = ev();
        add_mount(v, "/dev/x", "rw,nosuid", "tmpfs", 202,
                  json_pack("{s:i,s:s,s:s,s:s,s:i,s:b,s:[{s:s,s:s,s:s,s:i}]}", "mount_id", 202,
                            "path", "/dev/x", "kind", "walk", "result", "writable", "errno", 0,
                            "truncated", 0, "findings", "path", "/dev/x", "type", "d", "result",
                            "writable", "errno", 0));
        expect(v, CHECK_FAIL, "subject can write directory /dev/x");
}

Test(grader, dev_writable_subdirectory_fails)
{
        json_t *v = ev();
        json_t *c = find_by(json_object_get(probe(v), "write_checks"), "path", "/dev");
        json_object_set_new(c, "result", json_string("writable"));
        json_object_set_new(c, "findings",
                            json_pack("[{s:s,s:s,s:s,s:i}]", "path", "/dev/cache", "type", "d",
                                      "result", "writable", "errno", 0));
        expect(v, CHECK_FAIL, "subject can write directory /dev/cache (on /dev, tmpfs)");
}

Test(grader, dev_exempt_only_after_complete_walk)
{
        json_t *v = ev();
        json_object_set_new(find_by(json_object_get(probe(v), "write_checks"), "path", "/dev"),
                            "truncated", json_true());
        expect(v, CHECK_SKIP, "write check truncated at /dev");
        v = ev();
        json_array_remove(json_object_get(probe(v), "write_checks"), 0);
        expect(v, CHECK_SKIP, "no write check for /dev (tmpfs");
        v = ev();
        json_object_set_new(find_by(json_object_get(probe(v), "write_checks"), "path", "/dev"),
                            "result", json_string("inconclusive"));
        expect(v, CHECK_SKIP, "write check inconclusive at /dev");
}

Test(grader, device_node_bind_is_not_storage)
{
        /* /dev/null bound over /proc/keys passes as not-storage; a regular
         * writable file in the same place does not. */
        json_t *v = ev();
        json_t *c = find_by(json_object_get(probe(v), "write_checks"), "path", "/proc/keys");
        json_object_set_new(c, "result", json_string("writable"));
        json_object_set_new(c, "type", json_string("f"));
        expect(v, CHECK_FAIL, "subject can write /proc/keys");
}

Test(grader, mqueue_is_exempt_by_type)
{
        /* The writable mqueue is accepted with a note (docs/VALIDATE.md)... */
        json_t *v = ev();
        expect(v, CHECK_PASS, "POSIX message queues");
        /* ...but a tmpfs mounted at /dev/mqueue is storage. */
        v = ev();
        json_object_set_new(mount(v, "/dev/mqueue"), "fstype", json_string("tmpfs"));
        expect(v, CHECK_FAIL, "subject can write /dev/mqueue (tmpfs)");
}

Test(grader, allowlisted_binds_accepted_only_if_not_writable)
{
        static const char *const binds[] = {
                "/etc/hosts",        "/etc/hostname",         "/etc/resolv.conf",
                "/sbin/docker-init", "/usr/sbin/docker-init", "/run/podman-init"
        };
        for (size_t i = 0; i < ELEMENTSOF(binds); i++) {
                json_t *v = ev();
                /* rw flags, write-open denied: accepted. */
                add_mount(v, binds[i], "rw,relatime", "ext4", 300,
                          json_pack("{s:i,s:s,s:s,s:s,s:i,s:s}", "mount_id", 300, "path", binds[i],
                                    "kind", "file", "result", "denied", "errno", 13, "type", "f"));
                cleanup(check_result_freep) struct check_result *ok = containment_grade(v);
                cr_assert_eq(ok->status, CHECK_PASS, "%s", binds[i]);
                json_decref(v);

                v = ev();
                add_mount(v, binds[i], "rw,relatime", "ext4", 300,
                          json_pack("{s:i,s:s,s:s,s:s,s:i,s:s}", "mount_id", 300, "path", binds[i],
                                    "kind", "file", "result", "writable", "errno", 0, "type", "f"));
                cleanup(check_result_freep) struct check_result *bad = containment_grade(v);
                cr_assert_eq(bad->status, CHECK_FAIL, "%s", binds[i]);
                cr_assert(has_line(bad, "allowlisted bind"), "%s", binds[i]);
                json_decref(v);
        }
}

Test(grader, mount_inventory_gaps_skip)
{
        json_t *v = ev();
        json_object_set_new(probe(v), "mounts", json_array());
        expect(v, CHECK_SKIP, "mount inventory is missing");
        v = ev();
        json_object_set_new(probe(v), "mounts_errno", json_integer(13));
        expect(v, CHECK_SKIP, "mount inventory is missing");
        v = ev();
        json_object_set_new(probe(v), "mounts_truncated", json_true());
        expect(v, CHECK_SKIP, "mount inventory is truncated");
        v = ev();
        json_object_set_new(probe(v), "mounts_malformed", json_integer(2));
        expect(v, CHECK_SKIP, "unparsable lines");
        v = ev();
        json_object_del(v, "probe");
        json_object_set_new(v, "probe_error", json_string("helper: exit 1"));
        expect(v, CHECK_SKIP, "helper measurement is unavailable: helper: exit 1");
}

/* ---- controls and precedence ---- */

Test(grader, failed_control_skips)
{
        json_t *v = ev();
        json_object_set_new(find_by(json_object_get(probe(v), "controls"), "root", "/tmp"),
                            "result", json_string("denied"));
        json_object_set_new(find_by(json_object_get(probe(v), "controls"), "root", "/tmp"), "errno",
                            json_integer(EROFS));
        expect(v, CHECK_SKIP, "positive control failed for /tmp");
        v = ev();
        json_array_remove(json_object_get(probe(v), "controls"), 1);
        expect(v, CHECK_SKIP, "positive control missing for /dev/shm");
}

Test(grader, failed_control_cannot_hide_a_proven_violation)
{
        json_t *v = ev();
        json_object_set_new(find_by(json_object_get(probe(v), "controls"), "root", "/tmp"),
                            "result", json_string("denied"));
        json_object_set_new(find_by(json_object_get(probe(v), "controls"), "root", "/tmp"), "errno",
                            json_integer(EROFS));
        json_object_set_new(proc1(v), "cap_bnd", json_string("0000000000000400"));
        cleanup(check_result_freep) struct check_result *r = containment_grade(v);
        cr_assert_eq(r->status, CHECK_FAIL);
        cr_assert(has_line(r, "holds capabilities"));
        cr_assert(has_line(r, "also unproven: positive control failed for /tmp"));
        cr_assert_not_null(r->remediation);
        json_decref(v);
}

Test(grader, violation_beats_missing_inventory)
{
        json_t *v = ev();
        json_object_set_new(probe(v), "mounts", json_array());
        launch_set(v, "privileged", json_true());
        expect(v, CHECK_FAIL, "privileged");
        v = ev();
        json_object_del(v, "probe");
        launch_set(v, "read_only_rootfs", json_false());
        expect(v, CHECK_FAIL, "image root is writable");
}

Test(grader, allotted_roots_writable_is_fine)
{
        /* Even a write check reporting /tmp writable is not a violation. */
        json_t *v = ev();
        json_array_append_new(json_object_get(probe(v), "write_checks"),
                              json_pack("{s:i,s:s,s:s,s:s,s:i}", "mount_id", 90, "path", "/tmp",
                                        "kind", "walk", "result", "writable", "errno", 0));
        expect(v, CHECK_PASS, "matches the contract");
}

Test(grader, table_and_json_report)
{
        json_t *v = ev();
        launch_set(v, "privileged", json_true());
        cleanup(check_result_freep) struct check_result *r = containment_grade(v);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        json_t *j;

        check_result_print_table(r, "img:1", f);
        fclose(f);
        cr_assert(strstr(buf, "runtime.host_containment   FAIL"));
        cr_assert(strstr(buf, "REMEDIATION"));
        free(buf);
        j = check_result_to_json(r);
        cr_assert_str_eq(json_string_value(json_object_get(j, "status")), "fail");
        cr_assert(json_is_string(json_object_get(j, "remediation")));
        cr_assert(json_array_size(json_object_get(j, "evidence")) >= 1);
        json_decref(j);
        json_decref(v);
}

/* ---- the image ---- */

Test(grader, every_declared_volume_fails_by_path)
{
        /* Allotted or not: a VOLUME is persistent, host-backed storage
         * outside any budget, and the subject is not even launched. */
        static const char *const paths[] = { "/data", "/dev/cache", "/tmp/x", "/tmp", "/dev/shm" };
        json_t *v = ev(), *vols = json_object_get(json_object_get(v, "image"), "volumes");

        for (size_t i = 0; i < ELEMENTSOF(paths); i++)
                json_array_append_new(vols, json_string(paths[i]));
        json_object_del(v, "launch");
        json_object_del(v, "probe");
        json_object_set_new(v, "probe_error",
                            json_string("not launched: the image declares "
                                        "VOLUMEs"));
        cleanup(check_result_freep) struct check_result *r = containment_grade(v);
        cr_assert_eq(r->status, CHECK_FAIL);
        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                cleanup_free char *line = xasprintf("image declares VOLUME %s:", paths[i]);
                cr_assert(has_line(r, line), "%s", paths[i]);
        }
        cr_assert(has_line(r, "also unproven: helper measurement is unavailable: not launched"));
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_object_get(r->measured, "image"), "verdict")),
                         "violation");
        json_decref(v);
}

Test(grader, image_section_is_required)
{
        json_t *v = ev();
        json_object_del(v, "image");
        expect(v, CHECK_FAIL, "malformed containment evidence: image is required");
}

/* ---- a helper that could have been tampered with ---- */

static json_t *helper(json_t *v)
{
        return json_object_get(probe(v), "helper");
}

Test(grader, traced_or_traceable_helper_is_refused)
{
        json_t *v = ev();
        json_object_set_new(helper(v), "tracer_pid", json_integer(42));
        expect(v, CHECK_FAIL, "the helper was traced by process 42");
        v = ev();
        json_object_set_new(helper(v), "dumpable_at_start", json_integer(1));
        expect(v, CHECK_FAIL, "the helper was dumpable when it started");
        /* SUID_DUMP_ROOT (suid_dumpable=2) is as good as 0 for us. */
        v = ev();
        json_object_set_new(helper(v), "dumpable_at_start", json_integer(2));
        expect(v, CHECK_PASS, "matches the contract");
        v = ev();
        json_object_del(helper(v), "dumpable_at_start");
        expect(v, CHECK_FAIL, "dumpable_at_start is required");
        v = ev();
        json_object_set_new(helper(v), "tracer_pid", json_null());
        expect(v, CHECK_SKIP, "whether the helper was traced is unknown");
}

Test(grader, impossible_results_are_refused)
{
        /* What a tracer rewriting "writable" into "denied" leaves behind. */
        json_t *v = ev(), *c;
        c = find_by(json_object_get(probe(v), "write_checks"), "path", "/dev");
        json_object_set_new(c, "errno", json_integer(0));
        expect(v, CHECK_FAIL, "/dev: denied with errno 0 (impossible");

        v = ev();
        c = find_by(json_object_get(probe(v), "write_checks"), "path", "/dev");
        json_object_set_new(c, "findings",
                            json_pack("[{s:s,s:s,s:s,s:i}]", "path", "/dev/cache", "type", "d",
                                      "result", "denied", "errno", 0));
        expect(v, CHECK_FAIL, "finding /dev/cache: 'denied' (impossible in a walk)");

        v = ev();
        c = find_by(json_object_get(probe(v), "write_checks"), "path", "/dev");
        json_object_set_new(c, "findings",
                            json_pack("[{s:s,s:s,s:s,s:i}]", "path", "/dev/cache", "type", "d",
                                      "result", "writable", "errno", 0));
        expect(v, CHECK_FAIL, "'denied' although a finding is writable (impossible)");

        v = ev();
        c = find_by(json_object_get(probe(v), "write_checks"), "path", "/dev");
        json_object_set_new(c, "result", json_string("not-storage"));
        json_object_set_new(c, "errno", json_integer(0));
        expect(v, CHECK_FAIL, "/dev: not-storage for a walk");

        v = ev();
        c = find_by(json_object_get(probe(v), "write_checks"), "path", "/proc/keys");
        json_object_set_new(c, "type", json_string("f"));
        expect(v, CHECK_FAIL, "/proc/keys: not-storage for a file 'f'");

        v = ev();
        c = find_by(json_object_get(probe(v), "write_checks"), "path", "/dev");
        json_object_set_new(c, "result", json_string("inconclusive"));
        json_object_set_new(c, "errno", json_integer(0));
        expect(v, CHECK_FAIL, "/dev: inconclusive without an errno");

        v = ev();
        c = find_by(json_object_get(probe(v), "controls"), "root", "/tmp");
        json_object_set_new(c, "result", json_string("denied"));
        expect(v, CHECK_FAIL, "/tmp: denied with errno 0");

        v = ev();
        c = find_by(json_object_get(probe(v), "write_checks"), "path", "/dev");
        json_object_set_new(c, "result", json_string("maybe"));
        expect(v, CHECK_FAIL, "/dev: unknown write result 'maybe'");
}

/* ---- bounded walks ---- */

Test(grader, truncated_walk_says_so_and_skips)
{
        json_t *v = ev(), *c;
        c = find_by(json_object_get(probe(v), "write_checks"), "path", "/dev");
        json_object_set_new(c, "truncated", json_true());
        json_object_set_new(c, "truncated_by", json_string("max_entries"));
        json_object_set_new(c, "visited", json_integer(4096));
        expect(v, CHECK_SKIP,
               "write check truncated at /dev: walk bound max_entries=4096 reached after 4096 "
               "entries");

        /* Truncated and inconclusive: both are said, the truncation first. */
        v = ev();
        c = find_by(json_object_get(probe(v), "write_checks"), "path", "/dev");
        json_object_set_new(c, "truncated", json_true());
        json_object_set_new(c, "truncated_by", json_string("max_depth"));
        json_object_set_new(c, "result", json_string("inconclusive"));
        cleanup(check_result_freep) struct check_result *r = containment_grade(v);
        cr_assert_eq(r->status, CHECK_SKIP);
        cr_assert(has_line(r, "walk bound max_depth=8"));
        cr_assert(has_line(r, "write check inconclusive at /dev (Permission denied)"));
        cr_assert_str_eq(r->evidence[0],
                         "write check truncated at /dev: walk bound max_depth=8 reached after "
                         "15 entries; the rest of the mount is unproven");
        json_decref(v);
}

/* ---- what the report shows ---- */

static const char *verdict_of(json_t *arr, const char *key, const char *val)
{
        return json_string_value(json_object_get(find_by(arr, key, val), "verdict"));
}

Test(grader, measured_evidence_shows_every_mount_and_process_with_its_verdict)
{
        json_t *v = ev();
        cleanup(check_result_freep) struct check_result *r = containment_grade(v);
        json_t *mounts = json_object_get(r->measured, "mounts");
        json_t *procs = json_object_get(r->measured, "processes");

        cr_assert_eq(r->status, CHECK_PASS);
        cr_assert_eq(json_array_size(mounts), json_array_size(json_object_get(probe(v), "mounts")));
        cr_assert_str_eq(verdict_of(mounts, "mount_point", "/"), "read-only");
        cr_assert_str_eq(verdict_of(mounts, "mount_point", "/tmp"), "allotted");
        cr_assert_str_eq(verdict_of(mounts, "mount_point", "/proc"), "kernel-interface");
        cr_assert_str_eq(verdict_of(mounts, "mount_point", "/dev/mqueue"), "kernel-interface");
        cr_assert_str_eq(verdict_of(mounts, "mount_point", "/dev"), "denied");
        cr_assert_str_eq(verdict_of(mounts, "mount_point", "/proc/keys"), "not-storage");
        cr_assert(json_is_object(
                json_object_get(find_by(mounts, "mount_point", "/dev"), "write_check")));
        cr_assert_eq(json_array_size(procs), 2);
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(procs, 0), "verdict")),
                         "confined");
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r->measured, "launch"),
                                                           "verdict")),
                         "hardened");
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r->measured, "launch"),
                                                           "cgroupns_mode")),
                         "private");
        cr_assert_str_eq(
                json_string_value(json_object_get(json_object_get(r->measured, "helper"), "layer")),
                "sha256:ab");
        cr_assert_eq(json_integer_value(json_object_get(json_object_get(r->measured, "helper"),
                                                        "dumpable_at_start")),
                     0);
        json_decref(v);

        /* A violation is shown on the item it concerns, with its reason. */
        v = ev();
        json_object_set_new(proc1(v), "cap_bnd", json_string("0000000000000400"));
        json_object_set_new(mount(v, "/"), "mount_options", json_string("rw,relatime"));
        cleanup(check_result_freep) struct check_result *bad = containment_grade(v);
        procs = json_object_get(bad->measured, "processes");
        mounts = json_object_get(bad->measured, "mounts");
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(procs, 0), "verdict")),
                         "violation");
        cr_assert(strstr(json_string_value(json_array_get(
                                 json_object_get(json_array_get(procs, 0), "problems"), 0)),
                         "holds capabilities"));
        cr_assert_str_eq(verdict_of(mounts, "mount_point", "/"), "violation");
        cr_assert_str_eq(verdict_of(mounts, "mount_point", "/tmp"), "allotted");
        json_decref(v);
}

Test(grader, report_carries_versions_and_exit_codes)
{
        json_t *v = ev();
        cleanup(check_result_freep) struct check_result *r = containment_grade(v);
        struct validate_report rep = { .target = "img:1",
                                       .image_id = "sha256:x",
                                       .run_id = "r",
                                       .verdict = validate_verdict_for(r),
                                       .result = r };
        json_t *j = validate_report_to_json(&rep);

        cr_assert_eq(json_integer_value(json_object_get(j, "schema_version")),
                     VALIDATE_REPORT_SCHEMA_VERSION);
        cr_assert_eq(json_integer_value(json_object_get(j, "policy_version")),
                     CONTAINMENT_POLICY_VERSION);
        cr_assert_str_eq(json_string_value(json_object_get(j, "verdict")), "pass");
        cr_assert_eq(json_integer_value(json_object_get(j, "exit_code")), 0);
        json_decref(j);
        json_decref(v);

        static const struct {
                enum validate_verdict v;
                int sig, code;
                const char *name;
        } table[] = {
                { VERDICT_PASS, 0, 0, "pass" },
                { VERDICT_WARN, 0, 0, "warn" },
                { VERDICT_FAIL, 0, 1, "fail" },
                { VERDICT_UNUSABLE, 0, 2, "unusable" },
                { VERDICT_ERROR, 0, 3, "error" },
                { VERDICT_INTERRUPTED, 2, 130, "interrupted" },
                { VERDICT_INTERRUPTED, 15, 143, "interrupted" },
        };
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                rep.verdict = table[i].v;
                rep.signal = table[i].sig;
                cr_assert_eq(validate_report_exit_code(&rep), table[i].code, "%s", table[i].name);
                cr_assert_str_eq(validate_verdict_to_string(table[i].v), table[i].name);
        }
}

Test(grader, recorded_clean_document_passes)
{
        /* tests/validate/recorded-probe.json is what the real helper printed
         * beside a hardened busybox subject. test-docker.c plants an image
         * that prints it under the helper's tag: had the provider trusted
         * the tag, this is the PASS it would have reported. */
        cleanup_free char *text = NULL;
        json_t *v = ev(), *rec;
        size_t len;

        cr_assert_eq(read_full_file_at(AT_FDCWD, TEST_SRCDIR "/recorded-probe.json", 1 << 20, &text,
                                       &len),
                     0);
        rec = json_loadb(text, len, 0, NULL);
        cr_assert_not_null(rec);
        json_object_set_new(v, "probe", rec);
        expect(v, CHECK_PASS, "measured containment matches the contract");
}

/* docs/VALIDATE.md "What backs a mount": an allotted path is allotted only if
 * a private tmpfs backs it; the subject's runtime binding host storage there
 * (ext4 at /tmp, the host's tmpfs at /dev/shm, a tmpfs in a host peer group)
 * fails, whatever the write checks say. */
Test(grader, allotted_root_backed_by_host_storage_fails)
{
        json_t *v = ev();
        json_t *m = mount(v, "/tmp");

        json_object_set_new(m, "dev", json_string("254:0"));
        json_object_set_new(m, "fstype", json_string("ext4"));
        json_object_set_new(m, "root", json_string("/tmp/validate-host/tmp"));
        expect(v, CHECK_FAIL, "allotted root /tmp is not a private tmpfs: it is host storage");

        v = ev(); /* the host's own /dev/shm, bound whole */
        json_object_set_new(mount(v, "/dev/shm"), "dev", json_string("0:23"));
        expect(v, CHECK_FAIL, "allotted root /dev/shm is not a private tmpfs");

        v = ev(); /* a fresh device number, but in a host peer group */
        json_object_set_new(mount(v, "/tmp"), "optional", json_string("master:3 shared:5"));
        expect(v, CHECK_FAIL, "also mounted on the host at /dev/shm");

        v = ev(); /* a subdirectory of a tmpfs is not the tmpfs allotted */
        json_object_set_new(mount(v, "/tmp"), "root", json_string("/x"));
        expect(v, CHECK_FAIL, "allotted root /tmp is not a private tmpfs: tmpfs");

        v = ev(); /* a block filesystem the host has not mounted is still not tmpfs */
        json_object_set_new(mount(v, "/tmp"), "fstype", json_string("ext4"));
        expect(v, CHECK_FAIL, "allotted root /tmp is not a private tmpfs: ext4");
}

Test(grader, host_storage_mounted_read_write_fails_whatever_its_write_check)
{
        /* A bind of a host directory under /run that the subject cannot
         * write right now (root-owned 0555) is still the host's storage. */
        json_t *v = ev(), *mounts = json_object_get(probe(v), "mounts");

        json_array_append_new(
                mounts, json_loads(MNT(95, "254:0", "/srv/x", "/run/x", "rw,nosuid", "ext4", "rw"),
                                   0, NULL));
        json_array_append_new(json_object_get(probe(v), "write_checks"),
                              json_pack("{s:i,s:s,s:s,s:s,s:i,s:i,s:b,s:[]}", "mount_id", 95,
                                        "path", "/run/x", "kind", "walk", "result", "denied",
                                        "errno", EACCES, "visited", 1, "truncated", 0, "findings"));
        expect(v, CHECK_FAIL, "/run/x is host storage mounted read-write (ext4, dev 254:0)");
}

Test(grader, host_mqueue_is_not_exempt)
{
        /* The mqueue exemption holds for the subject's own IPC namespace, not
         * for the host's queues bound in. */
        json_t *v = ev();

        json_array_append_new(json_object_get(v, "host_mounts"),
                              json_pack("{s:s,s:s,s:s,s:s,s:s}", "dev", "0:41", "optional", "",
                                        "fstype", "mqueue", "source", "mqueue", "mount_point",
                                        "/run/mq"));
        expect(v, CHECK_FAIL, "/dev/mqueue is host storage mounted read-write (mqueue, dev 0:41)");
}

Test(grader, owned_directory_is_writable_whatever_its_mode)
{
        /* The helper reports a directory it owns with its write bit off as
         * writable with EACCES (write-check.h); the line says why. */
        json_t *v = ev(), *mounts = json_object_get(probe(v), "mounts");

        json_array_append_new(mounts, json_loads(MNT(96, "0:60", "/", "/scratch", "rw,nosuid",
                                                     "tmpfs", "rw,mode=555,uid=65532"),
                                                 0, NULL));
        json_array_append_new(json_object_get(probe(v), "write_checks"),
                              json_pack("{s:i,s:s,s:s,s:s,s:i,s:i,s:b,s:[{s:s,s:s,s:s,s:i}]}",
                                        "mount_id", 96, "path", "/scratch", "kind", "walk",
                                        "result", "writable", "errno", 0, "visited", 1, "truncated",
                                        0, "findings", "path", "/scratch", "type", "d", "result",
                                        "writable", "errno", EACCES));
        expect(v, CHECK_FAIL,
               "subject can write directory /scratch (on /scratch, tmpfs; it owns it");
}

Test(grader, private_tmpfs_unproven_without_host_mount_table)
{
        json_t *v = ev();

        json_object_del(v, "host_mounts");
        expect(v, CHECK_SKIP, "whether allotted root /tmp is a private tmpfs is unproven");
}
