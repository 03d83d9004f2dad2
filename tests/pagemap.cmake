# The pagemap's root is charged only for the pages that name a leaf
# (strict overcommit): checked against /proc/self/maps
add_executable(test_pagemap_commit
  ${CMAKE_CURRENT_SOURCE_DIR}/test_pagemap_commit.c)
target_compile_options(test_pagemap_commit PRIVATE -fno-builtin)
target_link_libraries(test_pagemap_commit PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
hs_alloc_rate_tests(pagemap_commit test_pagemap_commit)
