# The install layout (`cmake --install`, and the .deb of cmake/package.cmake):
#   bin/entrysim
#   share/entrysim/kernel/         the kernel SDK (kernel_model/CMakeLists.txt)
#   share/entrysim/labs/           the labs, when the tree has labs/
#   share/doc/entrysim/            README.md, LICENSE and docs/
#   share/man/man1/entrysim.1.gz   generated: `entrysim help --man`
#   share/bash-completion/completions/entrysim
#                                  generated: `entrysim help --completion bash`
# The two generated files are made by the built binary from its own tables
# (cli/gen_docs.c), so they cannot disagree with the parser; they land in
# the build tree in the same layout (tests/test_gen_docs.cc compares them).
set(ES_MAN_DIR ${CMAKE_BINARY_DIR}/share/man/man1)
set(ES_COMPLETION_DIR ${CMAKE_BINARY_DIR}/share/bash-completion/completions)
set(ES_MAN ${ES_MAN_DIR}/entrysim.1)
set(ES_COMPLETION ${ES_COMPLETION_DIR}/entrysim)
# written to a temporary name and renamed: a failed run leaves no partial
# file for the next build to take as up to date.  gzip -n: no name or time
# stamp in the .gz, so the package's bytes do not depend on the build time.
add_custom_command(
  OUTPUT ${ES_MAN} ${ES_MAN}.gz ${ES_COMPLETION}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${ES_MAN_DIR} ${ES_COMPLETION_DIR}
  COMMAND sh -c "\"$1\" help --man > \"$2.tmp\" && mv \"$2.tmp\" \"$2\" && gzip -9n -c \"$2\" > \"$2.gz\""
          sh $<TARGET_FILE:entrysim> ${ES_MAN}
  COMMAND sh -c "\"$1\" help --completion bash > \"$2.tmp\" && mv \"$2.tmp\" \"$2\""
          sh $<TARGET_FILE:entrysim> ${ES_COMPLETION}
  DEPENDS entrysim
  COMMENT "Generating entrysim.1 and the bash completion from the command tables"
  VERBATIM)
add_custom_target(es_gen_docs ALL DEPENDS ${ES_MAN} ${ES_COMPLETION})

install(FILES ${ES_MAN}.gz DESTINATION share/man/man1)
install(FILES ${ES_COMPLETION} DESTINATION share/bash-completion/completions)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/LICENSE
        DESTINATION share/doc/entrysim)
# docs/figures.py and the screenshot script make the figures from a build
# tree; the installed documents are the pages and their images
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION share/doc/entrysim
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png" PATTERN "*.svg")
# the labs: the build tree sees the source's (a link, so `entrysim lab` in a
# build tree finds them, reference solutions included, as an instructor's
# checkout does); the installed copy leaves the solutions out (docs/TEACHING.md)
if(EXISTS ${CMAKE_SOURCE_DIR}/labs)
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/share/entrysim)
  file(CREATE_LINK ${CMAKE_SOURCE_DIR}/labs ${CMAKE_BINARY_DIR}/share/entrysim/labs SYMBOLIC)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/labs/ DESTINATION share/entrysim/labs
          PATTERN "solution" EXCLUDE PATTERN "__pycache__" EXCLUDE)
endif()
