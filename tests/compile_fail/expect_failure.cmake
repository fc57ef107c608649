# Runs the host compiler on one must-not-compile snippet and passes when the compile fails with
# exactly one error: the static_assert whose text the snippet's "// expect: " line gives.
#
#   cmake -DCOMPILER=<c++> -DSOURCE=<snippet.cpp> -DINCLUDES=<dir|dir|...> -P expect_failure.cmake
#
# One error, not merely "the text appears": a cascade of follow-on errors under the message is
# what the user-facing contract ("one readable message") rules out.
foreach(var IN ITEMS COMPILER SOURCE INCLUDES)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "expect_failure.cmake: pass -D${var}=...")
  endif()
endforeach()

file(STRINGS "${SOURCE}" expect_lines REGEX "^// expect: ")
list(LENGTH expect_lines expect_count)
if(NOT expect_count EQUAL 1)
  message(FATAL_ERROR "${SOURCE}: needs exactly one '// expect: <message text>' line")
endif()
string(REGEX REPLACE "^// expect: " "" expected "${expect_lines}")

string(REPLACE "|" ";" include_dirs "${INCLUDES}")
set(include_flags)
foreach(dir IN LISTS include_dirs)
  if(dir)
    list(APPEND include_flags "-I${dir}")
  endif()
endforeach()

execute_process(
  COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C
          ${COMPILER} -std=c++20 -fsyntax-only ${include_flags} ${SOURCE}
  RESULT_VARIABLE result
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)

if(result EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must not:\n${output}")
endif()

# Semicolons would split CMake lists inside the messages; count lines on a copy without them.
string(REPLACE ";" "," flat "${output}")
string(REGEX MATCHALL "[^\n]*error:[^\n]*" error_lines "${flat}")
string(REGEX MATCHALL "[^\n]*(static assertion failed|static_assert failed)[^\n]*" assert_lines
       "${flat}")
list(LENGTH error_lines errors)
list(LENGTH assert_lines asserts)
string(FIND "${output}" "${expected}" where)

set(problems)
if(where EQUAL -1)
  string(APPEND problems "\n  the output lacks the expected text: ${expected}")
endif()
if(NOT asserts EQUAL 1)
  string(APPEND problems "\n  ${asserts} failed static_asserts, expected exactly 1")
endif()
if(NOT errors EQUAL 1)
  string(APPEND problems "\n  ${errors} errors, expected exactly 1 (the static_assert)")
endif()
if(problems)
  message(FATAL_ERROR "${SOURCE}:${problems}\n--- compiler output ---\n${output}")
endif()
message(STATUS "${SOURCE}: rejected with the one expected message")
