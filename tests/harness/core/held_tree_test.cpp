// A held tree finds and ends a process that left its parent's session, with SIGINT first and
// SIGKILL only for what ignores the gentler signals; its cgroup is removed once empty.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "harness/core/held_tree.hpp"

namespace nodeaudit {
namespace {

// A child that joins the tree, then starts a grandchild in a session of its own that ignores
// SIGINT and SIGTERM (as a rank that only notes them); the child itself waits. Returns the child.
pid_t start_child_with_escaped_grandchild(const HeldTree& tree, int ready_fd) {
  const pid_t child = fork();
  if (child != 0) return child;
  tree.join_in_forked_child();
  setpgid(0, 0);
  if (fork() == 0) {
    setsid();
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    if (write(ready_fd, "r", 1) != 1) _exit(1);
    while (true) pause();
  }
  while (true) pause();
}

TEST(HeldTree, EndsAnEscapedProcessThatIgnoresSigintAndSigterm) {
  HeldTree tree = HeldTree::make("test", "NODEAUDIT_HELD_TREE_TEST=" + std::to_string(getpid()));
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = start_child_with_escaped_grandchild(tree, ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  ASSERT_EQ(tree.members().size(), 2u) << tree.mechanism();
  bool reaped = false;
  const TreeEnd end = end_tree(tree, child, {0.5, 0.5}, [&] {
    if (!reaped && waitpid(child, nullptr, WNOHANG) == child) reaped = true;
  });
  EXPECT_TRUE(tree.empty());
  EXPECT_EQ(end.signals, (std::vector<std::string>{"SIGINT", "SIGTERM", "SIGKILL"}));
  EXPECT_EQ(end.killed, 1u) << "the child went on SIGINT; the grandchild needed SIGKILL";
  EXPECT_NE(describe_tree_end(end, {0.5, 0.5}).find("SIGKILL"), std::string::npos);
  if (!reaped) waitpid(child, nullptr, 0);
  const std::string dir = tree.cgroup_dir();
  EXPECT_TRUE(tree.remove_cgroup());
  if (!dir.empty()) EXPECT_FALSE(std::filesystem::exists(dir));
  close(ready[0]);
  close(ready[1]);
}

TEST(HeldTree, AnEmptyTreeIsLeftAloneWithNoSignal) {
  HeldTree tree = HeldTree::make("test", "NODEAUDIT_HELD_TREE_TEST=none");
  const TreeEnd end = end_tree(tree, 0, {0.5, 0.5}, {});
  EXPECT_TRUE(end.signals.empty());
  EXPECT_EQ(describe_tree_end(end, {0.5, 0.5}), "it had ended by itself");
}

}  // namespace
}  // namespace nodeaudit
