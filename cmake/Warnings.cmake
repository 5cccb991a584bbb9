# The warning flags every target of ours compiles with, as a usage
# requirement: each target links osc_warnings PRIVATE, so the flags reach its
# own sources and never whoever links it. nvcc rejects gcc's flags; CUDA
# sources get the main ones through -Xcompiler.
set(OSC_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wshadow -Wno-missing-field-initializers)
add_library(osc_warnings INTERFACE)
# Unity batches include each source file into one, so GCC takes a source's
# anonymous-namespace types for a header's and warns of their linkage
# (-Wsubobject-linkage) where nothing is shared between files.
target_compile_options(osc_warnings INTERFACE
  "$<$<COMPILE_LANGUAGE:C,CXX>:${OSC_WARNING_FLAGS}>"
  "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-subobject-linkage>"
  "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>")

# Fails the configure step when a target built from our sources does not link
# osc_warnings: it would build without the warnings and nobody would notice.
function(osc_require_warnings directory)
  get_property(targets DIRECTORY ${directory} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      get_target_property(links ${target} LINK_LIBRARIES)
      if(NOT "osc_warnings" IN_LIST links)
        message(FATAL_ERROR "${target} (${directory}) does not link osc_warnings")
      endif()
    endif()
  endforeach()
  get_property(subdirectories DIRECTORY ${directory} PROPERTY SUBDIRECTORIES)
  foreach(subdirectory IN LISTS subdirectories)
    osc_require_warnings(${subdirectory})
  endforeach()
endfunction()
