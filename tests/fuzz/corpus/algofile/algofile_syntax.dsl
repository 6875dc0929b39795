# syntax.dsl - a run-time algorithm file with a syntax error on line 5, column 24 (the tests match it).
algorithm oops implements all_reduce {
  units p
  step t in 0 .. p - 2 {
    send unit r to r + reduce
  }
}
