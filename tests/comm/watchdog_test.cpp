// The collective watchdog: fires once on the hard deadline or on missing progress, never after stop.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "comm/watchdog.hpp"

using namespace nodeaudit::comm;
using namespace std::chrono_literals;

TEST(Watchdog, FiresOnceAtTheHardDeadline) {
  std::atomic<int> calls{0};
  {
    Watchdog dog(Watchdog::Clock::now() + 50ms, 1h, [&] { ++calls; });
    while (!dog.fired()) std::this_thread::sleep_for(5ms);
    EXPECT_EQ(dog.reason(), "probe deadline");
  }  // fired() is set before the callback runs; the destructor joins the thread, so it has run
  EXPECT_EQ(calls.load(), 1);
}

TEST(Watchdog, FiresWhenNoProgressIsReported) {
  std::atomic<int> calls{0};
  {
    // An abort takes a while (the callback runs after fired() is set): count the calls only once
    // the destructor has joined the watch thread.
    Watchdog dog(Watchdog::Clock::now() + 1h, 50ms, [&] {
      std::this_thread::sleep_for(20ms);
      ++calls;
    });
    while (!dog.fired()) std::this_thread::sleep_for(5ms);
    EXPECT_EQ(dog.reason(), "no progress for 0.05 s");
  }
  EXPECT_EQ(calls.load(), 1);
}

TEST(Watchdog, KicksKeepItQuiet) {
  std::atomic<int> calls{0};
  {
    Watchdog dog(Watchdog::Clock::now() + 1h, 2s, [&] { ++calls; });
    for (int i = 0; i < 10; ++i) {
      std::this_thread::sleep_for(10ms);
      dog.kick();
    }
    EXPECT_FALSE(dog.fired());
    EXPECT_EQ(dog.reason(), "");
  }  // destroyed before any limit: never fires
  EXPECT_EQ(calls.load(), 0);
}
