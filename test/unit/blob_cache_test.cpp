#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "run/blob_cache.hpp"

namespace {
bb::SealedBlob blob_of(std::size_t n, uint8_t value) {
  auto b = bb::SealedBlob::create(n, [&](uint8_t* p) { std::memset(p, value, n); });
  EXPECT_TRUE(b.ok());
  return std::move(*b);
}
}  // namespace

TEST(BlobCache, KeepsWhatFitsAndHandsTheSameBytesBack) {
  bb::BlobCache cache(3000);
  EXPECT_EQ(cache.find("a"), nullptr);
  auto a = cache.keep("a", blob_of(1000, 1));
  ASSERT_NE(a, nullptr);
  auto found = cache.find("a");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found.get(), a.get());
  EXPECT_EQ(found->data()[999], 1);
  EXPECT_EQ(cache.bytes(), 1000u);
}

// A sweep visits an op's cases in the same order per implementation: what does not fit is
// handed back but not kept, and what was kept first stays.
TEST(BlobCache, WhatDoesNotFitIsUsedButNotKeptAndNothingIsEvicted) {
  bb::BlobCache cache(2500);
  cache.keep("first", blob_of(1000, 1));
  cache.keep("second", blob_of(1000, 2));
  auto third = cache.keep("third", blob_of(1000, 3));
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(third->data()[0], 3);
  EXPECT_EQ(cache.find("third"), nullptr);
  EXPECT_NE(cache.find("first"), nullptr);
  EXPECT_NE(cache.find("second"), nullptr);
  EXPECT_EQ(cache.bytes(), 2000u);
}

// Two threads making the same case keep one blob; both get bytes that are the case's.
TEST(BlobCache, TwoThreadsKeepingOneKeyShareOneBlob) {
  bb::BlobCache cache(1 << 20);
  std::shared_ptr<const bb::SealedBlob> got[2];
  std::vector<std::thread> ts;
  for (int k = 0; k < 2; ++k) ts.emplace_back([&, k] { got[k] = cache.keep("case", blob_of(4096, 7)); });
  for (auto& t : ts) t.join();
  EXPECT_EQ(cache.bytes(), 4096u);
  EXPECT_EQ(cache.find("case")->data()[4095], 7);
  EXPECT_TRUE(got[0] == cache.find("case") || got[1] == cache.find("case"));
}
