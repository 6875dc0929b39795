# expect: lanes of a split share unit 1 (lanes must own disjoint units)
# ranks: 2..2
# Lanes run in the same steps, so they must own disjoint units: two lanes naming unit 1 are refused.
algorithm overlap implements all_reduce {
  units 4
  split {
    lane 0 .. 1 { phase all_reduce within all units 0 .. 1 using ring }
    lane 1 .. 3 { phase all_reduce within all units 2 .. 3 using ring }
  }
}
algorithm ring implements all_reduce {
  units p
  step t in 0 .. p - 2 { send unit (r - 1 - t) % p to (r + 1) % p reduce }
  step t in 0 .. p - 2 { send unit (r - t) % p to (r + 1) % p }
}
