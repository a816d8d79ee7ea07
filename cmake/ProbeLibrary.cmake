# nodeaudit_probe_library(NAME SOURCES...)
# Creates an OBJECT library of probes (so the static registrars are linked into the binary) and
# registers it for the `nodeaudit` executable. A new probe adds its source to one such call.
function(nodeaudit_probe_library name)
  add_library(${name} OBJECT ${ARGN})
  target_link_libraries(${name} PUBLIC nodeaudit_harness)
  nodeaudit_warnings(${name})
  set_property(GLOBAL APPEND PROPERTY NODEAUDIT_PROBE_LIBS ${name})
endfunction()
