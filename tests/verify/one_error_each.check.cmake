# one_error_each.check.cmake - `stitchc verify` prints one error per algorithm that failed (the first
# counterexample ends that algorithm's verification): a check for tests/lib/run.cmake (CHECKS=) on a rejected file
# (tests/verify/*.dsl, whose `# expect:` text and `# ranks:` range verify.cmake passes as CONTAINS and ARGS).
string(REGEX MATCHALL ": error: " errors "${out}${err}")
list(LENGTH errors nerrors)
string(REGEX MATCH "FAILED ([0-9]+) of" failed "${out}${err}")
if(NOT failed OR NOT nerrors EQUAL "${CMAKE_MATCH_1}")
  string(APPEND failures "${nerrors} errors, expected one per failed algorithm ('${failed}')\n")
endif()
