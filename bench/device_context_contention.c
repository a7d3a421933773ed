// N processes make a CUDA context at once, each on GPU i % G: whether the driver serialises the
// making of contexts across a host's GPUs (docs/PERFORMANCE.md, "Many GPUs"). Each process's
// steps are timed apart: unshare (netns: the namespaces a worker makes), dlopen of the driver,
// cuInit, the primary context, a first allocation; then how long until every process has ended.
// No CUDA toolkit needed (the driver is opened at run time).
//
//   build/bench/bb_context_contention N G [netns] [visible]
//   (visible: CUDA_VISIBLE_DEVICES names the process's GPU alone, as a worker's does)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
typedef int (*fn_i)(unsigned);
typedef int (*fn_get)(int*, int);
typedef int (*fn_retain)(void**, int);
typedef int (*fn_set)(void*);
typedef int (*fn_alloc)(unsigned long long*, size_t);

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1, g = argc > 2 ? atoi(argv[2]) : 1;
  int netns = 0, visible = 0;
  for (int i = 3; i < argc; ++i) {
    if (!strcmp(argv[i], "netns")) netns = 1;
    if (!strcmp(argv[i], "visible")) visible = 1;
  }
  int go[2];
  if (pipe(go)) return 1;
  int out[2];
  if (pipe(out)) return 1;
  double t0 = now();
  for (int i = 0; i < n; ++i) {
    if (fork() == 0) {
      char c;
      close(go[1]);
      if (read(go[0], &c, 1) < 0) _exit(2);
      double a = now();
      if (netns && unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC) != 0) {
        perror("unshare");
        _exit(3);
      }
      double b = now();
      int dev = i % g;
      if (visible) {
        char s[16];
        snprintf(s, sizeof s, "%d", dev);
        setenv("CUDA_VISIBLE_DEVICES", s, 1);
        dev = 0;
      }
      void* h = dlopen("libcuda.so.1", RTLD_NOW);
      if (!h) _exit(4);
      fn_i init = (fn_i)dlsym(h, "cuInit");
      fn_get get = (fn_get)dlsym(h, "cuDeviceGet");
      fn_retain retain = (fn_retain)dlsym(h, "cuDevicePrimaryCtxRetain");
      fn_set set = (fn_set)dlsym(h, "cuCtxSetCurrent");
      fn_alloc alloc = (fn_alloc)dlsym(h, "cuMemAlloc_v2");
      double c0 = now();
      if (init(0)) _exit(5);
      double c1 = now();
      int d;
      void* ctx;
      unsigned long long p;
      if (get(&d, dev) || retain(&ctx, d) || set(ctx)) _exit(6);
      double c2 = now();
      if (alloc(&p, 1 << 20)) _exit(7);
      double c3 = now();
      char line[256];
      int len = snprintf(line, sizeof line, "proc %2d gpu %d: begin %+.3f ns %.3f dlopen %.3f cuInit %.3f ctx %.3f alloc %.3f end %+.3f\n", i, i % g,
                         a - t0, b - a, c0 - b, c1 - c0, c2 - c1, c3 - c2, c3 - t0);
      if (write(out[1], line, len) < 0) _exit(8);
      _exit(0);
    }
  }
  close(go[0]);
  close(out[1]);
  usleep(200000);
  t0 = now();
  char z[256] = {0};
  if (write(go[1], z, n) < 0) return 1;
  char buf[8192];
  ssize_t r;
  double last = 0;
  while ((r = read(out[0], buf, sizeof buf)) > 0) fwrite(buf, 1, r, stdout);
  double ends = now();
  int bad = 0, st;
  while (wait(&st) > 0) if (!WIFEXITED(st) || WEXITSTATUS(st)) ++bad;
  last = now();
  printf("N=%d G=%d%s%s: all made by %.3f s, all ended (teardown) by %.3f s, failed %d\n", n, g, netns ? " netns" : "", visible ? " visible" : "",
         ends - t0, last - t0, bad);
  return 0;
}
