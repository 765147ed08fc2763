# SPDX-License-Identifier: Apache-2.0
# CUDA test programs built by nvcc twice: NAME with the shared CUDA runtime and NAME_static
# with nvcc's default static one (tests/clients, tests/kernels). The caller sets `nvcc`.
#
#   fakegpu_nvcc_program(LIST NAME SOURCES <.cu files> DIR <output directory>
#                        [FLAGS <nvcc flags>] [DEPENDS <headers>])
#
# Sources are relative to the calling directory, which is also on the include path; both
# outputs are appended to the variable LIST in the caller's scope.
function(fakegpu_nvcc_program list name)
  cmake_parse_arguments(P "" "DIR" "SOURCES;FLAGS;DEPENDS" ${ARGN})
  list(TRANSFORM P_SOURCES PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/ OUTPUT_VARIABLE sources)
  string(JOIN " " flags_text ${P_FLAGS})
  string(JOIN " " sources_text ${P_SOURCES})
  set(outputs ${${list}})
  foreach(variant shared static)
    set(out ${name})
    if(variant STREQUAL "static")
      set(out ${name}_static)
    endif()
    add_custom_command(
      OUTPUT ${P_DIR}/${out}
      COMMAND ${nvcc} -cudart ${variant} -O2 ${P_FLAGS} -I${CMAKE_CURRENT_SOURCE_DIR} -o ${P_DIR}/${out} ${sources}
      DEPENDS ${sources} ${P_DEPENDS}
      COMMENT "nvcc -cudart ${variant} ${flags_text} ${sources_text} -> ${out}"
      VERBATIM)
    list(APPEND outputs ${P_DIR}/${out})
  endforeach()
  set(${list} ${outputs} PARENT_SCOPE)
endfunction()
