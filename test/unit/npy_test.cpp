#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "npy.hpp"

namespace fs = std::filesystem;

TEST(Npy, WriteThenReadRoundTrips) {
  const auto dir = fs::temp_directory_path() / "bb_npy_test";
  fs::create_directories(dir);
  std::vector<int16_t> v{1, -2, 3, -4, 5, -6};
  ASSERT_TRUE(bb::write_npy(dir / "a.npy", bb::DType::int16, {2, 3}, v.data()).ok());
  auto a = bb::read_npy(dir / "a.npy");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->dtype, bb::DType::int16);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(a->data.size(), 12u);
  EXPECT_EQ(reinterpret_cast<const int16_t*>(a->data.data())[3], -4);

  float f = 1.5f;
  ASSERT_TRUE(bb::write_npy(dir / "s.npy", bb::DType::float32, {1}, &f).ok());
  auto s = bb::read_npy(dir / "s.npy");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->shape, (std::vector<int64_t>{1}));
}

TEST(Npy, ReadsWhatNumpyWrites) {
  // Bytes of np.save(f, np.arange(3, dtype='<f4')) (format 1.0).
  const auto file = fs::temp_directory_path() / "bb_npy_numpy.npy";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream out(file, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size()), 0};
  out.write(len, 2);
  out << header;
  const float data[3] = {0, 1, 2};
  out.write(reinterpret_cast<const char*>(data), sizeof data);
  out.close();
  auto a = bb::read_npy(file);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(reinterpret_cast<const float*>(a->data.data())[2], 2.0f);
}

TEST(Npy, ErrorsNameTheFileAndTheProblem) {
  const auto file = fs::temp_directory_path() / "bb_npy_bad.npy";
  std::ofstream(file) << "not numpy";
  auto a = bb::read_npy(file);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find(file.string()), std::string::npos);
  EXPECT_NE(a.error().message.find("not a .npy file"), std::string::npos);
  EXPECT_FALSE(bb::read_npy(fs::temp_directory_path() / "bb_no_such_file.npy").ok());
}

// A header whose shape says more than the file holds is refused before anything is allocated
// (an overflowing shape too): the reader never trusts the header with memory.
TEST(Npy, AShapeLargerThanTheFileIsRefusedBeforeAllocating) {
  auto header = [](const std::string& shape) {
    std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
    while ((10 + h.size() + 1) % 64 != 0) h += ' ';
    h += '\n';
    std::string out = std::string("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(h.size() & 0xff);
    out += static_cast<char>(h.size() >> 8);
    return out + h + std::string(16, '\0');  // four floats of data
  };
  for (const std::string shape : {"4,", "5,", "99999999999,", "4294967296, 4294967296, 4294967296", "999999999999999999999,"}) {
    std::istringstream in(header(shape));
    auto a = bb::read_npy(in, "t.npy");
    if (shape == "4,") {
      ASSERT_TRUE(a) << a.error().message;
      EXPECT_EQ(a->data.size(), 16u);
      continue;
    }
    ASSERT_FALSE(a) << shape;
    EXPECT_NE(a.error().message.find("t.npy: .npy"), std::string::npos) << a.error().message;
  }
}
