// worker_integrity.hpp: the worker's own GOT and code, captured and checked. A worker runs
// with every symbol bound at load (LD_BIND_NOW), so the test runs in a child process started
// that way (this binary, this test alone).
#include "worker/worker_integrity.hpp"

#include <dlfcn.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../fixtures/adversarial/got_patch.hpp"

extern char** environ;

namespace {

// Runs the current test again in a child bound at load; true when this is that child.
bool in_bound_child(int* child_status) {
  if (const char* b = std::getenv("LD_BIND_NOW"); b && *b) return true;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string filter = std::string("--gtest_filter=") + info->test_suite_name() + "." + info->name();
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) env_s.emplace_back(*e);
  env_s.emplace_back("LD_BIND_NOW=1");
  std::vector<char*> env;
  for (auto& s : env_s) env.push_back(s.data());
  env.push_back(nullptr);
  char self[] = "/proc/self/exe";
  char* argv[] = {self, filter.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, self, nullptr, nullptr, argv, env.data()) != 0) {
    *child_status = -1;
    return false;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  *child_status = status;
  return false;
}

size_t (*real_strlen)(const char*) = nullptr;
size_t counting_strlen(const char* s) { return real_strlen(s); }

// Never called: its code is what the test rewrites.
__attribute__((noinline)) int untouched_function(int x) { return x * 3 + 1; }

}  // namespace

TEST(WorkerIntegrity, FreshCaptureIsIntact) {
  int status = 0;
  if (!in_bound_child(&status)) {
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child bound at load failed: status " << status;
    return;
  }
  const auto w = bb::WorkerIntegrity::capture();
  ASSERT_TRUE(w.captured());
  EXPECT_GT(w.slot_count(), 100u);
  EXPECT_GT(w.watched_bytes(), 1u << 20);
  EXPECT_EQ(w.check_slots(), "");
  EXPECT_EQ(w.check_all(), "");
}

TEST(WorkerIntegrity, ARewrittenGotSlotIsNamed) {
  int status = 0;
  if (!in_bound_child(&status)) {
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child bound at load failed: status " << status;
    return;
  }
  const auto w = bb::WorkerIntegrity::capture();
  real_strlen = &strlen;
  ASSERT_GT(got::patch("strlen", reinterpret_cast<void*>(&counting_strlen), "no-object-is-called-this"), 0);
  const std::string slots = w.check_slots();
  EXPECT_NE(slots.find("the GOT slot of strlen in"), std::string::npos) << slots;
  EXPECT_NE(slots.find("was rewritten"), std::string::npos) << slots;
  EXPECT_NE(w.check_all(), "");
  // Put back: intact again.
  got::patch("strlen", reinterpret_cast<void*>(real_strlen), "no-object-is-called-this");
  EXPECT_EQ(w.check_slots(), "");
}

TEST(WorkerIntegrity, RewrittenCodeIsFoundByTheFullCheckOnly) {
  int status = 0;
  if (!in_bound_child(&status)) {
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child bound at load failed: status " << status;
    return;
  }
  const auto w = bb::WorkerIntegrity::capture();
  auto* code = reinterpret_cast<volatile unsigned char*>(&untouched_function);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  void* lo = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(&untouched_function) & ~(page - 1));
  ASSERT_EQ(mprotect(lo, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC), 0);
  const unsigned char saved = code[0];
  code[0] = static_cast<unsigned char>(saved ^ 0x5a);
  EXPECT_EQ(w.check_slots(), "");  // no slot moved
  const std::string all = w.check_all();
  EXPECT_NE(all.find("the code of the worker's executable was rewritten"), std::string::npos) << all;
  code[0] = saved;
  mprotect(lo, 2 * page, PROT_READ | PROT_EXEC);
  EXPECT_EQ(w.check_all(), "");
}

// A watched library that its opener closes again (a runtime may) is no longer read: no crash,
// no false alarm.
TEST(WorkerIntegrity, AnUnloadedObjectIsNotRead) {
  int status = 0;
  if (!in_bound_child(&status)) {
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child bound at load failed: status " << status;
    return;
  }
  const std::string lib = std::string(BB_FIXTURE_ROOTS) + "/c_plugin/myop/myop_c.so";  // C: unloads on dlclose
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  const auto w = bb::WorkerIntegrity::capture();
  ASSERT_EQ(dlclose(h), 0);
  ASSERT_EQ(dlopen(lib.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr) << "still loaded: the test proves nothing";
  EXPECT_EQ(w.check_slots(), "");
  EXPECT_EQ(w.check_all(), "");
}

TEST(WorkerIntegrity, HashSeesEveryByte) {
  std::vector<unsigned char> data(4099);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 7);
  const uint64_t h = bb::integrity_hash(data.data(), data.size());
  for (size_t i : {size_t{0}, size_t{31}, size_t{32}, size_t{4095}, size_t{4098}}) {
    data[i] ^= 1;
    EXPECT_NE(bb::integrity_hash(data.data(), data.size()), h) << "byte " << i;
    data[i] ^= 1;
  }
  EXPECT_EQ(bb::integrity_hash(data.data(), data.size()), h);
  EXPECT_NE(bb::integrity_hash(data.data(), data.size() - 1), h);
}

// What a warm interpreter loaded is the plugin's side (python_zygote.hpp): left out of the
// capture by name, its code rewritten unseen; the device's runtime and driver never left out.
TEST(WorkerIntegrity, ObjectsNamedUnwatchedAreLeftOut) {
  int status = 0;
  if (!in_bound_child(&status)) {
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child bound at load failed: status " << status;
    return;
  }
  const std::string lib = std::string(BB_FIXTURE_ROOTS) + "/c_plugin/myop/myop_c.so";
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  const auto loaded = bb::loaded_objects();
  std::string name;
  for (const auto& n : loaded)
    if (n.find("myop_c.so") != std::string::npos) name = n;
  ASSERT_FALSE(name.empty());
  const auto all = bb::WorkerIntegrity::capture();
  const auto without = bb::WorkerIntegrity::capture({name});
  EXPECT_LT(without.watched_bytes(), all.watched_bytes());
  EXPECT_EQ(without.check_all(), "");

  bb::set_interpreter_objects({name, "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/opt/x/libcudart.so.13", "/opt/x/libtorch_cpu.so"});
  EXPECT_TRUE(bb::interpreter_objects().count(name));
  EXPECT_TRUE(bb::interpreter_objects().count("/opt/x/libtorch_cpu.so"));
  EXPECT_FALSE(bb::interpreter_objects().count("/usr/lib/x86_64-linux-gnu/libcuda.so.1")) << "the driver is always watched";
  EXPECT_FALSE(bb::interpreter_objects().count("/opt/x/libcudart.so.13")) << "the runtime is always watched";
  bb::set_interpreter_objects({});
  dlclose(h);
}

TEST(WorkerIntegrity, DeviceRuntimeObjectsAreKnownByName) {
  EXPECT_TRUE(bb::is_device_runtime_object("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  EXPECT_TRUE(bb::is_device_runtime_object("libcudart.so.13"));
  EXPECT_TRUE(bb::is_device_runtime_object("/opt/rocm/lib/libamdhip64.so.5"));
  EXPECT_TRUE(bb::is_device_runtime_object("/build/plugins/backendbench_cuda.so"));
  EXPECT_FALSE(bb::is_device_runtime_object("/opt/torch/lib/libtorch_cuda.so"));
  EXPECT_FALSE(bb::is_device_runtime_object("/usr/lib/libcudnn.so.9"));
}
