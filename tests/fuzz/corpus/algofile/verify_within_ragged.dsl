# expect: rank 1 runs 2 phases on sub-communicators but rank 0 runs 1 (phases must not depend on r)
# ranks: 2..4
# Sub-communicators: the number of phases depends on r.
algorithm ring implements all_reduce {
  units p
  step t in 0 .. p - 2 { send unit (r - 1 - t) % p to (r + 1) % p reduce }
  step t in 0 .. p - 2 { send unit (r - t) % p to (r + 1) % p }
}
algorithm ragged implements all_reduce {
  units p
  phase all_reduce within all using ring
  if r > 0 { phase all_reduce within all using ring }
}
