/*
 * BackendBench device runtime ABI: what a device runtime plugin (plugins/cuda, plugins/hip)
 * gives the host. The host binary links no GPU runtime; it loads
 * `backendbench_<name>.so` at run time when a test asks for that device, and calls it only
 * through this table. Plain C; structs only grow at the end and carry their size.
 *
 * Every function returns 0 on success or the runtime's own error code; error_string() names
 * it and is_sticky() says whether it has left the device context unusable (an illegal address
 * inside a kernel, say), after which the process must not use the device again.
 */
#ifndef BACKENDBENCH_DEVICE_RUNTIME_H
#define BACKENDBENCH_DEVICE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BB_DEVICE_RUNTIME_VERSION 9

typedef struct bb_device_properties {
  uint32_t struct_size;
  int32_t ordinal;
  char name[256];
  char arch[32];                /* "sm_90", "gfx90a" */
  int32_t multiprocessors;      /* SMs / CUs */
  int64_t l2_bytes;
  int64_t memory_bytes;
  int32_t sm_clock_khz;         /* maximum */
  int32_t memory_clock_khz;     /* maximum */
  int32_t memory_bus_bits;
  double peak_bandwidth_gbps;   /* theoretical: 2 (DDR) x memory clock x bus width */
  char uuid[40];                /* "GPU-xxxxxxxx-..." or the runtime's id: a cache key */
} bb_device_properties;

/* One way of moving device memory, and the bandwidth it reached (see measure_bandwidth). */
typedef struct bb_bandwidth_figure {
  char strategy[64];  /* "copy kernel, one 16-byte vector per thread" */
  double gbps;        /* bytes read plus bytes written per second, best of several runs */
} bb_bandwidth_figure;

/* An arithmetic throughput the device reached (see measure_compute). */
typedef struct bb_compute_figure {
  char kind[32];      /* "fp32", "fp16 tensor", "bf16 tensor" */
  char strategy[64];  /* "FMA kernel, 8 independent chains per thread" */
  double tflops;      /* 10^12 floating-point operations per second (an FMA is two) */
} bb_compute_figure;

/* What a cold sample's probes read (see clock_probe). */
typedef struct bb_clock_sample {
  uint64_t sm_clock;   /* an SM's cycle counter */
  uint64_t global_ns;  /* the device's global timer, nanoseconds */
} bb_clock_sample;

/* A span of device memory (see discard_cache). */
typedef struct bb_device_range {
  void* ptr;
  size_t bytes;
} bb_device_range;

/* An input made on the device (see fill): the host's initialiser `kind` (randn 0, uniform 1,
 * randint 2, ones 3, zeros 4, arange 5, full 6; detail/init_values.h) with its parameters a, b
 * and the tensor's seed, stored as the dtype of DLPack code and bits; a value variant's `twist`
 * (detail/init_values.h's Twist: 0 none, scaled 1, mixed 2, some NaN 3, some infinities 4) with
 * its power of two. */
typedef struct bb_fill_spec {
  uint32_t struct_size;
  uint32_t kind;
  double a;
  double b;
  uint64_t seed;
  uint8_t code;
  uint8_t bits;
  uint32_t twist;
  int32_t twist_log2;
} bb_fill_spec;

