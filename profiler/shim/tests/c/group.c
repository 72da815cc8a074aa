/* A library the shim's test opens RTLD_LOCAL: it looks up its own symbol
 * by RTLD_DEFAULT, which glibc answers in the caller's scope. */
#define _GNU_SOURCE
#include <dlfcn.h>

int group_private(void) { return 7; }

void *group_lookup(void) { return dlsym(RTLD_DEFAULT, "group_private"); }
