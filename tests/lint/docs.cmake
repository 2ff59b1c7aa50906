# The Python API reference (Sphinx, docs/python-api) builds with every warning an error: a
# docstring that numpydoc cannot parse, a documented parameter the signature lacks, or a
# cross-reference that resolves nowhere fails here. docs/python-api/CMakeLists.txt defines the
# target when Sphinx and numpydoc are found (never in sanitizer builds).
if(TARGET docs-python)
  add_test(NAME docs.python_api
           COMMAND ${CMAKE_COMMAND} --build ${PROJECT_BINARY_DIR} --target docs-python)
  # It runs the build tool in the build tree, as docs.doxygen does: never both at once (DEPENDS
  # only orders them; a test that is not registered is ignored).
  set_tests_properties(docs.python_api PROPERTIES LABELS docs TIMEOUT 600
                       DEPENDS docs.doxygen RESOURCE_LOCK gtstorage_build_tree)
endif()
