/* The shim's test program: looks the fake driver's entry points up as the
 * CUDA runtime does (dlsym of cuGetProcAddress_v2, then through it) and as
 * Triton does (dlsym by name), registers hooks with the preloaded shim and
 * checks what the hooks and the fake driver saw. Prints "ok" and exits 0,
 * or says what failed and exits 1. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t kind, ptsz;
    void *function;
    uint32_t grid[3], block[3], shared_bytes;
    void *stream;
} info_t;
typedef struct {
    uint32_t version;
    uint64_t (*enter)(const info_t *);
    void (*exit)(uint64_t, int);
} hooks_t;
typedef struct {
    unsigned grid[3], block[3], shared;
    void *stream, *attrs;
    unsigned num_attrs;
} config_t;
typedef int (*gpa2_t)(const char *, void **, int, uint64_t, int *);
typedef int (*lk_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                    void *, void **, void **);
typedef int (*lx_t)(const config_t *, void *, void **, void **);
typedef int (*gl_t)(void *, void *);

static info_t seen;
static int entered, exited, exit_rc;
static uint64_t enter_hook(const info_t *i) {
    seen = *i;
    entered++;
    return 42;
}
static void exit_hook(uint64_t token, int rc) {
    if (token == 42) exited++;
    exit_rc = rc;
}
static hooks_t hooks = {1, enter_hook, exit_hook};

#define CHECK(c)                                                 \
    do {                                                         \
        if (!(c)) {                                              \
            printf("failed at line %d: %s\n", __LINE__, #c);    \
            return 1;                                            \
        }                                                        \
    } while (0)

int main(int argc, char **argv) {
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    CHECK(lib);
    int *launches = dlsym(lib, "fake_launches");
    int *last_kind = dlsym(lib, "fake_last_kind");
    unsigned *last_grid_x = dlsym(lib, "fake_last_grid_x");
    CHECK(launches && last_kind && last_grid_x);
    /* The runtime's way: cuGetProcAddress_v2 by dlsym, the shim's. */
    gpa2_t gpa = (gpa2_t)dlsym(lib, "cuGetProcAddress_v2");
    Dl_info d;
    CHECK(gpa && dladdr((void *)gpa, &d) && !strstr(d.dli_fname, "fake"));
    uint32_t (*set_hooks)(const hooks_t *) = (uint32_t(*)(const hooks_t *))dlsym(RTLD_DEFAULT, "fikit_shim_set_hooks");
    CHECK(set_hooks && set_hooks(&hooks) == 1);

    /* cuLaunchKernel, per-thread-stream variant: wrapped, hooked, passed on. */
    void *p = 0;
    int st = -1;
    CHECK(gpa("cuLaunchKernel", &p, 13000, 2, &st) == 0 && st == 0 && p);
    CHECK(dladdr(p, &d) && !strstr(d.dli_fname, "fake"));
    CHECK(((lk_t)p)((void *)0x1234, 3, 2, 1, 128, 1, 1, 64, 0, 0, 0) == 0);
    CHECK(*launches == 1 && *last_kind == 1 && *last_grid_x == 3);
    CHECK(entered == 1 && exited == 1 && exit_rc == 0);
    CHECK(seen.kind == 0 && seen.ptsz == 1 && seen.function == (void *)0x1234);
    CHECK(seen.grid[0] == 3 && seen.grid[2] == 1 && seen.block[0] == 128 && seen.shared_bytes == 64);
    /* The same lookup again: the same wrapper. */
    void *again = 0;
    CHECK(gpa("cuLaunchKernel", &again, 13000, 2, &st) == 0 && again == p);
    /* The legacy-stream variant: another wrapper, ptsz 0. */
    void *legacy = 0;
    CHECK(gpa("cuLaunchKernel", &legacy, 13000, 1, &st) == 0 && legacy && legacy != p);
    CHECK(((lk_t)legacy)((void *)0x1, 9, 1, 1, 1, 1, 1, 0, (void *)0x77, 0, 0) == 0);
    CHECK(*last_kind == 0 && seen.ptsz == 0 && seen.grid[0] == 9 && seen.stream == (void *)0x77);

    /* cuLaunchKernelEx: the shape read from its configuration. */
    config_t c = {{5, 1, 1}, {32, 2, 1}, 16, (void *)0x99, 0, 0};
    CHECK(gpa("cuLaunchKernelEx", &p, 13000, 0, &st) == 0 && p);
    CHECK(((lx_t)p)(&c, (void *)0x5, 0, 0) == 0);
    CHECK(*last_kind == 2 && seen.kind == 1 && seen.grid[0] == 5 && seen.block[1] == 2);
    CHECK(seen.shared_bytes == 16 && seen.stream == (void *)0x99);

    /* cuGraphLaunch: its result passed back to the program and the hook. */
    CHECK(gpa("cuGraphLaunch", &p, 13000, 0, &st) == 0 && p);
    CHECK(((gl_t)p)((void *)0x3, (void *)0x4) == 700 && exit_rc == 700 && seen.kind == 3);

    /* Other functions and failed lookups come back untouched. */
    CHECK(gpa("cuMemAlloc", &p, 13000, 0, &st) == 0 && p == dlsym(lib, "cuMemAlloc_v2"));
    CHECK(gpa("cuNothing", &p, 13000, 0, &st) == 500 && p == 0);
    /* Asked for itself, the lookup is the shim's again. */
    CHECK(gpa("cuGetProcAddress", &p, 13000, 0, &st) == 0 && p == (void *)gpa);

    /* A pointer the driver does not export: the variant from the lookup. */
    CHECK(gpa("cuLaunchKernel", &p, 12000, 2, &st) == 0 && p);
    CHECK(dladdr(p, &d) && !strstr(d.dli_fname, "fake"));
    CHECK(((lk_t)p)((void *)0x6, 11, 1, 1, 1, 1, 1, 0, 0, 0, 0) == 0);
    CHECK(*last_kind == 4 && seen.ptsz == 1 && seen.grid[0] == 11);
    /* cuGetProcAddress asked for itself at CUDA 12.0, unexported: the
     * five-argument form, so the shim's _v2, which still looks up. */
    void *self = 0;
    CHECK(gpa("cuGetProcAddress", &self, 12000, 0, &st) == 0 && self == (void *)gpa);
    CHECK(((gpa2_t)self)("cuMemAlloc", &p, 13000, 0, &st) == 0 && p == dlsym(lib, "cuMemAlloc_v2"));

    /* A library opened on its own (RTLD_LOCAL) finds its own symbol by
     * RTLD_DEFAULT: the lookup is answered in its scope, not the shim's. */
    void *group = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    CHECK(group);
    void *(*lookup)(void) = (void *(*)(void))dlsym(group, "group_lookup");
    CHECK(lookup && lookup() == dlsym(group, "group_private"));

    /* Triton's way: dlsym of a launch function by name. */
    lk_t direct = (lk_t)dlsym(lib, "cuLaunchKernel");
    CHECK(direct && dladdr((void *)direct, &d) && !strstr(d.dli_fname, "fake"));
    int before = entered;
    CHECK(direct((void *)0x2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0) == 0 && entered == before + 1);

    /* Without hooks a wrapper only passes the launch on. */
    CHECK(set_hooks(0) == 1);
    before = entered;
    int n = *launches;
    CHECK(((lk_t)legacy)((void *)0x1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0) == 0);
    CHECK(entered == before && *launches == n + 1);
    /* Hooks of another version are refused. */
    hooks_t old = {99, enter_hook, exit_hook};
    CHECK(set_hooks(&old) == 0);
    uint64_t (*count)(void) = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "fikit_shim_launches");
    CHECK(count && count() == 7);
    printf("ok\n");
    return 0;
}
