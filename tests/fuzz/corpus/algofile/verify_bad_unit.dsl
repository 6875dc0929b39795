# expect: send of unit 2, outside 0..1 (p = 2, rank 1)
# ranks: 2..8
# Range: a unit outside 0 .. U-1.
algorithm overrun implements reduce_scatter {
  units p
  step { send unit r + 1 to (r + 1) % p reduce }
}
