# expect: rank 0 runs a phase with the members {0,1}, but rank 1 runs it with {1,2} (the members of a part must agree)
# ranks: 3..4
# Sub-communicators: each rank names itself and its right neighbour, so the parts overlap.
algorithm ring implements all_reduce {
  units p
  step t in 0 .. p - 2 { send unit (r - 1 - t) % p to (r + 1) % p reduce }
  step t in 0 .. p - 2 { send unit (r - t) % p to (r + 1) % p }
}
algorithm pairs implements all_reduce {
  units p
  phase all_reduce within { r, (r + 1) % p } using ring
}
