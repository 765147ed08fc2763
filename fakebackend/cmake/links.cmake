# SPDX-License-Identifier: Apache-2.0
# Creates DIR/<name> -> TARGET for each of NAMES (script mode: cmake -P; NAMES is comma-separated).
string(REPLACE "," ";" NAMES "${NAMES}")
foreach(name IN LISTS NAMES)
  file(CREATE_LINK ${TARGET} ${DIR}/${name} SYMBOLIC)
endforeach()
