# SPDX-License-Identifier: Apache-2.0
# fakegpu-trace's integration workloads (tests/integration/test_trace.py), linked against the
# backend like bin/workload. Included from tests/workloads/CMakeLists.txt.
find_package(Threads REQUIRED)
add_executable(fakegpu_trace_workload ${CMAKE_CURRENT_LIST_DIR}/trace_workload.cpp)
target_compile_features(fakegpu_trace_workload PRIVATE cxx_std_20)  # std::barrier
target_compile_options(fakegpu_trace_workload PRIVATE ${FAKEGPU_WARNINGS} -fno-omit-frame-pointer)  # --stacks
target_include_directories(fakegpu_trace_workload PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(fakegpu_trace_workload PRIVATE fake_gpu Threads::Threads)
set_target_properties(fakegpu_trace_workload PROPERTIES OUTPUT_NAME trace_workload
                      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

# Per-library attribution: a program calling the API itself and through two of its own
# shared libraries (trace_libs/main.cpp says what each calls).
foreach(lib alpha beta)
  add_library(trace_${lib} SHARED ${CMAKE_CURRENT_LIST_DIR}/trace_libs/${lib}.cpp)
  target_compile_options(trace_${lib} PRIVATE ${FAKEGPU_WARNINGS})
  target_include_directories(trace_${lib} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(trace_${lib} PRIVATE fake_gpu)
  set_target_properties(trace_${lib} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
endforeach()
add_executable(fakegpu_trace_libs ${CMAKE_CURRENT_LIST_DIR}/trace_libs/main.cpp)
target_compile_options(fakegpu_trace_libs PRIVATE ${FAKEGPU_WARNINGS})
target_include_directories(fakegpu_trace_libs PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(fakegpu_trace_libs PRIVATE trace_alpha trace_beta fake_gpu)
set_target_properties(fakegpu_trace_libs PROPERTIES OUTPUT_NAME trace_libs RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

# The backend linked again behind 64 KiB of code of its own (trace_libs/shift.cpp): another
# build of it, every function at another offset, for a library rewritten in place with a new
# build (tests/integration/test_trace_faults.py).
add_library(fake_gpu_shifted SHARED ${CMAKE_CURRENT_LIST_DIR}/trace_libs/shift.cpp $<TARGET_OBJECTS:fake_gpu>)
target_link_libraries(fake_gpu_shifted PRIVATE $<TARGET_PROPERTY:fake_gpu,LINK_LIBRARIES>)
target_link_options(fake_gpu_shifted PRIVATE $<TARGET_PROPERTY:fake_gpu,LINK_OPTIONS>)
set_target_properties(fake_gpu_shifted PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
