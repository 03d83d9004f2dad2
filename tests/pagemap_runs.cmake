# SPDX-License-Identifier: MIT
# The pagemap's run writes and small spans handed out with their class
# in every entry (h22-pageheap: core/pagemap.c hs_pagemap_set_range,
# hs_pagemap_clear_range; core/page_heap.c hs_page_heap_alloc_small_n);
# linked with libheapscope.a, sampling off.
add_executable(test_pagemap_runs
  ${CMAKE_CURRENT_SOURCE_DIR}/test_pagemap_runs.c)
target_link_libraries(test_pagemap_runs PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME alloc_pagemap_runs COMMAND test_pagemap_runs)
set_tests_properties(alloc_pagemap_runs PROPERTIES TIMEOUT 120
  LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")
