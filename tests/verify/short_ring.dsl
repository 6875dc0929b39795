# expect: ring_short reduce_scatter is wrong for p = 3: after the last step unit 0 of rank 0 holds the contributions of {0}, not of all 3 ranks
# ranks: 3..8
# Postcondition: one step too few.
algorithm ring_short implements reduce_scatter {
  units p
  step t in 0 .. p - 3 {
    send unit (r - 1 - t) % p to (r + 1) % p reduce
  }
}
