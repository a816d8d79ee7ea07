// Scratch directories nodeaudit makes for one process (a probe's generated data, the child's result
// file), recognized later by what nodeaudit wrote in them, never by their name: an owner marker
// written before anything else, naming the process (pid, its start time, the boot and the pid
// namespace). A directory whose owner is gone (killed by a signal, a timeout, a kill -9 of `run`)
// is abandoned, and the next nodeaudit that looks at the place removes it; a directory whose
// owner lives, or whose marker is not nodeaudit's, is left alone.
#pragma once

#include <time.h>

#include <optional>
#include <string>
#include <vector>

namespace nodeaudit {

inline constexpr const char* owner_marker_name = ".nodeaudit-owner.json";

// Creates `parent`/`stem`-XXXXXX with the owner marker naming this process. Returns the path, or
// an empty string and `error`.
std::string make_owned_dir(const std::string& parent, const std::string& stem, std::string& error);

// Creates `parent`/`name` exactly (it must not exist) with the owner marker naming this process.
std::string make_owned_dir_named(const std::string& parent, const std::string& name, std::string& error);

// Removes every directory this process made with make_owned_dir(_named) that still carries its
// marker (a directory disowned for --keep-data stays), however long that takes: the last thing a
// probe child does when its parent is gone and its grace has passed, so a kill -9 of `run` during
// data generation leaves nothing even when the probe's own removal has not finished by then.
// Calls wait for one another, so a process never ends in the middle of another thread's removal.
void remove_dirs_made_here();

// The pid its owner marker names, when `dir` holds nodeaudit's marker.
std::optional<long long> owner_pid(const std::string& dir);

// Removes the owner marker: the directory is no longer scratch (--keep-data keeps it, recognized
// by its own manifest from then on).
void disown_dir(const std::string& dir);

// True when `dir` is a real directory (not a symlink) holding nodeaudit's owner marker whose
// process is gone on this boot, in this pid namespace.
bool is_abandoned_dir(const std::string& dir);

// Removes `dir` (and everything in it) when it is abandoned; true when it was removed.
bool remove_if_abandoned(const std::string& dir);
// Removes `dir` when its marker names process `pid` (known to be gone by the caller, which may see
// it before the kernel has finished ending it); true when it was removed.
bool remove_if_owned_by(const std::string& dir, long long pid);

// A process killed between making its scratch directory and finishing its marker leaves a directory
// holding nothing, or only a marker that is not complete. Such directories under `parent` named
// "nodeaudit-*" whose status changed at or after `since` (the killed process's start) and which stay
// so for 100 ms (another process finishes its marker in microseconds) are removed: they hold no
// data of anyone's. Returns what was removed.
std::vector<std::string> remove_unfinished_dirs(const std::string& parent, const struct timespec& since);

// The abandoned directories directly under `parent` whose names begin with "nodeaudit-": removed;
// returns what was removed, for the user to be told.
std::vector<std::string> remove_abandoned_dirs(const std::string& parent);

}  // namespace nodeaudit
