# Run at build time (not only at configure time), so the git commit stamped into every result is
# the one the binary was built from. Rewrites the file only when the text changes.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
# A copy without .git (a container build context) gets the commit from the one who copied it.
if(NOT commit AND DEFINED ENV{NODEAUDIT_GIT_COMMIT} AND NOT "$ENV{NODEAUDIT_GIT_COMMIT}" STREQUAL "")
  set(commit "$ENV{NODEAUDIT_GIT_COMMIT}")
elseif(NOT commit)
  set(commit "unknown")
elseif(dirty)
  set(commit "${commit}-dirty")
endif()
set(text "#include \"harness/core/version.hpp\"\n\nnamespace nodeaudit {\nstd::string version_string() { return \"${VERSION}\"; }\nstd::string git_commit() { return \"${commit}\"; }\n}  // namespace nodeaudit\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUTPUT} "${text}")
endif()
