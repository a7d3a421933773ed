// What the checker compares for a case (device_check.hpp): the plan the host sends, read against
// the buffers layout the host itself judges by. The comparisons themselves run on a device
// (Gpu.* and the CUDA fixtures on the GPU machine).
#include <gtest/gtest.h>

#include "host_buffer.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/device_check.hpp"

namespace {
constexpr std::size_t kGuard = bb::HostBuffer::kGuardBytes;

bb::ConcreteCase scale_case(bb::DType out_dtype, int inplace_input) {
  bb::ConcreteCase c;
  c.inputs.push_back(bb::ConcreteTensor{"x", {10}, bb::DType::float32, {}});
  c.inputs.push_back(bb::ConcreteTensor{"w", {3}, bb::DType::float16, {}});
  bb::ConcreteOutput y;
  y.name = "y";
  y.shape = {10};
  y.dtype = out_dtype;
  y.inplace_input = inplace_input;
  y.tolerance = bb::Tolerance{1e-5, 1e-3};
  c.outputs.push_back(y);
  return c;
}
}  // namespace

// Inputs byte for byte, guards and all; the output's guards byte for byte and its data within
// the case's tolerance; every item inside its own region of the reference's buffers.
TEST(DeviceCheck, InputsWholeAndOutputsWithinTheirTolerance) {
  const auto c = scale_case(bb::DType::float32, -1);
  const auto items = bb::device_checks(c);
  ASSERT_TRUE(items.has_value());
  const bb::BlobLayout l = bb::buffers_layout(c);
  ASSERT_EQ(bb::mirror_count(c), 3);
  ASSERT_EQ(items->size(), 5u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ((*items)[i].mirror, i);
    EXPECT_FALSE((*items)[i].close);
    EXPECT_EQ((*items)[i].bytes, l.sizes[i]);
    EXPECT_EQ((*items)[i].expected_offset, l.offsets[i]);
  }
  const auto& data = (*items)[4];
  EXPECT_TRUE(data.close);
  EXPECT_EQ(data.mirror, 2);
  EXPECT_EQ(data.n, 10u);
  EXPECT_EQ(data.code, kDLFloat);
  EXPECT_EQ(data.bits, 32);
  EXPECT_DOUBLE_EQ(data.atol, 1e-5);
  EXPECT_DOUBLE_EQ(data.rtol, 1e-3);
  EXPECT_EQ(data.offset, kGuard);
  EXPECT_EQ(data.expected_offset, l.offsets[2] + kGuard);
  EXPECT_EQ((*items)[3].offset, kGuard + 40);  // the guard after the data
  for (const auto& i : *items) EXPECT_LE(i.expected_offset + i.bytes, l.total);
  // The host sends the plan as JSON: the checker reads back the same items.
  const auto back = bb::device_check_items_from_json(bb::to_json(*items));
  ASSERT_EQ(back.size(), items->size());
  for (std::size_t k = 0; k < back.size(); ++k) {
    EXPECT_EQ(back[k].mirror, (*items)[k].mirror);
    EXPECT_EQ(back[k].offset, (*items)[k].offset);
    EXPECT_EQ(back[k].bytes, (*items)[k].bytes);
    EXPECT_EQ(back[k].expected_offset, (*items)[k].expected_offset);
    EXPECT_EQ(back[k].close, (*items)[k].close);
    EXPECT_EQ(back[k].n, (*items)[k].n);
  }
}

// An in-place output is its input's buffer: no mirror of its own, compared where the input is.
TEST(DeviceCheck, AnInPlaceOutputIsComparedInItsInputsBuffer) {
  const auto c = scale_case(bb::DType::float32, 0);
  const auto items = bb::device_checks(c);
  ASSERT_TRUE(items.has_value());
  EXPECT_EQ(bb::mirror_count(c), 2);
  int close_on_input = 0;
  for (const auto& i : *items) {
    EXPECT_LT(i.mirror, 2);
    if (i.close) close_on_input += i.mirror == 0;
    if (!i.close && i.mirror == 0) EXPECT_EQ(i.bytes, kGuard);  // its guards only: its data changed
  }
  EXPECT_EQ(close_on_input, 1);
}

// Integer outputs are not compared on the device: the host judges every block of such a case.
TEST(DeviceCheck, AnOutputThatIsNotFloatingKeepsTheCaseOnTheHost) {
  EXPECT_FALSE(bb::device_checks(scale_case(bb::DType::int32, -1)).has_value());
  EXPECT_TRUE(bb::device_checks(scale_case(bb::DType::bfloat16, -1)).has_value());
}
