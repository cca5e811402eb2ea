# cmake -DSOURCE_DIR=<src> -DLAYER_TABLE=<build>/layers/table.cmake -P CheckLayerIncludes.cmake
#
# Fails, listing each offence, when a file of src/<layer>/ includes "<other>/..." for a layer
# <other> that <layer> does not link (an include that goes up, or sideways between layers
# that do not depend on each other), or when a folder of src/ is no layer. The table is the
# one src/CMakeLists.txt writes from the layers' DEPENDS, so the build and this check agree.
# It reads every #include line, also those of headers that no .cpp of their own layer reaches
# (which the per-target include directories cannot catch).
cmake_minimum_required(VERSION 3.20)
include(${LAYER_TABLE})
set(offences "")
file(GLOB folders LIST_DIRECTORIES true RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/*)
foreach(folder ${folders})
  if(IS_DIRECTORY ${SOURCE_DIR}/${folder} AND NOT folder IN_LIST OPTISTEP_LAYERS)
    string(APPEND offences "src/${folder}/ is no layer of src/CMakeLists.txt\n")
  endif()
endforeach()
foreach(layer ${OPTISTEP_LAYERS})
  set(allowed ${layer} ${OPTISTEP_LAYER_DEPENDS_${layer}})
  file(GLOB files RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/${layer}/*.hpp ${SOURCE_DIR}/${layer}/*.cpp)
  foreach(file ${files})
    file(STRINGS ${SOURCE_DIR}/${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[a-z_]+/")
    foreach(line ${includes})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([a-z_]+)/.*" "\\1" target "${line}")
      if(target IN_LIST OPTISTEP_LAYERS AND NOT target IN_LIST allowed)
        string(STRIP "${line}" line)
        list(JOIN OPTISTEP_LAYER_DEPENDS_${layer} ", " may)
        if(may STREQUAL "")
          set(may "nothing of ours")
        endif()
        string(APPEND offences "src/${file}: ${line}: ${layer}/ may include ${may}\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(offences)
  message(FATAL_ERROR "Includes against the layers (docs/ARCHITECTURE.md):\n${offences}")
endif()
list(LENGTH OPTISTEP_LAYERS n)
message(STATUS "${n} layers, no include goes up")
