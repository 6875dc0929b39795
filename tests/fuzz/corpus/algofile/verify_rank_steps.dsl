# expect: rank 1 has 2 steps but rank 0 has 1 (step structure must not depend on r)
# ranks: 2..8
# Structure: the number of steps depends on r.
algorithm ragged implements all_reduce {
  units 1
  step { }
  if r > 0 { step { } }
}
