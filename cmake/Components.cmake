# Which optional components build. Each turns on by itself when what it needs
# is found, and can be forced off (-DOSC_BUILD_GUI=OFF) or required (=ON fails
# the configure step when its dependencies are missing).
include(CheckLanguage)

set(OSC_BUILD_GUI AUTO CACHE STRING "Qt 6 timeline viewer (AUTO, ON, OFF)")
set(OSC_BUILD_AGENT AUTO CACHE STRING "CUPTI capture agent (AUTO, ON, OFF)")
set(OSC_BUILD_WORKLOADS AUTO CACHE STRING "CUDA reference workloads (AUTO, ON, OFF)")
set(OSC_BUILD_FUZZERS AUTO CACHE STRING "libFuzzer targets, needs clang (AUTO, ON, OFF)")
set(OSC_BUILD_PYTHON AUTO CACHE STRING "Python module overlapscope, needs pybind11 and Python 3 (AUTO, ON, OFF)")

if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
  set(CUDAToolkit_ROOT /usr/local/cuda)
endif()

function(osc_resolve option found what)
  if(${option} STREQUAL "AUTO")
    set(${option} ${found} PARENT_SCOPE)
  elseif(${option})
    if(NOT ${found})
      message(FATAL_ERROR "${option}=ON but ${what} was not found")
    endif()
    set(${option} ON PARENT_SCOPE)
  else()
    set(${option} OFF PARENT_SCOPE)
  endif()
endfunction()

# GUI: Qt 6 Widgets.
set(_gui_found OFF)
if(NOT OSC_BUILD_GUI STREQUAL "OFF")
  find_package(Qt6 6.4 QUIET COMPONENTS Widgets Test)
  if(Qt6_FOUND)
    set(_gui_found ON)
  endif()
endif()
osc_resolve(OSC_BUILD_GUI ${_gui_found} "Qt 6 (qt6-base-dev)")

# Agent: CUDA toolkit headers with CUPTI (no GPU needed to build).
set(_agent_found OFF)
if(NOT OSC_BUILD_AGENT STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cupti)
    set(_agent_found ON)
  endif()
endif()
osc_resolve(OSC_BUILD_AGENT ${_agent_found} "the CUDA toolkit with CUPTI")

# Workloads: nvcc, cuBLAS and NCCL.
set(_wl_found OFF)
if(NOT OSC_BUILD_WORKLOADS STREQUAL "OFF")
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS ${CUDAToolkit_ROOT}/bin/nvcc)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_ROOT}/bin/nvcc)
  endif()
  check_language(CUDA)
  find_package(CUDAToolkit QUIET)
  find_library(OSC_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_ROOT}/lib ${CUDAToolkit_ROOT}/lib64)
  find_path(OSC_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_ROOT}/include)
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND TARGET CUDA::cublas AND OSC_NCCL_LIBRARY
     AND OSC_NCCL_INCLUDE)
    set(_wl_found ON)
  endif()
endif()
osc_resolve(OSC_BUILD_WORKLOADS ${_wl_found} "nvcc, cuBLAS and NCCL")

# Fuzzers: libFuzzer comes with clang.
set(_fuzz_found OFF)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(_fuzz_found ON)
endif()
osc_resolve(OSC_BUILD_FUZZERS ${_fuzz_found} "clang with libFuzzer")

# Python module: pybind11 (pybind11-dev) and Python 3 with its headers. Debian's
# /usr/bin/python3 first: that is where python3-pandas and the tests' pytest
# live, while a python3 earlier on PATH (pyenv, conda) may have neither.
set(_python_found OFF)
if(NOT OSC_BUILD_PYTHON STREQUAL "OFF")
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 QUIET COMPONENTS Interpreter Development.Module)
  if(Python3_FOUND)
    find_package(pybind11 2.6 CONFIG QUIET)
    if(pybind11_FOUND)
      set(_python_found ON)
    endif()
  endif()
endif()
osc_resolve(OSC_BUILD_PYTHON ${_python_found} "pybind11 (pybind11-dev) and Python 3 headers (python3-dev)")
