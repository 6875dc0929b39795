# expect: short_ring.dsl:4: error: ring_short reduce_scatter is wrong for p = 3: after the last step unit 0 of rank 0 holds {0} but should hold the contributions of all 3 ranks {0..2}; no send ever writes it
# ranks: 3..8
# Postcondition: one step too few.
algorithm ring_short implements reduce_scatter {
  units p
  step t in 0 .. p - 3 {
    send unit (r - 1 - t) % p to (r + 1) % p reduce
  }
}
