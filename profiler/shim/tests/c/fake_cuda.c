/* A stand-in for libcuda.so in the shim's test: the driver's lookup and
 * launch entry points, each launch recorded. Not CUDA: no GPU needed. */
#include <stdint.h>
#include <string.h>

typedef struct {
    unsigned grid[3], block[3], shared;
    void *stream, *attrs;
    unsigned num_attrs;
} config_t;

int fake_launches;
int fake_last_kind; /* 0 kernel, 1 kernel ptsz, 2 ex, 3 graph */
unsigned fake_last_grid_x;

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
    fake_launches++;
    fake_last_kind = 0;
    fake_last_grid_x = gx;
    return 0;
}

int cuLaunchKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
    fake_launches++;
    fake_last_kind = 1;
    fake_last_grid_x = gx;
    return 0;
}

int cuLaunchKernelEx(const config_t *c, void *f, void **params, void **extra) {
    fake_launches++;
    fake_last_kind = 2;
    fake_last_grid_x = c->grid[0];
    return 0;
}

int cuGraphLaunch(void *exec, void *stream) {
    fake_launches++;
    fake_last_kind = 3;
    return 700; /* a launch failure, passed back as is */
}

int cuMemAlloc_v2(void) { return 0; }

/* Not exported: what a driver may hand back for a lookup (the shim then
 * tells the variant from the lookup's name, version and flags). */
static int launch_hidden(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                         unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
    fake_launches++;
    fake_last_kind = 4;
    fake_last_grid_x = gx;
    return 0;
}

int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status);

static int gpa_hidden(const char *symbol, void **pfn, int version, uint64_t flags, int *status) {
    return cuGetProcAddress_v2(symbol, pfn, version + 1000, flags, status);
}

int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status) {
    int ptsz = (flags & 2) != 0;
    *pfn = 0;
    if (version == 12000 && !strcmp(symbol, "cuLaunchKernel"))
        *pfn = (void *)launch_hidden;
    else if (version == 12000 && !strcmp(symbol, "cuGetProcAddress"))
        *pfn = (void *)gpa_hidden;
    else if (!strcmp(symbol, "cuLaunchKernel"))
        *pfn = ptsz ? (void *)cuLaunchKernel_ptsz : (void *)cuLaunchKernel;
    else if (!strcmp(symbol, "cuLaunchKernelEx"))
        *pfn = (void *)cuLaunchKernelEx;
    else if (!strcmp(symbol, "cuGraphLaunch"))
        *pfn = (void *)cuGraphLaunch;
    else if (!strcmp(symbol, "cuMemAlloc"))
        *pfn = (void *)cuMemAlloc_v2;
    else if (!strcmp(symbol, "cuGetProcAddress"))
        *pfn = (void *)cuGetProcAddress_v2;
    if (status)
        *status = *pfn ? 0 : 1;
    return *pfn ? 0 : 500; /* CUDA_ERROR_NOT_FOUND */
}
