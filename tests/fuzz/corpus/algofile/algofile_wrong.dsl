# wrong.dsl - compiles, but is wrong for p >= 2: every rank keeps its own data (the verifier must refuse it at
# init, naming the algorithm on line 3).
algorithm lonely implements all_reduce {
  units 1
  step {
    send unit 0 to r
  }
}
