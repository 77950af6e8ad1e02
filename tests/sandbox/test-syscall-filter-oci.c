/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * syscall_filter_to_oci(): the table rendered as an OCI linux.seccomp object.
 * The object is serialised and parsed back, as the OCI launcher's config.json
 * would be, and checked against the runtime-spec shape and our policy.
 */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "base/macro.h"
#include "sandbox/syscall-filter.h"
/* test-helpers.h calls cr_fatal(), which Criterion 2.4 declares only in
 * <criterion/new/assert.h>; the classic API spells it cr_assert_fail(). */
#include <criterion/criterion.h>
#ifndef cr_fatal
#define cr_fatal(...) cr_assert_fail(__VA_ARGS__)
#endif
#include "test-helpers.h"

static json_t *oci_roundtrip(void)
{
        json_t *obj = NULL, *parsed;
        json_error_t err;
        char *text;

        cr_assert_eq(syscall_filter_to_oci(&obj), 0);
        cr_assert_not_null(obj);
        text = json_dumps(obj, JSON_COMPACT);
        json_decref(obj);
        cr_assert_not_null(text);
        parsed = json_loads(text, 0, &err);
        free(text);
        cr_assert_not_null(parsed, "%s", err.text);
        return parsed;
}

static bool names_contain(json_t *entry, const char *name)
{
        json_t *names = json_object_get(entry, "names"), *n;
        size_t i;

        json_array_foreach(names, i, n) if (json_is_string(n) &&
                                            strcmp(json_string_value(n), name) == 0) return true;
        return false;
}

static const char *entry_action(json_t *entry)
{
        return json_string_value(json_object_get(entry, "action"));
}

Test(unit, oci_top_level)
{
        json_t *o = oci_roundtrip();
        json_t *arches = json_object_get(o, "architectures");

        cr_assert_str_eq(json_string_value(json_object_get(o, "defaultAction")), "SCMP_ACT_ERRNO");
        cr_assert_eq(json_integer_value(json_object_get(o, "defaultErrnoRet")), EPERM);
        /* Only the native ABI: foreign ones are refused as a whole. */
        cr_assert_eq(json_array_size(arches), 1);
#if defined(__x86_64__)
        cr_assert_str_eq(json_string_value(json_array_get(arches, 0)), "SCMP_ARCH_X86_64");
#else
        cr_assert_str_eq(json_string_value(json_array_get(arches, 0)), "SCMP_ARCH_AARCH64");
#endif
        cr_assert(json_array_size(json_object_get(o, "syscalls")) > 1);
        json_decref(o);
}

Test(unit, oci_entries_are_well_formed)
{
        json_t *o = oci_roundtrip(), *entry;
        size_t i, names = 0;

        json_array_foreach(json_object_get(o, "syscalls"), i, entry)
        {
                const char *action = entry_action(entry);
                json_t *args = json_object_get(entry, "args"), *arg;
                size_t j;

                cr_assert(json_array_size(json_object_get(entry, "names")) > 0);
                names += json_array_size(json_object_get(entry, "names"));
                cr_assert_not_null(action);
                if (strcmp(action, "SCMP_ACT_ERRNO") == 0)
                        cr_assert(json_integer_value(json_object_get(entry, "errnoRet")) > 0);
                else
                        cr_assert_str_eq(action, "SCMP_ACT_ALLOW");
                json_array_foreach(args, j, arg)
                {
                        cr_assert(json_is_integer(json_object_get(arg, "index")));
                        cr_assert(json_integer_value(json_object_get(arg, "index")) < 6);
                        cr_assert(json_is_integer(json_object_get(arg, "value")));
                        cr_assert(json_is_integer(json_object_get(arg, "valueTwo")));
                        cr_assert_not_null(json_string_value(json_object_get(arg, "op")));
                }
        }
        /* Docker allows ~350 names including 32-bit ones; we keep ~250. */
        cr_assert(names > 200 && names < 400, "%zu names", names);
        json_decref(o);
}

Test(unit, oci_denied_syscalls_are_never_allowed)
{
        static const char *const denied[] = {
                "io_uring_setup",
                "io_uring_enter",
                "io_uring_register",
                "unshare",
                "setns",
                "mount",
                "umount2",
                "pivot_root",
                "chroot",
                "fsopen",
                "fsmount",
                "open_tree",
                "move_mount",
                "ptrace",
                "bpf",
                "keyctl",
                "add_key",
                "request_key",
                "perf_event_open",
                "userfaultfd",
                "init_module",
                "finit_module",
                "kexec_load",
                "kexec_file_load",
                "reboot",
                "swapon",
                "acct",
                "open_by_handle_at",
                "name_to_handle_at",
                "process_vm_readv",
                "modify_ldt",
                "iopl",
                "ioperm",
                "syslog",
                "settimeofday",
                "clock_settime",
                "adjtimex",
                "fanotify_init",
                "quotactl",
                "lookup_dcookie",
                "sethostname",
                "clone3",
        };
        json_t *o = oci_roundtrip(), *entry;
        size_t i;

        json_array_foreach(json_object_get(o, "syscalls"), i, entry)
        {
                if (strcmp(entry_action(entry), "SCMP_ACT_ALLOW") != 0)
                        continue;
                for (size_t k = 0; k < ELEMENTSOF(denied); k++)
                        cr_assert(!names_contain(entry, denied[k]), "%s is allowed by entry %zu",
                                  denied[k], i);
        }
        json_decref(o);
}

Test(unit, oci_allowed_and_conditional_rules)
{
        json_t *o = oci_roundtrip(), *entry;
        bool read_allowed = false, clone_rule = false, clone3_enosys = false;
        size_t i;

        json_array_foreach(json_object_get(o, "syscalls"), i, entry)
        {
                json_t *args = json_object_get(entry, "args");

                if (names_contain(entry, "read")) {
                        cr_assert_str_eq(entry_action(entry), "SCMP_ACT_ALLOW");
                        cr_assert_eq(json_array_size(args), 0);
                        read_allowed = true;
                }
                if (names_contain(entry, "clone")) {
                        json_t *a = json_array_get(args, 0);

                        /* clone is only ever allowed with the namespace mask. */
                        cr_assert_eq(json_array_size(json_object_get(entry, "names")), 1);
                        cr_assert_eq(json_array_size(args), 1);
                        cr_assert_eq(json_integer_value(json_object_get(a, "index")), 0);
                        cr_assert_str_eq(json_string_value(json_object_get(a, "op")),
                                         "SCMP_CMP_MASKED_EQ");
                        cr_assert_eq(json_integer_value(json_object_get(a, "value")), 0x7E020000);
                        cr_assert_eq(json_integer_value(json_object_get(a, "valueTwo")), 0);
                        clone_rule = true;
                }
                if (names_contain(entry, "clone3")) {
                        cr_assert_str_eq(entry_action(entry), "SCMP_ACT_ERRNO");
                        cr_assert_eq(json_integer_value(json_object_get(entry, "errnoRet")),
                                     ENOSYS);
                        clone3_enosys = true;
                }
                if (names_contain(entry, "socket"))
                        cr_assert(json_array_size(args) >= 1, "socket allowed without args");
                if (names_contain(entry, "mknod") || names_contain(entry, "mknodat") ||
                    names_contain(entry, "personality"))
                        cr_assert_eq(json_array_size(args), 1);
        }
        cr_assert(read_allowed);
        cr_assert(clone_rule);
        cr_assert(clone3_enosys);
        json_decref(o);
}
