# mine.dsl - a user's algorithm file for tests/catalogue/test_catalogue.c: not in algos.dsl, compiled into the test
# program with stitch_compile_dsl. backring is ring turned around: every rank sends to its left neighbour r-1.

# After p-1 steps rank r holds the full reduction of unit r.
algorithm backring implements reduce_scatter {
  units p
  step t in 0 .. p - 2 {
    send unit (r + 1 + t) % p to (r - 1) % p reduce
  }
}

# Each rank forwards to the left the unit it received in the previous step.
algorithm backring implements all_gather {
  units p
  step t in 0 .. p - 2 {
    send unit (r + t) % p to (r - 1) % p
  }
}

algorithm backring implements all_reduce {
  units p
  phase reduce_scatter using backring
  phase all_gather using backring
}
