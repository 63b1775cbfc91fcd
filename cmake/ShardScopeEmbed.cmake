# Compiles resources/models/*.json and resources/clusters/*.json into a C++
# source, so core (which has no Qt resource system) can load presets by name.
function(shardscope_embed_files)
  cmake_parse_arguments(E "" "OUTPUT;NAMESPACE;MODELS_DIR;CLUSTERS_DIR" "" ${ARGN})
  file(GLOB models CONFIGURE_DEPENDS ${E_MODELS_DIR}/*.json)
  file(GLOB clusters CONFIGURE_DEPENDS ${E_CLUSTERS_DIR}/*.json)
  list(SORT models)
  list(SORT clusters)
  add_custom_command(OUTPUT ${E_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${E_OUTPUT} -DNAMESPACE=${E_NAMESPACE}
            "-DMODELS=${models}" "-DCLUSTERS=${clusters}"
            -P ${PROJECT_SOURCE_DIR}/cmake/ShardScopeEmbedScript.cmake
    DEPENDS ${models} ${clusters} ${PROJECT_SOURCE_DIR}/cmake/ShardScopeEmbedScript.cmake
    COMMENT "Embedding built-in presets"
    VERBATIM)
endfunction()
