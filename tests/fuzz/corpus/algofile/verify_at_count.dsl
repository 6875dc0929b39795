# expect: send of 2 units at 1 places: `at` must name as many units (p = 2, rank 0)
# ranks: 2..8
# Shape: `at` names fewer destination units than the transfer moves.
algorithm squeeze implements all_reduce {
  units p scratch 1
  step { send all to (r + 1) % p at unit p }
}
