# A ring that names the wrong sender: the left neighbour sends, but `from` names the right one, so a rank's own
# plan (core/st_sched.h: st_sched_build_rank) would miss its receive. The verifier points at the send.
# ranks: 2..4
# expect: wrong_from.dsl:9:5: error: ring reduce_scatter is wrong for p = 3: rank 0 sends to rank 1 in step 1, but rank 1's `from` does not name rank 0
algorithm ring implements reduce_scatter {
  units p
  from { (r + 1) % p }                                           # wrong: the sender is (r - 1) % p
  step t in 0 .. p - 2 {
    send unit (r - 1 - t) % p to (r + 1) % p reduce
  }
}