typedef struct bb_device_runtime {
  uint32_t struct_size;
  uint32_t version;             /* BB_DEVICE_RUNTIME_VERSION */
  const char* name;             /* "cuda", "hip" */
  int32_t dlpack_device_type;   /* kDLCUDA (2), kDLROCM (10) */
  const char* runtime_version;  /* e.g. "CUDA runtime 13.0, driver 13.0" (filled on first device_count) */

  int (*device_count)(int* count);
  int (*get_properties)(int device, bb_device_properties* out);
  int (*set_device)(int device);
  int (*synchronize)(void);

  int (*malloc)(void** ptr, size_t bytes);
  int (*free)(void* ptr);
  /* Host <-> device copies are complete when they return (the data is in place on the other
   * side), whatever stream later work runs on. */
  int (*memcpy_h2d)(void* dst, const void* src, size_t bytes);
  int (*memcpy_d2h)(void* dst, const void* src, size_t bytes);
  int (*memcpy_d2d)(void* dst, const void* src, size_t bytes, void* stream);
  int (*memset)(void* dst, int value, size_t bytes, void* stream);

  int (*stream_create)(void** stream);
  int (*stream_destroy)(void* stream);
  int (*stream_synchronize)(void* stream);

  int (*event_create)(void** event);
  int (*event_destroy)(void* event);
  int (*event_record)(void* event, void* stream);
  int (*event_elapsed_ms)(float* ms, void* start, void* stop);

  int (*get_last_error)(void);  /* and clear it, where the runtime can */
  int (*is_sticky)(int code);
  const char* (*error_string)(int code);

  /* Measurement (the host checks struct_size before using these). All act on the current
   * device and enqueue on `stream` without waiting. */

  /* Leaves the device's L2 cache cold and clean: a kernel reads a buffer twice the size of L2
   * (allocated and written once, on first use), so earlier dirty lines are written back and
   * evicted here, not inside the next timed region. */
  int (*flush_cache)(void* stream);
  /* A kernel that spins until release_stream() (or timeout_ms passes), so that every launch
   * enqueued behind it starts back to back, with no host launch gaps between them. */
  int (*block_stream)(void* stream, double timeout_ms);
  /* Lets the blocking kernel finish. */
  int (*release_stream)(void);
  /* Once the stream is done: *timed_out = 1 if the last blocking kernel gave up waiting (the
   * host blocked while enqueuing, so the launches behind it were not queued in time). */
  int (*blocking_timed_out)(int* timed_out);
  /* Records the SM cycle counter and the global timer at this point of the stream into probe
   * `slot` (0..7), readable by read_clock_probes once the stream is done. */
  int (*clock_probe)(void* stream, int slot);
  int (*read_clock_probes)(bb_clock_sample* out, int count);
  /* Device memory bandwidth, measured by several strategies over buffers much larger than L2
   * (the runtime's device-to-device copy; copy kernels of one vector per thread, grid-stride,
   * and several vectors in flight per thread; a read-only and a write-only kernel), each the
   * best of several runs. Fills up to `capacity` figures, sets *count. Blocks. */
  int (*measure_bandwidth)(bb_bandwidth_figure* out, int capacity, int* count);

  /* Version 3: batches of cold samples. */

  /* Like block_stream, for pipelined batches: each blocking kernel gets a ticket, and
   * release_stream() lets every kernel blocked so far go; *ticket names it for
   * ticket_timed_out(), which is valid once the stream has passed that kernel. */
  int (*block_stream_ticket)(void* stream, double timeout_ms, uint32_t* ticket);
  int (*ticket_timed_out)(uint32_t ticket, int* timed_out);
  /* *supported = 1 when discard_cache really evicts on the current device (the runtime ran
   * its own check once), else 0 and the host flushes instead. */
  int (*discard_supported)(int* supported);
  /* Evicts every whole 128-byte line inside the ranges from L2 WITHOUT writing it back: what
   * the device holds there afterwards is whatever was last written back (dirty lines are
   * lost). For memory whose clean contents the caller no longer needs. */
  int (*discard_cache)(const bb_device_range* ranges, int count, void* stream);
  /* Enqueues an empty kernel (one block): the event pair's own cost is calibrated with it. */
  int (*launch_empty)(void* stream);
  /* Waits until the work recorded before `event` is done (not the whole stream). */
  int (*event_synchronize)(void* event);
  /* Arithmetic throughput: FP32 FMA, and FP16 / BF16 on the tensor cores where the device and
   * the build have them (warp-level mma), each the best of several runs. Fills up to
   * `capacity` figures, sets *count; a kind the device cannot run is left out. Blocks. */
  int (*measure_compute)(bb_compute_figure* out, int capacity, int* count);

  /* The device does the device's work (host checks struct_size before using these). */

  /* *differ = 1 when the `bytes` at device addresses a and b are not all equal, else 0; on a
   * stream of the runtime's own that waits for nothing else (it runs while another stream is
   * held by a blocking kernel). Blocks until known. */
  int (*bytes_differ)(const void* a, const void* b, size_t bytes, int* differ);
  /* Device memory another process can map (where the runtime can: else an error code and the
   * host keeps to host copies): allocated here, handed over as a POSIX file descriptor (a new
   * one, the caller's to close), mapped read-write on the current device by the receiver.
   * free() releases either side's mapping. */
  int (*malloc_shareable)(void** ptr, size_t bytes);
  int (*export_shareable)(void* ptr, int* fd);
  int (*import_shareable)(int fd, size_t bytes, void** ptr);
  /* How many of the n elements of a floating dtype (DLPack code and bits: float 16/32/64,
   * bfloat 16) are not close, as the host's check counts them (allclose.hpp: poison where the
   * expected is not, NaN where NaN, equal infinities, |a - e| <= atol + rtol * |e| in double,
   * no fused multiply-add). On the runtime's own stream; blocks until known. */
  int (*mismatches)(uint8_t code, uint8_t bits, const void* actual, const void* expected, size_t n, double atol, double rtol,
                    unsigned long long* count);

  /* Version 5: inputs made on the device, the host's bytes (detail/init_values.h). */

  /* Elements [0, n) of `dst` as the host's fill_tensor makes them from spec. Blocks until done;
   * an error for a kind or dtype it does not know. */
  int (*fill)(const bb_fill_spec* spec, void* dst, size_t n);
  /* The sparse change of a checked call: element random_bits(seed, j) % n of `dst`, for every
   * j < count, set to its value by spec (the others kept). Blocks until done. */
  int (*fill_scattered)(const bb_fill_spec* spec, void* dst, size_t n, uint64_t count);

  /* Version 6: nothing kept in L2 across the flush. */

  /* What a call may have set to keep lines in L2 through a flush, undone before the flush: on
   * `stream`, before what is enqueued next, every line the ranges touch made normal again (a
   * call enqueued earlier may set them persisting when it runs: CUDA's access-policy windows,
   * hitProp persisting); `settings` = 1: also, at once, every persisting line of the context
   * made normal and `stream`'s access-policy window cleared (host calls: never while a blocking
   * kernel holds the stream). The persisting set-aside is left as it is. A runtime without
   * persisting lines does nothing. */
  int (*reset_persisting)(const bb_device_range* ranges, int count, void* stream, int settings);

  /* Version 7: value variants (bb_fill_spec's twist) and the scale of what is expected. */

  /* The largest finite |x| over the n elements of a floating dtype (as mismatches reads them;
   * 0 where none is finite), and whether any is NaN or infinite: the host's expected_scale
   * (allclose.hpp). Blocks until known. */
  int (*expected_scale)(uint8_t code, uint8_t bits, const void* data, size_t n, double* max_abs, int* nonfinite);

  /* Version 8: how close a check came, passing or not. */

  /* Over the n elements of a floating dtype, as mismatches reads them, the pairs that are
   * finite and not poison: the largest |a - e|, the largest |a - e| / |e| (e != 0), and the
   * largest |a - e| / (atol + rtol * |e|) (infinity where a pair differs under a tolerance of
   * 0): the host's Comparison (allclose.hpp). Blocks until known. */
  int (*error_figures)(uint8_t code, uint8_t bits, const void* actual, const void* expected, size_t n, double atol, double rtol,
                       double* max_abs, double* max_rel, double* tolerance_used);

  /* Version 9: a timed sample's fresh inputs (the host's fresh_inputs_protocol.hpp). */

  /* Elements [0, n) of `dst` from spec's distribution at memory speed (randn, uniform, randint:
   * a counter hash per element, Box-Muller in float): other bits than fill's, the same for the
   * same spec on the same device; other kinds and twists as fill makes them. Queued on `stream`,
   * not waited for. */
  int (*fill_fresh)(const bb_fill_spec* spec, void* dst, size_t n, void* stream);
} bb_device_runtime;

typedef const bb_device_runtime* (*bb_device_runtime_fn)(void);
#define BB_DEVICE_RUNTIME_SYMBOL "backendbench_device_runtime"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKENDBENCH_DEVICE_RUNTIME_H */
