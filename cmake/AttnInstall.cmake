# Install rules and the exported CMake package:
#   cmake --install build --prefix P
# gives P/include/{attn,attn-c} (with the generated .h.inc files),
# P/lib/libAttn*.a, P/lib/libattn_aot.so, P/lib/libattn_mpi.so, P/bin/{attn-opt,attn-run,attn-aot}
# and
# P/lib/cmake/AttnMLIR/AttnMLIRConfig.cmake.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Conversion is several libraries; consumers see one target.
add_library(AttnConversion INTERFACE)
target_link_libraries(AttnConversion INTERFACE AttnToLinalg AttnToLoops AttnToGpu AttnToRing
  AttnMpiToRuntime)

set(ATTN_EXPORTED_LIBS
  AttnDialect:Dialect
  AttnTransforms:Transforms
  AttnGPUTransforms:GPUTransforms
  AttnPtxDialect:PtxDialect
  AttnFlashCore:FlashCore
  AttnToLinalg:ToLinalg
  AttnToLoops:ToLoops
  AttnToGpu:ToGpu
  AttnToRing:ToRing
  AttnMpiToRuntime:MpiToRuntime
  AttnConversion:Conversion
  AttnPipelines:Pipelines
  AttnAotRuntime:AotRuntime
  attn_aot:Aot
  attn_mpi:Mpi
  AttnRuntime:Runtime
  AttnCAPI:CAPI)
set(ATTN_INSTALL_TARGETS)
foreach(entry ${ATTN_EXPORTED_LIBS})
  string(REPLACE ":" ";" pair ${entry})
  list(GET pair 0 target)
  list(GET pair 1 export_name)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  target_include_directories(${target} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  list(APPEND ATTN_INSTALL_TARGETS ${target})
endforeach()

install(TARGETS ${ATTN_INSTALL_TARGETS}
  EXPORT AttnMLIRTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS attn-opt attn-run attn-aot RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/attn
                  ${PROJECT_SOURCE_DIR}/include/attn-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/attn
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h.inc"
  PATTERN "CMakeFiles" EXCLUDE)

set(ATTN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/AttnMLIR)
install(EXPORT AttnMLIRTargets
  NAMESPACE AttnMLIR::
  DESTINATION ${ATTN_CMAKE_DIR})
set(ATTN_MLIR_DIR_FOR_CONFIG ${MLIR_DIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/AttnMLIRConfig.cmake.in
  ${PROJECT_BINARY_DIR}/AttnMLIRConfig.cmake
  INSTALL_DESTINATION ${ATTN_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/AttnMLIRConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/AttnMLIRConfig.cmake
  ${PROJECT_BINARY_DIR}/AttnMLIRConfigVersion.cmake
  DESTINATION ${ATTN_CMAKE_DIR})
