// fikit live replay: the synthetic kernel that stands in for every recorded kernel.
//
// Each block's first thread polls the GPU's global nanosecond timer until
// the block has *executed* for `per_block_ns`: a jump of the timer longer than
// `preempt_ns` between two reads means the block was switched out (time
// slicing, preemption) and does not count, so a preempted kernel keeps the work
// it has left, as a real kernel does. The other threads wait at the barrier:
// the block holds its threads, registers and `shared_bytes` of dynamic shared
// memory for the whole time, so as many blocks fit on an SM as recorded by
// those limits.
//
// The last block to finish (counted in `counter`, one word per launch) adds 1
// to `done[0]` and raises `done[1]` to `position + 1`, with system scope: the
// words live in host memory shared with the other workers of the run, which
// read them to know when this job's kernels are done.
//
// `stamp` (diagnostic timelines; 0 when off): four words per launch, set to
// all ones before: [0] the earliest block start (atomicMin), [1] the bitwise
// NOT of the latest block end (atomicMin of ~end), [2] the time block 0 was
// switched out and [3] how many times.
extern "C" __global__ void fikit_spin(unsigned long long per_block_ns,
                                      unsigned long long preempt_ns,
                                      unsigned int* counter,
                                      unsigned long long* done,
                                      unsigned long long position,
                                      unsigned long long* stamp) {
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        unsigned long long last, now, executed = 0, switched = 0, jumps = 0;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(last));
        if (stamp != 0) atomicMin(&stamp[0], last);
        now = last;
        while (executed < per_block_ns) {
            // Threads reading the timer back to back starve one another on a
            // full SM (H200: with 32 blocks of 64 threads per SM, some saw
            // reads 20-66 us apart, which count as switched out, and one-wave
            // kernels ran 2-6x long): sleep between reads, 500 ns or half of
            // what is left (`__nanosleep(t)` sleeps at most 2t), so a block
            // overshoots its time by no more than one timer read.
            unsigned long long left = per_block_ns - executed;
            unsigned int nap = left >= 1000 ? 500u : (unsigned int)(left / 2);
            if (nap >= 32) __nanosleep(nap);
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
            unsigned long long d = now - last;
            if (d < preempt_ns) {
                executed += d;
            } else {
                switched += d;
                jumps += 1;
            }
            last = now;
        }
        if (stamp != 0) {
            atomicMin(&stamp[1], ~now);
            if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0) {
                stamp[2] = switched;
                stamp[3] = jumps;
            }
        }
    }
    __syncthreads();
    if (done != 0 && threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        unsigned int blocks = gridDim.x * gridDim.y * gridDim.z;
        if (atomicAdd(counter, 1u) == blocks - 1) {
            // Only the last block pays for a system-wide fence.
            __threadfence_system();
            atomicAdd_system(&done[0], 1ull);
            atomicMax_system(&done[1], position + 1ull);
        }
    }
}

// Calibration probe: block 0 runs for `run_ns` of wall time and logs every jump
// of the global timer longer than `jump_ns` (the intervals its context was
// switched out) into out[3..] as (from, to) pairs; out[0] = start, out[1] =
// end, out[2] = jumps logged (at most `max_jumps`). The other blocks spin as
// long, so the probe fills the GPU.
extern "C" __global__ void fikit_probe(unsigned long long run_ns,
                                       unsigned long long jump_ns,
                                       unsigned long long* out,
                                       unsigned int max_jumps) {
    if (threadIdx.x != 0) return;
    unsigned long long start, last, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    last = start;
    unsigned int n = 0;
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (blockIdx.x == 0 && now - last >= jump_ns && n < max_jumps) {
            out[3 + 2 * n] = last;
            out[4 + 2 * n] = now;
            n++;
        }
        last = now;
    } while (now - start < run_ns);
    if (blockIdx.x == 0) {
        out[0] = start;
        out[1] = now;
        out[2] = n;
    }
}

// Calibration load for the concurrent-kernel slowdown: `mode` 0 streams
// memory (each pass reads and rewrites `words` floats of `buf`, grid-stride,
// so every block moves its share), 1 computes (dependent FMAs in registers,
// no memory traffic), 2 chases pointers (`buf` holds `words / 2` next
// indices, 64-bit; each pass every thread follows 64 dependent links: a
// kernel bound by memory latency, not bandwidth), 3 streams like 0 with
// 16-byte loads and stores (more bytes in flight per thread: it streams harder
// at the same share). With `run_ns` = 0 every
// block does `passes` passes: fixed work, whose time grows when other
// kernels slow it down (the victim);
// otherwise each block repeats passes until it has run `run_ns` (the load
// beside it). `stamp`: [earliest block start, latest block start, earliest
// block end, latest block end], set to [all ones, 0, all ones, 0] before.
extern "C" __global__ void fikit_load(unsigned int mode,
                                      float* buf,
                                      unsigned long long words,
                                      unsigned int passes,
                                      unsigned long long run_ns,
                                      unsigned long long* stamp) {
    __shared__ unsigned long long t0;
    __shared__ int stop;
    unsigned long long now;
    if (threadIdx.x == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        t0 = now;
        stop = 0;
        atomicMin(&stamp[0], now);
        atomicMax(&stamp[1], now);
    }
    __syncthreads();
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    float x = (float)threadIdx.x;
    unsigned long long* chain = (unsigned long long*)buf;
    unsigned long long links = words / 2;
    unsigned long long at = links ? (first * 2654435761ull) % links : 0;
    for (unsigned int p = 0; run_ns != 0 || p < passes; ++p) {
        if (run_ns != 0) {
            if (threadIdx.x == 0) {
                asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
                stop = now - t0 >= run_ns;
            }
            __syncthreads();
            int s = stop;
            // Everyone has read `stop` before thread 0 writes it again.
            __syncthreads();
            if (s) break;
        }
        if (mode == 0) {
            for (unsigned long long i = first; i < words; i += stride) {
                buf[i] = buf[i] * 0.999f + 1.0f;
            }
        } else if (mode == 3) {
            float4* b4 = (float4*)buf;
            for (unsigned long long i = first; i < words / 4; i += stride) {
                float4 v = b4[i];
                v.x = v.x * 0.999f + 1.0f;
                v.y = v.y * 0.999f + 1.0f;
                v.z = v.z * 0.999f + 1.0f;
                v.w = v.w * 0.999f + 1.0f;
                b4[i] = v;
            }
        } else if (mode == 2) {
            for (int k = 0; k < 64; ++k) at = chain[at];
        } else {
            for (int k = 0; k < 1024; ++k) x = fmaf(x, 0.999f, 1.0f);
        }
    }
    // Never true (x stays positive; every link is below `links`); keeps the
    // compiler from dropping the FMAs and the loads.
    if (mode == 1 && x < 0.0f) buf[first % words] = x;
    if (mode == 2 && at >= links) buf[0] = 0.0f;
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        atomicMin(&stamp[2], now);
        atomicMax(&stamp[3], now);
    }
}
