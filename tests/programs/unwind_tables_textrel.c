// SPDX-License-Identifier: MIT
/*
 * tests/programs/unwind_tables_textrel.c - a text relocation after the
 * unwind tables (tests/test_unwind_tables.c).  Compiled without -fPIC, the
 * pointer's absolute address is a load-time relocation (R_X86_64_64) into
 * a read-only section, which the loader writes: the object gets
 * DT_TEXTREL (linked with -z notext).  .gcc_except_table follows
 * .eh_frame in the same read-only segment, and the padding after the
 * pointer puts its page wholly inside the range a release of the tables
 * would take: if that page were dropped, the pointer would read as it is
 * in the file (0) again.
 */
#include "unwind_tables_funcs.h"

int ut_textrel_target = 42;

__attribute__((section(".gcc_except_table"), used))
const struct ut_textrel ut_textrel = {&ut_textrel_target, {1}};
