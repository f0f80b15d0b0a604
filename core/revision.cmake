# Writes OUT, a source file naming the git commit of SOURCE_DIR that blaster is built from, with
# "+dirty" when tracked files differ from it. Run at every build; the file is rewritten only when
# the revision changes, so a build at the same commit recompiles nothing.
set(revision "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse HEAD
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE head_status ERROR_QUIET)
  if(head_status EQUAL 0 AND head MATCHES "^[0-9a-f]+$")
    set(revision "${head}")
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" status --porcelain
                            --untracked-files=no
                    OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT changes STREQUAL "")
      string(APPEND revision "+dirty")
    endif()
  endif()
endif()
set(text "// Written at build time by core/revision.cmake.
#include \"core/revision.hpp\"

namespace blaster {

std::string_view source_revision() { return \"${revision}\"; }

}  // namespace blaster
")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
