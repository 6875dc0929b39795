# ranks: 1..8
# warning: extra_ring_step.dsl:8:5: warning: ring_plus all_gather for p = 2: step 1 changes nothing: each of its 2 transfers sends data its destination already holds (here rank 0's send to rank 1, whose unit 1 holds {1}): a redundant step
# A ring all_gather with one step too many: right, so it verifies, but its last step only sends every rank the
# block it started with. A lint warning points at it.
algorithm ring_plus implements all_gather {
  units p
  step t in 0 .. p - 1 {
    send unit (r - t) % p to (r + 1) % p
  }
}
