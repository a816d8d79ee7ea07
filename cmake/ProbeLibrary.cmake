# nodeaudit_probe_library(NAME SOURCES...)
# Creates an OBJECT library of probes (so the static registrars are linked into the binary) and
# registers it for the `nodeaudit` executable. A new probe adds its source to one such call.
function(nodeaudit_probe_library name)
  add_library(${name} OBJECT ${ARGN})
  target_link_libraries(${name} PUBLIC nodeaudit_harness)
  nodeaudit_warnings(${name})
  set_property(GLOBAL APPEND PROPERTY NODEAUDIT_PROBE_LIBS ${name})
endfunction()

# nodeaudit_probe_figures(FUNCTION SOURCE)
# Adds a probe folder's figure declarations to the probe catalogue: SOURCE defines
# `std::vector<nodeaudit::ProbeFigures> FUNCTION()` with no dependency beyond harness/core/figures.hpp.
# The catalogue is linked by the harness, so the scorer and the reporters read every probe's
# declarations without linking a probe body; nodeaudit_write_probe_catalogue() writes the index
# that calls each FUNCTION once every folder has declared its own.
function(nodeaudit_probe_figures function_name source)
  target_sources(nodeaudit_catalogue PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  set_property(GLOBAL APPEND PROPERTY NODEAUDIT_PROBE_FIGURE_FUNCTIONS ${function_name})
endfunction()

function(nodeaudit_write_probe_catalogue)
  get_property(functions GLOBAL PROPERTY NODEAUDIT_PROBE_FIGURE_FUNCTIONS)
  set(declarations "")
  set(calls "")
  foreach(fn IN LISTS functions)
    string(APPEND declarations "std::vector<ProbeFigures> ${fn}();\n")
    string(APPEND calls "  for (ProbeFigures& p : ${fn}()) all.push_back(std::move(p));\n")
  endforeach()
  set(index ${CMAKE_BINARY_DIR}/probe_catalogue_index.cpp)
  file(CONFIGURE OUTPUT ${index} CONTENT
"// Written by cmake/ProbeLibrary.cmake from every nodeaudit_probe_figures() call.
#include <utility>
#include <vector>

#include \"harness/core/figures.hpp\"

namespace nodeaudit {

@declarations@
std::vector<ProbeFigures> all_declared_probe_figures() {
  std::vector<ProbeFigures> all;
@calls@  return all;
}

}  // namespace nodeaudit
" @ONLY)
  target_sources(nodeaudit_catalogue PRIVATE ${index})
endfunction()
