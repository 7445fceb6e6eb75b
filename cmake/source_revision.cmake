# Writes OUT, a header naming the sources this build compiles, at every build (not at configure
# time: an incremental build after a commit must not keep the old name). Run by the
# gpuprobe_source_revision target:  cmake -DSOURCE_DIR=... -DOUT=... -P source_revision.cmake
#
#   GPUPROBE_SOURCE_REVISION  `git describe --always --dirty`, e.g. "87f0725a1b2c" or "...-dirty";
#                             without git, the commit scripts/dev/snapshot.sh recorded; else "unknown"
#   GPUPROBE_SOURCE_TREE      the git tree id of the files as they are (tracked and untracked, not
#                             ignored), hashed through a private index in the build folder: equal to
#                             `git rev-parse COMMIT^{tree}` for the commit the files match, even when
#                             .git itself is stale (a copy of the files over older git metadata says
#                             "<old commit>-dirty" in the describe string, but the tree id is exact)
# OUT is rewritten only when its text changes, so an unchanged revision recompiles nothing.
execute_process(COMMAND git describe --always --dirty --abbrev=12
                WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE revision
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE described)
set(tree "")
if(described EQUAL 0)
  get_filename_component(out_dir ${OUT} DIRECTORY)
  set(ENV{GIT_INDEX_FILE} ${out_dir}/gpuprobe-source.index)
  execute_process(COMMAND git add --all .
                  WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE added OUTPUT_QUIET ERROR_QUIET)
  if(added EQUAL 0)
    execute_process(COMMAND git write-tree WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE tree
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  unset(ENV{GIT_INDEX_FILE})
else()
  set(revision "")
endif()
if(NOT revision AND EXISTS ${SOURCE_DIR}/.snapshot-revision)
  file(STRINGS ${SOURCE_DIR}/.snapshot-revision revision LIMIT_COUNT 1)
endif()
if(NOT revision)
  set(revision "unknown")
endif()
if(NOT tree)
  set(tree "unknown")
endif()
set(text "// Generated at build time by cmake/source_revision.cmake; do not edit.\n#pragma once\n#define GPUPROBE_SOURCE_REVISION \"${revision}\"\n#define GPUPROBE_SOURCE_TREE \"${tree}\"\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
