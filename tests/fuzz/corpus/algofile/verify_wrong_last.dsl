# expect: wrong_last.dsl:8:10: error: ring_copy reduce_scatter is wrong for p = 3: after the last step unit 0 of rank 0 holds {1,2} but should hold the contributions of all 3 ranks {0..2}; this send wrote it last, at step 1 from rank 2 (copy)
# ranks: 3..8
# Postcondition: the last step copies where it must reduce, so each rank loses its own contribution. The error
# points at that send (line:column) and says what the unit holds and what it should.
algorithm ring_copy implements reduce_scatter {
  units p
  step t in 0 .. p - 3 { send unit (r - 1 - t) % p to (r + 1) % p reduce }
  step { send unit (r + 1) % p to (r + 1) % p }
}
