# Fails when a Markdown page given to Doxygen opens a Fortran code block with a language tag.
# Doxygen 1.9.4 (Debian 12) reads past the end of some Fortran code blocks while it highlights
# them; whether that crashes depends on the heap layout, which changes with the length of the
# build directory's path, so the docs build failed on some checkouts and not on others.
# Untagged blocks are not highlighted and are safe.   cmake -DDOCS=<dir> -P check_doc_fences.cmake
cmake_minimum_required(VERSION 3.25)
file(GLOB _pages ${DOCS}/*.md)
if(NOT _pages)
  message(FATAL_ERROR "no Markdown pages in '${DOCS}'")
endif()
set(_bad "")
# An opening fence (``` or ~~~, three or more) whose info string names Fortran in any case,
# bare or as {.f90}, with or without attributes after it.
set(_fortran_fence
    "^[ \t]*(````*|~~~~*)[ \t]*{?[ \t]*\\.?(fortran|f90|f95|f03|f08|f77|f|for|ftn)([ \t}].*)?$")
foreach(_page IN LISTS _pages)
  file(STRINGS ${_page} _lines)
  foreach(_line IN LISTS _lines)
    string(TOLOWER "${_line}" _lower)
    if(_lower MATCHES "${_fortran_fence}")
      list(APPEND _bad "${_page}: ${_line}")
    endif()
  endforeach()
endforeach()
if(_bad)
  message(FATAL_ERROR "Fortran-tagged code blocks (Doxygen 1.9.4 may crash on them): ${_bad}")
endif()
list(LENGTH _pages _count)
message("checked ${_count} pages: no Fortran-tagged code blocks")
